"""The nodes a pod's own node selector names: how many devices such a node has.

A pod that writes ``node.kubernetes.io/instance-type: g5.xlarge`` (or a required node affinity
``In`` a list of types) can only land on nodes of those instance types, and the instance
catalog (``gpulint/data/instance-types.json``, each row citing the vendor's page) says how
many GPUs each has. So do the labels that count a node's GPUs (Karpenter's and EKS Auto
Mode's ``instance-gpu-count``, Karpenter on Azure's ``sku-gpu-count``, GPU Feature
Discovery's ``nvidia.com/gpu.count``), Karpenter's ``instance-family`` (the family's largest
size in the catalog), Huawei's ``accelerator-type`` (``module-a3-16``: 16
NPUs), GKE's ``cloud.google.com/gke-accelerator``, whose largest machine type in the
catalog (A2, A3 and G2 are listed whole) bounds the node, and GKE's TPU labels: a TPU
node holds at most the chips of its slice's ``cloud.google.com/gke-tpu-topology`` and of its
``cloud.google.com/gke-tpu-accelerator``'s largest machine type.

This is evidence from the pod itself, used when no cluster is described: a value the
catalog does not know, a label whose value is not a literal, or a term of the affinity that
names none of these labels leaves the size unknown (None), and the rule keeps its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.k8s.objects import expression_key_path, required_node_terms

if TYPE_CHECKING:
    from gpulint.k8s.workloads import PodSpec
    from gpulint.model import Path

#: The instance-type labels: the kubelet's, and the one it replaced (still set on nodes).
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
#: Labels whose value is the number of GPUs of the node, and the resources they count:
#: https://karpenter.sh/docs/reference/instance-types/ (``karpenter.k8s.aws/instance-gpu-count``),
#: https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html
#: (``eks.amazonaws.com/instance-gpu-count``),
#: https://learn.microsoft.com/azure/aks/node-autoprovision (``karpenter.azure.com/sku-gpu-count``),
#: NVIDIA/k8s-device-plugin docs/gpu-feature-discovery (``nvidia.com/gpu.count``: physical
#: GPUs; time-slicing replicas are ``nvidia.com/gpu.replicas``, so not for shared nodes).
COUNT_LABELS: Mapping[str, frozenset[str]] = {
    "karpenter.k8s.aws/instance-gpu-count": frozenset({"nvidia.com/gpu", "amd.com/gpu"}),
    "eks.amazonaws.com/instance-gpu-count": frozenset({"nvidia.com/gpu"}),
    "karpenter.azure.com/sku-gpu-count": frozenset({"nvidia.com/gpu"}),
    "nvidia.com/gpu.count": frozenset({"nvidia.com/gpu"}),
}
GKE_ACCELERATOR = "cloud.google.com/gke-accelerator"
#: Huawei's ``accelerator-type`` node label (Ascend mind-cluster, ascend-for-volcano
#: ``common/util/constants.go``: Module910bx8AcceleratorType "module-910b-8",
#: Module910bx16AcceleratorType "module-910b-16", Module910A3x16AcceleratorType
#: "module-a3-16", and the A3 SuperPoD's "module-a3-16-super-pod" / "module-a3-8-super-pod")
#: -> the NPUs (``huawei.com/Ascend910``) a node of that type has.
ASCEND_TYPE_LABEL = "accelerator-type"
ASCEND_TYPES: Mapping[str, int] = {
    "module-910b-8": 8,
    "module-910b-16": 16,
    "module-a3-16": 16,
    "module-a3-16-super-pod": 16,
    "module-a3-8-super-pod": 8,
}
ASCEND_RESOURCE = "huawei.com/Ascend910"
#: GKE's TPU node labels (https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus,
#: https://cloud.google.com/kubernetes-engine/docs/how-to/tpus). Each bounds the chips
#: (``google.com/tpu``) of one node alone: a node of a slice holds at most the slice's chips
#: (the product of ``cloud.google.com/gke-tpu-topology``: ``2x2`` -> 4, ``2x2x1`` -> 4), and at
#: most the chips of the largest machine type of its accelerator: 8 for v5e and v6e
#: (``ct5lp-hightpu-8t``, ``ct5l-hightpu-8t``, ``ct6e-standard-8t``; cloud.google.com/tpu/docs/
#: v6e "Chips per host 8", /v5e), 4 for v3, v4, v5p and TPU7x (``ct3-hightpu-4t``,
#: ``ct3p-hightpu-4t``, ``ct4p-hightpu-4t``, ``ct5p-hightpu-4t``, ``tpu7x-standard-4t``).
TPU_RESOURCE = "google.com/tpu"
TPU_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TPU_HOST_CHIPS: Mapping[str, int] = {
    "tpu-v3-slice": 4,
    "tpu-v3-device": 4,
    "tpu-v4-podslice": 4,
    "tpu-v5p-slice": 4,
    "tpu-v5-lite-podslice": 8,
    "tpu-v5-lite-device": 8,
    "tpu-v6e-slice": 8,
    "tpu7x": 4,
}
#: Karpenter's instance family label (https://karpenter.sh/docs/reference/instance-types/:
#: ``g5``, ``p4d``): the family's largest size in the catalog bounds the node, for the AWS
#: families the catalog lists to their largest size.
FAMILY_LABEL = "karpenter.k8s.aws/instance-family"
#: Labels whose size comes from the instance catalog (named in messages).
_CATALOG_LABELS = (*INSTANCE_TYPE_LABELS, GKE_ACCELERATOR, FAMILY_LABEL)


class Selected(NamedTuple):
    """The most devices of one resource a node the pod may land on has, and why."""

    most: int
    #: What says so, for a message: ``nodeSelector node.kubernetes.io/instance-type: g5.xlarge``.
    what: str
    #: The path of the label key that says so.
    path: Path
    #: Whether the size was read from the instance catalog (else from a count label).
    catalog: bool = False


def selected_size(pod: PodSpec, resource: str) -> Selected | None:
    """The most ``resource`` a node the pod's node selector and required node affinity allow
    can have; None when they do not say (see the module's docstring)."""
    spec = pod.spec
    found: Selected | None = None
    selector = spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key, value in selector.items():
            most = _most(str(key), [value], resource)
            if most is not None and (found is None or most < found.most):
                shown = f"nodeSelector {key}: {value}"
                path = (*pod.path, "nodeSelector", key)
                found = Selected(most, shown, path, key in _CATALOG_LABELS)
    terms = required_node_terms(spec)
    if not terms:
        return found
    # The terms are ORed: the pod may land on the largest node any of them allows.
    widest: Selected | None = None
    for t, term in enumerate(terms):
        bound = _term(term, resource, pod.path, t)
        if bound is None:
            return found  # this term allows nodes of any size
        if widest is None or bound.most > widest.most:
            widest = bound
    if widest is not None and (found is None or widest.most < found.most):
        found = widest
    return found


def _term(term: Any, resource: str, pod_path: Path, t: int) -> Selected | None:
    """The smallest bound an affinity term's expressions set (they are ANDed)."""
    exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
    best: Selected | None = None
    for e, expr in enumerate(exprs if isinstance(exprs, list) else ()):
        if not isinstance(expr, Mapping) or not isinstance(expr.get("key"), str):
            continue
        key, operator = expr["key"], expr.get("operator")
        values = expr.get("values")
        values = values if isinstance(values, list) else []
        most: int | None = None
        if operator == "In" and values:
            most = _most(key, values, resource)
        elif operator == "Lt" and len(values) == 1 and key in COUNT_LABELS:
            below = _count(values[0])
            if below is not None and resource in COUNT_LABELS[key]:
                most = max(below - 1, 0)
        if most is not None and (best is None or most < best.most):
            shown = f"node affinity {key} {operator} {', '.join(map(str, values))}"
            path = expression_key_path(pod_path, t, e)
            best = Selected(most, shown, path, key in _CATALOG_LABELS)
    return best


def _most(key: str, values: list[Any], resource: str) -> int | None:
    """The most ``resource`` a node whose label ``key`` is one of ``values`` has; None when
    the label says nothing of it or a value is unknown."""
    sizes: list[int] = []
    for value in values:
        size = _size(key, value, resource)
        if size is None:
            return None
        sizes.append(size)
    return max(sizes) if sizes else None


def _size(key: str, value: Any, resource: str) -> int | None:
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        return None
    if key in COUNT_LABELS:
        return _count(value) if resource in COUNT_LABELS[key] else None
    if key == ASCEND_TYPE_LABEL:
        return ASCEND_TYPES.get(str(value)) if resource == ASCEND_RESOURCE else None
    if key == TPU_ACCELERATOR_LABEL:
        return TPU_HOST_CHIPS.get(str(value)) if resource == TPU_RESOURCE else None
    if key == TPU_TOPOLOGY_LABEL:
        return tpu_topology_chips(value) if resource == TPU_RESOURCE else None
    from gpulint.cluster.catalog import builtin_catalog

    catalog = builtin_catalog()
    if key in INSTANCE_TYPE_LABELS:
        row = catalog.get(str(value))
        if row is not None and resource == "cpu":
            return row.vcpus or None  # the type's vCPUs: its capacity, above its allocatable
        return row.gpus if row is not None and row.resource == resource else None
    if key == FAMILY_LABEL and isinstance(value, str) and value:
        rows = [
            row
            for row in catalog.instance_types.values()
            if row.provider == "aws" and row.name.split(".", 1)[0] == value
        ]
        if not rows or any(row.resource != resource for row in rows):
            return None  # a family the catalog does not list, or of another accelerator
        return max(row.gpus for row in rows)
    if key == GKE_ACCELERATOR and resource == "nvidia.com/gpu":
        counts = [
            row.gpus
            for row in catalog.instance_types.values()
            if row.labels.get(GKE_ACCELERATOR) == value
        ]
        return max(counts) if counts else None
    return None


def tpu_topology_chips(value: Any) -> int | None:
    """The chips of a TPU slice topology (``2x4`` -> 8, ``2x2x1`` -> 4); None if not one."""
    dims = [_count(part) for part in str(value).split("x")]
    if not 2 <= len(dims) <= 3 or any(d is None or d == 0 for d in dims):
        return None
    chips = 1
    for d in dims:
        chips *= d or 1
    return chips


def _count(value: Any) -> int | None:
    text = str(value).strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 4 else None


# -- labels that send a pod to GPU nodes, or to chosen nodes ---------------------------

#: GPU node label -> the resource to request on such nodes (prefixes end in "." or "-"):
#: NVIDIA's GPU Feature Discovery (``nvidia.com/gpu.*``), Node Feature Discovery's NVIDIA
#: PCI labels, GKE, EKS, Karpenter and EKS Auto Mode, Karpenter on Azure, AMD's node
#: labeller and the common ``accelerator`` label (whose value may name the vendor:
#: :func:`gpu_label_resource`).
GPU_NODE_LABELS: Mapping[str, str] = {
    "nvidia.com/gpu": "nvidia.com/gpu",
    "feature.node.kubernetes.io/pci-10de.present": "nvidia.com/gpu",
    "feature.node.kubernetes.io/pci-0300_10de.present": "nvidia.com/gpu",
    "feature.node.kubernetes.io/pci-0302_10de.present": "nvidia.com/gpu",
    "cloud.google.com/gke-accelerator": "nvidia.com/gpu",
    "k8s.amazonaws.com/accelerator": "nvidia.com/gpu",
    "accelerator": "nvidia.com/gpu",
}
GPU_NODE_PREFIXES: Mapping[str, str] = {
    "nvidia.com/gpu.": "nvidia.com/gpu",
    "karpenter.k8s.aws/instance-gpu-": "nvidia.com/gpu",
    "eks.amazonaws.com/instance-gpu-": "nvidia.com/gpu",
    "karpenter.azure.com/sku-gpu-": "nvidia.com/gpu",
    "amd.com/gpu.": "amd.com/gpu",
    "beta.amd.com/gpu.": "amd.com/gpu",
}
#: Label values that say "no GPU" (an `accelerator: none` pool, `gpu.present: "false"`).
NO_VALUES = frozenset({"", "0", "false", "no", "none", "off"})
#: Huawei's ``accelerator`` node label names the chip (``huawei-Ascend910``,
#: ``huawei-Ascend310P``: Ascend mind-cluster, "Node labels"), whose device plugin resource
#: is ``huawei.com/<chip>``.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_ASCEND_VALUE = r"(?i)huawei-(ascend[0-9]+[a-z]?)"


def gpu_label_resource(key: str, value: Any = None) -> str | None:
    """The resource a pod on nodes with label ``key`` (of ``value``, when known) would
    request; None when ``key`` is no GPU node label."""
    resource = GPU_NODE_LABELS.get(key)
    if resource is None:
        resource = next((r for p, r in GPU_NODE_PREFIXES.items() if key.startswith(p)), None)
    if resource is not None and key == "accelerator" and isinstance(value, str):
        import re

        found = re.fullmatch(_ASCEND_VALUE, value.strip())
        if found:
            chip = found.group(1)
            return f"huawei.com/Ascend{chip[6:].upper()}"
    return resource


def label_says_yes(value: Any) -> bool:
    """A label value that says the node has the GPU (not a template placeholder)."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, (str, int)):
        return False
    text = str(value).strip().lower()
    return text not in NO_VALUES and "{{" not in text and "$" not in text


#: Labels whose value names one node or one kind of node: a pod that selects one is sent
#: to the nodes its author chose.
HOST_LABEL = "kubernetes.io/hostname"


def pinned(pod: PodSpec) -> str | None:
    """What sends the pod to nodes its author chose (``nodeSelector karpenter.sh/nodepool:
    p5en-efa``): a node pool's name label, a host name, an instance type or a GPU node label
    in its node selector, or in every term of its required node affinity; None otherwise."""
    selector = pod.spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key, value in selector.items():
            if _pins(str(key), value):
                return f"nodeSelector {key}: {value}"
    terms = required_node_terms(pod.spec)
    shown: str | None = None
    for term in terms:
        found = _pinning_term(term)
        if found is None:
            return None
        shown = shown or found
    return shown


def preferred_pin(pod: PodSpec) -> str | None:
    """A preferred node affinity for nodes its author chose (the labels :func:`pinned` reads):
    the first ``preference`` of ``preferredDuringSchedulingIgnoredDuringExecution`` with a
    positive weight whose expressions name one (``kubernetes.io/hostname In gpu-node-1``,
    ``nvidia.com/gpu.present In "true"``); None otherwise. The scheduler may still place the
    pod elsewhere, but the author asked for those nodes."""
    affinity = pod.spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    terms = (
        node.get("preferredDuringSchedulingIgnoredDuringExecution")
        if isinstance(node, Mapping)
        else None
    )
    for term in terms if isinstance(terms, list) else ():
        if not isinstance(term, Mapping):
            continue
        weight = term.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, int) or weight <= 0:
            continue
        found = _pinning_term(term.get("preference"))
        if found is not None:
            return f"preferred {found}"
    return None


def chosen_by_label(pod: PodSpec) -> str | None:
    """A label that sends the pod to nodes gpulint cannot name (``nodeSelector
    library-solution: k8s-training``): a node selector, or a label every term of its required
    node affinity asks for (``In`` or ``Exists``), that is no label every node carries (the
    Kubernetes ``kubernetes.io`` and ``k8s.io`` labels: OS, architecture, zone, role) nor a
    Spot capacity label. The nodes it selects may be the very GPU nodes the pod was sent to on
    purpose; None otherwise (:func:`pinned` answers for the labels gpulint does read)."""
    selector = pod.spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key, value in selector.items():
            if _chooses(str(key)) and isinstance(value, str) and "{{" not in value:
                return f"nodeSelector {key}: {value}"
    shown: str | None = None
    for term in required_node_terms(pod.spec):
        found = _choosing_term(term)
        if found is None:
            return None
        shown = shown or found
    return shown


def _chooses(key: str) -> bool:
    from gpulint.k8s.taints import capacity_taint

    prefix, slash, _ = key.rpartition("/")
    if capacity_taint(key):
        return False
    well_known = prefix in ("kubernetes.io", "k8s.io") or prefix.endswith(
        (".kubernetes.io", ".k8s.io")
    )
    return not (slash and well_known)


def _choosing_term(term: Any) -> str | None:
    exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
    for expr in exprs if isinstance(exprs, list) else ():
        if not isinstance(expr, Mapping) or not isinstance(expr.get("key"), str):
            continue
        if not _chooses(expr["key"]):
            continue
        values = expr.get("values")
        if expr.get("operator") == "Exists":
            return f"node affinity {expr['key']} Exists"
        if expr.get("operator") == "In" and isinstance(values, list) and values:
            return f"node affinity {expr['key']} In {', '.join(map(str, values))}"
    return None


def _pins(key: str, value: Any) -> bool:
    from gpulint.cluster.inventory import POOL_LABELS
    from gpulint.cluster.poolkinds import pool_labels

    # A node pool's name: the pool objects' labels, and those the platforms put on their
    # nodes beside them (AKS labels each node agentpool=<pool> as well).
    pool = key in pool_labels() or key in POOL_LABELS
    if key == HOST_LABEL or key in INSTANCE_TYPE_LABELS or pool:
        return isinstance(value, str) and bool(value) and "{{" not in value
    return gpu_label_resource(key, value) is not None and label_says_yes(value)


def _pinning_term(term: Any) -> str | None:
    exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
    for expr in exprs if isinstance(exprs, list) else ():
        if not isinstance(expr, Mapping) or not isinstance(expr.get("key"), str):
            continue
        values = expr.get("values")
        values = values if isinstance(values, list) else []
        if expr.get("operator") == "In" and values and all(_pins(expr["key"], v) for v in values):
            return f"node affinity {expr['key']} In {', '.join(map(str, values))}"
    return None
