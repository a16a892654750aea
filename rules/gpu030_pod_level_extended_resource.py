"""Extended resource in pod-level resources.

## What it does
Flags an extended resource (such as `nvidia.com/gpu`) under the pod spec's own `resources`
(the PodLevelResources feature), as opposed to a container's.

## Why it matters
Pod-level `resources` accept only `cpu`, `memory` and `hugepages-*`. The API server rejects
the pod with `Unsupported value` for anything else. Devices are allocated to containers, so a
GPU has to be asked for by the container that uses it.

## Example
```yaml
spec:
  resources:
    limits:
      nvidia.com/gpu: 1   # GPU030
  containers:
  - name: train
    image: pytorch/pytorch
```

## Use instead
```yaml
spec:
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      limits:
        nvidia.com/gpu: 1
```

## Fix safety
Unsafe: when the pod has a single container, moves the resource into that container's
`resources.limits` (created when absent); with several containers which one uses it is a
choice, and there is no fix.

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#where-resources-may-be-set
  (pod-level `spec.resources`)
- https://kubernetes.io/docs/tasks/configure-pod-container/assign-pod-level-resources/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    DeleteKey,
    MoveKey,
    PodSpec,
    Repair,
    RuleContext,
    Violation,
    is_extended_resource,
)

CODE = "GPU030"
NAME = "extended-resource-in-pod-level-resources"
SEVERITY = "error"
SCOPE = "pod"
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    resources = pod.spec.get("resources")
    if pod.location != "pod" or not isinstance(resources, dict):
        return
    regular = [c for c in pod.containers if c.section == "containers"]
    for section in ("limits", "requests"):
        mapping = resources.get(section)
        if not isinstance(mapping, dict):
            continue
        for name in mapping:
            if is_extended_resource(name):
                path = (*pod.path, "resources", section, name)
                yield Violation(
                    path,
                    f"{name} in pod-level resources: they accept only cpu, memory and "
                    'hugepages-*, and the API server rejects the pod ("Unsupported value"); '
                    "ask for it in the resources.limits of the container that uses it",
                    fix=_fix(path, name, regular, resources),
                )


def _fix(path: tuple[Any, ...], name: str, regular: list[Any], pod: dict[str, Any]) -> Any:
    """Into the single container's limits (no fix with several containers). A pod-level
    request next to a pod-level limit, or for what the container already asks, is deleted:
    the container's limit sets the request."""
    if len(regular) != 1:
        return None
    container = regular[0]
    limits = (container.resources or {}).get("limits")
    pod_limits = pod.get("limits")
    if (isinstance(limits, dict) and name in limits) or (
        path[-2] == "requests" and isinstance(pod_limits, dict) and name in pod_limits
    ):
        return Repair(f"delete the pod-level {name}", (DeleteKey(path, prune=2),), "unsafe")
    return Repair(
        f"move {name} into the limits of container {container.label}",
        (MoveKey(path, (*container.resources_path, "limits"), prune=2),),
        "unsafe",
    )
