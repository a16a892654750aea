"""Container asks for accelerators both from a device plugin and through a DRA claim.

## What it does
Flags a container that requests an accelerator resource of a device plugin (with an amount
other than 0) and also names, in `resources.claims`, a DRA claim of the pod that asks for a
device class of the same vendor's DRA driver, for the vendors whose documentation says the
two allocators cannot share a node:

- **NVIDIA**: a registry name of NVIDIA hardware (`nvidia.com/gpu`,
  `nvidia.com/mig-1g.10gb`, and the sharing schemes' `nvidia.com/gpu.shared` time-slicing
  replicas, HAMi's `nvidia.com/gpumem`, Alibaba's `aliyun.com/gpu-mem`) beside a claim for
  `gpu.nvidia.com`, `mig.nvidia.com`, `vfio.gpu.nvidia.com`, or a DeviceClass of the project
  whose selector names the driver `gpu.nvidia.com`.
- **AWS Neuron**: `aws.amazon.com/neuron` or `aws.amazon.com/neuroncore` beside a claim for
  `neuron.aws.com` (or a DeviceClass of the project whose selector names the driver
  `neuron.aws.com`).

The claim may be a ResourceClaim or ResourceClaimTemplate of the pod's file or of another
file of its project; one the project does not hold is not judged. The finding is at the
resource name, and names where the claim is defined as a related location.

Not covered, because their documentation says nothing of running both on one node (a pod
that asks both is not reported): Intel's GPU and Gaudi DRA drivers
(intel/intel-resource-drivers-for-kubernetes calls them "an alternative for Intel device
plugins" and no more; `gpu.intel.com/i915` beside a `gpu.intel.com` claim), AMD's
(ROCm/k8s-gpu-dra-driver), Google's TPU driver on GKE and Rebellions' NPU driver. Where the
DRA driver serves an extended resource itself (a DeviceClass's `extendedResourceName`,
Kubernetes 1.34+ `DRAExtendedResource`: Intel's chart sets `intel.com/gpu`), a container that
asks for it and for a claim gets two allocations from one allocator: more devices than either
request says, not the same device twice.

A resource written `null` is not counted: it asks for nothing a node gives (GPU006's
finding; in a Kustomize strategic-merge patch, the key's deletion).

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
DRA driver does: the same two allocators, and the same outcome. AWS documents the same of
Neuron: the Neuron DRA driver is not to be installed on nodes that run the Neuron device
plugin, the two cannot coexist on one node until KEP-5004. Ask through one.

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
- Amazon EKS User Guide, "Manage Neuron devices on Amazon EKS"
  (docs.aws.amazon.com/eks/latest/userguide/device-management-neuron.html), "Install the
  Neuron DRA driver", Procedure: not on nodes running the Neuron device plugin
- intel/intel-resource-drivers-for-kubernetes `README.md`, `doc/gpu/USAGE.md`,
  `doc/gaudi/USAGE.md`; ROCm/k8s-gpu-dra-driver `README.md`, `docs/` (read for this rule:
  nothing on the device plugin beside the driver)
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

#: The hardware whose DRA driver's vendor documents it does not run beside the device
#: plugin on one node: what the finding says of it (see the References).
DOCUMENTED = {
    "nvidia": (
        "GPUs",
        "NVIDIA's DRA driver does not run beside a device plugin of the same GPUs on one node, "
        "so the pod waits for the one its node lacks, or, where both were forced, the two can "
        "hand out the same GPU",
    ),
    "aws-neuron": (
        "Neuron devices",
        "AWS documents that the Neuron DRA driver and the Neuron device plugin cannot run on "
        "one node, so the pod waits for the one its node lacks",
    ),
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod" or not pod.spec.get("resourceClaims"):
        return
    registry = ctx.registry
    entries = [
        (e, resource.hardware)
        for e in accelerator_entries(pod, registry)
        if e.devices_asked
        and (resource := registry.get(e.name)) is not None
        and resource.hardware in DOCUMENTED
    ]
    seen: set[int] = set()
    for entry, hardware in entries:
        container = entry.container
        if id(container) in seen:
            continue
        claims = (container.resources or {}).get("claims")
        claimed = claimed_devices(pod, claims, registry, ctx.claims) if claims else None
        if claimed is None or claimed.hardware != hardware:
            continue
        seen.add(id(container))
        named = ", ".join(c.describe() for c in claimed.claims)
        what, why = DOCUMENTED[hardware]
        yield Violation(
            entry.path,
            f"container {container.label} asks for {entry.name} and for {what} through {named}",
            help=f"ask through one of them ({why})",
            related=claimed.related(),
        )
