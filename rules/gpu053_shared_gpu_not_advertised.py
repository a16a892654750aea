"""Shared-GPU resource that no node pool advertises.

## What it does
With a cluster described, flags a container that requests a GPU-sharing resource no node
offers while NVIDIA GPU nodes exist:

- `nvidia.com/gpu.shared` (or `nvidia.com/mig-<profile>.shared`) where no pool time-slices
  or MPS-shares with `renameByDefault`: without it the replicas keep the name
  `nvidia.com/gpu`;
- Alibaba cGPU / gpushare resources (`aliyun.com/gpu-mem`, `aliyun.com/gpu-core.percentage`)
  where no pool is labelled `ack.node.gpu.schedule=cgpu` (or `share` for gpu-mem);
- HAMi's `nvidia.com/gpumem` / `nvidia.com/gpucores` where no pool runs HAMi.

## Why it matters
The scheduler finds no node with the resource: the pod stays `Pending` with
`Insufficient nvidia.com/gpu.shared`. The sharing set-up and the request must agree on the
name.

## Example
```yaml
# node-pools: [{name: t4, instance-type: g4dn.xlarge,
#               sharing: {strategy: time-slicing, replicas: 4}}]
resources:
  limits:
    nvidia.com/gpu.shared: 1   # GPU053: without renameByDefault it is nvidia.com/gpu
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Options
None. The pools' sharing is `node-pools[].sharing` (docs/cluster.md).

## References
- https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus (`renameByDefault`)
- https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/use-labels-to-schedule-pods-to-gpu-accelerated-nodes
  (`ack.node.gpu.schedule`)
- https://github.com/Project-HAMi/HAMi (HAMi resource names)
- https://github.com/gpulint/gpulint/blob/main/docs/cluster.md
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    describes_nodes,
    labelled_nodes,
    nvidia_nodes,
    pool_label,
    unoffered,
)

CODE = "GPU053"
NAME = "shared-gpu-not-advertised"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
OPTIONS: dict[str, Any] = {}

#: Sharing resources a node advertises as allocatable, and what advertises them.
SHARING = {
    "aliyun.com/gpu-mem": "a pool labelled ack.node.gpu.schedule=cgpu or share "
    "(node-pools[].sharing.strategy: cgpu or gpushare)",
    "aliyun.com/gpu-core.percentage": "a pool labelled ack.node.gpu.schedule=cgpu "
    "(node-pools[].sharing.strategy: cgpu)",
    "nvidia.com/gpumem": "a pool running HAMi (node-pools[].sharing.strategy: hami)",
    "nvidia.com/gpucores": "a pool running HAMi (node-pools[].sharing.strategy: hami)",
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    cluster = ctx.cluster
    if not describes_nodes(cluster):
        return
    registry = ctx.registry

    def replica(name: str) -> bool:  # a renamed time-slicing or MPS replica
        resource = registry.get(name)
        return resource is not None and resource.kind == "shared"

    entries = unoffered(pod, cluster, registry, lambda name: replica(name) or name in SHARING)
    # Asked only of a pod that wants a sharing resource no node offers, not of every pod.
    if not entries or not nvidia_nodes(cluster, registry):
        return
    for entry in entries:
        name = entry.name
        if replica(name):
            base = name[: -len(".shared")]
            plain = labelled_nodes(cluster, "nvidia.com/gpu.sharing-strategy")
            if plain:
                node = plain[0]
                strategy = node.labels["nvidia.com/gpu.sharing-strategy"]
                why = (
                    f"the {pool_label(node)} uses {strategy} without renameByDefault, so its "
                    f"replicas are advertised as {base}: request {base}"
                )
            else:
                why = (
                    "no pool shares its GPUs with renameByDefault (node-pools[].sharing: "
                    f"{{rename-by-default: true}}); request {base}"
                )
        else:
            why = f"it needs {SHARING[name]}"
        yield Violation(
            entry.path,
            f"no node pool advertises {name}, so the pod stays Pending; {why}",
        )
