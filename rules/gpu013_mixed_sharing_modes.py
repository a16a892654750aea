"""Pod mixes GPU sharing modes that no node offers together.

## What it does
Flags a pod whose GPU resources belong to sharing schemes that never run on the same node,
such as `nvidia.com/gpu` (exclusive GPUs) with `aliyun.com/gpu-mem` (Alibaba GPU sharing).
Reading the pod's resources in file order, it reports the first key of each mode that no
scheme can serve together with the resources before it: one finding per extra mode, at that
key. Resources of different accelerator hardware (an NVIDIA and an AMD GPU) are not compared:
each vendor's device plugin runs its own mode on a node that has both. A device plugin's
resource beside a claim for NVIDIA's DRA driver, the other way to get the same GPUs, is
GPU066's.

A resource written `null` is not counted: it asks for nothing a node gives (GPU006's
finding; in a Kustomize strategic-merge patch, the key's deletion).

## Why it matters
A node runs one GPU scheduling mode at a time. Alibaba ACK: "a node supports only one GPU
scheduling mode ... enabling one mode sets the extended resources of all other modes to 0".
A pod that needs two modes can never be scheduled and stays Pending.

## Example
```yaml
containers:
- name: train
  resources:
    limits:
      nvidia.com/gpu: 1
      aliyun.com/gpu-mem: 8   # GPU013
```

## Use instead
```yaml
containers:
- name: train
  resources:
    limits:
      aliyun.com/gpu-mem: 8   # one scheme for the whole pod
```

## Options
None. Schemes come from the registry (`schemes` of each entry).

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#one-sharing-mode-per-node
  (Alibaba ACK `ack.node.gpu.schedule`: one GPU scheduling mode per node)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, RuleContext, Violation, accelerator_entries

CODE = "GPU013"
NAME = "mixed-gpu-sharing-modes"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    entries = []
    for entry in accelerator_entries(pod, ctx.registry):
        resource = ctx.registry.get(entry.name)
        if resource is None or not resource.schemes or not entry.devices_asked:
            continue
        entries.append((entry, resource))
    # "The second mode" is the one written second: init containers may follow containers in
    # the file, and requests may come before limits.
    doc = pod.obj.doc
    entries.sort(key=lambda pair: doc.key_span(pair[0].path)[:2])
    # Modes exclude each other per GPU: a node with NVIDIA and AMD cards runs one mode for
    # each vendor's device plugin, so only resources of the same hardware are compared.
    current: dict[str, frozenset[str]] = {}
    firsts: dict[str, str] = {}
    conflicts: list[frozenset[str]] = []
    for entry, resource in entries:
        hardware = resource.hardware
        if hardware not in current:
            current[hardware], firsts[hardware] = resource.schemes, entry.name
            continue
        first = firsts[hardware]
        common = current[hardware] & resource.schemes
        if common:
            current[hardware] = common
            continue
        if any(resource.schemes & other for other in conflicts):
            continue  # another key of a mode already reported
        conflicts.append(resource.schemes)
        yield Violation(
            entry.path,
            f"{entry.name} cannot share a pod with {first}: no node offers both GPU sharing "
            "modes, so the pod can never be scheduled",
            help=f"ask for one mode's resources only ({_modes(resource.schemes)} vs "
            f"{_modes(current[hardware])}: a node runs one)",
        )


def _modes(schemes: frozenset[str]) -> str:
    names = sorted(schemes)
    return " / ".join(names[:3]) + (" / ..." if len(names) > 3 else "")
