"""The described cluster's nodes indexed once per run (:class:`NodeIndex`), so that the
scheduler's filters (:mod:`gpulint.cluster.filters`) and GPU020's question (which GPU node's
taints a pod misses fewest of) weigh a pod against the nodes that may take it, not against
every node of the cluster.

The index is over the filters' node groups (identical nodes collapsed,
:func:`gpulint.cluster.filters.group_nodes`): by node label key and value (a
``nodeSelector``, a required node affinity's ``In`` and ``Exists``), by node name, by taint
key (the nodes a pod's keyed tolerations bear on, and those with no taint that keeps a pod
off) and by extended resource name (what the pod requests). A pod's question starts from the
smallest of those lists, a superset of the nodes that may take it. Every question compares
at most :data:`NODE_BUDGET` pod-node pairs; past it, the answer is "too large to judge
exactly" (an ``info``), never a verdict from a truncated search.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from gpulint.k8s.resources import is_extended_resource

if TYPE_CHECKING:
    from gpulint.cluster.model import Node
    from gpulint.cluster.schedpod import SchedPod
    from gpulint.k8s.taints import Taint

ENFORCED = ("NoSchedule", "NoExecute")


class Group(Protocol):
    """Nodes the filters cannot tell apart (:class:`gpulint.cluster.filters.Group`)."""

    @property
    def nodes(self) -> tuple[Node, ...]: ...

    @property
    def varying(self) -> frozenset[str]: ...


def is_scalar(name: str) -> bool:
    """schedutil.IsScalarResourceName."""
    return (
        is_extended_resource(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


#: Pod-node pairs (a node, or a group of identical nodes judged as one) that one pod's
#: question may compare: past it, the cluster is too large to judge that pod exactly.
NODE_BUDGET = 512

#: The groups that may take a pod, each with the nodes of it that may (None: any of them);
#: a group may come more than once (the lists of an affinity's terms, unioned lazily).
Candidates = Iterator[tuple[int, "Sequence[int] | None"]]


class NodeIndex:
    """The groups of a cluster, indexed by what a pod's filters read of a node."""

    __slots__ = (
        "by_key",
        "by_label",
        "by_name",
        "by_resource",
        "by_taint_key",
        "groups",
        "shapes",
        "total",
        "untainted",
        "varying_by_key",
    )

    def __init__(self, groups: Sequence[Group]) -> None:
        self.groups = groups
        #: The cluster's nodes (a pool's node count each).
        self.total = sum(sum(n.node_count for n in g.nodes) for g in groups)
        #: (label key, value) -> group -> the nodes carrying it (None: all of the group's).
        self.by_label: dict[tuple[str, str], dict[int, list[int] | None]] = {}
        self.by_key: dict[str, dict[int, list[int] | None]] = {}
        self.by_name: dict[str, dict[int, list[int] | None]] = {}
        self.by_resource: dict[str, list[int]] = {}
        self.by_taint_key: dict[str, list[int]] = {}
        self.untainted: list[int] = []
        #: Groups of more than one node whose ``varying`` labels include the key.
        self.varying_by_key: dict[str, list[int]] = {}
        #: GPU020's per-node view, built on first use (per ``bound``).
        self.shapes: dict[bool, TaintShapes] = {}
        for gi, group in enumerate(groups):
            first = group.nodes[0]
            every = len(group.nodes) == 1
            for ni, node in enumerate(group.nodes):
                for key, value in node.labels.items():
                    whole = every or key not in group.varying
                    if whole and ni > 0:
                        continue
                    _add(self.by_label.setdefault((key, value), {}), gi, None if whole else ni)
                    _add(self.by_key.setdefault(key, {}), gi, None if whole else ni)
                if node.name:
                    _add(self.by_name.setdefault(node.name, {}), gi, None if every else ni)
            for name, amount in first.allocatable.items():
                if amount > 0:
                    self.by_resource.setdefault(name, []).append(gi)
            enforced = [t for t in first.taints if t.effect in ENFORCED]
            if not enforced:
                self.untainted.append(gi)
            for key in dict.fromkeys(t.key for t in enforced):
                self.by_taint_key.setdefault(key, []).append(gi)
            if len(group.nodes) > 1:
                for key in group.varying:
                    self.varying_by_key.setdefault(key, []).append(gi)

    # -- which groups may take a pod ------------------------------------------------------

    def candidates(self, pod: SchedPod) -> Candidates | None:
        """The groups (and nodes of them) that may take ``pod``: the smallest of the lists
        its node name, selector, required node affinity, tolerations and extended resources
        name. None: nothing narrows it (every group)."""
        options: list[tuple[int, Callable[[], Candidates]]] = []
        if pod.node_name is not None:
            found = self.by_name.get(pod.node_name, {})
            options.append((len(found), _listed([found])))
        for key, value in (pod.node_selector or {}).items():
            found = self.by_label.get((key, value), {})
            options.append((len(found), _listed([found])))
        terms = self._terms(pod)
        if terms is not None:
            options.append(terms)
        tolerated = self._tolerated(pod)
        if tolerated is not None:
            options.append(tolerated)
        for name, amount in pod.requests.items():
            if amount > 0 and is_scalar(name):
                groups = self.by_resource.get(name, [])
                options.append((len(groups), _whole([groups])))
        for key, count in pod.devices:
            if count > 0:
                groups = self.by_resource.get(key, [])
                options.append((len(groups), _whole([groups])))
        if not options:
            return None
        _, build = min(options, key=lambda o: o[0])
        return build()

    def _terms(self, pod: SchedPod) -> tuple[int, Callable[[], Candidates]] | None:
        """The groups a required node affinity's terms (ORed) may match: each term by its
        narrowest ``In`` or ``Exists`` expression; None when some term names none."""
        if pod.terms is None:
            return None
        lists: list[Mapping[int, list[int] | None]] = []
        for term in pod.terms:
            if not term.parsed:
                continue  # matches nothing
            best: list[Mapping[int, list[int] | None]] | None = None
            for req in term.labels:
                found: list[Mapping[int, list[int] | None]]
                if req.operator == "In":
                    found = [self.by_label.get((req.key, v), {}) for v in req.values]
                elif req.operator in ("Exists", "Gt", "Lt"):
                    found = [self.by_key.get(req.key, {})]
                else:
                    continue
                if best is None or sum(map(len, found)) < sum(map(len, best)):
                    best = found
            if best is None:
                return None
            lists.extend(best)
        return sum(map(len, lists)), _listed(lists)

    def _tolerated(self, pod: SchedPod) -> tuple[int, Callable[[], Candidates]] | None:
        """The groups with no taint that keeps a pod off, and those whose taints the pod's
        keyed tolerations bear on; None when a toleration has no key (it may tolerate any)."""
        keys: list[str] = []
        for toleration in pod.tolerations:
            if not isinstance(toleration, Mapping):
                continue  # tolerates nothing
            key = toleration.get("key")
            if not isinstance(key, str) or not key:
                return None
            keys.append(key)
        lists = [self.untainted] + [self.by_taint_key.get(k, []) for k in dict.fromkeys(keys)]
        return sum(map(len, lists)), _whole(lists)

    # -- how many pairs a pod's question compares --------------------------------------

    def units(self, pod: SchedPod, keys: frozenset[str], limit: int) -> int:
        """Pod-node pairs :func:`gpulint.cluster.filters.feasibility` compares for ``pod``
        (counted up to just past ``limit``)."""
        if pod.names_nodes():
            return sum(len(g.nodes) for g in self.groups)
        total = len(self.groups)
        seen: set[int] = set()
        for key in keys:
            for gi in self.varying_by_key.get(key, ()):
                if total > limit:
                    return total
                if gi not in seen:
                    seen.add(gi)
                    total += len(self.groups[gi].nodes) - 1
        return total

    # -- GPU020: the GPU node whose taints a pod misses fewest of -----------------------

    def taint_shapes(self, nodes: Sequence[Node], bound: bool) -> TaintShapes:
        found = self.shapes.get(bound)
        if found is None:
            found = self.shapes[bound] = TaintShapes(nodes, bound)
        return found


