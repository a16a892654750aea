"""The node-pool table ``gpulint/data/node-pools.json``: per API group and kind of a node-pool
object, where its taints, node labels, instance type, GPU count and scheduling requirements
live (:class:`Kind`, each row citing the API type), and the readers of the shapes those
fields take (:func:`taints_of`: Taint objects, eksctl's ``{key: "value:effect"}`` maps, AKS's
``key=value:Effect`` strings, GCP's ``NO_SCHEDULE`` effects). :mod:`gpulint.cluster.objects`
reads the objects with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, NamedTuple

from gpulint.data import data_path
from gpulint.k8s.taints import Taint

KeyPath = tuple[str, ...]

#: GCP's taint effects (google.container.v1.NodeTaint.Effect) as Kubernetes writes them.
_EFFECTS = {
    "NO_SCHEDULE": "NoSchedule",
    "PREFER_NO_SCHEDULE": "PreferNoSchedule",
    "NO_EXECUTE": "NoExecute",
}


class Kind(NamedTuple):
    """One row of ``gpulint/data/node-pools.json``."""

    group: str
    kind: str
    what: str
    role: str
    platform: str | None
    source: str
    pools: KeyPath | None = None
    name: tuple[KeyPath, ...] = (("metadata", "name"),)
    taints: tuple[KeyPath, ...] = ()
    labels: tuple[KeyPath, ...] = ()
    instance_types: tuple[KeyPath, ...] = ()
    accelerators: KeyPath | None = None
    requirements: KeyPath | None = None
    limits: KeyPath | None = None
    tolerations: KeyPath | None = None
    capacity: KeyPath | None = None
    weight: KeyPath | None = None
    refs: tuple[KeyPath, ...] = ()
    pool_label: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Kind:
        def path(key: str) -> KeyPath | None:
            return tuple(row[key]) if key in row else None

        def paths(key: str) -> tuple[KeyPath, ...]:
            return tuple(tuple(p) for p in row.get(key, ()))

        return cls(
            row["group"],
            row["kind"],
            row["what"],
            row["role"],
            row["platform"],
            row["source"],
            pools=path("pools"),
            name=paths("name") or (("metadata", "name"),),
            taints=paths("taints"),
            labels=paths("labels"),
            instance_types=paths("instance_types"),
            accelerators=path("accelerators"),
            requirements=path("requirements"),
            limits=path("limits"),
            tolerations=path("tolerations"),
            capacity=path("capacity"),
            weight=path("weight"),
            refs=paths("refs"),
            pool_label=row.get("pool_label"),
        )


@cache
def builtin_kinds() -> dict[tuple[str, str], tuple[Kind, ...]]:
    """The table's rows by ``(group, kind)`` (a kind may have several: eksctl's two lists)."""
    with open(data_path("gpulint.data", "node-pools.json"), encoding="utf-8") as fh:
        rows = json.load(fh)["kinds"]
    out: dict[tuple[str, str], tuple[Kind, ...]] = {}
    for row in rows:
        kind = Kind.from_row(row)
        out[(kind.group, kind.kind)] = (*out.get((kind.group, kind.kind), ()), kind)
    return out


@cache
def pool_labels() -> frozenset[str]:
    """The labels that carry a node pool's name (``eks.amazonaws.com/nodegroup``, ...)."""
    return frozenset(
        r.pool_label for rows in builtin_kinds().values() for r in rows if r.pool_label
    )


@cache
def markers() -> tuple[bytes, ...]:
    """Bytes one of which a file holds when it may hold a node-pool object, a
    RuntimeClass (whose ``scheduling.tolerations`` its pods get) or a
    MutatingWebhookConfiguration (which may change pods as they are created)."""
    kinds = {kind.encode() for group, kind in builtin_kinds() if group != "terraform"}
    return tuple(sorted(kinds | {b"RuntimeClass", b"MutatingWebhookConfiguration"}))


class Blocks(list):  # type: ignore[type-arg]
    """A list of Terraform blocks (``taint { ... }`` written once or more): a path of the
    table steps through one written once (``node_config``), as Terraform's schema nests it."""


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def at(data: Any, path: Sequence[str]) -> Any:
    for key in path:
        if isinstance(data, Blocks) and len(data) == 1:
            data = data[0]
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def effect_of(value: Any) -> str:
    if not isinstance(value, str) or not value:
        return "NoSchedule"
    return _EFFECTS.get(value, value)


def taints_of(rows: Any) -> list[Taint]:
    """Taint objects, eksctl's ``{key: "value:effect"}`` map, ``key=value:Effect`` strings, or
    a map of taint objects (the EKS Terraform module's ``taints = {gpu = {key = ...}}``)."""
    out = []
    if isinstance(rows, dict):
        if rows and all(isinstance(v, dict) for v in rows.values()):
            return taints_of(list(rows.values()))
        for key, text in rows.items():
            if isinstance(key, str) and key and isinstance(text, str):
                value, _, effect = text.rpartition(":")
                out.append(Taint(key, value, effect_of(effect)))
        return out
    for row in as_list(rows):
        if isinstance(row, str) and row:
            rest, colon, effect = row.rpartition(":")
            key, _, value = (rest if colon else row).partition("=")
            if key:
                out.append(Taint(key, value, effect_of(effect if colon else "")))
        elif isinstance(row, dict) and isinstance(row.get("key"), str) and row["key"]:
            raw = row.get("value")
            out.append(
                Taint(
                    row["key"],
                    raw if isinstance(raw, str) else "",
                    effect_of(row.get("effect")),
                )
            )
    return out
