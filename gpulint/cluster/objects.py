"""Node-pool objects in the linted files, read by the table ``gpulint/data/node-pools.json``.

They say which nodes and tolerations the repository's pods will get. Each row of the table
names an API group and kind (Karpenter ``NodePool`` and ``NodeOverlay``, Kueue
``ResourceFlavor``, eksctl ``ClusterConfig`` node groups, OpenShift ``MachineSet``, Cluster
API ``MachineDeployment`` with its bootstrap and machine templates, Config Connector
``ContainerNodePool``, Azure Service Operator ``ManagedClustersAgentPool``) and where in it a
pool's taints, node labels, instance type, GPU count and scheduling requirements live, citing
the API type they were read from; the code here knows no kind by name.

Once a cluster is described (``platform:``, ``node-pools:``, ``--cluster``; without a
description gpulint's output stays what it always was) the pools feed it before any pod is
judged; without one, the taints of the GPU pools are evidence of the GPU nodes' taints
(:mod:`gpulint.cluster.evidence`). Either way ``gpulint check`` reads them in a pre-pass over
the files to lint (:func:`scan`), so every worker process (``--jobs``) and every file, whatever
its order, sees the same cluster. Only files whose bytes name one of the kinds are parsed (a
substring test); standard input is not pre-read.

- A pool becomes one node per instance type of the catalog (``gpulint/data/instance-types.json``) it
  names (its ``instance_types`` paths, a ``node.kubernetes.io/instance-type`` label, or
  Karpenter ``requirements`` on the instance type or family with ``In``), with the pool's
  labels, its taints and its ``pool_label``. A pool that names no catalog type but attaches
  GPUs (``accelerators``: ``[{type, count}]``) becomes one node with that many
  ``nvidia.com/gpu``; a Karpenter pool that only asks for GPUs
  (``karpenter.k8s.aws/instance-gpu-count`` / ``-gpu-name`` / ``-gpu-manufacturer``) becomes one
  node with as many GPUs as the requirement allows (``In``: the largest value; ``Lt N``: N-1),
  else the largest GPU count of the catalog. ``limits`` of a GPU resource of 0 make no node;
  a pool that names neither but caps ``nvidia.com/gpu`` in its ``limits`` above 0 launches GPU
  nodes, and becomes one node with the catalog's largest GPU count.
- A ``part`` (a Cluster API ``KubeadmConfigTemplate`` or ``AWSMachineTemplate``) adds its taints,
  labels and instance type to the pools whose ``refs`` name its kind and name.
- An ``overlay`` (Karpenter ``NodeOverlay``) sets the extended resources of its ``capacity``
  on the Karpenter nodes its ``requirements`` match (GPU time-slicing: ``nvidia.com/gpu: 4``
  on one-GPU instance types); the higher ``weight`` wins. Their pools' GPUs and resources
  are those of the overlaid nodes.
- ``tolerations`` (Kueue's ResourceFlavor) are added to the pods Kueue admits (pods that name
  a queue).

Every pool is also kept as a :class:`Pool`, with the API type and the place it came from, for
``gpulint inspect`` and the evidence a finding names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from gpulint.cluster.catalog import INSTANCE_TYPE_LABEL, InstanceType, builtin_catalog
from gpulint.cluster.model import Cluster, Node
from gpulint.cluster.poolkinds import (
    Kind,
    as_dict,
    as_list,
    at,
    builtin_kinds,
    markers,
    taints_of,
)
from gpulint.cluster.pools import DEFAULT_MAX_PODS, GIB
from gpulint.k8s.taints import Taint
from gpulint.loader.document import Parse

UNNAMED = "(unnamed)"
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
#: Resources a NodeOverlay's capacity may not set (its CRD's validation).
_STANDARD = ("cpu", "memory", "ephemeral-storage", "pods")


class Pool(NamedTuple):
    """A node pool the files describe, as ``gpulint inspect`` and the evidence name it."""

    #: What it is (the table's ``what``): ``eksctl managed node group``.
    what: str
    name: str
    #: Where: ``file:line`` of its object.
    source: str
    #: ``apiVersion`` group and kind: ``eksctl.io/ClusterConfig``.
    api: str
    platform: str | None
    taints: tuple[Taint, ...]
    instance_types: tuple[str, ...]
    #: The most GPUs one of its nodes has (0: it makes no GPU node gpulint can tell).
    gpus: int
    #: Labels every node of the pool carries (its own, its ``pool_label``).
    labels: Mapping[str, str]
    #: The accelerator resources its nodes advertise (``nvidia.com/gpu``).
    resources: tuple[str, ...]

    def shown(self) -> str:
        return f"{self.what} {self.name}"


class Found(NamedTuple):
    """What the files' node-pool objects add to the cluster."""

    nodes: tuple[Node, ...] = ()
    tolerations: tuple[Mapping[str, str], ...] = ()
    pools: tuple[Pool, ...] = ()
    #: Each RuntimeClass's ``scheduling.tolerations``, as (class name, toleration): the
    #: RuntimeClass admission controller adds them to the pods that name the class.
    runtime: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    #: Each MutatingWebhookConfiguration webhook that changes pods as they are created, as
    #: (webhook name, ``file:line`` of its object): it may add what a pod lacks.
    webhooks: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.nodes or self.tolerations)


