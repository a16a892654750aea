"""The pod as kube-scheduler's filters see it (:mod:`gpulint.cluster.filters`).

:func:`sched_pod` reads it from a pod spec found in a manifest: tolerations (the DaemonSet
controller's added for a node agent's pods), ``nodeName``, ``nodeSelector``, the required
node-affinity terms and the effective requests, pod-level resources included.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from gpulint.cluster.selectors import Term, parse_terms
from gpulint.k8s.workloads import PodSpec

# -- the pod as the filters see it ------------------------------------------------------------


class SchedPod(NamedTuple):
    """What the filters read of a pod."""

    tolerations: tuple[Any, ...] = ()
    node_name: str | None = None
    #: ``nodeSelector`` (None: not set).
    node_selector: Mapping[str, str] | None = None
    #: Required node-affinity terms (None: no required node affinity).
    terms: tuple[Term, ...] | None = None
    #: Effective requests (exact values), resources the arithmetic could not read left out.
    requests: Mapping[str, Decimal] = {}
    #: Devices its DRA claims ask for, by the key a node's ResourceSlices publish them under
    #: (gpulint.cluster.slices): only where the node inventory has slices.
    devices: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any], requests: Mapping[str, Decimal]) -> SchedPod:
        tolerations = spec.get("tolerations")
        node_name = spec.get("nodeName")
        selector = spec.get("nodeSelector")
        required: Any = None
        affinity = spec.get("affinity")
        if isinstance(affinity, Mapping):
            node_affinity = affinity.get("nodeAffinity")
            if isinstance(node_affinity, Mapping):
                required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
        return cls(
            tuple(tolerations) if isinstance(tolerations, list) else (),
            node_name if isinstance(node_name, str) and node_name else None,
            {str(k): str(v) for k, v in selector.items()}
            if isinstance(selector, Mapping) and selector
            else None,
            parse_terms(required) if isinstance(required, Mapping) else None,
            requests,
        )

    def label_keys(self) -> frozenset[str]:
        keys = set(self.node_selector or ())
        for term in self.terms or ():
            keys.update(r.key for r in term.labels)
        return frozenset(keys)

    def names_nodes(self) -> bool:
        return self.node_name is not None or any(t.fields for t in self.terms or ())


#: The tolerations the DaemonSet controller adds to every pod it creates
#: (``pkg/controller/daemon/util.AddOrUpdateDaemonPodTolerations``); network-unavailable
#: only for hostNetwork pods.
DAEMON_TOLERATIONS: tuple[dict[str, str], ...] = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)
_HOST_NETWORK_TOLERATION = {
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


def _pod_level(
    resources: Any, overhead: Mapping[str, Decimal], requests: dict[str, Decimal]
) -> None:
    """Pod-level ``spec.resources`` (PodLevelResources, on by default from 1.34): for cpu and
    memory (``IsSupportedPodLevelResource``) the pod-level request replaces the containers'
    sum, overhead still added (``resource.PodRequests``); a pod-level limit fills a missing
    pod-level request, as defaulting does. A value that does not parse is left to GPU005."""
    from gpulint.k8s.quantity.arith import add
    from gpulint.k8s.resources import amount

    if not isinstance(resources, Mapping):
        return
    merged: dict[str, Any] = {}
    for section in ("limits", "requests"):
        values = resources.get(section)
        if isinstance(values, Mapping):
            merged.update(values)
    for name in ("cpu", "memory"):
        if name not in merged:
            continue
        value = amount(merged[name]).value
        if value is None:
            requests.pop(name, None)
            continue
        requests[name] = add(value, overhead.get(name, Decimal(0)))


def sched_pod(pod: PodSpec) -> SchedPod | None:
    """What the filters read of a pod spec found in a manifest (None: not a pod spec).

    The requests are the effective ones (:func:`gpulint.k8s.podrequest.pod_requests`), without
    the resources whose values could not be read (placeholders, invalid quantities): those
    are judged by other rules, not guessed here. Tolerations are those the pod runs with
    (an Argo template's default included); a node agent's pods get the DaemonSet
    controller's tolerations too.
    """
    from gpulint.k8s.podrequest import pod_requests

    if pod.location != "pod":
        return None
    cached = pod.memo.get("sched_pod")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    result = pod_requests(pod)
    skip = {u.resource for u in result.unevaluated}
    requests = {k: v for k, v in result.requests.items() if k not in skip}
    _pod_level(pod.spec.get("resources"), result.overhead, requests)
    tolerations = list(pod.tolerations)
    if pod.node_agent:
        tolerations.extend(DAEMON_TOLERATIONS)
        if pod.spec.get("hostNetwork") is True:
            tolerations.append(_HOST_NETWORK_TOLERATION)
    built = SchedPod.from_spec(pod.spec, requests)._replace(tolerations=tuple(tolerations))
    pod.memo["sched_pod"] = built
    return built
