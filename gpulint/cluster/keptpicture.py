"""A project's cluster picture before its node pools (:class:`gpulint.cluster.evidence.Base`) as
JSON data, for the project's cache (:meth:`gpulint.util.factcache.FactCache.built`), and read
back field by field: a cache file is data a pull request can write (signed, but checked all
the same)."""

from __future__ import annotations

from typing import Any

from gpulint.cluster.evidence import Base
from gpulint.cluster.known import Disputed, Evidence, KnownTaint
from gpulint.k8s.taints import Taint


def base_json(base: Base) -> dict[str, Any]:
    """``base`` as JSON data."""
    return {
        "t": [
            [
                k.taint.key,
                k.taint.value,
                k.taint.effect,
                sorted(k.taint.hardware) if k.taint.hardware is not None else None,
                k.any_value,
                k.evidence.what,
                [list(place) for place in k.evidence.places],
                k.resource,
                k.pooled,
                k.agent,
                k.any_effect,
                k.witnesses,
                k.pods,
            ]
            for k in base.taints
        ],
        "n": base.gpu_pods,
        "d": [
            [d.key, d.evidence.what, [list(p) for p in d.evidence.places]] for d in base.disputed
        ],
    }


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _places(value: Any) -> tuple[tuple[str, int], ...] | None:
    if not isinstance(value, list):
        return None
    out = []
    for place in value:
        if place.__class__ is not list or len(place) != 2:
            return None
        label, line = place
        if label.__class__ is not str or line.__class__ is not int or line < 0:
            return None
        out.append((label, line))
    return tuple(out)


def base_from_json(entry: Any) -> Base | None:
    """What :func:`base_json` wrote, checked field by field: None when it is not that."""
    if not isinstance(entry, dict):
        return None
    rows, pods, disputed = entry.get("t"), entry.get("n"), entry.get("d")
    if not (isinstance(rows, list) and _count(pods) and isinstance(disputed, list)):
        return None
    taints: list[KnownTaint] = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 13):
            return None
        key, value, effect, hardware, any_value, what, where, resource = row[:8]
        pooled, agent, any_effect, witnesses, of = row[8:]
        places = _places(where)
        if (
            places is None
            or not all(_text(v) for v in (key, value, effect, what))
            or not (hardware is None or (isinstance(hardware, list) and all(map(_text, hardware))))
            or not all(isinstance(v, bool) for v in (any_value, pooled, agent, any_effect))
            or not (resource is None or _text(resource))
            or not (_count(witnesses) and _count(of))
        ):
            return None
        taint = Taint(key, value, effect, frozenset(hardware) if hardware is not None else None)
        taints.append(
            KnownTaint(
                taint,
                any_value,
                Evidence(what, places),
                resource,
                pooled=pooled,
                agent=agent,
                any_effect=any_effect,
                witnesses=witnesses,
                pods=of,
            )
        )
    out: list[Disputed] = []
    for row in disputed:
        if not (isinstance(row, list) and len(row) == 3 and _text(row[0]) and _text(row[1])):
            return None
        places = _places(row[2])
        if places is None:
            return None
        out.append(Disputed(row[0], Evidence(row[1], places)))
    assert isinstance(pods, int)
    return Base(tuple(taints), pods, tuple(out))
