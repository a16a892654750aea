"""What ``gpulint inspect`` shows of a pod's DRA claims against a node inventory: the devices
its ResourceSlices publish that each request may get (:mod:`gpulint.cluster.slices`), and the
whole devices the claims ask for, which its scheduling counts as GPU050 does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpulint.cluster.model import Cluster, Node
    from gpulint.cluster.schedpod import SchedPod
    from gpulint.cluster.slices import Reach
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.dra import ClaimIndex, GpuClaim
    from gpulint.k8s.workloads import PodSpec


class ClaimDevices:
    """The inventory's device groups, read once, and what each device class may get of
    them, worked out once per class."""

    def __init__(self, cluster: Cluster | None) -> None:
        self._nodes = cluster.nodes if cluster is not None else ()
        self._reach: Reach | None = None  # read on the first claim shown
        self._available: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}

    def shown(self, claim: GpuClaim, line: int, claims: ClaimIndex) -> dict[str, Any]:
        """The claim as inspect shows it, each request with ``available``: the published
        devices its classes may get (None: no ResourceSlice in the inventory)."""
        from gpulint.cluster.slices import available, device_reach

        if self._reach is None:
            self._reach = device_reach(self._nodes)
        shown = claim.shown(line)
        for request in shown["requests"]:
            request["available"] = None
            if not self._reach:
                continue
            rows = []
            for name in request["device_classes"]:
                drivers = claims.class_drivers(name)
                key = (name, drivers)
                if key not in self._available:
                    self._available[key] = available(self._reach, name, drivers)
                rows.append(self._available[key])
            known = [r["selected_by"] for r in rows if r["selected_by"] is not None]
            request["available"] = {
                "selected_by": "; ".join(known) if len(known) == len(rows) else None,
                "count": sum(r["count"] for r in rows),
                "pools": [p for r in rows for p in r["pools"]],
            }
        return shown


def with_claims(
    sched: SchedPod, pod: PodSpec, registry: Registry, claims: ClaimIndex, nodes: Sequence[Node]
) -> SchedPod:
    """``sched`` with the whole devices the pod's DRA claims ask for, by the key the nodes'
    ResourceSlices publish them under, where some node publishes them (as GPU050 counts
    them, for the scheduler's DynamicResources filter)."""
    if not pod.spec.get("resourceClaims"):
        return sched
    from gpulint.cluster.slices import class_key
    from gpulint.k8s.dracount import pod_claimed

    wanted: dict[str, int] = {}
    for claimed in pod_claimed(pod, registry, claims):
        for claim, devices in claimed.claims:
            key = class_key(claim.device_class)
            if key is not None and any(key in n.allocatable for n in nodes):
                wanted[key] = wanted.get(key, 0) + devices
    return sched._replace(devices=tuple(sorted(wanted.items()))) if wanted else sched
