"""Whole GPU requested where every NVIDIA pool is partitioned or shared under other names.

## What it does
With a cluster described, flags a container that requests `nvidia.com/gpu` when no node
offers it but NVIDIA GPU nodes exist: every GPU is MIG-partitioned on the `mixed`
strategy (the nodes advertise `nvidia.com/mig-<profile>`), time-sliced or MPS-shared with
`renameByDefault` (`nvidia.com/gpu.shared`), or shared by Alibaba cGPU / gpushare (ACK's
`ack.node.gpu.schedule` set to `cgpu`, `share`, `core_mem` or `mps`, which sets
`nvidia.com/gpu` to 0 and advertises `aliyun.com/gpu-mem`). The message names what the
pools advertise instead.

## Why it matters
The pod asks for a resource no node has, and stays `Pending` with
`Insufficient nvidia.com/gpu`; the fix is the resource name the pool actually offers.

## Example
```yaml
# node-pools: [{name: a100, instance-type: p4d.24xlarge,
#               mig: {strategy: mixed, layout: {3g.20gb: 2}}}]
resources:
  limits:
    nvidia.com/gpu: 1        # GPU052: the pool advertises nvidia.com/mig-3g.20gb
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/mig-3g.20gb: 1
```

## Options
None. The pools are `node-pools:` (docs/cluster.md).

## References
- https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus (`renameByDefault`)
- https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-labels-to-schedule-pods-to-gpu-accelerated-nodes
  (one GPU scheduling mode per node; the other modes' resources are 0)
- https://github.com/gpulint/gpulint/blob/main/docs/cluster.md
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    describe_offer,
    describes_nodes,
    nvidia_nodes,
    pool_label,
    unoffered,
    why_not,
)

CODE = "GPU052"
NAME = "whole-gpu-on-partitioned-pools"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
OPTIONS: dict[str, Any] = {}

WHOLE = "nvidia.com/gpu"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    cluster = ctx.cluster
    if not describes_nodes(cluster):
        return
    entries = unoffered(pod, cluster, ctx.registry, WHOLE.__eq__)
    if not entries:
        return
    gpu_nodes = nvidia_nodes(cluster, ctx.registry)
    if not gpu_nodes:
        return  # no NVIDIA node at all: GPU050 says Insufficient nvidia.com/gpu
    node = gpu_nodes[0]
    others = len(gpu_nodes) - 1
    more = f"; {others} other NVIDIA pool{'s' * (others > 1)} likewise" if others else ""
    for entry in entries:
        yield Violation(
            entry.path,
            f"no node pool advertises {WHOLE}, so the pod stays Pending",
            help=f"request what the pools offer: the {pool_label(node)} offers "
            f"{describe_offer(node, ctx.registry)}, as {why_not(node)}{more}",
        )
