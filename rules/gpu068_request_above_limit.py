"""Container request above its limit.

## What it does
Flags a container's `cpu`, `memory`, `ephemeral-storage` or `hugepages-*` request that is
larger than the limit the same container sets for it, at the request's value. Both must be
quantities (a placeholder is not judged, an invalid value is GPU005's); a resource with a
request and no limit is fine. Extended resources (`nvidia.com/gpu`) must equal their limit:
that is GPU002's.

Every pod template is checked, with or without GPUs: the API server rejects the whole object
either way (for an operator's kind, every pod the operator makes from it).

## Why it matters
A request is what the scheduler reserves and a limit what the container may use, so a
request may not exceed its limit: the API server refuses the pod with
`spec.containers[0].resources.requests: Invalid value: "32": must be less than or equal to
cpu limit of 16`. A training job whose CPU or memory figures were swapped never starts, and
its GPUs sit idle.

## Example
```yaml
resources:
  limits:
    cpu: 16
    memory: 12Gi
    nvidia.com/gpu: 1
  requests:
    cpu: 32        # GPU068
    memory: 16Gi   # GPU068
    nvidia.com/gpu: 1
```

## Use instead
```yaml
resources:
  limits:
    cpu: 32
    memory: 16Gi
    nvidia.com/gpu: 1
  requests:
    cpu: 16
    memory: 12Gi
    nvidia.com/gpu: 1
```

## Options
None.

## References
- kubernetes `pkg/apis/core/validation/validation.go` (`ValidateContainerResourceRequirements`:
  "must be less than or equal to %s limit of %s")
- https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#requests-and-limits
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import (
    PodSpec,
    ResourceEntry,
    RuleContext,
    Violation,
    container_entries,
    is_standard_compute,
    show_value,
)

CODE = "GPU068"
NAME = "request-above-limit"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    entries = tuple(container_entries(pod))
    limits: dict[tuple[int, str], ResourceEntry] = {}
    for entry in entries:
        if entry.section == "limits" and is_standard_compute(entry.name):
            limits[(id(entry.container), entry.name)] = entry
    for entry in entries:
        if entry.section != "requests" or not is_standard_compute(entry.name):
            continue
        written = limits.get((id(entry.container), entry.name))
        if written is None:
            continue
        request, limit = entry.amount.value, written.amount.value
        if request is None or limit is None or request <= limit:
            continue
        shown = show_value(written.value)
        yield Violation(
            entry.path,
            f"container {entry.container.label} requests {entry.name}: {show_value(entry.value)}, "
            f"above its limit {shown}: the API server rejects the pod",
            help=f'a request must be at most its limit ("must be less than or equal to '
            f'{entry.name} limit of {shown}"): lower the request, or raise the limit',
        )
