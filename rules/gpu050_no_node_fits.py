"""No node of the described cluster can run this GPU pod.

## What it does
When a cluster is described (`--cluster nodes.yaml`, or `cluster:` in the configuration: the
output of `kubectl get nodes -o yaml`), runs kube-scheduler's filters for every pod that asks
for an accelerator against every node, as the default scheduler profile runs them:
NodeUnschedulable (cordoned nodes), NodeName, TaintToleration (`NoSchedule` and
`NoExecute` taints; `PreferNoSchedule` only scores), NodeAffinity (`nodeSelector` and
required node affinity: `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `matchFields`
on `metadata.name`, terms ORed) and NodeResourcesFit (the pod's effective request, init
containers, sidecars and `spec.overhead` included, against each node's allocatable) and,
for a pod whose GPUs come from DRA claims (in its file or another of its project) when the
node inventory holds the cluster's ResourceSlices, DynamicResources (the whole devices its
claims ask for against those each node's slices publish: `cannot allocate all claims`; the
finding then names where each claim is defined as a related location). When
no node passes, the message is the scheduler's own (`0/12 nodes are available: ...`, each
reason with its count), and its help line names the closest node pool and what would make
the pod fit there. Without a cluster description the rule says nothing.

The filters judge capacity, not usage: a pod that fits an empty node is feasible even if
the cluster is full today. Pods of node agents (DaemonSets) get the tolerations the
DaemonSet controller adds. Values the arithmetic cannot read (placeholders, invalid
quantities) are left out of the request rather than guessed.

The nodes are indexed once per run (by label, name, taint key and resource), so a pod is
compared with the nodes that may take it, and a pod is compared with at most 512 nodes (or
node shapes, identical nodes counted once): for a cluster too large to judge a pod within
that, the finding is `info` ("the cluster is too large to judge this pod exactly"), never an
error from a partial look.

When the closest pool fails several filters, the help line names each with its change
(`closest: pool a100-pool (8 nodes) fails 2 filters: untolerated taint {nvidia.com/gpu:
present}, add a toleration ...; node affinity/selector, change nodeSelector ...`), so
fixing one cause does not reveal the next. One cause, one finding: where every one of
those causes is already reported by the rule that names it with its fix -- GPU020 (an
untolerated GPU taint, at the pod's tolerations), GPU010 (a misspelt resource name),
GPU004 (a fraction of a device), GPU040 (more devices than the largest node),
GPU051-GPU053 (a MIG or sharing resource no pool advertises), GPU054 (a GKE accelerator
that does not exist), each at its resource or selector -- GPU050 says nothing; when a cause
is left that no other rule reports (a second node selector, a required affinity, a
cordoned pool, too much memory), GPU050 reports them all. With those rules ignored, GPU050
reports alone.

## Why it matters
A GPU pod that passes every other check can still stay `Pending` forever: the GPU pool is
tainted with a value the toleration does not match, the `nodeSelector` names a label no
pool carries, or it asks for more GPUs than any node has. The scheduler only says so after
the pod is applied; GPU050 says it before, in the scheduler's words.

## Example
```yaml
# nodes.yaml: 8 nodes with 4 nvidia.com/gpu, tainted nvidia.com/gpu=present:NoSchedule
spec:
  nodeSelector:
    cloud.google.com/gke-accelerator: nvidia-h100-80gb   # GPU050: no node has this label
  containers:
  - name: train
    resources:
      limits:
        nvidia.com/gpu: 8
```

## Use instead
```yaml
spec:
  nodeSelector:
    cloud.google.com/gke-accelerator: nvidia-tesla-a100
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  containers:
  - name: train
    resources:
      limits:
        nvidia.com/gpu: 4
```

## Options
None. The cluster is the option: `--cluster FILE` (repeatable) or `cluster: [FILE, ...]`
in `.gpulint.yaml`, paths relative to it. `gpulint inspect --cluster FILE` shows, per GPU
pod, which nodes fit and why each other one does not.

## References
- kubernetes `pkg/scheduler/framework/plugins/`: `nodeunschedulable`, `nodename`,
  `tainttoleration`, `nodeaffinity`, `noderesources` (the filters and their reason
  strings); `pkg/scheduler/framework/types.go` (`FitError`)
- kubernetes `staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity`
- https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- `tests/fixtures/sched/`: the plugins' table tests, ported case by case
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpulint.api import Path, PodSpec, Related, RuleContext, Violation, wants_accelerator

if TYPE_CHECKING:
    from gpulint.api import Failure, Node

CODE = "GPU050"
NAME = "no-node-fits"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
#: The rules that name one cause of the same Pending pod, with its fix: where they report
#: every cause the closest pool fails on (the finding's places), the scheduler's verdict
#: would say it again.
YIELDS_TO = ("GPU004", "GPU010", "GPU020", "GPU040", "GPU051", "GPU052", "GPU053", "GPU054")

#: The filters as a person names them, in the closest pool's list of failures.
_FILTERS = {
    "NodeUnschedulable": "cordoned",
    "NodeName": "node name",
    "TaintToleration": "untolerated taint",
    "NodeAffinity": "node affinity/selector",
    "NodeResourcesFit": "insufficient",
    "DynamicResources": "claims",
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes or pod.location != "pod":
        return
    from gpulint.api import (
        Unjudged,
        added_tolerations,
        names_kueue_queue,
        placement,
        sched_pod,
    )

    if not wants_accelerator(pod, ctx.registry, ctx.claims):
        return
    sched = sched_pod(pod)
    if sched is None:
        return
    devices, related = _claimed(pod, ctx, cluster)
    if devices:
        sched = sched._replace(devices=devices)
    # What the platform adds at admission (GKE's ExtendedResourceToleration, a Kueue
    # flavor's tolerations for a queued pod): the scheduler sees the pod with them.
    added = added_tolerations(cluster, list(sched.requests), names_kueue_queue(pod))
    if added:
        sched = sched._replace(tolerations=(*sched.tolerations, *added))
    result = placement(sched, cluster)
    if result is None:
        return
    if isinstance(result, Unjudged):
        # Too many nodes to compare this pod with each: never an error from a partial look.
        yield Violation(pod.path, result.message(), severity="info")
        return
    # The scheduler's words (``0/12 nodes are available: 4 node(s) didn't match ...``) are the
    # message; the closest node pool and what would make the pod fit there, the help line.
    message = result.message()
    advice: str | None = None
    anchor: Path = pod.path
    places: list[Path] = []
    closest = result.closest()
    if closest is not None:
        group, every = closest
        node = group.nodes[0]
        nodes = f"{group.size} node{'s' * (group.size != 1)}"
        if len(every) > 1:
            parts = "; ".join(_failed(f) for f in every)
            advice = f"closest: {group.label} ({nodes}) fails {len(every)} filters: {parts}"
        elif every and every[0].fixes:
            advice = f"closest: {group.label} ({nodes}): {'; '.join(every[0].fixes)}"
        for f in every:
            places.extend(_places(pod, f, sched.node_selector or {}, node))
        anchor = _anchor(pod, every[0].plugin, every[0].resources) if every else pod.path
    claims = related if any(f.plugin == "DynamicResources" for f in _every_failure(result)) else ()
    yield Violation(anchor, message, places=tuple(places) or ((),), related=claims, help=advice)


def _claimed(
    pod: PodSpec, ctx: RuleContext, cluster: Any
) -> tuple[tuple[tuple[str, int], ...], tuple[Related, ...]]:
    """The devices the pod's DRA claims ask for, by the key the inventory's ResourceSlices
    publish them under, where some node publishes them (elsewhere nothing is known), and
    where those claims are defined (related places)."""
    if not pod.spec.get("resourceClaims"):
        return (), ()
    from gpulint.api import allocatable_names, class_key, pod_claimed

    wanted: dict[str, int] = {}
    related: list[Related] = []
    for claimed in pod_claimed(pod, ctx.registry, ctx.claims):
        for claim, devices in claimed.claims:
            key = class_key(claim.device_class)
            if key is not None and key in allocatable_names(cluster):
                wanted[key] = wanted.get(key, 0) + devices
                related.extend(r for r in claimed.related() if r not in related)
    return tuple(sorted(wanted.items())), tuple(related)


def _every_failure(result: Any) -> list[Failure]:
    """The first failure of each verdict that has one."""
    return [v.failure for v in result.verdicts if v.failure is not None]


def _failed(failure: Failure) -> str:
    """One failing filter of the closest pool, with what would let it pass."""
    what = _FILTERS.get(failure.plugin, failure.plugin)
    if failure.plugin == "TaintToleration":
        what += " " + ", ".join(
            t.removeprefix("node(s) had untolerated taint ") for t in failure.reasons
        )
    elif failure.plugin == "NodeResourcesFit":
        what += " " + ", ".join(failure.resources)
    return f"{what}, {', '.join(failure.fixes)}" if failure.fixes else what


def _places(
    pod: PodSpec, failure: Failure, selector: Mapping[str, Any], node: Node
) -> Iterator[Path]:
    """Where in the pod each cause of ``failure`` is written, as the rules that name that
    cause report it; ``()`` for a cause on the nodes' side, which no rule of a pod reports."""
    spec = pod.spec
    if failure.plugin == "TaintToleration":
        yield (*pod.path, "tolerations") if "tolerations" in spec else pod.path
    elif failure.plugin == "NodeName":
        yield (*pod.path, "nodeName")
    elif failure.plugin == "NodeAffinity":
        wrong = [k for k, v in selector.items() if node.labels.get(k) != v]
        yield from ((*pod.path, "nodeSelector", k) for k in wrong)
        if len(failure.fixes) > len(wrong) or not wrong:
            yield (*pod.path, "affinity")
    elif failure.plugin == "NodeResourcesFit":
        for name in failure.resources:
            yield _resource_place(pod, name) if name != "pods" else ()
    elif failure.plugin == "DynamicResources":
        yield (*pod.path, "resourceClaims")
    else:
        yield ()


def _anchor(pod: PodSpec, plugin: str, resources: tuple[str, ...]) -> Path:
    """Where to point: what the closest pool's first failing filter reads."""
    spec = pod.spec
    if plugin == "TaintToleration":
        return pod.tolerations_path or pod.path
    if plugin == "NodeAffinity":
        for key in ("nodeSelector", "affinity"):
            if key in spec:
                return (*pod.path, key)
    if plugin == "NodeName" and "nodeName" in spec:
        return (*pod.path, "nodeName")
    if plugin == "NodeResourcesFit" and resources:
        return _resource_place(pod, resources[0]) or pod.path
    if plugin == "DynamicResources" and "resourceClaims" in spec:
        return (*pod.path, "resourceClaims")
    return pod.path


def _resource_place(pod: PodSpec, name: str) -> Path:
    """The entry of the container that asks for the most of ``name`` (``()``: none)."""
    from gpulint.api import pod_requests

    holders = [c for c in pod_requests(pod).containers if name in c.paths]
    if not holders:
        return ()
    top = max(holders, key=lambda c: c.requests.get(name, Decimal(0)))
    return top.paths[name]
