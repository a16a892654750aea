"""GPU resource name that no device plugin advertises.

## What it does
Flags a container resource name that looks like a GPU or accelerator resource but is not in
the device registry: a typo (`nvidia.com/gpus`), wrong case (`nvidia.com/GPU`), a key from
the wrong scheme (`aliyun.com/gpu-memory` instead of `aliyun.com/gpu-mem`), an unknown MIG
profile (`nvidia.com/mig-1g.6gb`), or a legacy name no node advertises any more
(`alpha.kubernetes.io/nvidia-gpu`). It suggests the closest real name.

## Why it matters
The scheduler only places a pod on a node that advertises every resource it asks for. No
node advertises a misspelt one, so the pod stays `Pending` forever with
`Insufficient nvidia.com/gpus`, and nothing in the API rejects it up front.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpus: 1   # GPU010
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Options
None. Add private device resources (`example.com/fpga`, an in-house sharing scheme) to the
registry in configuration.

## References
- DOMAIN.md §3 (device and sharing resource names, MIG profile table)
- `rules/devices.json` (the registry)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.resources import resource_entries
from gpulint.rule import RuleContext, Violation
from gpulint.workloads import PodSpec

CODE = "GPU010"
NAME = "unknown-gpu-resource-name"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    registry = ctx.registry
    for container in pod.containers:
        for entry in resource_entries(container):
            name = entry.name
            if name in registry.resources or not registry.looks_like_accelerator(name):
                continue
            legacy = registry.legacy.get(name)
            if legacy is not None:
                yield Violation(
                    entry.path,
                    f"{name} is no longer advertised by any node ({legacy.note}): the pod "
                    f"stays Pending; use {legacy.replacement}",
                )
                continue
            suggestion = registry.suggest(name)
            if suggestion is not None and suggestion.lower() == name.lower():
                hint = f"resource names are case-sensitive: write {suggestion}"
            elif suggestion is not None:
                hint = f"did you mean {suggestion}?"
            else:
                hint = "check the device plugin's documentation for the advertised name"
            yield Violation(
                entry.path,
                f"{name} is not a resource any GPU device plugin advertises: no node can "
                f"satisfy it and the pod stays Pending forever; {hint}",
            )