def _labels(value: Any) -> dict[str, str]:
    return {k: v for k, v in as_dict(value).items() if isinstance(k, str) and isinstance(v, str)}


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in as_list(value) if isinstance(v, str)]


def _number(value: Any) -> int | None:
    text = str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


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
    return [str(v) for v in as_list(requirement.get("values")) if isinstance(v, (str, int))]


class _Asked(NamedTuple):
    """What Karpenter requirements say: catalog types, whether GPUs are asked for, how many
    at most, and the labels a single ``In`` value fixes."""

    types: list[InstanceType]
    gpu: bool
    most: int | None
    labels: dict[str, str]


def _requirements(rows: Any) -> _Asked:
    catalog = builtin_catalog()
    asked = _Asked([], False, None, {})
    gpu, count = False, None
    for req in as_list(rows):
        req = as_dict(req)
        key, op = req.get("key"), req.get("operator")
        values = _values(req)
        if key in GPU_KEYS:
            gpu = True
        if op == "In" and key == INSTANCE_TYPE_LABEL:
            asked.types.extend(t for t in (catalog.get(v) for v in values) if t is not None)
        elif op == "In" and key in FAMILY_LABELS:
            families = tuple(f"{v}." for v in values)
            asked.types.extend(
                t for n, t in catalog.instance_types.items() if n.startswith(families)
            )
        elif key in GPU_COUNT_LABELS:
            numbers = [n for n in map(_number, values) if n is not None]
            if op == "In" and numbers:
                count = max(numbers)
            elif op == "Lt" and numbers:
                count = numbers[0] - 1
        if op == "In" and isinstance(key, str) and len(values) == 1:
            asked.labels.setdefault(key, values[0])
    return asked._replace(gpu=gpu, most=count)


def _name(row: Kind, item: dict[str, Any]) -> str:
    for path in row.name:
        value = at(item, path)
        if isinstance(value, str) and value:
            return value
    return UNNAMED


def _accelerators(value: Any) -> int:
    """GPUs per node of ``[{type, count}]`` (Config Connector's guestAccelerator, OpenShift's
    GCP ``gpus``): NVIDIA types only (GCP's accelerator names start with ``nvidia-``)."""
    total = 0
    for row in as_list(value):
        kind = as_dict(row).get("type")
        count = _number(as_dict(row).get("count"))
        if count and (not isinstance(kind, str) or kind.startswith("nvidia")):
            total += count
    return total


