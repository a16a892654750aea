"""A HelmRelease post-renderer that puts the chart's pods under the NVIDIA runtime, with no GPU.

## What it does
Flags a Flux `HelmRelease` whose `spec.postRenderers` Kustomize patches give the chart's
pods the NVIDIA container runtime (`runtimeClassName: nvidia`, or the GPU Operator's
`nvidia-cdi` / `nvidia-legacy`, k3s's `nvidia-experimental`), while its `values` ask for no
accelerator: no pod the values make (found by its shape, as any rule reads a HelmRelease's
values) asks for one or may (a request other than 0, a DRA claim, an enabled `gpu:` block of
a chart: the Ollama chart's `ollama.gpu.enabled: false` asks for none).
Both patch forms are read: a JSON 6902 operation (`op: add` or `replace`, `path:
/spec/template/spec/runtimeClassName`) and a strategic-merge patch that sets
`spec.template.spec.runtimeClassName`; in `patches` (a text or a list of operations) and in
the older `patchesJson6902` and `patchesStrategicMerge`. The finding is at the patch.

It is `info`: whether the pods then use the node's GPUs depends on their images, which set
`NVIDIA_VISIBLE_DEVICES=all` when they are CUDA builds (the finding says it assumed so).

## Why it matters
Under the NVIDIA runtime a container whose image sets `NVIDIA_VISIBLE_DEVICES=all` gets every
GPU of the node, which the scheduler never gave it: it shares them with the pods that did
ask for them, and the device plugin may hand the same GPUs to another pod. A GPU the release
meant to use is then held by no request, and a GPU the release meant not to use (Ollama
with `gpu.enabled: false`) is used anyway.

## Example
```yaml
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
spec:
  values:
    ollama:
      gpu:
        enabled: false
  postRenderers:
  - kustomize:
      patches:
      - target: {kind: Deployment}
        patch: |                 # GPU055
          - op: add
            path: /spec/template/spec/runtimeClassName
            value: nvidia
```

## Use instead
```yaml
  values:
    ollama:
      gpu:
        enabled: true
        type: nvidia
        number: 1
```

## Options
None.

## References
- Flux `HelmRelease` `spec.postRenderers[].kustomize` (`patches`, `patchesJson6902`,
  `patchesStrategicMerge`): https://fluxcd.io/flux/components/helm/helmreleases/#post-renderers
- NVIDIA Container Toolkit, `NVIDIA_VISIBLE_DEVICES`:
  https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import K8sObject, Path, RuleContext, Violation, chart_gpu_blocks, gpu_demand

CODE = "GPU055"
NAME = "post-renderer-nvidia-runtime-without-gpu"
SEVERITY = "info"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}

#: The runtime classes of the NVIDIA container runtime (as GPU043 knows them).
_RUNTIME_PATH = "/spec/template/spec/runtimeClassName"
#: Patch texts read at most (a post-renderer's patch is a few lines).
_TEXT_MAX = 64 * 1024


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None or obj.kind != "HelmRelease":
        return
    if obj.group != "helm.toolkit.fluxcd.io":
        return
    spec = obj.data.get("spec")
    if not isinstance(spec, Mapping):
        return
    renderers = spec.get("postRenderers")
    if not isinstance(renderers, list):
        return
    found = _runtime_patch(renderers, (*obj.path, "spec", "postRenderers"))
    if found is None:
        return
    where, runtime = found
    values = spec.get("values")
    if _asks_for_accelerator(obj, values, (*obj.path, "spec", "values"), ctx):
        return
    yield Violation(
        where,
        f"a post-renderer gives the chart's pods runtimeClassName {runtime}, but the values "
        "ask for no GPU: they get the node's GPUs unscheduled",
        help="request the GPU in the values (the chart's GPU block or resources.limits), or "
        "drop the patch (assumed: the chart's images set NVIDIA_VISIBLE_DEVICES=all, as CUDA "
        "images do)",
        at="key",
    )


def _runtime_patch(renderers: list[Any], base: Path) -> tuple[Path, str] | None:
    """The first post-renderer patch that sets an NVIDIA runtime class, and the class."""
    from gpulint.api import NVIDIA_RUNTIME_CLASSES

    for i, renderer in enumerate(renderers):
        kustomize = renderer.get("kustomize") if isinstance(renderer, Mapping) else None
        if not isinstance(kustomize, Mapping):
            continue
        for field in ("patches", "patchesJson6902", "patchesStrategicMerge"):
            items = kustomize.get(field)
            for j, item in enumerate(items if isinstance(items, list) else ()):
                at = (*base, i, "kustomize", field, j)
                patch = item
                if isinstance(item, Mapping) and "patch" in item:
                    patch, at = item["patch"], (*at, "patch")
                for value in _patch_values(patch):
                    runtime = _runtime_of(value)
                    if runtime in NVIDIA_RUNTIME_CLASSES:
                        return at, runtime
    return None


def _patch_values(patch: Any) -> list[Any]:
    """A patch as data: a list of operations or a strategic-merge object, parsed from its
    text when written as one (a text that is not YAML gives nothing)."""
    if not isinstance(patch, str):
        return [patch]
    if "runtimeClassName" not in patch:
        return []
    from gpulint.api import text_documents

    return text_documents(patch, _TEXT_MAX)


def _runtime_of(value: Any) -> Any:
    """The runtime class a patch sets: a JSON 6902 ``add``/``replace`` of the pod template's
    ``runtimeClassName``, or a strategic-merge patch's ``spec.template.spec``'s."""
    if isinstance(value, list):
        for op in value:
            if (
                isinstance(op, Mapping)
                and op.get("op") in ("add", "replace")
                and isinstance(op.get("path"), str)
                and "/" + op["path"].lstrip("/") == _RUNTIME_PATH
            ):
                return op.get("value")
        return None
    node: Any = value
    for key in ("spec", "template", "spec"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return node.get("runtimeClassName") if isinstance(node, Mapping) else None


def _asks_for_accelerator(obj: K8sObject, values: Any, base: Path, ctx: RuleContext) -> bool:
    """The values may ask for an accelerator: an enabled chart GPU block, or a pod the
    values make (found by its shape) that is not surely a CPU pod (``gpu_demand``: a
    request, a claim, a chart's GPU block)."""
    if isinstance(values, (Mapping, list)) and chart_gpu_blocks(values, base):
        return True
    return any(not gpu_demand(pod, ctx.registry, ctx.claims).cpu for pod in ctx.pod_specs(obj))
