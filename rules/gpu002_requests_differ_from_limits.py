"""Extended resource request differs from its limit.

## What it does
Flags an extended resource whose `resources.requests` value differs from its
`resources.limits` value in the same container.

An operator's own amount that its controller writes into a container's requests and limits
both (an llmaz flavor's `requests`; the workload table's `operator_amounts`) is not a
container's `requests`, and is not flagged.

## Why it matters
Extended resources are never overcommitted: the request must equal the limit. The API server
rejects the pod on the request's path: `must be equal to nvidia.com/gpu limit of 2`.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: 2
  requests:
    nvidia.com/gpu: 1   # GPU002
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 2
```

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#requests-and-limits
  (kubernetes `validateResourceRequirements`)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    extended_requests,
    format_amount,
)

CODE = "GPU002"
NAME = "extended-resource-requests-differ-from-limits"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for entry, written in extended_requests(pod):
        if written is None:
            continue
        request, limit = entry.amount.value, written.value
        if request is None or limit is None or request == limit:
            continue
        shown = format_amount(limit)
        yield Violation(
            entry.path,
            f"request {entry.name}: {format_amount(request)} differs from its limit {shown}: "
            f'the API server rejects the pod ("must be equal to {entry.name} limit of {shown}"); '
            "delete the request, the limit alone sets it",
        )