def _pool(
    row: Kind, item: dict[str, Any], source: str, parts: Mapping[tuple[str, str], list[Any]]
) -> tuple[Pool, list[Node]]:
    """The pool an object (or an item of its ``pools`` list) describes, and its nodes."""
    name = _name(row, item)
    sources: list[tuple[Kind, dict[str, Any]]] = [(row, item)]
    for ref in row.refs:
        target = as_dict(at(item, ref))
        kind, ref_name = target.get("kind"), target.get("name")
        if isinstance(kind, str) and isinstance(ref_name, str):
            sources.extend(parts.get((kind, ref_name), ()))
    taints: list[Taint] = []
    labels: dict[str, str] = {}
    type_names: list[str] = []
    accelerators = 0
    for kind, data in sources:
        for path in kind.taints:
            taints.extend(t for t in taints_of(at(data, path)) if t not in taints)
        for path in kind.labels:
            labels.update(_labels(at(data, path)))
        for path in kind.instance_types:
            type_names.extend(_strings(at(data, path)))
        if kind.accelerators is not None:
            accelerators = max(accelerators, _accelerators(at(data, kind.accelerators)))
    asked = _requirements(at(item, row.requirements)) if row.requirements else None
    if asked is not None:
        labels = {**asked.labels, **labels}
    if row.pool_label is not None:
        labels[row.pool_label] = name
    if INSTANCE_TYPE_LABEL in labels:
        type_names.append(labels[INSTANCE_TYPE_LABEL])
    catalog = builtin_catalog()
    types = {t.name: t for t in (catalog.get(n) for n in type_names) if t is not None}
    if asked is not None:
        types.update((t.name, t) for t in asked.types)
    limits = as_dict(at(item, row.limits)) if row.limits else {}
    frozen = tuple(taints)
    nodes: list[Node] = []
    if any(k == "nvidia.com/gpu" and str(v) == "0" for k, v in limits.items()):
        pass  # the pool may provision no GPU
    elif types:
        nodes = [_node(name, t, labels, frozen, source) for t in types.values()]
    elif accelerators:
        nodes = [_node(name, None, labels, frozen, source, gpus=accelerators)]
    elif asked is not None and asked.gpu and asked.most != 0:
        nodes = [_node(name, None, labels, frozen, source, gpus=asked.most or _most_gpus())]
    elif _limits_gpus(limits):
        # It caps the GPUs it launches, so it launches GPU nodes (a SageMaker HyperPod or
        # Karpenter pool that names no instance type): as many as the catalog's largest.
        nodes = [_node(name, None, labels, frozen, source, gpus=_most_gpus())]
    api = f"{row.group}/{row.kind}"
    pool = Pool(row.what, name, source, api, row.platform, frozen, tuple(types), 0, labels, ())
    return _with_capacity(pool, nodes), nodes


def _most_gpus() -> int:
    """The most ``nvidia.com/gpu`` an instance type of the catalog has."""
    catalog = builtin_catalog()
    return max(
        (t.gpus for t in catalog.instance_types.values() if t.resource == "nvidia.com/gpu"),
        default=8,
    )


def _limits_gpus(limits: Mapping[str, Any]) -> bool:
    """Do a pool's ``limits`` allow it some ``nvidia.com/gpu`` (a whole number above 0)?"""
    value = limits.get("nvidia.com/gpu")
    text = str(value).strip().strip("\"'") if isinstance(value, (int, str)) else ""
    return text.isdigit() and int(text) > 0


def _with_capacity(pool: Pool, nodes: list[Node]) -> Pool:
    """``pool`` with the most accelerators one of ``nodes`` has, and their resource names."""
    gpus = max((int(v) for n in nodes for k, v in n.allocatable.items() if k not in _STANDARD),
               default=0)  # fmt: skip
    resources = tuple(
        dict.fromkeys(
            k for n in nodes for k, v in n.allocatable.items() if k not in _STANDARD and v
        )
    )
    return pool._replace(gpus=gpus, resources=resources)


def _matches(requirements: Any, labels: Mapping[str, str]) -> bool:
    """Whether node labels meet Karpenter node selector requirements."""
    for req in as_list(requirements):
        req = as_dict(req)
        key, op = req.get("key"), req.get("operator")
        values = _values(req)
        have = labels.get(key) if isinstance(key, str) else None
        if op == "In" and have not in values:
            return False
        if op == "NotIn" and have in values:
            return False
        if op == "Exists" and have is None:
            return False
        if op == "DoesNotExist" and have is not None:
            return False
        if op in ("Gt", "Lt", "Gte", "Lte"):
            mine, bound = _number(have), _number(values[0]) if values else None
            if mine is None or bound is None:
                return False
            ok = {
                "Gt": mine > bound,
                "Lt": mine < bound,
                "Gte": mine >= bound,
                "Lte": mine <= bound,
            }
            if not ok[op]:
                return False
    return True


