"""GPU Deployment pinned to one node whose rolling update needs GPUs to spare there.

## What it does
Flags a `Deployment` whose pods request whole GPUs and are pinned to one node — a
`nodeSelector` on `kubernetes.io/hostname`, a `nodeName`, or a required node affinity whose
every term names a single host — and whose update strategy starts new pods before the old
ones stop: `RollingUpdate` (the default) with a `maxSurge` that is not zero (the default is
25%, rounded up: one pod). The finding is at the pinning key, and names the devices one new
pod needs on that node (any whole accelerator: Ascend NPUs, AMD GPUs too).

## Why it matters
A rolling update creates the new pod first and stops an old one only when the new one is
ready. Pinned to one node, the new pod needs that node's GPUs while the old pods still hold
theirs: on a node whose GPUs the Deployment uses (a workstation or an edge box with one GPU,
the common case for pinning), it stays `Pending` with `Insufficient nvidia.com/gpu`, and the
rollout never finishes until someone deletes the old pod. It is `info`: whether the node has
GPUs to spare is the cluster's, and the finding says what it assumed.

## Example
```yaml
kind: Deployment
spec:
  replicas: 1
  template:
    spec:
      nodeSelector:
        kubernetes.io/hostname: gpu-node-1   # GPU081
      containers:
      - name: ollama
        resources:
          limits:
            nvidia.com/gpu: 1
```

## Use instead
```yaml
kind: Deployment
spec:
  replicas: 1
  strategy:
    type: Recreate   # or rollingUpdate: {maxSurge: 0, maxUnavailable: 1}
```

## Options
None.

## References
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#strategy
  (`Recreate`; `maxSurge` defaults to 25%, rounded up; `maxUnavailable` to 25%, rounded down)
- https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#built-in-node-labels
  (`kubernetes.io/hostname`)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    accelerator_entries,
    required_node_terms,
    whole_gpu_count,
)

CODE = "GPU081"
NAME = "pinned-gpu-rolling-update"
SEVERITY = "info"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

HOSTNAME = "kubernetes.io/hostname"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    obj = pod.obj
    if pod.location != "pod" or obj.kind != "Deployment" or obj.parent is not None:
        return
    if tuple(pod.path[len(obj.path) :]) != ("spec", "template", "spec"):
        return
    spec = obj.data.get("spec")
    if not isinstance(spec, Mapping) or spec.get("replicas") == 0 or not _surges(spec):
        return
    gpus = 0
    for container in pod.containers:
        if container.section == "containers":
            gpus += whole_gpu_count(container, ctx.registry) or 0
    if not gpus:
        return
    pinned = _pinned(pod)
    if pinned is None:
        return
    where, host = pinned
    names = sorted({e.name for e in accelerator_entries(pod, ctx.registry)})
    devices = names[0] if len(names) == 1 else "accelerators"
    yield Violation(
        where,
        f"this Deployment's pods are pinned to node {host} and hold {gpus} {devices}: a "
        f"rolling update starts a new pod first, which needs {gpus} more there",
        help="set strategy: {type: Recreate} (or rollingUpdate: {maxSurge: 0, maxUnavailable: "
        "1}), else the rollout stays Pending (assumed: the node has no GPUs to spare beside "
        "the Deployment's)",
        at="key",
    )


def _surges(spec: Mapping[str, Any]) -> bool:
    """Does the Deployment's strategy start new pods before old ones stop?"""
    strategy = spec.get("strategy")
    if strategy is None:
        return True  # RollingUpdate with maxSurge 25%, rounded up: one pod at least
    if not isinstance(strategy, Mapping):
        return False
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return False
    rolling = strategy.get("rollingUpdate")
    surge = rolling.get("maxSurge", "25%") if isinstance(rolling, Mapping) else "25%"
    if isinstance(surge, bool):
        return False
    if isinstance(surge, int):
        return surge > 0
    if isinstance(surge, str) and surge.endswith("%") and surge[:-1].strip().isdigit():
        return int(surge[:-1]) > 0
    return False  # a placeholder or something else: not known


def _pinned(pod: PodSpec) -> tuple[tuple[Any, ...], str] | None:
    """The key that pins the pods to one node, and the node's name."""
    spec = pod.spec
    name = spec.get("nodeName")
    if isinstance(name, str) and name.strip():
        return (*pod.path, "nodeName"), name
    selector = spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        host = selector.get(HOSTNAME)
        if isinstance(host, str) and host.strip():
            return (*pod.path, "nodeSelector", HOSTNAME), host
    terms = required_node_terms(spec)
    if not terms:
        return None
    hosts: set[str] = set()
    for term in terms:
        found = _term_host(term)
        if found is None:
            return None  # a term that allows other nodes
        hosts.add(found)
    if len(hosts) != 1:
        return None
    at = (*pod.path, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    return at, hosts.pop()


def _term_host(term: Any) -> str | None:
    """The one host a node selector term allows (``kubernetes.io/hostname In [one]``)."""
    if not isinstance(term, Mapping):
        return None
    expressions = term.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else ():
        if not isinstance(expression, Mapping) or expression.get("key") != HOSTNAME:
            continue
        values = expression.get("values")
        if expression.get("operator") == "In" and isinstance(values, list) and len(values) == 1:
            value = values[0]
            return value if isinstance(value, str) and value.strip() else None
    return None
