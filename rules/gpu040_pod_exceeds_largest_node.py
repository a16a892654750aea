"""Pod asks for more GPUs than the largest node has.

## What it does
Computes the pod's effective request for each whole-device accelerator resource
(`nvidia.com/gpu`, `amd.com/gpu`, `habana.ai/gaudi`, ...: registry entries with
`whole_devices`) with the scheduler's arithmetic, and flags it when it exceeds the largest
node of the cluster (default 8). The arithmetic is Kubernetes' `PodRequests`: the sum of the
regular containers and sidecars, or, if larger, each init container's request plus the
sidecars declared before it; limits fill in missing requests.

With node pools or a node inventory described (docs/cluster.md), the largest node is the
described node that offers the most of that resource (a pool on the MIG `single` strategy
or time-slicing without renaming offers more `nvidia.com/gpu` than it has GPUs), and the
options are not used; a resource no node offers is GPU050's and GPU052's to report.

## Why it matters
A pod is placed on one node. If no node has that many devices, the scheduler reports
`Insufficient nvidia.com/gpu` forever and the cluster autoscaler cannot help. Multi-node
training spreads GPUs over several pods (a PyTorchJob worker per node), not one pod.

## Example
```yaml
containers:
- name: train
  resources:
    limits:
      nvidia.com/gpu: 16   # GPU040: the largest node has 8
```

## Use instead
```yaml
# Two workers with 8 GPUs each (PyTorchJob, JobSet, LeaderWorkerSet, ...)
containers:
- name: train
  resources:
    limits:
      nvidia.com/gpu: 8
```

## Options
`max_per_node` (integer, default `8`): the most devices of one resource a node of your cluster
offers. Eight is the largest GPU count of common instance families (ACK gn7/ebmgn7, AWS p4d/
p5, GKE a2/a3). `per_resource` (mapping of resource name to integer, default
`{aws.amazon.com/neuron: 16}`, for trn1.32xlarge and trn2.48xlarge): overrides per resource.
Time-slicing without `renameByDefault` advertises several `nvidia.com/gpu` per physical GPU;
raise `max_per_node` to the replicas a node advertises.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#effective-pod-request
  (scheduler arithmetic, `component-helpers/resource/helpers.go` `PodRequests`)
- `gpulint inspect` shows each pod's effective request
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from gpulint.cluster.facts import describes_nodes, largest, pool_label
from gpulint.podrequest import pod_requests
from gpulint.registry import Registry
from gpulint.resources import format_amount
from gpulint.rule import RuleContext, Violation
from gpulint.workloads import PodSpec

CODE = "GPU040"
NAME = "pod-exceeds-largest-node"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {
    "max_per_node": {
        "type": "integer",
        "minimum": 1,
        "description": "The most devices of one accelerator resource a node offers.",
        "default": 8,
    },
    "per_resource": {
        "type": "object",
        "additionalProperties": {"type": "integer", "minimum": 1},
        "description": "Per-resource overrides of max_per_node.",
        "default": {"aws.amazon.com/neuron": 16},
    },
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    registry = ctx.registry
    if not _asks_for_devices(pod, registry):
        return
    default_max = int(ctx.options.get("max_per_node", 8))
    overrides = ctx.options.get("per_resource") or {}
    # Only whole-device resources are judged here: the rest is never added up.
    result = pod_requests(pod, lambda name: _whole_devices(registry, name))
    cluster = ctx.cluster if describes_nodes(ctx.cluster) else None
    for name, total in result.requests.items():
        resource = registry.get(name)
        if resource is None or not resource.whole_devices:
            continue
        node = None
        if cluster is not None:
            found = largest(cluster, name)
            if found is None:
                continue  # no node offers it at all: GPU050 (and GPU052) say so
            limit, node = int(found[0]), found[1]
        else:
            limit = int(overrides.get(name, default_max))
        if total <= limit:
            continue
        holders = [c for c in result.containers if c.requests.get(name, Decimal(0)) > 0]
        if not holders:
            continue
        biggest = max(holders, key=lambda c: c.requests[name])
        parts = ", ".join(
            f"{c.container.label} {format_amount(c.requests[name])}"
            + (f" ({c.role})" if c.role != "container" else "")
            for c in holders
        )
        if node is not None:
            yield Violation(
                biggest.paths[name],
                f"the pod needs {format_amount(total)} {name} ({parts}) but the largest node, of "
                f"the {pool_label(node)}, offers {limit}: one pod runs on one node, so it stays "
                f"Pending; split the work over several pods of at most {limit}",
                at="value",
            )
            continue
        yield Violation(
            biggest.paths[name],
            f"the pod needs {format_amount(total)} {name} ({parts}) but the largest node has "
            f"{limit}: one pod runs on one node, so it stays Pending; split the work over "
            f"several pods of at most {limit}, or raise GPU040's max_per_node if your nodes "
            "are larger",
            at="value",
        )


def _whole_devices(registry: Registry, name: str) -> bool:
    resource = registry.get(name)
    return resource is not None and resource.whole_devices


def _asks_for_devices(pod: PodSpec, registry: Registry) -> bool:
    """Does a container name a whole-device resource? A finding needs one that requests
    it, and most pods ask for none: their requests are never added up."""
    for container in pod.containers:
        res = container.resources or {}
        for section in ("limits", "requests"):
            mapping = res.get(section)
            if isinstance(mapping, dict) and any(_whole_devices(registry, n) for n in mapping):
                return True
    return False
