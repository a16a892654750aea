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

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#where-resources-may-be-set
  (pod-level `spec.resources`)
- https://kubernetes.io/docs/tasks/configure-pod-container/assign-pod-level-resources/
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.resources import is_extended_resource
from gpulint.rule import RuleContext, Violation
from gpulint.workloads import PodSpec

CODE = "GPU030"
NAME = "extended-resource-in-pod-level-resources"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    resources = pod.spec.get("resources")
    if pod.location != "pod" or not isinstance(resources, dict):
        return
    for section in ("limits", "requests"):
        mapping = resources.get(section)
        if not isinstance(mapping, dict):
            continue
        for name in mapping:
            if is_extended_resource(name):
                yield Violation(
                    (*pod.path, "resources", section, name),
                    f"{name} in pod-level resources: they accept only cpu, memory and "
                    'hugepages-*, and the API server rejects the pod ("Unsupported value"); '
                    "ask for it in the resources.limits of the container that uses it",
                )
