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
options are not used; a resource no node offers is GPU050's and GPU052's to report. The
pod can then never run on the user's cluster: the finding is an error, and GPU050 (which
would say `Insufficient nvidia.com/gpu` of the same entry) leaves it to GPU040.

Without described nodes, the pod's own node selector or required node affinity is the
evidence first: an instance type (`node.kubernetes.io/instance-type: g5.xlarge`, or `In` a
list of types) that gpulint's instance catalog (`gpulint/data/instance-types.json`) knows, a
label that counts the node's GPUs (Karpenter's and EKS Auto Mode's `instance-gpu-count`,
Karpenter on Azure's `sku-gpu-count`, GPU Feature Discovery's `nvidia.com/gpu.count`, `In`
or `Lt`), Karpenter's `instance-family` (the family's largest size in the catalog: `g6`
has 8 GPUs), Huawei's `accelerator-type` (`module-a3-16`: 16 NPUs), a GKE accelerator
whose machine types the catalog lists (A2, A3, G2), or GKE's TPU labels for
`google.com/tpu`: a node holds at most the chips of its slice's
`cloud.google.com/gke-tpu-topology` (`2x2`: 4) and of the largest machine type of its
`cloud.google.com/gke-tpu-accelerator` (8 for v5e and v6e, 4 for v3, v4, v5p and TPU7x), so
a pod asking for 8 chips on a v6e `2x2` slice is reported. The most
GPUs such a node has is the size: a pod that asks for more is reported (a warning: time-
slicing may advertise more `nvidia.com/gpu` than the node has GPUs), and one that asks for
more than 8 on a node type that has them (`a2-megagpu-16g`, `trn1.32xlarge`) is not. An
unknown type or value says nothing. Else the size is GPU040's `max_per_node` (8) and
`per_resource`: while neither is configured, that is gpulint's assumption, and the finding
is `info` and says so.

Devices a pod gets through Dynamic Resource Allocation count too. Every device of the claims
a pod names is allocated on the pod's node, whichever containers use it, so the pod's
ResourceClaims and ResourceClaimTemplates (in its file or another file of its project) are
added up: the exact count of each request of a class of whole devices (`gpu.nvidia.com`,
`vfio.gpu.nvidia.com`, `gaudi.intel.com`; 1 when left out). `allocationMode: All`, MIG
devices, partitions and `firstAvailable` alternatives of different counts are not counted.
The sum is compared with the same node size, read from the accelerator's whole-device
resource (`nvidia.com/gpu`): the described node that offers the most of it, else the node
type the pod's selector names, else the options. The finding is at the pod's
`resourceClaims` entry that asks for the most, and names where each claim is defined as a
related location. A described node that offers none of that resource (a cluster whose GPUs
only a DRA driver publishes) says nothing of its size, and the claims are not judged.

The same evidence sizes the pod's CPU: a GPU pod whose CPU request is at least the vCPUs of
every instance type its selector allows (`cpu: "96"` on `p4d.24xlarge`, 96 vCPUs) is a
warning at that request. A node's allocatable CPU is its capacity less the kubelet's and the
system's reservation, so the pod fits none of them. Only instance types the catalog knows
size the CPU; with nodes described, their allocatable is GPU050's.

A value that is not a whole number (`nvidia.com/gpu: 8.5`) is GPU004's: the API server
rejects the pod, so GPU040 does not also compare it with the node size at that entry.

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