def _karpenter_labels(node: Node) -> dict[str, str]:
    """The node's labels with the well-known labels Karpenter gives its instance types."""
    labels = dict(node.labels)
    gpus = [(k, v) for k, v in node.allocatable.items() if k not in _STANDARD and v > 0]
    if gpus:
        resource, count = gpus[0]
        for prefix in ("karpenter.k8s.aws/", "eks.amazonaws.com/"):
            labels.setdefault(f"{prefix}instance-gpu-count", str(int(count)))
            labels.setdefault(f"{prefix}instance-gpu-manufacturer", resource.split(".")[0])
    itype = labels.get(INSTANCE_TYPE_LABEL, "")
    if "." in itype:
        for label in FAMILY_LABELS:
            labels.setdefault(label, itype.split(".")[0])
    return labels


def _overlay(nodes: list[Node], overlays: list[tuple[Kind, dict[str, Any]]]) -> list[Node]:
    """The Karpenter nodes with the capacity of the overlays that match them."""
    from gpulint.k8s.quantity.parse import QuantityError, parse_quantity

    def weight(entry: tuple[Kind, dict[str, Any]]) -> int:
        row, data = entry
        return _number(at(data, row.weight)) or 0 if row.weight else 0

    out = []
    for node in nodes:
        if "karpenter.sh/nodepool" not in node.labels:
            out.append(node)
            continue
        labels = _karpenter_labels(node)
        allocatable = dict(node.allocatable)
        for row, data in sorted(overlays, key=weight):  # the highest weight is applied last
            if row.capacity is None or not _matches(at(data, row.requirements or ()), labels):
                continue
            for resource, text in as_dict(at(data, row.capacity)).items():
                if not isinstance(resource, str) or resource in _STANDARD:
                    continue
                try:
                    allocatable[resource] = parse_quantity(str(text))
                except QuantityError:
                    continue
        out.append(node._replace(allocatable=allocatable))
    return out


def from_objects(objects: Iterable[tuple[Any, str, Any]]) -> Found:
    """What the node-pool objects among ``(data, source, document)`` add to the cluster
    (``document``: the parsed document that tells the line of a pool inside a list, or
    None: a pool in a list is cited at its object's ``source``)."""
    table = builtin_kinds()
    pending: list[tuple[Kind, dict[str, Any], str]] = []
    parts: dict[tuple[str, str], list[Any]] = {}
    overlays: list[tuple[Kind, dict[str, Any]]] = []
    tolerations: list[Mapping[str, str]] = []
    runtime: list[tuple[str, Mapping[str, Any]]] = []
    webhooks: list[tuple[str, str]] = []
    for data, source, doc in objects:
        if not isinstance(data, dict):
            continue
        group = str(data.get("apiVersion", "")).split("/")[0]
        kind = data.get("kind")
        if group == "node.k8s.io" and kind == "RuntimeClass":
            runtime += _runtime_tolerations(data)
            continue
        if group == "admissionregistration.k8s.io" and kind == "MutatingWebhookConfiguration":
            webhooks += _pod_webhooks(data, source)
            continue
        for row in table.get((group, kind), ()) if isinstance(kind, str) else ():
            if row.tolerations is not None:
                tolerations += [
                    t for t in as_list(at(data, row.tolerations)) if isinstance(t, dict)
                ]
            if row.role == "part":
                name = as_dict(data.get("metadata")).get("name")
                if isinstance(name, str):
                    parts.setdefault((row.kind, name), []).append((row, data))
            elif row.role == "overlay":
                overlays.append((row, data))
            elif row.pools is None:
                pending.append((row, data, source))
            else:
                # A list of pools, or a map of pools by name (the EKS Terraform module's
                # ``eks_managed_node_groups``: a pool without a ``name`` is its key's).
                listed = at(data, row.pools)
                entries = (
                    list(listed.items()) if isinstance(listed, dict) else enumerate(as_list(listed))
                )
                for i, item in entries:
                    if isinstance(item, dict):
                        if isinstance(i, str) and _name(row, item) == UNNAMED:
                            item = {**item, "name": i}
                        pending.append((row, item, _item_source(source, doc, (*row.pools, i))))
    nodes: list[Node] = []
    pools: list[Pool] = []
    for row, item, source in pending:
        pool, made = _pool(row, item, source, parts)
        if overlays:
            # The capacity an overlay gives (time-sliced GPUs) is the pool's capacity too:
            # for `inspect` and for the pools the evidence offers a pod.
            made = _overlay(made, overlays)
            pool = _with_capacity(pool, made)
        pools.append(pool)
        nodes += made
    return Found(tuple(nodes), tuple(tolerations), tuple(pools), tuple(runtime), tuple(webhooks))


