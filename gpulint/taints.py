"""Taints and tolerations, matched exactly as Kubernetes does.

The facts: docs/domain.md#taints-and-tolerations.

``k8s.io/api/core/v1/toleration.go`` ``ToleratesTaint``: an empty effect matches every effect;
an empty key matches every key (with ``Exists``, a blanket toleration); ``Exists`` matches any
value; a missing operator means ``Equal``; any other operator tolerates nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

#: The seed convention: ``kubectl taint nodes <gpu-node> nvidia.com/gpu=present:NoSchedule``.
DEFAULT_TAINTS: list[dict[str, Any]] = [
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule", "hardware": ["nvidia"]}
]

#: JSON Schema of the ``taints`` option shared by GPU020 and GPU021.
TAINTS_OPTION: dict[str, Any] = {
    "type": "array",
    "description": (
        "The taints on the cluster's GPU nodes. An empty list turns the toleration rules off "
        "(GKE adds the toleration itself). `hardware` limits a taint to pods asking for that "
        "accelerator vendor's resources (registry `hardware`); omit it for every accelerator."
    ),
    "items": {
        "type": "object",
        "required": ["key"],
        "additionalProperties": False,
        "properties": {
            "key": {"type": "string", "minLength": 1},
            "value": {"type": "string"},
            "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
            "hardware": {"type": "array", "items": {"type": "string"}},
        },
    },
    "default": DEFAULT_TAINTS,
}


class Taint(NamedTuple):
    key: str
    value: str
    effect: str
    hardware: frozenset[str] | None = None

    @classmethod
    def from_option(cls, row: Mapping[str, Any]) -> Taint:
        hw = row.get("hardware")
        return cls(
            row["key"],
            row.get("value", ""),
            row.get("effect", "NoSchedule"),
            frozenset(hw) if hw is not None else None,
        )

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"

    def toleration_hint(self) -> str:
        return f"{{key: {self.key}, operator: Exists, effect: {self.effect}}}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def tolerates(toleration: Any, taint: Taint) -> bool:
    """ToleratesTaint, line for line."""
    if not isinstance(toleration, Mapping):
        return False
    effect = _text(toleration.get("effect"))
    if effect and effect != taint.effect:
        return False
    key = _text(toleration.get("key"))
    if key and key != taint.key:
        return False
    operator = _text(toleration.get("operator"))
    if operator in ("", "Equal"):
        return _text(toleration.get("value")) == taint.value
    return operator == "Exists"


def taints_from_options(options: Mapping[str, Any]) -> list[Taint]:
    rows: Sequence[Mapping[str, Any]] = options.get("taints", DEFAULT_TAINTS)
    return [Taint.from_option(r) for r in rows]
