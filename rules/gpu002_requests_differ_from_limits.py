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
    amount,
    container_entries,
    format_amount,
    is_extended_resource,
)

CODE = "GPU002"
NAME = "extended-resource-requests-differ-from-limits"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.operator_amounts:
        return  # an operator's amount (llmaz flavor), written into requests and limits both
    for entry in container_entries(pod):
        if entry.section != "requests" or not is_extended_resource(entry.name):
            continue
        limits = (entry.container.resources or {}).get("limits")
        if not isinstance(limits, dict) or entry.name not in limits:
            continue
        request, limit = entry.amount.value, amount(limits[entry.name]).value
        if request is None or limit is None or request == limit:
            continue
        shown = format_amount(limit)
        yield Violation(
            entry.path,
            f"request {entry.name}: {format_amount(request)} differs from its limit {shown}: "
            f'the API server rejects the pod ("must be equal to {entry.name} limit of {shown}"); '
            "delete the request, the limit alone sets it",
        )
