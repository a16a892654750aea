"""No node of the described cluster can run this GPU pod.

## What it does
When a cluster is described (`--cluster nodes.yaml`, or `cluster:` in the configuration: the
output of `kubectl get nodes -o yaml`), runs kube-scheduler's filters for every pod that asks
for an accelerator against every node, as the default scheduler profile runs them:
NodeUnschedulable (cordoned nodes), NodeName, TaintToleration (`NoSchedule` and
`NoExecute` taints; `PreferNoSchedule` only scores), NodeAffinity (`nodeSelector` and
required node affinity: `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`, `matchFields`
on `metadata.name`, terms ORed) and NodeResourcesFit (the pod's effective request, init
containers, sidecars and `spec.overhead` included, against each node's allocatable). When
no node passes, the message is the scheduler's own (`0/12 nodes are available: ...`, each
reason with its count) followed by the closest node pool and what would make the pod fit
there. Without a cluster description the rule says nothing.

The filters judge capacity, not usage: a pod that fits an empty node is feasible even if
the cluster is full today. Pods of node agents (DaemonSets) get the tolerations the
DaemonSet controller adds. Values the arithmetic cannot read (placeholders, invalid
quantities) are left out of the request rather than guessed.

One cause, one finding: on a pod where an error that names a single cause is reported
(GPU020 an untolerated GPU taint, GPU051-GPU053 a MIG or sharing resource no pool
advertises), GPU050 says nothing, as that rule already says why the pod stays Pending and
how to fix it; with those rules ignored, GPU050 reports alone. GPU040 (more GPUs than the
largest node) is a warning, written for clusters gpulint can only guess, so GPU050 still
reports those pods as the error they are when the cluster is described.

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

from collections.abc import Iterator
from decimal import Decimal

from gpulint.model import Path
from gpulint.resources import wants_accelerator
from gpulint.rule import RuleContext, Violation
from gpulint.workloads import PodSpec

CODE = "GPU050"
NAME = "no-node-fits"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
#: The rules that name one cause of the same Pending pod, with its fix: where one of them
#: reports on a pod, the scheduler's whole verdict would say it again.
YIELDS_TO = ("GPU020", "GPU051", "GPU052", "GPU053")


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    cluster = ctx.cluster
    if cluster is None or not cluster.nodes or pod.location != "pod":
        return
    from gpulint.cluster.facts import added_tolerations, queued
    from gpulint.cluster.filters import feasibility, fits_somewhere
    from gpulint.cluster.schedpod import sched_pod

    if not wants_accelerator(pod, ctx.registry):
        return
    sched = sched_pod(pod)
    if sched is None:
        return
    # What the platform adds at admission (GKE's ExtendedResourceToleration, a Kueue
    # flavor's tolerations for a queued pod): the scheduler sees the pod with them.
    added = added_tolerations(cluster, list(sched.requests), queued(pod))
    if added:
        sched = sched._replace(tolerations=(*sched.tolerations, *added))
    if fits_somewhere(sched, cluster):
        return
    result = feasibility(sched, cluster)
    if result.fitting:
        return
    message = result.message()
    anchor: Path = pod.path
    closest = result.closest()
    if closest is not None:
        group, every = closest
        nodes = f"{group.size} node{'s' * (group.size != 1)}"
        fixes = [fix for f in every for fix in f.fixes]
        if fixes:
            message += f" Closest: {group.label} ({nodes}): {'; '.join(fixes)}."
        anchor = _anchor(pod, every[0].plugin, every[0].resources) if every else pod.path
    yield Violation(anchor, message)


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
        from gpulint.podrequest import pod_requests

        name = resources[0]
        holders = [c for c in pod_requests(pod).containers if name in c.paths]
        if holders:
            top = max(holders, key=lambda c: c.requests.get(name, Decimal(0)))
            return top.paths[name]
    return pod.path
