"""Unparseable or negative quantity for an extended resource, or any resource of a GPU pod.

## What it does
Flags a value under `limits` or `requests` of an extended resource that is not a Kubernetes
quantity at all (`one`, `1K`, `"2 "`, `true`) or is negative (`-1`); in a GPU pod, the
same for `cpu`, `memory`, `ephemeral-storage` and `hugepages-*` (`cpu: 1000,`), since the
whole pod is rejected with it. Template placeholders (`${CPU}`) are left alone.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
The API server rejects the manifest: an unparseable value fails decoding with `quantities
must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`, a negative
one fails validation with `must be greater than or equal to 0`. `K` is not a suffix (`k` is),
and quantities contain no whitespace or underscores. A value padded with spaces (`"2 "`) is
rejected by `resource.ParseQuantity`; the API server's JSON decoder trims it today, under a
`TODO: Remove support for leading/trailing whitespace` in `Quantity.UnmarshalJSON`, so it is
reported with that explanation.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: one   # GPU005
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#quantities
  (quantity grammar, `ValidateResourceQuantityValue`)
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gpulint.api import (
    PodSpec,
    QuantityError,
    RuleContext,
    Violation,
    container_entries,
    gpu_demand,
    is_extended_resource,
    is_standard_compute,
    parse_quantity,
    show_value,
)

CODE = "GPU005"
NAME = "invalid-extended-resource-quantity"
SEVERITY = "error"
SCOPE = "pod"
AS_WRITTEN = True
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    gpu: bool | None = None
    for entry in container_entries(pod):
        if not is_extended_resource(entry.name):
            if not is_standard_compute(entry.name):
                continue
            if entry.amount.error is None and not _negative(entry.amount.value):
                continue  # most values: no need to ask whether it is a GPU pod
            if gpu is None:
                gpu = gpu_demand(pod, ctx.registry, ctx.claims).gpu
            if not gpu:
                continue
        amount = entry.amount
        if amount.error is not None and _padded(entry.value):
            yield Violation(
                entry.path,
                f"{entry.name}: {_quoted(entry.value)} has whitespace around the number, which "
                "resource.ParseQuantity rejects",
                at="value",
                help="write it without spaces (the API server's JSON decoder trims them today "
                'only under a "TODO: Remove support for leading/trailing whitespace")',
            )
        elif amount.error is not None:
            yield Violation(
                entry.path,
                f"{entry.name}: {_quoted(entry.value)} is not a Kubernetes quantity: the API "
                "server rejects the manifest",
                at="value",
                help=(
                    "write a whole number such as 1"
                    if is_extended_resource(entry.name)
                    else "write a quantity such as 2, 500m or 4Gi"
                )
                + f" (the API server says: {amount.error})",
            )
        elif amount.value is not None and amount.value < 0:
            yield Violation(
                entry.path,
                f"{entry.name}: {show_value(entry.value)} is negative: the API server rejects the "
                'pod ("must be greater than or equal to 0")',
                at="value",
            )


def _quoted(value: object) -> str:
    """``repr`` of the value as written, shortened when long (resources.show_value)."""
    shown = repr(value)
    return shown if len(shown) <= 42 else show_value(value)


def _padded(value: object) -> bool:
    """A string that is a valid quantity once the surrounding whitespace is trimmed."""
    if not isinstance(value, str) or value == value.strip():
        return False
    try:
        parse_quantity(value.strip())
    except QuantityError:
        return False
    return True


def _negative(value: Decimal | None) -> bool:
    return value is not None and value < 0
