"""Which taint the GPU pods of a project agree on (:mod:`gpulint.cluster.evidence`): each pod's
tolerations as the ways it tolerates each key, a consensus only on a whole taint that every
pod tolerating the key tolerates, and the per-file record the cache keeps
(:mod:`gpulint.util.factcache`), read back field by field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gpulint.cluster.known import Disputed, Evidence, KnownTaint
from gpulint.k8s.taints import Taint, capacity_taint

#: Taint keys every cluster's nodes may carry: tolerating them says nothing of GPU nodes.
#: Kubernetes' well-known labels of every node (architecture, OS, zone, host name) are among
#: them: GKE taints its Arm nodes ``kubernetes.io/arch=arm64:NoSchedule``
#: (https://cloud.google.com/kubernetes-engine/docs/how-to/prepare-arm-workloads-for-deployment),
#: and pods of any kind tolerate that to run there.
_GENERIC_PREFIXES = (
    "node.kubernetes.io/",
    "node-role.kubernetes.io/",
    "node.cloudprovider",
    "topology.kubernetes.io/",
)
_GENERIC_KEYS = frozenset(
    {
        "kubernetes.io/arch",
        "kubernetes.io/os",
        "kubernetes.io/hostname",
        "CriticalAddonsOnly",
        "ToBeDeletedByClusterAutoscaler",
        # GKE's own, on nodes of one feature (queued provisioning), not of every GPU pool.
        "cloud.google.com/gke-queued",
    }
)
#: A file's record read back: its GPU pods (hardware, and per key the ways and the line) and
#: its node agents' taints (key, taint, any value, agent, line).
Record = tuple[
    list[tuple[list[str], list[tuple[str, list["_Shape"], int]]]],
    list[tuple[str, Taint, bool, str, int]],
]


def generic_key(key: str) -> bool:
    """Keys every cluster's nodes may carry, and Spot or preemptible capacity taints
    (:data:`gpulint.k8s.taints.CAPACITY_TAINT_KEYS`): neither is the GPU nodes' taint."""
    return key in _GENERIC_KEYS or key.startswith(_GENERIC_PREFIXES) or capacity_taint(key)


#: Distinct tolerations of one key a consensus is looked for among (more: the pods disagree).
_MAX_SHAPES = 8

#: How a pod tolerates a key: ``(value, effect)``, None for "any" (``Exists``; no effect).
_Shape = tuple["str | None", "str | None"]


def _covers(shape: _Shape, taint: _Shape) -> bool:
    """Whether a toleration of this shape tolerates every taint ``taint`` describes (with
    the operator's meaning: ``Exists`` tolerates every value, no effect every effect)."""
    value, effect = shape
    return (value is None or value == taint[0]) and (effect is None or effect == taint[1])