def _pod_webhooks(data: dict[str, Any], source: str) -> list[tuple[str, str]]:
    """The webhooks of a MutatingWebhookConfiguration that change pods as they are created:
    a rule of the core group (``""`` or ``*``) on ``pods`` (or ``*``) for ``CREATE`` (or
    ``*``); admissionregistration.k8s.io/v1 ``RuleWithOperations``."""
    found: list[tuple[str, str]] = []
    for hook in as_list(data.get("webhooks")):
        if not isinstance(hook, dict):
            continue
        for rule in as_list(hook.get("rules")):
            if not isinstance(rule, dict):
                continue
            groups = _strings(rule.get("apiGroups"))
            resources = _strings(rule.get("resources"))
            operations = _strings(rule.get("operations"))
            if (
                ("" in groups or "*" in groups)
                and ("pods" in resources or "*" in resources or "*/*" in resources)
                and ("CREATE" in operations or "*" in operations)
            ):
                name = hook.get("name")
                found.append((name if isinstance(name, str) else "?", source))
                break
    return found


def _runtime_tolerations(data: dict[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """A RuntimeClass's ``scheduling.tolerations`` with its name (node.k8s.io/v1
    ``Scheduling``; the RuntimeClass admission plugin merges them into each pod that names
    the class, kubernetes plugin/pkg/admission/runtimeclass)."""
    name = as_dict(data.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        return []
    rows = as_list(at(data, ("scheduling", "tolerations")))
    return [(name, t) for t in rows if isinstance(t, dict)]


def _item_source(source: str, doc: Any, path: tuple[Any, ...]) -> str:
    """``file:line`` of a pool inside its object's list (its object's when unknown)."""
    if doc is None:
        return source
    label = source.rpartition(":")[0]
    return f"{label}:{doc.value_span(path).line}"


def scan(
    files: Iterable[tuple[str, bytes]],
    parse: Parse | None = None,
    terraform: Iterable[tuple[str, bytes]] = (),
) -> Found:
    """The node-pool objects of ``(label, bytes)`` files; files that do not name one of the
    kinds are not parsed, and a file that cannot be decoded or parsed adds nothing (the lint
    reports it). Parts and overlays apply to the pools of every file. ``parse``: the
    documents of a file's text, when the caller parsed it already (the facts stage parses a
    rare file once for all its facts). ``terraform``: the project's ``*.tf`` files, whose
    node pools are read too (:mod:`gpulint.cluster.terraform`)."""
    from gpulint.loader.decoding import decode
    from gpulint.loader.stream import DocumentStream

    wanted = markers()

    def objects() -> Iterable[tuple[Any, str, Any]]:
        for label, raw in files:
            if not any(m in raw for m in wanted):
                continue
            text, problem = decode(raw)
            if text is None or problem is not None:
                continue
            for doc in DocumentStream(text) if parse is None else parse(label, text):
                yield doc.data, f"{label}:{doc.start.line}", doc
        if terraform:
            from gpulint.cluster.terraform import terraform_objects

            yield from terraform_objects(terraform)

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
