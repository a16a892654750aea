"""Fractional quantity for an extended resource.

## What it does
Flags a value under `limits` or `requests` of an extended resource that is not a whole
number: `0.5`, `500m`, `1.5`, `1.0001`.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
Extended resources are integer-only. The API server rejects the pod: `must be an integer`.
Defaulting first rounds a quantity up to milli precision, so `1.0001` becomes `1001m` and is
rejected too. A fraction of a GPU can only be expressed through a sharing scheme's own
resources (time-slicing replicas, Alibaba cGPU memory, HAMi cores, ...). Some clouds rewrite
fractional GPUs in a mutating webhook before validation; there, lower this rule's severity.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: 0.5   # GPU004
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
# or, on a cluster with time-slicing (renameByDefault): nvidia.com/gpu.shared: 1
```

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#quantities
  (`ValidateResourceQuantityValue`, `IsIntegerResourceName`)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    container_entries,
    is_extended_resource,
    is_integer,
    milli_round_up,
    show_value,
)

CODE = "GPU004"
NAME = "fractional-extended-resource"
SEVERITY = "error"
SCOPE = "pod"
AS_WRITTEN = True
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for entry in container_entries(pod):
        if not is_extended_resource(entry.name):
            continue
        value = entry.amount.value
        if value is None or value < 0 or is_integer(milli_round_up(value)):
            continue
        yield Violation(
            entry.path,
            f"{entry.name}: {show_value(entry.value)} is not a whole number: extended resources "
            'are integer-only and the API server rejects the pod ("must be an integer"); ask for '
            "whole devices, or use a GPU-sharing resource for a fraction of one",
            at="value",
        )