def pod_shapes(
    tolerations: Sequence[Any], lines: Sequence[int]
) -> list[tuple[str, list[_Shape], int]]:
    """A pod's tolerations as what the consensus counts: per key (built-in keys, invalid and
    ``PreferNoSchedule`` tolerations left out), the ways it tolerates it, and the line of its
    first toleration of the key."""
    mine: dict[str, tuple[list[_Shape], int]] = {}
    for toleration, line in zip(tolerations, lines, strict=True):
        if not isinstance(toleration, Mapping):
            continue
        key = toleration.get("key")
        if not isinstance(key, str) or not key or generic_key(key):
            continue
        effect = toleration.get("effect") or None
        if effect is not None and effect not in ("NoSchedule", "NoExecute"):
            continue
        operator = toleration.get("operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            continue  # GPU022's: the API server rejects it
        raw = toleration.get("value")
        if operator == "Equal" and raw is not None and not isinstance(raw, str):
            continue
        value = (raw or "") if operator == "Equal" else None
        shapes, _ = mine.setdefault(key, ([], line))
        if (value, effect) not in shapes:
            shapes.append((value, effect))
    return [(key, shapes, line) for key, (shapes, line) in mine.items()]


class Tally:
    """Tolerations of the project's GPU pods, per taint key: each pod's ways of tolerating
    the key (:data:`_Shape`), counted once a pod."""

    __slots__ = ("keys", "pods")

    def __init__(self) -> None:
        self.pods = 0
        #: key -> [(the pod's shapes, its first toleration's place, its hardware)]
        self.keys: dict[str, list[tuple[frozenset[_Shape], tuple[str, int], frozenset[str]]]] = {}

    def add(
        self,
        label: str,
        tolerations: Sequence[Any],
        lines: Sequence[int],
        hardware: Iterable[str] = (),
    ) -> None:
        self.add_shapes(label, pod_shapes(tolerations, lines), hardware)

    def add_shapes(
        self, label: str, keys: Iterable[tuple[str, Iterable[_Shape], int]], hardware: Iterable[str]
    ) -> None:
        """One GPU pod: each key it tolerates, the ways it does (:func:`pod_shapes`), and the
        line of its first toleration of the key."""
        self.pods += 1
        kinds = frozenset(hardware)
        for key, shapes, line in keys:
            self.keys.setdefault(key, []).append((frozenset(shapes), (label, line), kinds))

    def agreed(self) -> tuple[list[KnownTaint], list[Disputed]]:
        """The taints the GPU pods agree on, and the keys they tolerate in ways no one taint
        satisfies. A taint is agreed on when at least two GPU pods, and more than half of
        them, tolerate its key, and every one of them tolerates that same whole taint (key,
        value and effect, with the operator's meaning): never a majority per field. A pod
        that tolerates the key otherwise makes it disputed: gpulint then assumes, at
        ``info``, and says so."""
        out: list[KnownTaint] = []
        disputed: list[Disputed] = []
        for key, pods in self.keys.items():
            count = len(pods)
            if count < 2 or count * 2 <= self.pods:
                continue
            # In file and line order, whatever order the files were read in (a file the
            # cache vouches for is added before the ones read): one verdict either way.
            places = tuple(sorted(place for _, place, _ in pods))
            taint = _common(pods)
            if taint is None:
                what = (
                    f"{count} of the {self.pods} GPU pods of this project tolerate it differently"
                )
                disputed.append(Disputed(key, Evidence(what, places)))
                continue
            value, effect = _witnessed(taint, pods)
            kinds = frozenset().union(*(k for _, _, k in pods))
            what = f"tolerated by {count} of the {self.pods} GPU pods of this project"
            known = Taint(key, value or "", effect or "NoSchedule", kinds or None)
            evidence = Evidence(what, places)
            out.append(
                KnownTaint(
                    known,
                    value is None,
                    evidence,
                    key,
                    any_effect=effect is None,
                    witnesses=count,
                    pods=self.pods,
                )
            )
        return out, disputed


def _common(
    pods: Sequence[tuple[frozenset[_Shape], tuple[str, int], frozenset[str]]],
) -> _Shape | None:
    """The most precise taint every pod tolerates, among the ways the pods tolerate it (None:
    none does, or the pods tolerate the key in more ways than :data:`_MAX_SHAPES`). Linear:
    at most that many candidates, each checked against every pod's shapes once."""
    candidates: set[_Shape] = set()
    for shapes, _, _ in pods:
        candidates |= shapes
        if len(candidates) > _MAX_SHAPES:
            return None
    agreed = [
        c for c in candidates if all(any(_covers(s, c) for s in shapes) for shapes, _, _ in pods)
    ]
    if not agreed:
        return None
    # The most precise: a named value over any value, a named effect over any effect.
    return max(agreed, key=lambda c: (c[0] is not None, c[1] is not None, c[0] or "", c[1] or ""))


def _witnessed(
    taint: _Shape,
    pods: Sequence[tuple[frozenset[_Shape], tuple[str, int], frozenset[str]]],
) -> _Shape:
    """The agreed taint with a value or an effect that fewer than two pods name left open:
    a pod that tolerates the key with ``Exists`` (or with no effect) tolerates the named
    value too, but says nothing of it, so one pod's value is no consensus on it (the same
    two pods a consensus needs)."""
    value, effect = taint
    if value is not None and sum(any(s[0] == value for s in shapes) for shapes, _, _ in pods) < 2:
        value = None
    if effect is not None and sum(any(s[1] == effect for s in shapes) for shapes, _, _ in pods) < 2:
        effect = None
    return value, effect


def _text(value: Any) -> bool:
    return isinstance(value, str)


def from_json(entry: Any) -> Record | None:
    """A record as :meth:`Gatherer._walk` writes it, checked field by field (a cache file is
    data a pull request can write): None when it is not one."""
    if not isinstance(entry, dict):
        return None
    pods, agents = entry.get("p"), entry.get("a")
    if not isinstance(pods, list) or not isinstance(agents, list):
        return None
    out_pods: list[tuple[list[str], list[tuple[str, list[_Shape], int]]]] = []
    for pod in pods:
        if not (isinstance(pod, list) and len(pod) == 2 and isinstance(pod[0], list)):
            return None
        hardware, keys = pod
        if not all(_text(h) for h in hardware) or not isinstance(keys, list):
            return None
        rows: list[tuple[str, list[_Shape], int]] = []
        for row in keys:
            if not (isinstance(row, list) and len(row) == 3 and _text(row[0])):
                return None
            key, shapes, line = row
            if not (isinstance(line, int) and isinstance(shapes, list)):
                return None
            got: list[_Shape] = []
            for shape in shapes:
                if not (isinstance(shape, list) and len(shape) == 2):
                    return None
                value, effect = shape
                if not (value is None or _text(value)) or effect not in (
                    None, "NoSchedule", "NoExecute",
                ):  # fmt: skip
                    return None
                got.append((value, effect))
            rows.append((key, got, line))
        out_pods.append((hardware, rows))
    out_agents: list[tuple[str, Taint, bool, str, int]] = []
    for agent in agents:
        if not (isinstance(agent, list) and len(agent) == 7):
            return None
        key, value, effect, hardware, any_value, name, line = agent
        if not (
            all(_text(v) for v in (key, value, effect, name))
            and isinstance(hardware, list)
            and all(_text(h) for h in hardware)
            and isinstance(any_value, bool)
            and isinstance(line, int)
        ):
            return None
        taint = Taint(key, value, effect, frozenset(hardware) or None)
        out_agents.append((key, taint, any_value, name, line))
    return out_pods, out_agents
