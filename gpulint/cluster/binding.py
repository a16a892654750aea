"""Whether a pod is held to node pools of its project's files (:meth:`Picture.binds`).

A pool of the files proves that its own nodes are tainted, not that the files list every
pool of the cluster: a pool's taint holds against a pod for certain only when the pod's own
node selector or required node affinity allows no other nodes than the files' pools' — it
asks for a pool-name label of theirs (``karpenter.sh/nodepool``, ``eks.amazonaws.com/nodegroup``,
``cloud.google.com/gke-nodepool``, ...: :func:`gpulint.cluster.poolkinds.pool_labels`) or a
label their node templates set that no node gets by itself. Labels of the kubelet, the cloud,
Karpenter, node feature discovery and the GPU operator (an instance type, a zone, a GPU
product) are on nodes of any pool: asking for one holds a pod to none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpulint.cluster.poolindex import PoolIndex
    from gpulint.k8s.objects import PodSpec

#: Label domains a node gets whatever pool it is in.
_EVERY_NODE_DOMAINS = ("kubernetes.io", "k8s.io", "karpenter.sh", "karpenter.k8s.aws", "nvidia.com")


def set_by_every_node(key: str) -> bool:
    """Whether nodes of any pool may carry the label ``key`` (``node.kubernetes.io/…``)."""
    prefix, _, _ = key.rpartition("/")
    return any(prefix == d or prefix.endswith("." + d) for d in _EVERY_NODE_DOMAINS)


def binds(index: PoolIndex, pod: PodSpec) -> bool:
    """Whether the pod's node selector, or every term of its required node affinity, asks for
    a label only the pools of the files set: a lookup per selector entry and affinity value
    in the index's labels, never a walk of the pools."""
    from gpulint.cluster.poolkinds import pool_labels
    from gpulint.k8s.objects import required_node_terms

    keys = pool_labels()

    def own(key: Any, value: Any) -> bool:
        if not isinstance(key, str) or not isinstance(value, str):
            return False
        if key not in keys and set_by_every_node(key):
            return False
        return bool(index.by_label.get((key, value)))

    selector = pod.spec.get("nodeSelector")
    if isinstance(selector, Mapping) and any(own(k, v) for k, v in selector.items()):
        return True
    terms = required_node_terms(pod.spec)
    if not terms:
        return False
    for term in terms:  # the terms are ORed: each must allow only the files' pools
        exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
        if not isinstance(exprs, list) or not any(_only_own(e, own) for e in exprs):
            return False
    return True


def _only_own(expr: Any, own: Any) -> bool:
    if not isinstance(expr, Mapping) or expr.get("operator") != "In":
        return False
    values = expr.get("values")
    return (
        isinstance(values, list) and bool(values) and all(own(expr.get("key"), v) for v in values)
    )
