"""Extended resource requested without a limit.

## What it does
Flags an extended resource (any domain-prefixed name such as `nvidia.com/gpu`) that appears
under a container's `resources.requests` but not under its `resources.limits`.

An operator's own amount that its controller writes into a container's requests and limits
both (an llmaz flavor's `requests`; the workload table's `operator_amounts`) is not a
container's `requests`, and is not flagged. A bare `resources` block of a custom resource
that gpulint's workload table does not describe (found by its shape) is `info`: the API
server rejects the pods only if the operator copies it into their containers as written,
which gpulint cannot tell.

## Why it matters
Extended resources cannot be overcommitted, so Kubernetes requires a limit for them. The API
server rejects the pod, and the Deployment, Job or other template that would create it:
`spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable
resources`. A GPU written only under `requests` is the most common GPU manifest mistake
(truenas/charts#1156, kubeflow/pipelines#346).

## Example
```yaml
resources:
  requests:
    nvidia.com/gpu: 1   # GPU001
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1   # the request defaults to the limit
```

## Fix safety
Safe: moves the request under `limits` (creating `limits:` when absent); the API server
rejected the pod before, and the limit sets the same request.

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#requests-and-limits
  (kubernetes `validateResourceRequirements`, `IsOvercommitAllowed`)
- https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import (
    MoveKey,
    PodSpec,
    Repair,
    RuleContext,
    Violation,
    extended_requests,
    in_chart_values,
)

CODE = "GPU001"
NAME = "extended-resource-requests-without-limits"
SEVERITY = "error"
SCOPE = "pod"
FIX = "safe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    # A bare resources block of a custom resource no workload row describes: whether its
    # operator writes it into a container as it is, is not known.
    kind = pod.obj.kind
    unknown = (
        pod.found_by == "shape"
        and pod.location == "resources"
        and not in_chart_values(pod.obj, pod.path)
    )
    for entry, limit in extended_requests(pod):
        if limit is not None:
            continue
        if unknown:
            yield Violation(
                entry.path,
                f"{entry.name} is requested without a limit: the API server rejects the pods "
                f"{kind[:40]} makes if its operator copies these resources into their containers",
                help="move it under resources.limits, which also sets the request (assumed: "
                f"the operator of {kind[:40]} writes resources as they are)",
                severity="info",
                fix=Repair(
                    f"move {entry.name} under resources.limits",
                    (MoveKey(entry.path, (*entry.path[:-2], "limits")),),
                ),
            )
            continue
        yield Violation(
            entry.path,
            f"{entry.name} is requested without a limit: the API server rejects the pod; move "
            "it under resources.limits, which also sets the request",
            fix=Repair(
                f"move {entry.name} under resources.limits",
                (MoveKey(entry.path, (*entry.path[:-2], "limits")),),
            ),
        )
