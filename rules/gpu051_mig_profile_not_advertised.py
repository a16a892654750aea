"""MIG profile that no node pool advertises.

## What it does
With a cluster described (`node-pools:`, `--cluster`, Karpenter or Kueue objects), flags a
container that requests a MIG instance (`nvidia.com/mig-<profile>`) that no node offers.
The message says why from the pools themselves: a pool on the MIG `single` strategy
advertises its MIG instances as `nvidia.com/gpu` (and labels the nodes
`nvidia.com/gpu.product=<model>-MIG-<profile>`); pools on the `mixed` strategy advertise
other profiles; or no pool has MIG enabled. Without a cluster description the rule is
silent: only the pools know which profiles exist.

## Why it matters
The NVIDIA device plugin names MIG resources by strategy. Under `single`, there is no
`nvidia.com/mig-*` resource at all, and under `mixed` only the profiles of the node's MIG
layout exist. A pod that asks for another one stays `Pending` with
`Insufficient nvidia.com/mig-3g.40gb` on every node.

## Example
```yaml
# node-pools: [{name: a100, instance-type: a2-ultragpu-8g,
#               mig: {strategy: single, layout: {1g.10gb: 7}}}]
resources:
  limits:
    nvidia.com/mig-1g.10gb: 1   # GPU051: the single strategy advertises nvidia.com/gpu
```

## Use instead
```yaml
nodeSelector:
  nvidia.com/gpu.product: A100-SXM4-80GB-MIG-1g.10gb
containers:
- resources:
    limits:
      nvidia.com/gpu: 1
```

## Options
None. The pools' MIG strategy and layout are `node-pools[].mig` (docs/cluster.md).

## References
- https://github.com/NVIDIA/k8s-device-plugin#configuration-option-details (MIG strategies
  `none`, `single`, `mixed`)
- https://docs.nvidia.com/datacenter/cloud-native/kubernetes/latest/index.html (MIG support
  in Kubernetes: resource names and node labels per strategy)
- https://github.com/gpulint/gpulint/blob/main/docs/cluster.md
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    allocatable_names,
    describes_nodes,
    labelled_nodes,
    pool_label,
    unoffered,
)

CODE = "GPU051"
NAME = "mig-profile-not-advertised"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
OPTIONS: dict[str, Any] = {}

PREFIX = "nvidia.com/mig-"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    cluster = ctx.cluster
    if not describes_nodes(cluster):
        return
    for entry in unoffered(pod, cluster, ctx.registry, _is_mig):
        name = entry.name
        profile = name[len(PREFIX) :]
        single = labelled_nodes(cluster, "nvidia.com/mig.strategy", "single")
        mixed = sorted(k for k in allocatable_names(cluster) if k.startswith(PREFIX))
        if single:
            node = next(
                (n for n in single if profile in n.labels.get("nvidia.com/gpu.product", "")),
                single[0],
            )
            product = node.labels.get("nvidia.com/gpu.product")
            select = f" and select nvidia.com/gpu.product: {product}" if product else ""
            why = (
                f"the {pool_label(node)} uses the MIG single strategy, which advertises MIG "
                f"instances as nvidia.com/gpu: request nvidia.com/gpu{select}"
            )
        elif mixed:
            why = (
                f"the pools advertise {', '.join(mixed)}: request one of them, or add "
                f"{profile} to a pool's MIG layout"
            )
        else:
            why = "no pool has MIG enabled (node-pools[].mig)"
        yield Violation(
            entry.path,
            f"no node pool advertises {name}, so the pod stays Pending; {why}",
        )


def _is_mig(name: str) -> bool:
    """A MIG instance; shared MIG replicas (``nvidia.com/mig-1g.10gb.shared``) are GPU053's."""
    return name.startswith(PREFIX) and not name.endswith(".shared")
