"""Pod without GPUs tolerates the GPU node taint.

## What it does
Flags a toleration that matches a configured GPU taint (default
`nvidia.com/gpu=present:NoSchedule`) in a pod that requests no GPU. A blanket toleration
(`operator: Exists` with no key) tolerates every taint and is flagged too. DaemonSets are
exempt: node agents (device plugins, exporters) must run on GPU nodes without requesting GPUs.
So is GPU infrastructure of any kind (a Deployment or Job of `gpulint/data/agents.json`, by
name, image or command line: an MPS control daemon started with `nvidia-cuda-mps-control`,
a Job that runs `nvidia-smi -c EXCLUSIVE_PROCESS` or `nvidia-smi -pm 1` on every GPU of
the node, a DCGM exporter run as a Deployment). A cluster-level component shipped in an
agent's image (the NVIDIA DRA driver's controller and webhook) is not: it has no need of a
GPU node.
A GPU written in the pod-level `resources` counts as requested: that mistake is GPU030's.
A pod that gets GPUs through Dynamic Resource Allocation (a `resourceClaims` entry whose
claim or template, in its file or another file of its project, asks for a GPU device class)
is a GPU pod and is not flagged, and counts among the GPU pods whose tolerations decide the
taint; neither is a pod whose claim no file of the project defines, or names a DeviceClass
that neither the registry nor any file of the project defines, since what it gets is
unknown. Nor is a KServe predictor whose `model` takes its container from a serving runtime
(`runtime:` or `modelFormat`) and writes no GPU itself: KServe merges the runtime's
resources into it, which may hold the GPUs; nor, for the same merge, a KServe
`ServingRuntime` or `ClusterServingRuntime` that writes no GPU (the InferenceService that
uses it asks for them, and its pods tolerate the GPU taint through the runtime). A pod whose
claims all resolve to known non-GPU device classes is a CPU pod. An explicit
`nvidia.com/gpu: 0` is a CPU pod. Only tolerations written in the pod spec itself are
flagged: defaults a workload kind shares between all its pods (an Argo workflow's
`spec.tolerations`) usually exist for its GPU steps, and would be reported once per step.
"Requests no GPU" is the opposite of GPU020's GPU pod, and the same as `when: {gpu: false}`
in declarative rules (see References).

With a cluster described (docs/cluster.md), the GPU taints are those of the nodes that
offer an accelerator (or, with only a platform, the platform's GPU taints).

Without a described cluster or configured taints, the taints are those the run's GPU pods
agree on or its GPU node-pool objects carry (gpulint/cluster/evidence.py; the finding names
that evidence); when nothing says, the finding rests on gpulint's default taint and is
`info` (`assumed`).

A pod whose own node selector (or every term of its required node affinity) sends it to
nodes its author chose is not flagged either: a node pool's name label
(`karpenter.sh/nodepool`, `eks.amazonaws.com/nodegroup`, `cloud.google.com/gke-nodepool`,
AKS's `agentpool` and `kubernetes.azure.com/agentpool`, ...), `kubernetes.io/hostname`, an
instance type, or a GPU node label. On GPU nodes the toleration is what lets it there, and
removing it would leave it Pending (that it selects GPU nodes without a GPU is GPU043's); on
other nodes it tolerates nothing.

So is a pod whose preferred node affinity asks for such nodes (a `preference` with a
positive weight naming a GPU node label, a host name, a pool or an instance type): its author
wants it there, and the toleration is what lets it in.

A pod that mounts a `hostPath` volume is `info`: the path is the node's own disk, and a
helper that fills a model cache the GPU pods read from the same host path (a download Job
beside a vLLM pod on a single GPU node) tolerates the GPU taint to reach that disk on
purpose; whether it needs that node is what gpulint cannot tell. A node selector for the GPU
nodes says so and silences the finding. A described cluster keeps the rule's severity.

A pod whose node selector (or every term of its required node affinity) asks for a label
gpulint cannot read (`library-solution: k8s-training`, `nodetype: gpu`: no Kubernetes
well-known label of OS, architecture, zone or role, no Spot capacity label) is `info`: the
label may select the GPU nodes, where its author sends it on purpose (a pod that reads a
`hostPath` the GPU jobs write) and the toleration is what lets it there; whether the label
also takes in other nodes is what gpulint cannot tell. A described cluster (docs/cluster.md)
keeps the rule's severity. A node selector whose every label is one of a node pool of the
project or of the described cluster whose nodes all have GPUs (an eksctl node group's
`labels`, a `node-pools:` entry's) sends the pod to those
GPU nodes: the toleration is needed there, and the pod is not flagged (that it requests no
GPU there is GPU043's).

A blanket toleration in a pod that is node or cluster infrastructure by its own spec
(a privileged container, `hostNetwork` or `hostPID`, a `system-` priority class, the
`kube-system` namespace or another `-system` one, the convention of cluster components'
own: `calico-system`, an operator's `<project>-system`) is not flagged: a CNI operator, a
node maintenance CronJob or a node validator tolerates every taint by design, not the GPU
taint in particular. Its toleration of the GPU taint by key still is.

A pod that asks KAI Scheduler (or Run:ai) for a share of a GPU with the `gpu-fraction` or
`gpu-memory` pod annotation holds a GPU its resources do not show: it is not flagged.

A Spark driver or executor whose GPUs Spark itself asks for is not a CPU pod, although its
pod template writes no GPU: the SparkApplication's `spec.executor.gpu` (`spec.driver.gpu`),
or `spark.executor.resource.gpu.amount` (`spark.driver.…`) in its `sparkConf`, makes Spark
add the GPU limit to the pod it creates.

A pod whose `containers` is written as a mapping (GPU075's error) is not judged: what its
containers request is not known.

## Why it matters
The taint is what keeps ordinary pods off expensive GPU nodes. A CPU pod that tolerates it
can be scheduled there and take CPU and memory that GPU jobs need, stranding GPUs.

## Example
```yaml
spec:
  tolerations:
  - operator: Exists        # GPU021: tolerates every taint
  containers:
  - name: web
    image: nginx
```

## Use instead
```yaml
spec:
  containers:
  - name: web
    image: nginx
```

## Options
`taints`: the same list as GPU020 (the taints on your GPU nodes), used when no cluster is
described.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#gpu-pods (what makes a GPU pod)
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#taints-and-tolerations
  (`ToleratesTaint`; node agents are DaemonSets)
- kubeflow/spark-operator `api/v1beta2/sparkapplication_types.go` (`SparkPodSpec.GPU`:
  `name`, `quantity`); https://spark.apache.org/docs/latest/running-on-kubernetes.html#resource-allocation-and-configuration-overview
  (`spark.{driver,executor}.resource.{resourceName}.amount` become the pod's limits)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    TAINTS_OPTION,
    PodSpec,
    Related,
    RuleContext,
    Taint,
    Violation,
    accelerator_taints,
    certain_line,
    chosen_by_label,
    default_taints_assumed,
    describes_nodes,
    gpu_demand,
    gpu_pool_selected,
    pinned,
    preferred_pin,
    shares_by_annotation,
    spark_asks_for_gpus,
    taint_basis,
    taints_from_options,
    tolerates,
)

CODE = "GPU021"
NAME = "cpu-pod-tolerates-gpu-taint"
SEVERITY = "warning"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
ASSUMES_CLUSTER = True  # info, said once, when no cluster is described
OPTIONS: dict[str, Any] = {"taints": TAINTS_OPTION}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    tolerations = pod.own_tolerations
    if pod.location != "pod" or not tolerations or pod.node_agent:
        return
    if not isinstance(pod.spec.get("containers", []), list):
        return  # containers written as a mapping (GPU075's): what they request is not known
    if not gpu_demand(pod, ctx.registry, ctx.claims).cpu:
        return  # a GPU pod, or a DRA claim defined elsewhere that may well be a GPU
    if spark_asks_for_gpus(pod):
        return  # Spark adds the GPU limit to the pod it creates
    if shares_by_annotation(pod):
        return  # KAI Scheduler gives it a share of a GPU (gpu-fraction, gpu-memory)
    if gpu_pool_selected(pod, ctx.evidence, ctx.cluster, ctx.registry) is not None:
        return  # its node selector picks the project's GPU pool: GPU043's, if it needs a GPU
    if pinned(pod) is not None or preferred_pin(pod) is not None:
        # Sent to nodes its author chose: on GPU nodes the toleration is what lets it
        # there (whether it belongs there is GPU043's), elsewhere it tolerates nothing.
        return
    from gpulint.api import find_agent  # a CPU pod that tolerates something: imported then

    agent = find_agent(pod)
    if agent is not None and agent.node:
        return  # GPU infrastructure (an exporter, an MPS daemon, a mode-setting Job)
    ground = taint_basis(pod, ctx.cluster, ctx.options, ctx.evidence)
    # A node agent's toleration is a hedge, no evidence for a pod (GPU020's reasoning).
    evidence = ground.picture.unagented() if ground.picture else ()
    if ground.kind == "evidence" and not evidence:
        ground = ground.without_evidence()
    if ground.kind == "platform":
        ctx = ctx._replace(cluster=ground.cluster)
    severity = None
    note = ""
    related: tuple[Related, ...] = ()
    picture = ground.picture if ground.kind == "evidence" else None
    taints: list[Taint] = []
    if ground.kind == "evidence":
        note = "".join(f" ({k.evidence.what}: {k.evidence.cited()})" for k in evidence[:1])
        related = evidence[0].evidence.related("the evidence for the GPU taint")
    else:
        taints = _gpu_taints(ctx)
        if ground.kind == "platform":
            note = f" ({ground.platform_note()})"
        elif ground.kind == "assumed":
            severity = "info"  # nothing says the GPU nodes carry this taint
            note = (
                " (assumed: gpulint's default GPU taint; "
                f"`{certain_line(taints)}` in .gpulint.yaml makes it certain)"
            )
    if severity is None and not describes_nodes(ctx.cluster):
        # What the pod itself says may be why it tolerates the GPU taint: its own label may
        # send it to the GPU nodes, or the GPU node's disk may be where it must run.
        assumed = _why_tolerated(pod)
        if assumed is not None:
            severity, note = "info", note + f" (assumed: {assumed})"
    for i, toleration in enumerate(tolerations):
        # The picture may hold thousands of pool taints: its index finds the first.
        first = (
            picture.first_tolerated(toleration)
            if picture is not None
            else next((t for t in taints if tolerates(toleration, t)), None)
        )
        if first is None:
            continue
        blanket = isinstance(toleration, dict) and not toleration.get("key")
        if blanket and _system_pod(pod):
            continue  # tolerates every taint by design, not the GPU taint in particular
        what = (
            "a blanket toleration (no key), which tolerates"
            if blanket
            else "a toleration for the GPU node taint"
        )
        loud, why = severity, note
        if (
            loud is None
            and picture is not None
            and not blanket
            and _unnamed_consensus(first, evidence)
        ):
            loud = "info"
            why += (
                f" (assumed: {first.key}, which the project's GPU pods tolerate, is on GPU "
                "nodes alone; it names no accelerator and may reserve other nodes too)"
            )
        yield Violation(
            (*pod.path, "tolerations", i),
            f"the pod requests no GPU but has {what} {first}: it can take GPU nodes' capacity",
            help=f"remove the toleration, or request a GPU{why}",
            at="value",
            severity=loud,
            related=related,
        )


#: Words of a taint's key or value that say it is about accelerators (a GPU pool's
#: ``nvidia.com/gpu``, ``sku=gpu``, ``dedicated=a100``, ``aws.amazon.com/neuron``).
_ACCELERATOR_WORDS = (
    r"gpu|nvidia|cuda|accel|tpu|neuron|inferentia|trainium|gaudi|habana|hpu|npu|ascend|rocm"
    r"|amd|mig|a100|h100|h200|b200|l40|v100|a10g?|l4|t4|mi\d{3}|qaic|ml|ai|inference|train"
)


def _unnamed_consensus(taint: Any, evidence: Any) -> bool:
    """``taint`` is known only because the project's GPU pods agree on it (no node pool
    carries it), and neither its key nor its value names an accelerator
    (``nautilus.io/reservation=nrp``: a reservation the project's CPU pods share)."""
    import re

    known = next((k for k in evidence if k.taint == taint), None)
    if known is None or known.pooled or known.resource is not None:
        return False
    words = re.split(r"[^a-z0-9]+", f"{taint.key} {taint.value or ''}".lower())
    pattern = re.compile(rf"(?:{_ACCELERATOR_WORDS})\d*")
    return not any(pattern.fullmatch(word) for word in words if word)


def _why_tolerated(pod: PodSpec) -> str | None:
    """What the pod says that may explain its GPU toleration, as the assumption the finding
    then makes, or None."""
    chosen = chosen_by_label(pod)
    if chosen is not None:
        return (
            f"its {chosen} selects nodes beside the GPU nodes; if that label is what sends it"
            " to the GPU nodes, the toleration is needed there"
        )
    host = _host_path(pod)
    if host is not None:
        return (
            f"it needs no GPU node's own files; it mounts the host's {host}, which pods on the"
            " GPU nodes may share: a nodeSelector for those nodes says so"
        )
    return None


def _system_pod(pod: PodSpec) -> bool:
    """Is the pod node or cluster infrastructure by its own spec: privileged, on the host's
    network or process namespace, of a ``system-`` priority class, or in ``kube-system`` or
    another ``-system`` namespace (the convention of cluster components' own: ``calico-system``,
    the ``<project>-system`` of operators scaffolded by kubebuilder)?"""
    spec = pod.spec
    if spec.get("hostNetwork") is True or spec.get("hostPID") is True:
        return True
    priority = spec.get("priorityClassName")
    if isinstance(priority, str) and priority.startswith("system-"):
        return True
    namespace = pod.obj.ref.namespace
    if isinstance(namespace, str) and (namespace == "kube-system" or namespace.endswith("-system")):
        return True  # kube-system, or a cluster component's own (calico-system, kueue-system)
    return any(container.privileged for container in pod.containers)


def _host_path(pod: PodSpec) -> str | None:
    """The path of the first ``hostPath`` volume the pod mounts (``/models``), if any."""
    volumes = pod.spec.get("volumes")
    for volume in volumes if isinstance(volumes, list) else ():
        host = volume.get("hostPath") if isinstance(volume, dict) else None
        path = host.get("path") if isinstance(host, dict) else None
        if isinstance(path, str) and path:
            return path
    return None


def _gpu_taints(ctx: RuleContext) -> list[Taint]:
    """The GPU nodes' taints: from the described nodes, else the platform's (unless the user
    set `taints`), else the option."""
    cluster = ctx.cluster
    if describes_nodes(cluster):
        return list(accelerator_taints(cluster, ctx.registry))
    if (
        cluster is not None
        and cluster.gpu_taints is not None
        and default_taints_assumed(ctx.options)
    ):
        return list(cluster.gpu_taints)
    return taints_from_options(ctx.options)
