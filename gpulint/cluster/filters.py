"""kube-scheduler's filters, run on a described cluster: can this pod land on any node?

The plugins of the default profile that judge a pod against a node's own description, in
the order the default profile runs them (``pkg/scheduler/apis/config/v1/default_plugins.go``);
like the framework, a node's verdict is the first plugin that rejects it:

* **NodeUnschedulable**: a cordoned node (``spec.unschedulable``) takes only pods that
  tolerate ``node.kubernetes.io/unschedulable:NoSchedule``.
* **NodeName**: ``spec.nodeName``, when set, must be the node's name.
* **TaintToleration**: every ``NoSchedule`` and ``NoExecute`` taint must be tolerated
  (``PreferNoSchedule`` only scores); the first untolerated one is the reason.
* **NodeAffinity**: ``nodeSelector`` (every label equal) and
  ``requiredDuringSchedulingIgnoredDuringExecution`` (terms ORed, expressions ANDed; an
  empty term matches nothing; a term that does not parse matches nothing), as
  ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` evaluates them, with
  ``k8s.io/apimachinery/pkg/labels`` requirements (In, NotIn, Exists, DoesNotExist, Gt,
  Lt) and ``matchFields`` on ``metadata.name`` (In, NotIn, one value).
* **NodeResourcesFit**: the pod's effective request (:mod:`gpulint.k8s.podrequest`: init
  containers, sidecars, ``spec.overhead``; pod-level ``resources`` for cpu and memory)
  against ``status.allocatable``, as ``fitsRequest`` compares them on an empty node:
  capacity, not usage. Every insufficient resource is a
  reason. A node whose allocatable does not list ``pods`` (a pool described without it) is
  not judged on the pod count.

The reasons are the plugins' own strings, and :meth:`Feasibility.message` is the
scheduler's ``FitError``: ``0/12 nodes are available: 4 Insufficient nvidia.com/gpu, 8
node(s) had untolerated taint {nvidia.com/gpu: present}.`` (reasons sorted as strings).

Not modelled, on purpose: what depends on the pods already running (ports, volumes, pod
(anti-)affinity, topology spread) and the PreFilter shortcut of NodeAffinity for
``matchFields`` (each node is judged by Filter instead, with the same outcome).

Identical nodes are judged once: the nodes are grouped by everything the filters read
except the labels unique to a node (its hostname, any label whose value is its name); a pod
that names one of those labels, or node names, is judged node by node within the group.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any, NamedTuple

from gpulint.cluster.model import Cluster, Node
from gpulint.cluster.nodeindex import NODE_BUDGET, Fewest, NodeIndex, TooLarge, is_scalar
from gpulint.cluster.schedpod import SchedPod
from gpulint.k8s.resources import is_extended_resource
from gpulint.k8s.taints import Taint, tolerates

# The reasons, as the plugins write them.
ERR_UNSCHEDULABLE = "node(s) were unschedulable"  # nodeunschedulable.ErrReasonUnschedulable
ERR_NODE_NAME = "node(s) didn't match the requested node name"  # nodename.ErrReason
ERR_AFFINITY = "node(s) didn't match Pod's node affinity/selector"  # nodeaffinity.ErrReasonPod
ERR_TOO_MANY_PODS = "Too many pods"


def err_taint(taint: Taint) -> str:
    """tainttoleration.Filter's reason."""
    return f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"


#: The DynamicResources plugin's reason when the node's devices cannot satisfy the claims.
ERR_CLAIMS = "cannot allocate all claims"


def err_insufficient(resource: str) -> str:
    """noderesources.fitsRequest's reason."""
    return f"Insufficient {resource}"


UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")

#: Labels that differ between otherwise identical nodes of a pool.
PER_NODE_LABELS = frozenset({"kubernetes.io/hostname"})


# -- one node --------------------------------------------------------------------------------


