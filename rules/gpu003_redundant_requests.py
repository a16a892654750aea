"""Extended resource request repeats its limit.

## What it does
Flags an extended resource whose `resources.requests` value equals its `resources.limits`
value.

An operator's own amount that its controller writes into a container's requests and limits
both (an llmaz flavor's `requests`; the workload table's `operator_amounts`) is not a
container's `requests`, and is not flagged.

## Why it matters
It is accepted, but redundant: for extended resources the limit alone sets the request
(`SetDefaults_Pod` copies limits into missing requests). Two copies of the same number drift
apart in the next edit, and then the API server rejects the pod (GPU002).

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
  requests:
    nvidia.com/gpu: 1   # GPU003
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Fix safety
Safe: deletes the request (and `requests:` when nothing else is left in it); the limit sets
the same request.

## Options
None. Not in the default selection (a style rule: vendors' own docs write requests equal to
limits, and the pod runs the same): turn it on with `--select ALL`, `--extend-select GPU003`
or `extend-select: [GPU003]` in the configuration.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#requests-and-limits
  (`SetDefaults_Pod` copies a limit into a missing request)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import (
    DeleteKey,
    PodSpec,
    Repair,
    RuleContext,
    Violation,
    extended_requests,
)

CODE = "GPU003"
NAME = "redundant-extended-resource-requests"
SEVERITY = "warning"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
OPTIONS: dict[str, object] = {}
#: A style rule, out of the default selection: vendors' own docs write requests equal to
#: limits, and it is harmless. ``--select ALL``, ``--extend-select GPU003`` turn it on.
OPT_IN = True
FIX = "safe"  # what it changes: the "Fix safety" section


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for entry, written in extended_requests(pod):
        if written is None:
            continue
        request, limit = entry.amount.value, written.value
        if request is None or request != limit:
            continue
        yield Violation(
            entry.path,
            f"request {entry.name} repeats its limit: for extended resources the limit alone "
            "sets the request; delete this line so the two cannot drift apart",
            fix=Repair(f"delete the request for {entry.name}", (DeleteKey(entry.path),)),
        )
