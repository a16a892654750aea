"""Value a GPU-sharing scheme cannot satisfy.

## What it does
Flags a GPU-sharing resource whose value is outside what its scheme allows, using the
constraints in the device registry: `aliyun.com/gpu-core.percentage` must be 5-100 in steps
of 5; `tencent.com/vcuda-core` must be below 100 (a share of one GPU) or a multiple of 100
(whole GPUs), so `150` is invalid; percentages (`nvidia.com/gpucores`,
`nvidia.com/gpumem-percentage`, Volcano `vgpu-cores`, ...) cannot exceed 100.

A resource the repository's own HAMi configuration renames (`resourceCoreName:
hami.io/vgpu-cores` in the `hami-scheduler-device` ConfigMap, `resourceCores` in the chart's
values) keeps its default name's range, and the finding names the line that renames it (a
`related` place of kind `evidence`).

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
The API server accepts any whole number, but the sharing scheme's scheduler extender or
device plugin cannot allocate it: the pod stays Pending, or fails at admission on the node.

## Example
```yaml
resources:
  limits:
    tencent.com/vcuda-core: 150   # GPU011
```

## Use instead
```yaml
resources:
  limits:
    tencent.com/vcuda-core: 200   # two whole GPUs, or 50 for half of one
```

## Options
None. Constraints come from the registry; override an entry in configuration if your
scheme is configured differently.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#sharing-schemes-and-their-values
  (Alibaba cGPU, Tencent gpu-manager, HAMi, Volcano)
- `gpulint/data/devices.json` (`constraints` of each entry)
- Project-HAMi/HAMi `charts/hami/templates/scheduler/device-configmap.yaml`,
  `charts/hami/values.yaml` (the configurable resource names)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import (
    DeviceResource,
    PodSpec,
    RuleContext,
    Violation,
    container_entries,
    is_integer,
    show_value,
)

CODE = "GPU011"
NAME = "gpu-sharing-value-out-of-range"
SEVERITY = "error"
SCOPE = "pod"
AS_WRITTEN = True
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for entry in container_entries(pod):
        resource = ctx.registry.get(entry.name)
        if resource is None or resource.constraints is None:
            continue
        value = entry.amount.value
        if value is None or value < 0 or not is_integer(value):
            continue  # GPU004/GPU005 report those
        problem = ctx.registry.constraint_error(resource, value)
        if problem is not None:
            yield Violation(
                entry.path,
                f"{entry.name}: {show_value(entry.value)} {problem}, so the pod will not start",
                at="value",
                help=_renamed(resource),
                related=resource.evidence(),
            )


def _renamed(resource: DeviceResource) -> str | None:
    """For a name the run's own HAMi configuration gives a resource, which one it is."""
    if not resource.said:
        return None
    return f"the project's HAMi configuration names it ({resource.setting}, {resource.said})"
