"""Node-pool objects in the linted files: Karpenter ``NodePool`` and Kueue ``ResourceFlavor``.

They say which nodes and tolerations the repository's pods will get, so, once a cluster is
described (``platform:``, ``node-pools:``, ``--cluster``; without a description gpulint's
output stays what it always was), they feed it before any pod is judged: ``gpulint check``
reads them in a pre-pass over the files to lint (:func:`scan`), before linting starts, so
every worker process (``--jobs``) and every file, whatever its order, sees the same
cluster. Only files whose bytes name one of the two kinds are parsed (a substring test), so
the pre-pass costs one read of each file, which the operating system's cache then serves to
the lint. Standard input is not pre-read: it is linted as it streams, against the cluster
the other inputs and the configuration describe.

- A Karpenter ``NodePool`` (``karpenter.sh``) becomes one node per instance type of the
  catalog its ``spec.template.spec.requirements`` allow (``node.kubernetes.io/instance-type``
  or ``karpenter.k8s.aws/instance-family`` with ``In``), with the pool's template labels,
  its taints (``startupTaints`` are removed once the node is ready and do not count) and the
  label ``karpenter.sh/nodepool``. A GPU NodePool that pins no catalog type (only
  ``karpenter.k8s.aws/instance-gpu-count`` / ``-gpu-name`` / ``-gpu-manufacturer``) becomes
  one node with as many GPUs as the requirement allows (``In``: the largest value; ``Lt N``:
  N-1), else the largest GPU count of the catalog's instance types. A NodePool with
  ``spec.limits`` of a GPU resource of 0 provisions no GPU node and adds none.
- A Kueue ``ResourceFlavor`` (``kueue.x-k8s.io``) adds its ``spec.tolerations`` to the
  tolerations Kueue gives the pods it admits (pods that name a queue); when its
  ``nodeLabels`` name a catalog instance type, it also becomes a node of that type with its
  ``nodeLabels`` and ``nodeTaints``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from gpulint.cluster.catalog import INSTANCE_TYPE_LABEL, InstanceType, builtin_catalog
from gpulint.cluster.model import Cluster, Node
from gpulint.cluster.pools import DEFAULT_MAX_PODS, GIB
from gpulint.taints import Taint

MARKERS = (b"NodePool", b"ResourceFlavor")
FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
#: EKS Auto Mode's NodePools write the same requirements under eks.amazonaws.com
#: (https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html).
FAMILY_LABELS = (FAMILY_LABEL, "eks.amazonaws.com/instance-family")
GPU_COUNT_LABEL = "karpenter.k8s.aws/instance-gpu-count"
GPU_COUNT_LABELS = (GPU_COUNT_LABEL, "eks.amazonaws.com/instance-gpu-count")
GPU_KEYS = (
    *GPU_COUNT_LABELS,
    "eks.amazonaws.com/instance-gpu-name",
    "eks.amazonaws.com/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.azure.com/sku-gpu-count",
    "karpenter.azure.com/sku-gpu-name",
    "karpenter.azure.com/sku-gpu-manufacturer",
)


class Found(NamedTuple):
    """What the files' node-pool objects add to the cluster."""

    nodes: tuple[Node, ...] = ()
    tolerations: tuple[Mapping[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.nodes or self.tolerations)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _taints(rows: Any) -> tuple[Taint, ...]:
    out = []
    for row in _list(rows):
        if isinstance(row, dict) and isinstance(row.get("key"), str) and row["key"]:
            value = row.get("value")
            effect = row.get("effect")
            out.append(
                Taint(
                    row["key"],
                    value if isinstance(value, str) else "",
                    effect if isinstance(effect, str) else "NoSchedule",
                )
            )
    return tuple(out)


def _labels(value: Any) -> dict[str, str]:
    return {k: v for k, v in _dict(value).items() if isinstance(k, str) and isinstance(v, str)}


def _node(
    name: str,
    itype: InstanceType | None,
    labels: dict[str, str],
    taints: tuple[Taint, ...],
    source: str,
    gpus: int | None = None,
) -> Node:
    allocatable: dict[str, Decimal] = {"pods": Decimal(DEFAULT_MAX_PODS)}
    all_labels: dict[str, str] = {}
    if itype is not None:
        all_labels.update(itype.labels)
        allocatable["cpu"] = Decimal(itype.vcpus)
        allocatable["memory"] = Decimal(itype.memory_gib) * GIB
        allocatable[itype.resource] = Decimal(itype.gpus)
    elif gpus:
        allocatable["nvidia.com/gpu"] = Decimal(gpus)
    all_labels.update(labels)
    pool = f"{name}/{itype.name}" if itype is not None else name
    return Node(pool, all_labels, taints, allocatable, False, 1, pool, source)


def _values(requirement: dict[str, Any]) -> list[str]:
    return [str(v) for v in _list(requirement.get("values")) if isinstance(v, (str, int))]


def nodepool_nodes(data: dict[str, Any], source: str) -> list[Node]:
    """The nodes a Karpenter NodePool can create (see the module docstring)."""
    name = str(_dict(data.get("metadata")).get("name") or "nodepool")
    spec = _dict(data.get("spec"))
    limits = _dict(spec.get("limits"))
    if any(k == "nvidia.com/gpu" and str(v) == "0" for k, v in limits.items()):
        return []
    template = _dict(spec.get("template"))
    tspec = _dict(template.get("spec"))
    labels = {
        **_labels(_dict(template.get("metadata")).get("labels")),
        "karpenter.sh/nodepool": name,
    }
    taints = _taints(tspec.get("taints"))
    catalog = builtin_catalog()
    types: list[InstanceType] = []
    gpu_pool = False
    count: int | None = None
    for req in _list(tspec.get("requirements")):
        req = _dict(req)
        key, op = req.get("key"), req.get("operator")
        if key in GPU_KEYS:
            gpu_pool = True
        if op == "In" and key == INSTANCE_TYPE_LABEL:
            types += [t for t in (catalog.get(v) for v in _values(req)) if t is not None]
        elif op == "In" and key in FAMILY_LABELS:
            families = {f"{v}." for v in _values(req)}
            types += [t for n, t in catalog.instance_types.items() if n.startswith(tuple(families))]
        elif key in GPU_COUNT_LABELS:
            numbers = [int(v) for v in _values(req) if v.isascii() and v.isdigit() and len(v) <= 18]
            if op == "In" and numbers:
                count = max(numbers)
            elif op == "Lt" and numbers:
                count = numbers[0] - 1
        if op == "In" and isinstance(key, str) and len(_values(req)) == 1:
            labels.setdefault(key, _values(req)[0])
    if types:
        unique = {t.name: t for t in types}
        return [_node(name, t, labels, taints, source) for t in unique.values()]
    if not gpu_pool or count == 0:
        return []
    most = count or max(
        (t.gpus for t in catalog.instance_types.values() if t.resource == "nvidia.com/gpu"),
        default=8,
    )
    return [_node(name, None, labels, taints, source, gpus=most)]


def flavor(data: dict[str, Any], source: str) -> Found:
    """What a Kueue ResourceFlavor adds (see the module docstring)."""
    spec = _dict(data.get("spec"))
    tolerations = tuple(t for t in _list(spec.get("tolerations")) if isinstance(t, dict))
    labels = _labels(spec.get("nodeLabels"))
    itype = builtin_catalog().get(labels.get(INSTANCE_TYPE_LABEL, ""))
    nodes: tuple[Node, ...] = ()
    if itype is not None:
        name = str(_dict(data.get("metadata")).get("name") or "flavor")
        nodes = (_node(name, itype, labels, _taints(spec.get("nodeTaints")), source),)
    return Found(nodes, tolerations)


def from_objects(objects: Iterable[tuple[Any, str]]) -> Found:
    """What the node-pool objects among ``(data, source)`` pairs add to the cluster."""
    nodes: list[Node] = []
    tolerations: list[Mapping[str, str]] = []
    for data, source in objects:
        if not isinstance(data, dict):
            continue
        group = str(data.get("apiVersion", "")).split("/")[0]
        kind = data.get("kind")
        if kind == "NodePool" and group == "karpenter.sh":
            nodes += nodepool_nodes(data, source)
        elif kind == "ResourceFlavor" and group == "kueue.x-k8s.io":
            found = flavor(data, source)
            nodes += found.nodes
            tolerations += found.tolerations
    return Found(tuple(nodes), tuple(tolerations))


def scan(files: Iterable[tuple[str, bytes]]) -> Found:
    """The node-pool objects of ``(label, bytes)`` files; files that do not name one of the
    kinds are not parsed, and a file that cannot be decoded or parsed adds nothing (the lint
    reports it)."""
    from gpulint.loader.decoding import decode
    from gpulint.loader.stream import DocumentStream

    def objects() -> Iterable[tuple[Any, str]]:
        for label, raw in files:
            if not any(m in raw for m in MARKERS):
                continue
            text, problem = decode(raw)
            if text is None or problem is not None:
                continue
            for doc in DocumentStream(text):
                yield doc.data, f"{label}:{doc.start.line}"

    return from_objects(objects())


def merged(cluster: Cluster | None, found: Found) -> Cluster | None:
    """``cluster`` with what the files add (a new cluster when none was described)."""
    if not found:
        return cluster
    base = cluster if cluster is not None else Cluster()
    return base._replace(
        nodes=(*base.nodes, *found.nodes),
        queue_tolerations=(*base.queue_tolerations, *found.tolerations),
    )