class Failure(NamedTuple):
    """A plugin that rejects the pod on a node, with its reasons."""

    plugin: str
    reasons: tuple[str, ...]
    #: What would let this plugin pass, one phrase per change.
    fixes: tuple[str, ...] = ()
    #: NodeResourcesFit: the resources that do not fit.
    resources: tuple[str, ...] = ()


def _untolerated(pod: SchedPod, node: Node) -> list[Taint]:
    return [
        t
        for t in node.taints
        if t.effect in ("NoSchedule", "NoExecute")
        and not any(tolerates(tol, t) for tol in pod.tolerations)
    ]


def _affinity_fixes(pod: SchedPod, node: Node) -> tuple[str, ...]:
    fixes: list[str] = []
    for key, value in (pod.node_selector or {}).items():
        have = node.labels.get(key)
        if have != value:
            what = f"{key}={have}" if have is not None else f"no {key} label"
            fixes.append(f"change nodeSelector {key}: {value} (its nodes have {what})")
    if pod.terms is not None and not any(t.matches(node) for t in pod.terms):
        fixes.append("change the required node affinity (no term matches its nodes)")
    return tuple(fixes)


def _milli(value: Decimal) -> int:
    return math.ceil(value * 1000)


def _fits(requests: Mapping[str, Decimal], node: Node) -> list[tuple[str, Decimal, Decimal]]:
    """fitsRequest on an empty node: (resource, requested, allocatable) of each shortfall."""
    short: list[tuple[str, Decimal, Decimal]] = []
    alloc = node.allocatable
    if "pods" in alloc and alloc["pods"] < 1:
        short.append(("pods", Decimal(1), alloc["pods"]))
    zero = Decimal(0)
    # fitsRequest's order: cpu, memory, ephemeral-storage, then the scalar resources (a Go
    # map, so in no set order; sorted here).
    first = ("cpu", "memory", "ephemeral-storage")
    order = [n for n in first if n in requests] + sorted(n for n in requests if n not in first)
    for name in order:
        want = requests[name]
        have = alloc.get(name, zero)
        if name == "cpu":
            if _milli(want) > 0 and _milli(want) > _milli(have):
                short.append((name, want, have))
        elif (name in ("memory", "ephemeral-storage") or is_scalar(name)) and (
            math.ceil(want) > 0 and math.ceil(want) > math.ceil(have)
        ):
            short.append((name, want, have))
    return short


def failures(pod: SchedPod, node: Node, *, all_plugins: bool = False) -> list[Failure]:
    """The plugins that reject ``pod`` on ``node``, in the scheduler's order: the first one
    only (what the scheduler reports), or with ``all_plugins`` every one (what to change)."""
    from gpulint.k8s.quantity.display import format_resource

    out: list[Failure] = []
    if node.unschedulable and not any(tolerates(t, UNSCHEDULABLE_TAINT) for t in pod.tolerations):
        out.append(
            Failure(
                "NodeUnschedulable",
                (ERR_UNSCHEDULABLE,),
                ("uncordon its nodes (spec.unschedulable)",),
            )
        )
        if not all_plugins:
            return out
    if pod.node_name is not None and pod.node_name != node.name:
        out.append(Failure("NodeName", (ERR_NODE_NAME,), (f"remove nodeName: {pod.node_name}",)))
        if not all_plugins:
            return out
    untolerated = _untolerated(pod, node)
    if untolerated:
        fixes = tuple(f"add a toleration {t.toleration_hint()}" for t in untolerated)
        out.append(Failure("TaintToleration", (err_taint(untolerated[0]),), fixes))
        if not all_plugins:
            return out
    selector_ok = all(node.labels.get(k) == v for k, v in (pod.node_selector or {}).items())
    if not selector_ok or (pod.terms is not None and not any(t.matches(node) for t in pod.terms)):
        out.append(Failure("NodeAffinity", (ERR_AFFINITY,), _affinity_fixes(pod, node)))
        if not all_plugins:
            return out
    short = _fits(pod.requests, node)
    if short:
        reasons = tuple(
            ERR_TOO_MANY_PODS if n == "pods" else err_insufficient(n) for n, _, _ in short
        )
        fixes = tuple(
            f"request at most {format_resource(have, name)} {name} (its allocatable)"
            if have > 0
            else f"a node with {name} (its nodes have none)"
            for name, _, have in short
            if name != "pods"
        )
        names = tuple(n for n, _, _ in short)
        out.append(Failure("NodeResourcesFit", reasons, fixes, names))
        if not all_plugins:
            return out
    # DynamicResources: the devices the pod's claims ask for, against those the node's
    # ResourceSlices publish (gpulint.cluster.slices).
    missing = [
        (k, n, node.allocatable.get(k, Decimal(0)))
        for k, n in pod.devices
        if node.allocatable.get(k, Decimal(0)) < n
    ]
    if missing:
        fixes = tuple(
            f"claim at most {int(have)} ({key.removeprefix('devices ')} on its nodes)"
            if have > 0
            else f"a node whose ResourceSlices publish {key.removeprefix('devices ')}"
            for key, _, have in missing
        )
        out.append(Failure("DynamicResources", (ERR_CLAIMS,), fixes))
    return out


