"""What the rules ask of a described cluster: which nodes offer accelerators, the taints a
GPU pod meets there, the largest node, the resources the pools advertise.

Each function answers from the nodes when there are any, and says so by returning ``None``
when the cluster (or the lack of one) leaves the rule to its options.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.cluster.model import Cluster, Node
from gpulint.k8s.devices import Registry
from gpulint.k8s.objects import PodSpec
from gpulint.k8s.quantity.arith import is_integer
from gpulint.k8s.resources import ResourceEntry, gpu_demand
from gpulint.k8s.taints import Taint

if TYPE_CHECKING:  # annotations only: typing_extensions is mypy's, not a run-time need
    from typing_extensions import TypeIs

#: The label a pod (or its workload) carries to be admitted by Kueue.
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def describes_nodes(cluster: Cluster | None) -> TypeIs[Cluster]:
    """A cluster with nodes (mypy then knows ``cluster`` is not None, either way)."""
    return cluster is not None and bool(cluster.nodes)


def offers(node: Node, name: str) -> Decimal:
    return node.allocatable.get(name, Decimal(0))


#: What is asked of a cluster's nodes by every pod, computed once per cluster (and
#: registry): the rules ask it of each pod, and a cluster may have thousands of nodes.
_ONCE: dict[tuple[int, int, str], tuple[Cluster, Any, Any]] = {}


def _once(cluster: Cluster, what: str, compute: Callable[[], Any], registry: Any = None) -> Any:
    key = (id(cluster), id(registry), what)
    found = _ONCE.get(key)
    if found is not None and found[0] is cluster and found[1] is registry:
        return found[2]
    if len(_ONCE) >= 4096:
        _ONCE.clear()
    value = compute()
    _ONCE[key] = (cluster, registry, value)
    return value


def _by_name(cluster: Cluster) -> dict[str, list[int]]:
    """Each resource name some node offers (more than 0 of), with those nodes' positions."""

    def compute() -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for i, node in enumerate(cluster.nodes):
            for name, value in node.allocatable.items():
                if value > 0:
                    out.setdefault(name, []).append(i)
        return out

    found: dict[str, list[int]] = _once(cluster, "by-name", compute)
    return found


def accelerator_nodes(cluster: Cluster, registry: Registry) -> list[Node]:
    """The nodes that offer some accelerator resource of the registry (GPU nodes)."""

    def compute() -> list[Node]:
        return [
            n
            for n in cluster.nodes
            if any(v > 0 and registry.is_accelerator(k) for k, v in n.allocatable.items())
        ]

    found: list[Node] = _once(cluster, "accelerators", compute, registry)
    return found


def accelerator_taints(cluster: Cluster, registry: Registry) -> list[Taint]:
    """The taints of the GPU nodes (:func:`accelerator_nodes`) that keep a pod off, each once,
    in the nodes' order."""

    def compute() -> list[Taint]:
        seen: dict[Taint, None] = {}
        for node in accelerator_nodes(cluster, registry):
            seen.update(dict.fromkeys(enforced_taints(node)))
        return list(seen)

    found: list[Taint] = _once(cluster, "accelerator-taints", compute, registry)
    return found


def nodes_offering(cluster: Cluster, names: Iterable[str]) -> list[Node]:
    """The nodes that offer more than 0 of one of ``names``, in the cluster's order."""
    by_name = _by_name(cluster)
    lists = [by_name.get(name, []) for name in dict.fromkeys(names)]
    if len(lists) == 1:
        return [cluster.nodes[i] for i in lists[0]]
    return [cluster.nodes[i] for i in sorted({i for found in lists for i in found})]


def allocatable_names(cluster: Cluster) -> frozenset[str]:
    """Every resource name some node's allocatable lists (0 included), computed once."""

    def compute() -> frozenset[str]:
        return frozenset(k for n in cluster.nodes for k in n.allocatable)

    found: frozenset[str] = _once(cluster, "allocatable-names", compute)
    return found