def _add(found: dict[int, list[int] | None], gi: int, ni: int | None) -> None:
    if ni is None:
        found[gi] = None
    else:
        have = found.setdefault(gi, [])
        if have is not None:
            have.append(ni)


def _listed(lists: Sequence[Mapping[int, list[int] | None]]) -> Callable[[], Candidates]:
    def build() -> Candidates:
        for found in lists:
            yield from found.items()

    return build


def _whole(lists: Sequence[Iterable[int]]) -> Callable[[], Candidates]:
    def build() -> Candidates:
        for found in lists:
            for gi in found:
                yield gi, None

    return build


class Fewest(NamedTuple):
    """The taints a pod misses of the GPU node it misses fewest of, that node, and how many
    other nodes offering what it asks for there are."""

    left: list[Taint]
    node: Node
    others: int


class TooLarge(NamedTuple):
    """The question would compare more than :data:`NODE_BUDGET` pod-node pairs."""

    shapes: int


class TaintShapes:
    """The nodes of a cluster by the taints that keep a pod off them (NoSchedule and
    NoExecute; only NoExecute for a pod bound with ``nodeName``): identical taint lists
    collapsed into one shape, indexed by taint key and, per resource name, in the order of
    how many taints a pod that tolerates none of them misses."""

    __slots__ = ("bound", "by_key", "nodes", "offering", "orders", "shape_of", "taints")

    def __init__(self, nodes: Sequence[Node], bound: bool) -> None:
        allowed = ("NoExecute",) if bound else ENFORCED
        self.nodes = nodes
        self.bound = bound
        self.taints: list[tuple[Taint, ...]] = []
        self.shape_of: list[int] = []
        self.by_key: dict[str, list[int]] = {}
        ids: dict[tuple[Taint, ...], int] = {}
        for node in nodes:
            enforced = tuple(t for t in node.taints if t.effect in allowed)
            si = ids.get(enforced)
            if si is None:
                si = ids[enforced] = len(self.taints)
                self.taints.append(enforced)
                for key in dict.fromkeys(t.key for t in enforced):
                    self.by_key.setdefault(key, []).append(si)
            self.shape_of.append(si)
        #: Per resource name: (taint count, first node, shape) of each shape offering it,
        #: sorted; and the nodes offering it.
        self.orders: dict[str, list[tuple[int, int, int]]] = {}
        self.offering: dict[frozenset[str], int] = {}

    def _order(self, name: str) -> list[tuple[int, int, int]]:
        order = self.orders.get(name)
        if order is None:
            first: dict[int, int] = {}
            for i, node in enumerate(self.nodes):
                if node.allocatable.get(name, 0) > 0:
                    first.setdefault(self.shape_of[i], i)
            order = sorted((len(self.taints[si]), i, si) for si, i in first.items())
            self.orders[name] = order
        return order

    def _count(self, names: frozenset[str]) -> int:
        count = self.offering.get(names)
        if count is None:
            count = sum(1 for n in self.nodes if any(n.allocatable.get(k, 0) > 0 for k in names))
            self.offering[names] = count
        return count

    def fewest(self, names: Sequence[str], tolerations: Sequence[Any]) -> Fewest | TooLarge | None:
        """Of the nodes offering one of ``names``, the first (in the cluster's order) whose
        enforced taints the pod misses fewest of; None when it misses none of some node's
        (or no node offers them)."""
        from gpulint.k8s.taints import tolerates

        wanted = frozenset(names)
        orders = [self._order(n) for n in dict.fromkeys(names)]
        if not any(orders):
            return None
        keys: list[str] = []
        blanket = False
        for toleration in tolerations:
            if not isinstance(toleration, Mapping):
                continue
            key = toleration.get("key")
            if not isinstance(key, str) or not key:
                blanket = True
                break
            keys.append(key)
        touched: dict[int, int] = {}  # shape -> its first node offering a name
        shapes = (
            [si for order in orders for _, _, si in order]
            if blanket
            else [si for k in dict.fromkeys(keys) for si in self.by_key.get(k, ())]
        )
        if len(shapes) > NODE_BUDGET * 4:
            return TooLarge(len(self.taints))
        firsts: dict[int, int] = {}
        for order in orders:
            for _, i, si in order:
                if si not in firsts or i < firsts[si]:
                    firsts[si] = i
        for si in shapes:
            if si in firsts:
                touched[si] = firsts[si]
        if len(touched) > NODE_BUDGET:
            return TooLarge(len(self.taints))
        best: tuple[int, int, list[Taint]] | None = None
        for si, i in touched.items():
            left = [t for t in self.taints[si] if not any(tolerates(t2, t) for t2 in tolerations)]
            if best is None or (len(left), i) < best[:2]:
                best = (len(left), i, left)
        skipped = 0
        for order in orders:
            for count, i, si in order:
                if si in touched:
                    skipped += 1
                    if skipped > NODE_BUDGET:
                        return TooLarge(len(self.taints))
                    continue
                if best is None or (count, i) < best[:2]:
                    best = (count, i, list(self.taints[si]))
                break
        if best is None or best[0] == 0:
            return None
        return Fewest(best[2], self.nodes[best[1]], self._count(wanted) - 1)
