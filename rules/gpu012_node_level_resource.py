"""Node-level resource requested by a container.

## What it does
Flags a container that requests a resource the registry marks as not a container request,
such as `aliyun.com/gpu-count`.

## Why it matters
`aliyun.com/gpu-count` is the number of GPUs on an ACK node, reported by the gpushare device
plugin; it is not a share of compute. A container asking for `aliyun.com/gpu-count: 25`
hoping for 25% of a GPU asks for twenty-five GPUs. A share of compute is
`aliyun.com/gpu-core.percentage`; sharing across several GPUs is asked for with the pod
label `aliyun.com/gpu-count: "2"`.

## Example
```yaml
resources:
  limits:
    aliyun.com/gpu-mem: 8
    aliyun.com/gpu-count: 25   # GPU012 (meant: 25% of GPU compute)
```

## Use instead
```yaml
resources:
  limits:
    aliyun.com/gpu-mem: 8
    aliyun.com/gpu-core.percentage: 25
```

## Fix safety
Unsafe: only `aliyun.com/gpu-count` written as a share of compute (a whole number from 10
to 100, in a container that does not already ask for `aliyun.com/gpu-core.percentage`) is
renamed to `aliyun.com/gpu-core.percentage`; a small count means the pod label, which is not a
rename, and has no fix.

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#sharing-schemes-and-their-values
  (Alibaba ACK `aliyun.com/gpu-count`)
- AliyunContainerService/gpushare-device-plugin `pkg/gpu/nvidia/const.go`
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, RenameKey, Repair, RuleContext, Violation, container_entries

CODE = "GPU012"
NAME = "node-level-gpu-resource-in-container"
SEVERITY = "warning"
SCOPE = "pod"
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for entry in container_entries(pod):
        resource = ctx.registry.get(entry.name)
        if resource is None or resource.container_request:
            continue
        advice = resource.advice or f"{entry.name} is not meant to be requested by a container"
        fix = _fix(entry.name, entry.path, entry.container.resources)
        yield Violation(entry.path, advice, fix=fix)


#: A node-level name -> the container resource it is written for when its value is a share.
SHARE_NAMES = {"aliyun.com/gpu-count": "aliyun.com/gpu-core.percentage"}


def _fix(name: str, path: tuple[object, ...], resources: object) -> Repair | None:
    """The rename where the intent is clear: a value from 10 to 100 is a percentage (no
    ACK node shares that many GPUs); a small count means the pod label (no rename)."""
    to = SHARE_NAMES.get(name)
    section = resources.get(path[-2]) if isinstance(resources, dict) else None
    if to is None or not isinstance(section, dict) or to in section:
        return None
    value = section.get(name)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 3:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 10 <= value <= 100:
        return None
    return Repair(f"rename {name} to {to}", (RenameKey(path, to),), "unsafe")