def labelled_nodes(cluster: Cluster, key: str, value: str | None = None) -> list[Node]:
    """The nodes whose label ``key`` is ``value`` (None: any value but empty), in order,
    computed once per cluster and label."""

    def compute() -> list[Node]:
        if value is None:
            return [n for n in cluster.nodes if n.labels.get(key)]
        return [n for n in cluster.nodes if n.labels.get(key) == value]

    found: list[Node] = _once(cluster, f"label {key}={value}", compute)
    return found


def offered(cluster: Cluster, name: str) -> bool:
    """Whether some node offers more than 0 of ``name``."""
    return name in _by_name(cluster)


def unoffered(
    pod: PodSpec, cluster: Cluster | None, registry: Registry, wanted: Callable[[str], bool]
) -> list[ResourceEntry]:
    """The pod's GPU requests whose name is ``wanted`` and that no node of a described
    cluster offers, the first of each name per container: what GPU051-GPU053 report.

    Empty without a described cluster (:func:`describes_nodes`): only the nodes know
    which resources exist.
    """
    if not describes_nodes(cluster):
        return []
    seen: set[tuple[int, str]] = set()
    found = []
    for entry in gpu_demand(pod, registry).entries:
        key = (id(entry.container), entry.name)
        if not wanted(entry.name) or key in seen or offered(cluster, entry.name):
            continue
        seen.add(key)
        found.append(entry)
    return found


def pool_label(node: Node) -> str:
    """``pool a100 (.gpulint.yaml:12)``: how a finding names a node or pool."""
    what = f"pool {node.pool}" if node.pool else f"node {node.name}"
    return f"{what} ({node.source})" if node.source else what


def enforced_taints(node: Node, bound: bool = False) -> list[Taint]:
    """The node's taints that keep an untolerating pod off it: NoSchedule and NoExecute for
    the scheduler; only NoExecute for a pod bound with ``spec.nodeName`` (the kubelet)."""
    allowed = ("NoExecute",) if bound else ("NoSchedule", "NoExecute")
    return [t for t in node.taints if t.effect in allowed]


def added_tolerations(
    cluster: Cluster | None, extended: Sequence[str], queued: bool
) -> list[Mapping[str, Any]]:
    """Tolerations the platform adds to a pod at admission.

    ExtendedResourceToleration: ``{key: <name>, operator: Exists, effect: NoSchedule}`` per
    extended resource the pod requests. Kueue: the ResourceFlavors' tolerations, for a pod
    that names a queue (gpulint cannot tell which flavor a queue admits to, so any).
    """
    if cluster is None:
        return []
    out: list[Mapping[str, Any]] = []
    if cluster.extended_resource_toleration:
        out += [
            {"key": name, "operator": "Exists", "effect": "NoSchedule"}
            for name in dict.fromkeys(extended)
            if "/" in name and not name.startswith("kubernetes.io/")
        ]
    if queued:
        out += list(cluster.queue_tolerations)
    return out


def largest_offer(cluster: Cluster, name: str) -> tuple[Decimal, Node] | None:
    """The most of ``name`` one node offers, and that node (None: no node offers it)."""

    def compute() -> tuple[Decimal, Node] | None:
        best: tuple[Decimal, Node] | None = None
        for i in _by_name(cluster).get(name, ()):
            node = cluster.nodes[i]
            have = offers(node, name)
            if have > 0 and (best is None or have > best[0]):
                best = (have, node)
        return best

    found: tuple[Decimal, Node] | None = _once(cluster, f"largest {name}", compute)
    return found


def advertised(cluster: Cluster, registry: Registry) -> dict[str, list[Node]]:
    """Every accelerator resource some node offers, with the nodes that offer it."""
    out: dict[str, list[Node]] = {}
    for node in cluster.nodes:
        for key, value in node.allocatable.items():
            if value > 0 and registry.is_accelerator(key):
                out.setdefault(key, []).append(node)
    return out


