"""The node pools of the cluster picture, indexed once per run (:class:`PoolIndex`), and the
taints a node agent misses (:class:`AgentView`): what a pod or an agent asks of them costs
the pools or taints that may concern it, not every pool or taint of the run.

A pod is weighed against the pools its node selector names (a label every pool carries, or
a pool-name label), those its tolerations name (by taint key and value), and the first pool
of the rest, kept in the order of how few taints a pod that tolerates none of theirs
misses. A question the indexes cannot narrow examines at most :data:`POOL_BUDGET` pools.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.k8s.taints import Taint

if TYPE_CHECKING:
    from gpulint.cluster.known import Agreed, KnownTaint
    from gpulint.cluster.objects import Pool
    from gpulint.k8s.objects import PodSpec

ENFORCED = ("NoSchedule", "NoExecute")


#: Pools one pod's question may examine beyond what the indexes hand it (the pools its
#: selector names, those its tolerations name): past it, the pools' taints are no evidence
#: for that pod (its finding falls back to the consensus, the platform or an assumption).
POOL_BUDGET = 512


class _OutOfBudget(Exception):
    pass


class PoolIndex:
    """The picture's node pools indexed once per run, so that a pod's question touches the
    pools that may take it, not every pool: by node label (a selector that names a label
    every pool carries, or a pool-name label, names its pools), by taint key and value (the
    pools a pod's tolerations bear on), and, for the rest, in the order of how few taints a
    pod that tolerates none of theirs misses (the first that may take the pod answers)."""

    __slots__ = (
        "by_label",
        "by_taint_key",
        "by_taint_kv",
        "by_taint_value",
        "conditional",
        "eligible",
        "enforced",
        "has_label",
        "orders",
        "pooled",
        "pools",
        "static",
    )

    def __init__(self, pools: Sequence[Pool], pooled: dict[Taint, tuple[int, KnownTaint]]) -> None:
        self.pools = pools
        self.pooled = pooled
        self.enforced: list[tuple[Taint, ...]] = []
        #: Pools that are GPU pools for every pod (GPUs, or a pool taint of no resource).
        self.static: list[int] = []
        #: Pools whose pool taints apply to some pods only (keyed by a resource's name).
        self.conditional: list[int] = []
        self.eligible: list[bool] = []
        self.by_label: dict[tuple[str, str], list[int]] = {}
        self.has_label: dict[str, int] = {}
        self.by_taint_key: dict[str, list[int]] = {}
        self.by_taint_kv: dict[tuple[str, str], list[int]] = {}
        self.by_taint_value: dict[str, list[int]] = {}
        #: Static pools in the order of :meth:`_order`, per set of blanket-tolerated effects.
        self.orders: dict[frozenset[str], list[int]] = {}
        for i, p in enumerate(pools):
            enforced = tuple(t for t in p.taints if t.effect in ENFORCED)
            self.enforced.append(enforced)
            hits = [pooled[t][1] for t in p.taints if t in pooled]
            if any(k.resource is not None or k.taint.hardware is not None for k in hits):
                self.conditional.append(i)
                self.eligible.append(True)
            elif p.gpus or hits:
                self.static.append(i)
                self.eligible.append(True)
            else:
                self.eligible.append(False)  # never a candidate
                continue
            for key, value in p.labels.items():
                self.by_label.setdefault((key, value), []).append(i)
                self.has_label[key] = self.has_label.get(key, 0) + 1
            for key in dict.fromkeys(t.key for t in enforced):
                self.by_taint_key.setdefault(key, []).append(i)
            for kv in dict.fromkeys((t.key, t.value) for t in enforced):
                self.by_taint_kv.setdefault(kv, []).append(i)
            for value in dict.fromkeys(t.value for t in enforced):
                self.by_taint_value.setdefault(value, []).append(i)

    # -- which pools may take a pod ------------------------------------------------------

    def _named(self, selector: Any) -> list[int] | None:
        """The pools a node selector names through the index (None: it names no label
        every pool carries, nor a pool-name label: any pool may take the pod)."""
        from gpulint.cluster.poolkinds import pool_labels

        if not isinstance(selector, Mapping):
            return None
        keys = pool_labels()
        every = len(self.static) + len(self.conditional)
        best: list[int] | None = None
        for key, value in selector.items():
            if not isinstance(key, str):
                continue
            if key in keys or self.has_label.get(key, 0) == every:
                found = self.by_label.get((key, value), []) if isinstance(value, str) else []
                if best is None or len(found) < len(best):
                    best = found
        return best

    def _may_take(self, i: int, agreed: Agreed, selector: Any, wanted: frozenset[str]) -> bool:
        from gpulint.cluster.catalog import INSTANCE_TYPE_LABEL
        from gpulint.cluster.poolkinds import pool_labels

        p = self.pools[i]
        pooled = self.pooled
        return (
            (p.gpus > 0 or any(t in pooled and agreed.applies(pooled[t][1]) for t in p.taints))
            and (not wanted or not p.resources or not wanted.isdisjoint(p.resources))
            and selectable(p, selector, pool_labels(), INSTANCE_TYPE_LABEL)
        )

    def reaches(self, agreed: Agreed, pod: PodSpec, wanted: frozenset[str]) -> bool:
        """Whether some pool may take the pod (past the budget: no pool's taints count)."""
        selector = pod.spec.get("nodeSelector")
        named = self._named(selector)
        pools = (*self.conditional, *self.static) if named is None else named
        for spent, i in enumerate(pools, 1):
            if spent > POOL_BUDGET:
                return False
            if self.eligible[i] and self._may_take(i, agreed, selector, wanted):
                return True
        return False

    def takes_as_is(
        self, agreed: Agreed, pod: PodSpec, wanted: frozenset[str], tolerations: Sequence[Any]
    ) -> bool:
        """Whether a pool that may take the pod has no enforced taint it misses (a Karpenter
        NodePool that taints nothing); past the budget, no."""
        selector = pod.spec.get("nodeSelector")
        named = self._named(selector)
        pools = (*self.conditional, *self.static) if named is None else named
        tolerated = Tolerations(tolerations)
        for spent, i in enumerate(pools, 1):
            if spent > POOL_BUDGET:
                return False
            if (
                self.eligible[i]
                and all(map(tolerated, self.enforced[i]))
                and self._may_take(i, agreed, selector, wanted)
            ):
                return True
        return False

    # -- which pool's taints a pod misses fewest of ------------------------------------

    def _order(self, blanket: frozenset[str]) -> list[int]:
        """The static pools a pod whose only tolerations of their taints are blanket ones
        (``blanket``: the effects they tolerate) either gets onto (first) or misses some pool
        taints of, by how many it misses, then in the files' order."""
        order = self.orders.get(blanket)
        if order is None:
            ranked: list[tuple[int, int, int]] = []
            for i in self.static:
                enforced = self.enforced[i]
                if all(t.effect in blanket for t in enforced):
                    ranked.append((0, 0, i))
                    continue
                missed = {t for t in enforced if t in self.pooled and t.effect not in blanket}
                if missed:
                    ranked.append((1, len(missed), i))
            order = [i for *_, i in sorted(ranked)]
            self.orders[blanket] = order
        return order

    def _touched(self, tolerated: Tolerations) -> set[int]:
        """The pools a pod's tolerations (other than blanket ones) bear on."""
        touched: set[int] = set()
        lists: list[list[int]] = []
        for key, _ in tolerated.exists:
            if key:
                lists.append(self.by_taint_key.get(key, []))
        for key, value, _ in tolerated.equal:
            lists.append(
                self.by_taint_kv.get((key, value), [])
                if key
                else self.by_taint_value.get(value, [])
            )
        if sum(map(len, lists)) > POOL_BUDGET:
            raise _OutOfBudget
        for found in lists:
            touched.update(found)
        return touched

    def _missed(
        self, i: int, agreed: Agreed, tolerated: Tolerations
    ) -> list[tuple[int, KnownTaint]] | None:
        """The pool taints of pool ``i`` the pod misses (None: it tolerates them all)."""
        enforced = self.enforced[i]
        if all(tolerated(t) for t in enforced):
            return None
        missed: dict[Taint, tuple[int, KnownTaint]] = {}
        for t in enforced:
            hit = self.pooled.get(t)
            if hit is not None and t not in missed and agreed.applies(hit[1]) and not tolerated(t):
                missed[t] = hit
        return sorted(missed.values(), key=lambda h: h[0])

    def fewest_missed(
        self, agreed: Agreed, tolerations: Sequence[Any], pod: PodSpec, wanted: frozenset[str]
    ) -> list[KnownTaint] | None:
        """The pool taints of the pool (of those that may take the pod) it misses fewest of,
        the first in the files' order on a tie; None when it gets onto one, has none, or the
        question costs more than :data:`POOL_BUDGET` pools."""
        selector = pod.spec.get("nodeSelector")
        tolerated = Tolerations(tolerations)
        try:
            named = self._named(selector)
            touched = self._touched(tolerated) if named is None else set()
        except _OutOfBudget:
            return None
        exact = named if named is not None else sorted(touched.union(self.conditional))
        if len(exact) > POOL_BUDGET:
            return None
        best: tuple[int, int, list[tuple[int, KnownTaint]]] | None = None

        def consider(i: int) -> bool:
            """Weigh pool ``i``; True when the pod gets onto it."""
            nonlocal best
            missed = self._missed(i, agreed, tolerated)
            if missed is None:
                return True
            if missed and (best is None or (len(missed), i) < best[:2]):
                best = (len(missed), i, missed)
            return False

        for i in exact:
            if self.eligible[i] and self._may_take(i, agreed, selector, wanted) and consider(i):
                return None
        if named is None:
            # The first static pool the pod may land on, of those its tolerations do not
            # bear on, is the one of them it misses fewest of (or one it gets onto).
            blanket: set[str] = set()
            for key, effect in tolerated.exists:
                if not key:
                    blanket.update(ENFORCED if not effect else (effect,))
            spent = 0
            for i in self._order(frozenset(blanket)):
                if i in touched:
                    continue
                spent += 1
                if spent > POOL_BUDGET:
                    return None
                if self._may_take(i, agreed, selector, wanted):
                    if consider(i):
                        return None
                    break
        return [k for _, k in best[2]] if best is not None else None


#: Taints GPU023 names in one finding (the count of the others is said).
AGENT_SHOWN = 5


class AgentMissing(NamedTuple):
    """What a node agent misses of the picture (:meth:`Picture.agent_missing`)."""

    #: The first taint of the evidence (the applicable taints it does not tolerate, or all
    #: of them when it tolerates every one), for the message and its related places.
    first: KnownTaint | None
    #: Every taint of the evidence is a node agent's (a hedge, no proof).
    hedge: bool
    #: The first :data:`AGENT_SHOWN` taints it misses, in the picture's order.
    missing: tuple[Taint, ...]
    #: How many it misses in all.
    total: int


class AgentView:
    """The picture's taints that apply to node agents of one hardware, indexed: by key
    (an agent's keyed tolerations), by value and effect (counts, for an empty-key
    ``Equal`` toleration), and in order without those of the effects blanket tolerations
    cover."""

    __slots__ = ("all_agent", "by_key", "items", "lists")

    def __init__(self, taints: Sequence[KnownTaint], hardware: str | None) -> None:
        self.items = [
            k
            for k in taints
            if (k.taint.hardware is None or hardware is None or hardware in k.taint.hardware)
            # a pool's taint is for the agents of its accelerators' vendor
            and (k.vendors is None or hardware is None or hardware in k.vendors)
        ]
        self.all_agent = all(k.agent for k in self.items)
        self.by_key: dict[str, list[int]] = {}
        for i, k in enumerate(self.items):
            self.by_key.setdefault(k.taint.key, []).append(i)
        #: Per set of blanket-tolerated effects: the taints left, in order, those of them
        #: whose effect keeps a pod off, and their counts by (value, effect, agent).
        self.lists: dict[
            frozenset[str], tuple[list[int], list[int], dict[tuple[str, str, bool], int]]
        ] = {}

    def _left(
        self, blanket: frozenset[str]
    ) -> tuple[list[int], list[int], dict[tuple[str, str, bool], int]]:
        found = self.lists.get(blanket)
        if found is None:
            left = [i for i, k in enumerate(self.items) if k.taint.effect not in blanket]
            enforced = [i for i in left if self.items[i].taint.effect in ENFORCED]
            counts: dict[tuple[str, str, bool], int] = {}
            for i in left:
                t = self.items[i]
                row = (t.taint.value, t.taint.effect, t.agent)
                counts[row] = counts.get(row, 0) + 1
            found = self.lists[blanket] = (left, enforced, counts)
        return found

    def missing(self, tolerations: Sequence[Any]) -> AgentMissing | None:
        if not self.items:
            return AgentMissing(None, False, (), 0)
        blanket, every, values, keyed = _tolerations_read(tolerations)
        left, enforced, counts = self._left(frozenset(() if every else blanket))

        def by_value(t: Taint) -> bool:
            effects = values.get(t.value)
            return effects is not None and ("" in effects or t.effect in effects)

        # The taints left that the agent tolerates: by value (counted), by key (each).
        gone = (0, 0, 0)  # all, of no agent, enforced
        if not every:
            for (value, effect, agent), n in counts.items():
                effects = values.get(value)
                if effects is not None and ("" in effects or effect in effects):
                    gone = (gone[0] + n, gone[1] + (0 if agent else n), gone[2])
                    if effect in ENFORCED:
                        gone = (gone[0], gone[1], gone[2] + n)
        extra: set[int] = set()
        candidates = sorted({i for key in keyed for i in self.by_key.get(key, ())})
        if len(candidates) > POOL_BUDGET:
            return None
        for i in candidates:
            k = self.items[i]
            if every or k.taint.effect in blanket or by_value(k.taint):
                continue  # not left, or counted
            if k.tolerated_by(tolerations):
                extra.add(i)
                enforced_gone = 1 if k.taint.effect in ENFORCED else 0
                gone = (gone[0] + 1, gone[1] + (0 if k.agent else 1), gone[2] + enforced_gone)
        count = 0 if every else len(left) - gone[0]
        if count <= 0:
            # It tolerates all of them. A taint whose value or effect the evidence left open
            # (the pods tolerate the key with ``Exists``, or with no effect) is tolerated by
            # any toleration of its key: a consensus that does not know the value cannot
            # prove a value-specific toleration wrong, as GPU020 reads a pod's.
            return AgentMissing(self.items[0], self.all_agent, (), 0)
        nonagent = sum(n for (_, _, agent), n in counts.items() if not agent) if not every else 0
        hedge = nonagent - gone[1] == 0
        first = None
        missing: list[Taint] = []
        skipped = 0
        for i in left:
            k = self.items[i]
            if i in extra or by_value(k.taint):
                skipped += 1
                if skipped > POOL_BUDGET:
                    return None
                continue
            first = k
            break
        for i in enforced:
            k = self.items[i]
            if i in extra or by_value(k.taint):
                skipped += 1
                if skipped > POOL_BUDGET:
                    return None
                continue
            missing.append(k.taint)
            if len(missing) == AGENT_SHOWN:
                break
        return AgentMissing(first, hedge, tuple(missing), len(enforced) - gone[2])


def selectable(pool: Pool, selector: Any, keys: Container[str], instance_type: str) -> bool:
    """Whether a pod's node selector may pick the pool: no label of the pool's says
    otherwise, a pool-name label it asks for (``eks.amazonaws.com/nodegroup``, one of
    ``keys``) is the pool's, and an instance type it asks for is one of the pool's (when the
    pool names its types)."""
    if not isinstance(selector, Mapping):
        return True
    labels = pool.labels
    for key, value in selector.items():
        if key in labels and labels[key] != value:
            return False
        if key not in labels and key in keys:
            return False
        if key == instance_type and pool.instance_types and value not in pool.instance_types:
            return False
    return True


class Tolerations:
    """Whether a pod's tolerations tolerate a taint (ToleratesTaint for any of them), in a
    few set lookups whatever their number: the fields as ToleratesTaint reads them, a field
    that is not text being empty (any effect, any key)."""

    __slots__ = ("equal", "exists")

    def __init__(self, tolerations: Sequence[Any]) -> None:
        self.exists: set[tuple[str, str]] = set()  # (key, effect)
        self.equal: set[tuple[str, str, str]] = set()  # (key, value, effect)
        for toleration in tolerations:
            if not isinstance(toleration, Mapping):
                continue
            key, operator, value, effect = (
                v if isinstance(v, str) else ""
                for v in (toleration.get(f) for f in ("key", "operator", "value", "effect"))
            )
            if operator == "Exists":
                self.exists.add((key, effect))
            elif operator in ("", "Equal"):
                self.equal.add((key, value, effect))

    def __call__(self, taint: Taint) -> bool:
        for key in (taint.key, ""):
            for effect in (taint.effect, ""):
                if (key, effect) in self.exists or (key, taint.value, effect) in self.equal:
                    return True
        return False


def _tolerations_read(
    tolerations: Sequence[Any],
) -> tuple[set[str], bool, dict[str, set[str]], list[str]]:
    """The tolerations by their form: the effects an empty key with ``Exists`` tolerates,
    whether one tolerates every effect, the effects of each value an empty key with ``Equal``
    tolerates (``""``: any), and the keys the others name."""
    blanket: set[str] = set()
    every = False
    values: dict[str, set[str]] = {}
    keyed: list[str] = []
    for toleration in tolerations:
        if not isinstance(toleration, Mapping):
            continue
        key, operator, value, effect = (
            v if isinstance(v, str) else ""
            for v in (toleration.get(f) for f in ("key", "operator", "value", "effect"))
        )
        if key:
            keyed.append(key)
        elif operator == "Exists":
            every = every or not effect
            blanket.add(effect)
        elif operator in ("", "Equal"):
            values.setdefault(value, set()).add(effect)
    return blanket, every, values, keyed