# -- the cluster -----------------------------------------------------------------------------


class Group(NamedTuple):
    """Nodes the filters cannot tell apart, except by the labels in ``varying``."""

    nodes: tuple[Node, ...]
    size: int
    varying: frozenset[str]

    @property
    def pool(self) -> str | None:
        return self.nodes[0].pool

    @property
    def label(self) -> str:
        first = self.nodes[0]
        if first.pool:
            return f"pool {first.pool}"
        return f"node {first.name}"


def _volatile(node: Node) -> frozenset[str]:
    return frozenset(
        k for k, v in node.labels.items() if k in PER_NODE_LABELS or (v and v == node.name)
    )


def group_nodes(nodes: Iterable[Node]) -> tuple[Group, ...]:
    """Nodes grouped by what the filters read, the labels unique to each node left out."""
    groups: dict[Any, list[Node]] = {}
    varying: dict[Any, set[str]] = {}
    for node in nodes:
        volatile = _volatile(node)
        key = (
            frozenset((k, v) for k, v in node.labels.items() if k not in volatile),
            node.taints,
            frozenset(node.allocatable.items()),
            node.unschedulable,
            node.pool,
        )
        groups.setdefault(key, []).append(node)
        varying.setdefault(key, set()).update(volatile)
    return tuple(
        Group(tuple(members), sum(n.node_count for n in members), frozenset(varying[key]))
        for key, members in groups.items()
    )


_GROUPS: dict[int, tuple[Cluster, tuple[Group, ...]]] = {}


def cluster_groups(cluster: Cluster) -> tuple[Group, ...]:
    """:func:`group_nodes` of the cluster's nodes, computed once per cluster."""
    cached = _GROUPS.get(id(cluster))
    if cached is not None and cached[0] is cluster:
        return cached[1]
    groups = group_nodes(cluster.nodes)
    _GROUPS[id(cluster)] = (cluster, groups)
    return groups


class Verdict(NamedTuple):
    """Nodes of one group that the filters judge alike."""

    group: Group
    nodes: tuple[Node, ...]
    size: int
    #: The first failing plugin (None: the nodes fit).
    failure: Failure | None


