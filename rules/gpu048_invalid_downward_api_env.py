"""An environment variable taken from a pod field or a resource the downward API does not serve.

## What it does
Checks each container's `env` entries whose value comes from the downward API, in the pod
specs the workload table places (`gpulint/data/workloads.json`), and reports, at the value:

- a `fieldRef.fieldPath` other than those the API server takes for a variable:
  `metadata.name`, `metadata.namespace`, `metadata.uid`, `metadata.labels['<key>']`,
  `metadata.annotations['<key>']`, `spec.nodeName`, `spec.serviceAccountName`,
  `status.hostIP`, `status.hostIPs`, `status.podIP`, `status.podIPs`
  (`metadata.labels.rank`, written as a dotted path, is refused);
- a `resourceFieldRef.resource` other than `limits.` and `requests.` of `cpu`, `memory`,
  `ephemeral-storage` and `hugepages-<size>`: the downward API does not serve an extended
  resource, so `limits.nvidia.com/gpu` (a GPU count for the program) is refused.

A value a template engine fills in (`{{ }}`, `${VAR}`) is left alone.

## Why it matters
The API server validates every `env` entry of the pod template and refuses the whole object:
`spec.template.spec.containers[0].env[2].valueFrom.fieldRef.fieldPath: Invalid value:
"metadata.labels.rank": error converting fieldPath`, or `...resourceFieldRef.resource:
Unsupported value: "limits.nvidia.com/gpu"`. The GPU job is never created.

## Example
```yaml
env:
- name: NUM_GPUS
  valueFrom:
    resourceFieldRef:
      resource: limits.nvidia.com/gpu   # GPU048
```

## Use instead
```yaml
env:
- name: NUM_GPUS
  value: "4"            # the same number as the container's nvidia.com/gpu limit
```
(or read the GPUs the container was given at run time: `nvidia-smi -L`, or
`NVIDIA_VISIBLE_DEVICES`, which the device plugin sets).

## Options
None.

## References
- Kubernetes `pkg/apis/core/validation/validation.go` (`validEnvDownwardAPIFieldPathExpressions`,
  `validateContainerResourceFieldSelector`: `limits.cpu`, `limits.memory`,
  `limits.ephemeral-storage`, `requests.*` of the same and `hugepages-` prefixes)
- https://kubernetes.io/docs/concepts/workloads/pods/downward-api/ (what the downward API
  serves)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, holds_placeholder

CODE = "GPU048"
NAME = "invalid-downward-api-env"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

#: The pod fields a variable may take (validEnvDownwardAPIFieldPathExpressions).
FIELD_PATHS = frozenset(
    {
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.serviceAccountName",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
#: Resources a variable may take, after ``limits.`` or ``requests.``.
RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod" or pod.found_by != "table":
        return
    for container in pod.containers:
        env = container.data.get("env")
        for i, entry in enumerate(env if isinstance(env, list) else ()):
            source = entry.get("valueFrom") if isinstance(entry, Mapping) else None
            if not isinstance(source, Mapping):
                continue
            place = (*container.path, "env", i, "valueFrom")
            field = source.get("fieldRef")
            path = field.get("fieldPath") if isinstance(field, Mapping) else None
            if isinstance(path, str) and not holds_placeholder(path) and not _field_ok(path):
                yield Violation(
                    (*place, "fieldRef", "fieldPath"),
                    f"fieldPath {path[:80]} is no pod field a variable can take: the API server "
                    f"refuses the {pod.obj.kind}",
                    help=_field_help(path),
                    at="value",
                )
            ref = source.get("resourceFieldRef")
            resource = ref.get("resource") if isinstance(ref, Mapping) else None
            if (
                isinstance(resource, str)
                and not holds_placeholder(resource)
                and not _resource_ok(resource)
            ):
                yield Violation(
                    (*place, "resourceFieldRef", "resource"),
                    f"resourceFieldRef {resource[:80]} is not served by the downward API: "
                    f"the API server refuses the {pod.obj.kind}",
                    help="take only cpu, memory, ephemeral-storage or hugepages-* limits or "
                    "requests; write an accelerator's count as a value",
                    at="value",
                )


def _field_ok(path: str) -> bool:
    if path in FIELD_PATHS:
        return True
    for prefix in ("metadata.labels['", "metadata.annotations['"):
        if path.startswith(prefix) and path.endswith("']") and len(path) > len(prefix) + 2:
            return True
    return False


def _field_help(path: str) -> str:
    for prefix in ("metadata.labels.", "metadata.annotations."):
        if path.startswith(prefix):
            key = path[len(prefix) :]
            return f"write a label or annotation as {prefix[:-1]}['{key[:60]}']"
    return (
        "take metadata.name, metadata.namespace, metadata.uid, a label or annotation by key, "
        "spec.nodeName, spec.serviceAccountName or a status IP"
    )


def _resource_ok(resource: str) -> bool:
    kind, _, name = resource.partition(".")
    if kind not in ("limits", "requests"):
        return False
    return name in RESOURCES or name.startswith("hugepages-")
