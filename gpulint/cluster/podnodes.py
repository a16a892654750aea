"""The nodes a pod's own node selector names: how many devices such a node has.

A pod that writes ``node.kubernetes.io/instance-type: g5.xlarge`` (or a required node affinity
``In`` a list of types) can only land on nodes of those instance types, and the instance
catalog (``gpulint/data/instance-types.json``, each row citing the vendor's page) says how
many GPUs each has. So do the labels that count a node's GPUs (Karpenter's and EKS Auto
Mode's ``instance-gpu-count``, Karpenter on Azure's ``sku-gpu-count``, GPU Feature
Discovery's ``nvidia.com/gpu.count``) and GKE's ``cloud.google.com/gke-accelerator``, whose
largest machine type in the catalog (A2, A3 and G2 are listed whole) bounds the node.

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
                found = Selected(most, shown, path, key not in COUNT_LABELS)
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
            best = Selected(most, shown, path, key not in COUNT_LABELS)
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
    from gpulint.cluster.catalog import builtin_catalog

    catalog = builtin_catalog()
    if key in INSTANCE_TYPE_LABELS:
        row = catalog.get(str(value))
        return row.gpus if row is not None and row.resource == resource else None
    if key == GKE_ACCELERATOR and resource == "nvidia.com/gpu":
        counts = [
            row.gpus
            for row in catalog.instance_types.values()
            if row.labels.get(GKE_ACCELERATOR) == value
        ]
        return max(counts) if counts else None
    return None


def _count(value: Any) -> int | None:
    text = str(value).strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 4 else None