class Feasibility(NamedTuple):
    pod: SchedPod
    total: int
    verdicts: tuple[Verdict, ...]

    @property
    def fitting(self) -> int:
        return sum(v.size for v in self.verdicts if v.failure is None)

    def histogram(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for v in self.verdicts:
            for reason in v.failure.reasons if v.failure else ():
                counts[reason] = counts.get(reason, 0) + v.size
        return counts

    def message(self) -> str:
        """FitError.Error(): ``0/N nodes are available: <count> <reason>, ....``"""
        parts = sorted(f"{count} {reason}" for reason, count in self.histogram().items())
        return f"0/{self.total} nodes are available: {', '.join(parts)}."

    def closest(self) -> tuple[Group, list[Failure]] | None:
        """The group needing the fewest changes, and every failure there.

        Nodes that offer every extended resource the pod asks for (its GPUs) come first: a
        CPU pool one toleration away is not where a GPU pod belongs. Then the fewest
        changes, then the most nodes.
        """
        best: tuple[tuple[int, int, int], Group, list[Failure]] | None = None
        wanted = [n for n, v in self.pod.requests.items() if v > 0 and is_extended_resource(n)]
        for v in self.verdicts:
            node = v.nodes[0]
            every = failures(self.pod, node, all_plugins=True)
            changes = sum(max(1, len(f.fixes)) for f in every)
            lacks = sum(1 for n in wanted if node.allocatable.get(n, Decimal(0)) <= 0)
            rank = (lacks, changes, -v.size)
            if best is None or rank < best[0]:
                best = (rank, v.group, every)
        return None if best is None else (best[1], best[2])


def _key(pod: SchedPod) -> Any:
    """What the filters read of ``pod``, hashable: pods alike are judged once."""
    tolerations = tuple(
        tuple(sorted((str(k), repr(v)) for k, v in t.items()))
        if isinstance(t, Mapping)
        else repr(t)
        for t in pod.tolerations
    )
    selector = tuple(sorted(pod.node_selector.items())) if pod.node_selector is not None else None
    requests = tuple(sorted(pod.requests.items()))
    return (tolerations, pod.node_name, selector, pod.terms, requests, pod.devices)


#: Verdicts by (cluster, pod key): manifests repeat the same pod over and over.
_VERDICTS: dict[tuple[int, str, Any], tuple[Cluster, Any]] = {}
_VERDICTS_MAX = 4096


def _memo(cluster: Cluster, pod: SchedPod, what: str, compute: Any) -> Any:
    try:
        key = (id(cluster), what, _key(pod))
        hash(key)
    except TypeError:  # a value no hash can take: judge it afresh
        return compute()
    found = _VERDICTS.get(key)
    if found is not None and found[0] is cluster:
        return found[1]
    value = compute()
    if len(_VERDICTS) >= _VERDICTS_MAX:
        _VERDICTS.clear()
    _VERDICTS[key] = (cluster, value)
    return value


_INDEXES: dict[int, tuple[Cluster, NodeIndex]] = {}


def cluster_index(cluster: Cluster) -> NodeIndex:
    """The cluster's groups indexed (:class:`gpulint.cluster.nodeindex.NodeIndex`), built once
    per cluster."""
    cached = _INDEXES.get(id(cluster))
    if cached is not None and cached[0] is cluster:
        return cached[1]
    index = NodeIndex(cluster_groups(cluster))
    _INDEXES[id(cluster)] = (cluster, index)
    return index


def _fits_by_index(pod: SchedPod, cluster: Cluster) -> bool | None:
    """Whether some node passes every filter, weighing only the nodes the index hands the
    pod; None when that compares more than :data:`NODE_BUDGET` pod-node pairs."""
    groups = cluster_groups(cluster)
    index = cluster_index(cluster)
    keys = pod.label_keys()
    by_node = pod.names_nodes()
    found = index.candidates(pod)
    items = found if found is not None else ((gi, None) for gi in range(len(groups)))
    done: dict[int, set[int] | None] = {}
    spent = 0
    # The index's lists may name a group more than once (two tolerations of its taints):
    # looking at an entry counts too, at a quarter of a comparison.
    looked = 0
    for gi, subset in items:
        looked += 1
        if looked > 4 * NODE_BUDGET:
            return None
        seen = done.get(gi, set())
        if seen is None:
            continue
        group = groups[gi]
        todo: Iterable[int] = [0]
        if by_node or (group.varying & keys):
            todo = range(len(group.nodes)) if subset is None else subset
            done[gi] = None if subset is None else seen
        else:
            done[gi] = None
        for i in todo:
            if i in seen:
                continue
            seen.add(i)
            spent += 1
            if spent > NODE_BUDGET:
                return None
            if not failures(pod, group.nodes[i]):
                return True
    return False


def fits_somewhere(pod: SchedPod, cluster: Cluster) -> bool:
    """Whether at least one node passes every filter (stops at the first that does); True
    too when that cannot be told within :data:`NODE_BUDGET` pod-node pairs (it may)."""

    def compute() -> bool:
        return _fits_by_index(pod, cluster) is not False

    return bool(_memo(cluster, pod, "fits", compute))


class Unjudged(NamedTuple):
    """A pod the cluster is too large to judge exactly: more than :data:`NODE_BUDGET`
    pod-node pairs to compare."""

    pod: SchedPod
    #: The cluster's nodes.
    total: int
    #: The nodes the index handed the pod were all compared, and none takes it.
    none_fit: bool

    def message(self) -> str:
        compared = (
            "none of the nodes its node selector, affinity, tolerations and requests leave "
            "can take it, but the reason of every other node is not counted"
            if self.none_fit
            else "no node it was compared with can take it"
        )
        return (
            f"the cluster is too large to judge this pod exactly ({self.total} nodes; gpulint "
            f"compares a pod with at most {NODE_BUDGET} nodes or node shapes): {compared}; "
            "it may stay Pending"
        )


def placement(pod: SchedPod, cluster: Cluster) -> Feasibility | Unjudged | None:
    """The scheduler's verdict on ``pod``: None when some node takes it, else every node's
    (:func:`feasibility`), or :class:`Unjudged` when that compares more than
    :data:`NODE_BUDGET` pod-node pairs."""

    def compute() -> Feasibility | Unjudged | None:
        fits = _fits_by_index(pod, cluster)
        if fits:
            return None
        index = cluster_index(cluster)
        if index.units(pod, pod.label_keys(), NODE_BUDGET) > NODE_BUDGET:
            return Unjudged(pod, index.total, fits is False)
        result = _feasibility(pod, cluster)
        return None if result.fitting else result

    found: Feasibility | Unjudged | None = _memo(cluster, pod, "judge", compute)
    return found


def fewest_untolerated(
    cluster: Cluster,
    names: Sequence[str] | None,
    is_accelerator: Callable[[str], bool],
    tolerations: Sequence[Any],
    bound: bool,
) -> Fewest | TooLarge | None:
    """Of the nodes offering one of ``names`` (None: any accelerator), the first whose taints
    that keep the pod off (NoExecute only when ``bound`` by ``nodeName``) the pod misses
    fewest of, with them; None when it misses none of some node's or no node offers them;
    :class:`TooLarge` past :data:`NODE_BUDGET` node shapes its tolerations bear on."""
    index = cluster_index(cluster)
    if names is None:
        names = [k for k in index.by_resource if is_accelerator(k)]
    return index.taint_shapes(cluster.nodes, bound).fewest(names, tolerations)


def feasibility(pod: SchedPod, cluster: Cluster) -> Feasibility:
    """Run the filters for ``pod`` on every node of ``cluster`` (every pair: :func:`placement`
    bounds them)."""
    result: Feasibility = _memo(cluster, pod, "all", lambda: _feasibility(pod, cluster))
    return result


def _feasibility(pod: SchedPod, cluster: Cluster) -> Feasibility:
    groups = cluster_groups(cluster)
    keys = pod.label_keys()
    by_node = pod.names_nodes()
    verdicts: list[Verdict] = []
    for group in groups:
        if by_node or (group.varying & keys):
            for node in group.nodes:
                first = failures(pod, node)
                verdicts.append(
                    Verdict(group, (node,), node.node_count, first[0] if first else None)
                )
        else:
            first = failures(pod, group.nodes[0])
            verdicts.append(Verdict(group, group.nodes, group.size, first[0] if first else None))
    return Feasibility(pod, sum(g.size for g in groups), tuple(verdicts))
