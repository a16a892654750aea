"""Container asks for NVIDIA GPUs both as a device-plugin resource and through a DRA claim.

## What it does
Flags a container that requests an NVIDIA accelerator resource of a device plugin (a registry
name of NVIDIA hardware, with an amount other than 0: `nvidia.com/gpu`,
`nvidia.com/mig-1g.10gb`, and the sharing schemes' `nvidia.com/gpu.shared` time-slicing
replicas, HAMi's `nvidia.com/gpumem`, Alibaba's `aliyun.com/gpu-mem`) and also names, in
`resources.claims`, a DRA claim of the pod that asks for a device class of NVIDIA's DRA driver
(`gpu.nvidia.com`, `mig.nvidia.com`, `vfio.gpu.nvidia.com`, or a DeviceClass of the project
whose selector names the driver `gpu.nvidia.com`). The claim may be a ResourceClaim or
ResourceClaimTemplate of the pod's file or of another file of its project; one the project does
not hold is not judged. The finding is at the resource name, and names where the claim is
defined as a related location.

## Why it matters
The two ask two different allocators for the same GPUs. NVIDIA's DRA driver documents that
its GPU plugin "cannot be deployed alongside the standard GPU device plugin on the same
node" ("to avoid potential collisions between these two components"): its chart refuses to
install so unless forced with `gpuResourcesEnabledOverride=true`. So a node offers the GPUs
through one of them, and the container waits for the other (Pending: `Insufficient
nvidia.com/gpu`, or a claim that cannot be allocated); on a node where both were forced,
each hands out GPUs without knowing of the other, and the same GPU can be given twice.
Where the DRA driver serves `nvidia.com/gpu` itself (Kubernetes 1.35+ with the
`DRAExtendedResource` gate, through the `extendedResourceName` of its `gpu.nvidia.com`
class) the container gets both requests, more GPUs than either says. A sharing scheme's
device plugin (time-slicing replicas, HAMi, cGPU) hands out the same physical GPUs as the
DRA driver does: the same two allocators, and the same outcome. Ask through one.

## Example
```yaml
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: single-gpu   # asks for gpu.nvidia.com
  containers:
  - name: train
    resources:
      limits:
        nvidia.com/gpu: 1   # GPU066
      claims:
      - name: gpu
```

## Use instead
```yaml
  containers:
  - name: train
    resources:
      claims:
      - name: gpu
```

## Options
None.

## References
- NVIDIA/k8s-dra-driver-gpu `deployments/helm/dra-driver-nvidia-gpu/templates/validation.yaml`
  (the chart's refusal to run beside the device plugin, and KEP-5004),
  `templates/deviceclass-gpu.yaml` (`extendedResourceName: nvidia.com/gpu`),
  `docs/prerequisites.md` ("with the NVIDIA Kubernetes Device Plugin disabled")
- KEP-5004 "DRA: Handle extended resource requests via DRA Driver"
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, accelerator_entries, claimed_devices

CODE = "GPU066"
NAME = "gpu-requested-twice"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

#: The hardware of NVIDIA's DRA driver's classes and of the device plugin's resources.
NVIDIA = "nvidia"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod" or not pod.spec.get("resourceClaims"):
        return
    registry = ctx.registry
    entries = [
        e
        for e in accelerator_entries(pod, registry)
        if e.amount.positive_or_unknown
        and (resource := registry.get(e.name)) is not None
        and resource.hardware == NVIDIA
    ]
    seen: set[int] = set()
    for entry in entries:
        container = entry.container
        if id(container) in seen:
            continue
        claims = (container.resources or {}).get("claims")
        claimed = claimed_devices(pod, claims, registry, ctx.claims) if claims else None
        if claimed is None or claimed.hardware != NVIDIA:
            continue
        seen.add(id(container))
        named = ", ".join(c.describe() for c in claimed.claims)
        yield Violation(
            entry.path,
            f"container {container.label} asks for {entry.name} and for GPUs through {named}: "
            "NVIDIA's DRA driver does not run beside a device plugin of the same GPUs on one "
            "node, so the pod waits for the one its node lacks, or, where both were forced, "
            "the two can hand out the same GPU; ask through one of them",
            related=claimed.related(),
        )