```yaml
# A DRA claim: all 16 GPUs are allocated on the pod's one node
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: sixteen-gpus
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 16
---
# ... in the pod spec
resourceClaims:
- name: gpus
  resourceClaimTemplateName: sixteen-gpus   # GPU040
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
- `gpulint/data/instance-types.json` (each instance type's GPUs, from the vendor's page);
  https://karpenter.sh/docs/reference/instance-types/ (`karpenter.k8s.aws/instance-gpu-count`)
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#effective-pod-request
  (scheduler arithmetic, `component-helpers/resource/helpers.go` `PodRequests`)
- `gpulint inspect` shows each pod's effective request
- https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus (TPU machine types,
  chips per node and topologies); https://cloud.google.com/tpu/docs/v6e ("Chips per host")
- kubernetes `pkg/scheduler/framework/plugins/dynamicresources` (a pod's claims are
  allocated from the devices its node can reach: a node-local device is on one node)
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from gpulint.api import (
    PodSpec,
    Registry,
    RuleContext,
    Violation,
    amount,
    describes_nodes,
    format_amount,
    largest_offer,
    pod_requests,
    pool_label,
    resource_lists,
)

CODE = "GPU040"
NAME = "pod-exceeds-largest-node"
SEVERITY = "warning"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
ASSUMES_CLUSTER = True  # info, said once, when no cluster is described
#: A fraction of a device is rejected before any node is considered (at the same entry).
YIELDS_TO = ("GPU004",)
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
    yield from _claimed(pod, ctx)
    registry = ctx.registry
    names = _device_names(pod, registry)
    if not names:
        return
    yield from _cpus(pod, ctx)
    default_max = int(ctx.options.get("max_per_node", 8))
    overrides = ctx.options.get("per_resource") or {}
    cluster = ctx.cluster if describes_nodes(ctx.cluster) else None
    limits: dict[str, tuple[int, Any]] = {}
    chosen: dict[str, Any] = {}  # the node type the pod's own selector names, per resource
    for name in names:
        if cluster is not None:
            found = largest_offer(cluster, name)
            if found is None:
                continue  # no node offers it at all: GPU050 (and GPU052) say so
            limits[name] = (int(found[0]), found[1])
            continue
        from gpulint.api import selected_size  # a device pod with no cluster described

        selected = selected_size(pod, name)
        if selected is not None:
            chosen[name] = selected
            limits[name] = (selected.most, None)
        else:
            limits[name] = (int(overrides.get(name, default_max)), None)
    # Most pods ask for a few devices: a bound of their request settles them without
    # adding up the pod's requests.
    judged = {name for name, (limit, _) in limits.items() if not _within(pod, name, limit)}
    if not judged:
        return
    result = pod_requests(pod, judged.__contains__)
    for name, total in result.requests.items():
        if name not in judged:
            continue
        limit, node = limits[name]
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
                f"the {pool_label(node)}, offers {limit}, so it stays Pending; split the work "
                f"over several pods of at most {limit}",
                at="value",
                severity="error",  # the described nodes: it can never run there
            )
            continue
        selected = chosen.get(name)
        if selected is not None:
            yield Violation(
                biggest.paths[name],
                f"the pod needs {format_amount(total)} {name} ({parts}) but its "
                f"{selected.what} allows nodes with at most {limit}",
                help=f"it stays Pending: request at most {limit}, or select a larger node type"
                f"{' (gpulint instance catalog)' if selected.catalog else ''}",
                at="value",
            )
            continue
        if _assumed(ctx):
            # Nothing says how large the nodes are: a guess is never an error or a warning.
            yield Violation(
                biggest.paths[name],
                f"the pod needs {format_amount(total)} {name} ({parts}) but nodes commonly "
                f"have at most {limit}: it stays Pending if yours are no larger; {_CERTAIN}",
                at="value",
                severity="info",
            )
            continue
        yield Violation(
            biggest.paths[name],
            f"the pod needs {format_amount(total)} {name} ({parts}) but the largest node has "
            f"{limit}, so it stays Pending; split the work over several pods of at most "
            f"{limit}, or raise GPU040's max_per_node if your nodes are larger",
            at="value",
        )


#: The help of a finding that rests on the assumed node size: what was assumed, and what makes
#: it certain.
_CERTAIN = (
    "describe the GPU nodes (`node-pools:`, --cluster) or set GPU040's max_per_node to make "
    "it certain (assumed: no cluster is described)"
)


def _cpus(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    """A GPU pod whose CPU request is at least the vCPUs of every instance type its own
    selector allows (the catalog's): a node's allocatable CPU is its capacity less what the
    kubelet and the system reserve, so the pod fits none of them."""
    if describes_nodes(ctx.cluster):
        return  # the described nodes' allocatable: GPU050's
    from gpulint.api import selected_size

    selected = selected_size(pod, "cpu")
    if selected is None or not selected.catalog:
        return
    result = pod_requests(pod, "cpu".__eq__)
    total = result.requests.get("cpu")
    if total is None or total < selected.most:
        return
    holders = [c for c in result.containers if c.requests.get("cpu", Decimal(0)) > 0]
    if not holders:
        return
    biggest = max(holders, key=lambda c: c.requests["cpu"])
    yield Violation(
        biggest.paths["cpu"],
        f"the pod requests {format_amount(total)} CPUs; its {selected.what} allows nodes "
        f"of at most {selected.most} vCPUs",
        help="it stays Pending: a node's allocatable CPU is its vCPUs less the kubelet's and "
        "the system's reservation (and what its DaemonSets request); request fewer, or "
        "select a larger node type (gpulint instance catalog)",
        at="value",
    )


def _claimed(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    """Whole devices the pod's DRA claims ask for, against the largest node: the most of the
    accelerator's whole-device resource a described node offers, else the node type the
    pod's own selector names, else the options."""
    if pod.location != "pod" or not pod.spec.get("resourceClaims"):
        return
    from gpulint.api import pod_claimed, selected_size

    cluster = ctx.cluster if describes_nodes(ctx.cluster) else None
    for claimed in pod_claimed(pod, ctx.registry, ctx.claims):
        name = _node_resource(ctx.registry, claimed.hardware)
        if name is None:
            continue
        claim = claimed.claims[0][0]
        where = (*claim.path, _reference(pod, claim.path))
        known = ctx.registry.device_classes.get(claim.device_class)
        unit = known.unit if known is not None else "devices"
        listed = ", ".join(f"{c.name!r}: {n} of {c.device_class}" for c, n in claimed.claims)
        gets = f"the pod's DRA claims ask for {claimed.devices} {unit} ({listed})"
        related = claimed.related()
        if cluster is not None:
            key = _published(cluster, claimed)
            found = largest_offer(cluster, key or name)
            if found is None or claimed.devices <= found[0]:
                continue  # no node says how many it has: unknown
            has = f"{int(found[0])} {name}"
            if key is not None:
                has = f"{int(found[0])} such devices in its ResourceSlices"
            yield Violation(
                where,
                f"{gets} but the largest node, of the {pool_label(found[1])}, has {has}",
                help=f"split the work over several pods of at most {int(found[0])} (it stays "
                "Pending: a pod's claimed devices are all on its node)",
                at="value",
                severity="error",
                related=related,
            )
            continue
        selected = selected_size(pod, name)
        if selected is not None:
            if claimed.devices > selected.most:
                yield Violation(
                    where,
                    f"{gets} but its {selected.what} allows only nodes with at most "
                    f"{selected.most}, so it stays Pending; claim at most "
                    f"{selected.most}, or select a larger node type",
                    at="value",
                    related=related,
                )
            continue
        limit = int(
            (ctx.options.get("per_resource") or {}).get(name, ctx.options.get("max_per_node", 8))
        )
        if claimed.devices <= limit:
            continue
        if _assumed(ctx):
            yield Violation(
                where,
                f"{gets} but nodes commonly have at most {limit}: it stays Pending if yours are "
                f"no larger; {_CERTAIN}",
                at="value",
                severity="info",
                related=related,
            )
            continue
        yield Violation(
            where,
            f"{gets} but the largest node has {limit}, so it stays Pending; split the work "
            f"over several pods of at most {limit}, or raise GPU040's max_per_node if your "
            "nodes are larger",
            at="value",
            related=related,
        )


def _published(cluster: Any, claimed: Any) -> str | None:
    """The key of the devices the claims' classes hand out, when the node inventory's
    ResourceSlices publish them on some node (gpulint.cluster.slices); None otherwise."""
    from gpulint.api import allocatable_names, class_key

    keys = {class_key(c.device_class) for c, _ in claimed.claims}
    key = keys.pop() if len(keys) == 1 else None
    if key is None or key not in allocatable_names(cluster):
        return None
    return key


def _reference(pod: PodSpec, path: tuple[Any, ...]) -> str:
    """The field of a ``resourceClaims`` entry that names its claim."""
    entry: Any = pod.spec.get("resourceClaims")
    entry = entry[path[-1]] if isinstance(entry, list) else None
    if isinstance(entry, dict) and "resourceClaimName" in entry:
        return "resourceClaimName"
    return "resourceClaimTemplateName"


def _node_resource(registry: Registry, hardware: str) -> str | None:
    """The whole-device resource a node of ``hardware`` advertises (``nvidia.com/gpu``)."""
    return next(
        (n for n, r in registry.resources.items() if r.hardware == hardware and r.whole_devices),
        None,
    )


def _assumed(ctx: RuleContext) -> bool:
    """The node size is GPU040's default, not the user's (asked only when no node is
    described)."""
    return not ctx.configured & set(OPTIONS)


def _whole_devices(registry: Registry, name: str) -> bool:
    resource = registry.get(name)
    return resource is not None and resource.whole_devices


def _device_names(pod: PodSpec, registry: Registry) -> list[str]:
    """The whole-device resources the pod's containers name, in order: a finding needs a
    container that requests one, and most pods ask for none."""
    names: list[str] = []
    for container in pod.containers:
        for _, mapping in resource_lists(container):
            for name in mapping:
                if name not in names and _whole_devices(registry, name):
                    names.append(name)
    return names


def _within(pod: PodSpec, name: str, limit: int) -> bool:
    """Is the pod's request of ``name`` surely at most ``limit``? Bounded from above by each
    container's larger value (limit or request, never below 0) plus the overhead: the pod's
    request adds up some of these and takes the largest of others (init containers)."""
    overhead = pod.spec.get("overhead") if pod.location == "pod" else None
    places = [[m for _, m in resource_lists(c)] for c in pod.containers]
    places.append([overhead] if isinstance(overhead, dict) else [])
    bound = Decimal(0)
    for mappings in places:
        most = Decimal(0)
        for mapping in mappings:
            if name in mapping:
                value = amount(mapping[name]).value
                if value is not None and value > most:
                    most = value
        # Compared before it is added: a value such as 1e2147483647 overflows Decimal's
        # arithmetic, while the sum of two values at most ``limit`` cannot.
        if most > limit:
            return False
        bound += most
        if bound > limit:
            return False
    return True
