"""Toleration the API server rejects.

## What it does
Flags a toleration that Kubernetes' API validation (`ValidateTolerations`) refuses, with the
finding at the value to change. Those are:

- `operator: Exists` with a `value` ("value must be empty when `operator` is 'Exists'"):
  `Exists` matches every value of the key, so a value is a contradiction, not a filter;
- an `operator` other than `Exists` or `Equal` (operators are case-sensitive: `exists` is
  rejected);
- an `effect` other than `NoSchedule`, `PreferNoSchedule` or `NoExecute` (again
  case-sensitive);
- `tolerationSeconds` with an effect other than `NoExecute` ("effect must be 'NoExecute' when
  `tolerationSeconds` is set": only an eviction can be delayed);
- no `key` with an operator other than `Exists` ("operator must be Exists when `key` is
  empty");
- a `key`, `operator`, `value` or `effect` that is not a string: `value: true` or
  `value: 1` unquoted is a YAML boolean or number, which the API server cannot decode into
  the string field ("cannot unmarshal bool into Go struct field Toleration...value of type
  string").

Every pod spec is checked, with or without GPUs: the API server rejects the whole object
either way. Only tolerations written in the pod spec itself are checked, not defaults a
workload kind shares between its pods (an Argo workflow's `spec.tolerations`), which would
be reported once per step. The comparison operators `Lt` and `Gt`, proposed behind an alpha
feature gate (KEP-5471), are left alone; key and value syntax (qualified names, label
values) is not checked.

## Why it matters
`kubectl apply` fails with `spec.tolerations[0].operator: Invalid value: ...` for a Pod or
a built-in workload (the pod template is validated with it). Where the pod spec sits in a
custom resource the API server does not validate as a pod (an Argo workflow, a Ray cluster),
the object is accepted and every pod its controller creates is rejected: nothing runs.

## Example
```yaml
tolerations:
- key: nvidia.com/gpu
  operator: Exists
  value: present          # GPU022
  effect: NoSchedule
```

## Use instead
```yaml
tolerations:
- key: nvidia.com/gpu
  operator: Exists
  effect: NoSchedule
```

## Options
None.

## References
- kubernetes `pkg/apis/core/validation/validation.go` (`ValidateTolerations`,
  `validateTaintEffect`)
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation

CODE = "GPU022"
NAME = "invalid-toleration"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

_OPERATORS = ("Equal", "Exists")
#: Alpha comparison operators (feature gate TaintTolerationComparisonOperators): a cluster
#: may accept them, so they are not reported.
_GATED = ("Lt", "Gt")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: The fields of a Toleration that are strings (core/v1 Toleration: key, operator, value,
#: effect); a YAML boolean or number there fails to decode.
_STRINGS = ("key", "operator", "value", "effect")


def _kind(value: Any) -> str:
    """What YAML made of an unquoted scalar: ``boolean`` (``true``, ``yes``), ``number``."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "mapping" if isinstance(value, Mapping) else "list"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod":
        return
    base = (*pod.path, "tolerations")
    for i, toleration in enumerate(pod.own_tolerations):
        if isinstance(toleration, Mapping):
            yield from _check_one(toleration, (*base, i))


def _check_one(toleration: Mapping[str, Any], at: tuple[Any, ...]) -> Iterator[Violation]:
    key, operator = toleration.get("key"), toleration.get("operator")
    value, effect = toleration.get("value"), toleration.get("effect")
    rejected = "the API server rejects this toleration"
    for field in _STRINGS:
        written = toleration.get(field)
        if written is not None and not isinstance(written, str):
            yield Violation(
                (*at, field),
                f"{rejected}: its {field} is a YAML {_kind(written)}, and a toleration's "
                f"{field} is a string",
                help=f"quote the {field} as written",
                at="value",
            )
    if operator == "Exists" and isinstance(value, str) and value:
        yield Violation(
            (*at, "value"),
            f"{rejected}: \"value must be empty when `operator` is 'Exists'\"; remove "
            f"value: {value} (Exists tolerates every value of the key), or write "
            "operator: Equal to tolerate only this value",
            at="value",
        )
    elif isinstance(operator, str) and operator and operator not in (*_OPERATORS, *_GATED):
        fix = next((o for o in _OPERATORS if o.lower() == operator.lower()), None)
        hint = f"write {fix} (operators are case-sensitive)" if fix else "write Exists or Equal"
        yield Violation(
            (*at, "operator"),
            f'{rejected}: operator "{operator}" is not supported (supported values: '
            f'"Equal", "Exists"); {hint}',
            at="value",
        )
    if isinstance(effect, str) and effect and effect not in _EFFECTS:
        fix = next((e for e in _EFFECTS if e.lower() == effect.lower()), None)
        hint = (
            f"write {fix} (effects are case-sensitive)"
            if fix
            else "write one of those, or leave effect out"
        )
        yield Violation(
            (*at, "effect"),
            f'{rejected}: effect "{effect}" is not supported (supported values: "NoSchedule", '
            f'"PreferNoSchedule", "NoExecute"); {hint}',
            at="value",
        )
    elif toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
        yield Violation(
            (*at, "effect") if "effect" in toleration else (*at, "tolerationSeconds"),
            f"{rejected}: \"effect must be 'NoExecute' when `tolerationSeconds` is set\"; "
            "write effect: NoExecute, or remove tolerationSeconds (only NoExecute taints "
            "evict, and tolerationSeconds delays an eviction)",
            at="value" if "effect" in toleration else "key",
        )
    if key in (None, "") and operator in (None, "", "Equal"):
        yield Violation(
            (*at, "operator") if "operator" in toleration else at,
            f"{rejected}: \"operator must be Exists when `key` is empty, which means 'match "
            "all values and all keys'\"; add the taint's key, or write operator: Exists to "
            "tolerate every taint",
            at="value",
        )