def why_not(node: Node) -> str:
    """Why a GPU node advertises what it does, in the words of its MIG and sharing setup."""
    labels = node.labels
    mig = labels.get("nvidia.com/mig.strategy")
    sharing = labels.get("nvidia.com/gpu.sharing-strategy")
    ack = labels.get("ack.node.gpu.schedule")
    if ack in ("cgpu", "share", "core_mem", "mps"):
        return f"GPU sharing (ack.node.gpu.schedule={ack}) sets nvidia.com/gpu to 0 there"
    if mig == "mixed":
        return "its GPUs are MIG-partitioned, mixed strategy"
    if mig == "single":
        return "the MIG single strategy advertises each MIG instance as nvidia.com/gpu"
    if sharing and any(k.endswith(".shared") for k in node.allocatable):
        return f"{sharing} with renameByDefault advertises the replicas as <resource>.shared"
    if sharing:
        return f"{sharing} without renameByDefault advertises the replicas as nvidia.com/gpu"
    return "its device plugin advertises these"


def describe_offer(node: Node, registry: Registry) -> str:
    """``nvidia.com/mig-1g.10gb: 56`` for the accelerator resources a node offers."""
    parts = [
        f"{k}: {int(v) if is_integer(v) and v < 10**18 else v}"
        for k, v in sorted(node.allocatable.items())
        if v > 0 and registry.is_accelerator(k)
    ]
    return ", ".join(parts) or "no accelerator"


def nvidia_nodes(cluster: Cluster, registry: Registry) -> list[Node]:
    """Nodes that offer some resource of NVIDIA hardware (whole, MIG, shared, cGPU, HAMi)."""

    def compute() -> list[Node]:
        out = []
        for node in cluster.nodes:
            for key, value in node.allocatable.items():
                resource = registry.get(key)
                if value > 0 and resource is not None and resource.hardware == "nvidia":
                    out.append(node)
                    break
        return out

    found: list[Node] = _once(cluster, "nvidia", compute, registry)
    return found


def names_kueue_queue(pod: PodSpec) -> bool:
    """The pod (or its workload) names a Kueue queue: Kueue admits it with a flavor."""
    for labels in (labels_of(pod.obj.data), labels_of(pod_template(pod))):
        if KUEUE_QUEUE_LABEL in labels:
            return True
    return False


def labels_of(data: Any) -> dict[str, Any]:
    meta = data.get("metadata") if isinstance(data, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    return labels if isinstance(labels, dict) else {}


def pod_template(pod: PodSpec) -> Any:
    """The pod template around the pod spec (``...template`` of ``...template.spec``)."""
    node: Any = pod.obj.data
    rel = pod.path[len(pod.obj.path) :]
    for key in rel[:-1]:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return None
    return node


class SelectedPool(NamedTuple):
    """The GPU node pool a pod's ``nodeSelector`` picks (:func:`gpu_pool_selected`)."""

    #: How a message names it: the node group's or NodePool's name.
    name: str
    #: The accelerator its nodes advertise, to request.
    resource: str


def gpu_pool_selected(
    pod: PodSpec, evidence: Any, cluster: Cluster | None, registry: Registry
) -> SelectedPool | None:
    """The node pool that the pod's ``nodeSelector`` picks when every label it asks for is
    one of a pool's and every pool it matches has GPU nodes: the pools of the project's
    files (``evidence.pools``, :class:`gpulint.cluster.objects.Pool`: an eksctl node group, a
    Karpenter NodePool), or, when a cluster is described, its nodes (which those pools feed
    then). None otherwise: no selector, a value that is not a string, a match without GPUs."""
    selector = pod.spec.get("nodeSelector") if pod.location == "pod" else None
    if not isinstance(selector, Mapping) or not selector:
        return None
    wanted = {str(k): v for k, v in selector.items()}
    if not all(isinstance(v, str) for v in wanted.values()):
        return None
    pools = evidence.pools if evidence is not None else ()
    if pools:
        matched = [p for p in pools if all(p.labels.get(k) == v for k, v in wanted.items())]
        if not matched or not all(p.gpus > 0 for p in matched):
            return None
        first = matched[0]
        return SelectedPool(first.name, first.resources[0] if first.resources else "nvidia.com/gpu")
    if not describes_nodes(cluster):
        return None
    nodes = [n for n in cluster.nodes if all(n.labels.get(k) == v for k, v in wanted.items())]
    gpus = [
        [k for k, v in n.allocatable.items() if v > 0 and registry.is_accelerator(k)] for n in nodes
    ]
    if not nodes or not all(gpus):
        return None
    return SelectedPool(nodes[0].pool or nodes[0].name, gpus[0][0])
