"""GPU node agent does not tolerate the GPU node taint.

## What it does
Flags a DaemonSet that runs a GPU node agent — a device plugin (NVIDIA, AMD, Intel, Gaudi,
AWS Neuron, Huawei Ascend, and the GPU-sharing ones: HAMi, Volcano, gpushare, gpu-manager),
a vendor's monitor (the Neuron monitor, AMD's metrics exporter, Intel's XPU Manager, the Gaudi
metric exporter, Ascend's NPU exporter), GPU Feature Discovery, the
Node Feature Discovery worker, the DCGM exporter, the MIG or vGPU manager, the GPU Operator
validator, the NVIDIA driver or the container toolkit, the MPS control daemon, or a daemon
that sets every GPU's mode (`nvidia-smi -c`, `-pm`, `mig`) — whose pod template does not
tolerate every configured GPU taint of its vendor (default: each vendor's documented taint,
`nvidia.com/gpu=present:NoSchedule`, `aws.amazon.com/neuron=true:NoSchedule`,
`google.com/tpu=present:NoSchedule`; GPU020's `taints`).
Agents are recognised by data (`gpulint/data/agents.json`): the DaemonSet's name, else the
repository of a container image (`nvcr.io/nvidia/k8s-device-plugin:v0.17.0` is
`nvidia/k8s-device-plugin`), as shell globs, else a program its command line runs with the
row's options (`nvidia-cuda-mps-control`, `nvidia-smi -c`; `nvidia-smi dmon -c 10` is not
`-c` of nvidia-smi). A DaemonSet named for another vendor's device plugin
(`xdxct-device-plugin-ds`) whose image matched only by repository (a fork keeps NVIDIA's
`k8s-device-plugin`) is that vendor's, not NVIDIA's agent. Tolerations are matched as
Kubernetes matches them (the same matching and near-miss advice as GPU020); a taint with
`hardware` only applies to agents of that vendor, and the Node Feature Discovery worker,
which serves every vendor, to every taint (with the assumed defaults, to NVIDIA's only).
`PreferNoSchedule` taints never keep a daemon pod off a node. An agent that requests a GPU
itself (a DCGM diagnostics DaemonSet) is a GPU pod, which GPU020 checks instead. The finding
names the first taint the agent misses and how many more there are; its help line gives the
tolerations for the first five.

A device plugin for GPUs passed through to virtual machines (NVIDIA's KubeVirt GPU device
plugin, which advertises `nvidia.com/<PCI device name>` for VirtualMachineInstances) is
judged as infrastructure of other nodes: passthrough nodes bind their GPUs to `vfio-pci` and
carry no container-GPU taint of NVIDIA's, so without configured taints it is left alone;
with `gpu-taints:` set it is checked like any agent.

With the default taint, an agent that tolerates a taint named after another accelerator
resource (Volcano's device plugin tolerates `volcano.sh/gpu-memory`, gpu-manager
`tencent.com/vcuda-core`) is left alone: its nodes are tainted by that resource's name, as
the `ExtendedResourceToleration` admission plugin expects. So is one that tolerates a taint
shaped like another vendor's device resource the registry does not list (a GPU Operator
fork's driver DaemonSet tolerating `xdxct.com/gpu`), unless its domain is a slip of a
default taint's (`nvidai.com/gpu`). Set `gpu-taints:` to your
cluster's taints and every agent is checked against them.

The severity follows what breaks. It is `error` for the agents without which no GPU pod can
run on the node (a device plugin, the driver, the container toolkit) and `warning` for the
rest (feature discovery labels, metrics, MIG layout, validation). An NVIDIA or Neuron device
plugin DaemonSet whose `nodeSelector` picks EKS Auto Mode nodes (an
`eks.amazonaws.com/instance-*` label, or `eks.amazonaws.com/compute-type: auto`) is `info`:
Auto Mode's nodes run those device plugins themselves, so a node the DaemonSet stays off
still advertises its devices.

Without a described cluster or configured taints, the taints are those the run's GPU pods
agree on or its GPU node-pool objects carry (gpulint/cluster/evidence.py; the finding names
that evidence). A vendor's agent of the run that tolerates its vendor's taint is evidence
for that vendor's other agents: a Neuron monitor DaemonSet without the
`aws.amazon.com/neuron` toleration the repository's Neuron device plugin has names the
device plugin, as `info`: the vendors' agent manifests tolerate their vendor's taint
whether the nodes carry it or not. Taints the run's GPU pods agree on, or its node-pool
objects carry, keep the agent's severity, but a node pool's taint is `info` for a DaemonSet
when another node pool of the project (of GPU nodes or not) is described in a file nearer to
the DaemonSet's (sharing more of its folders): a repository of several clusters keeps each
one's pools and agents in a folder of its own (`aws/us-west-2/dev/`, `aws/us-east-1/prod/`),
and one cluster's pool says nothing of another's nodes. A taint the pods agree on with a value or an
effect left open (they tolerate its key with `Exists`, or with no effect) is tolerated by
any toleration of its key: AKS's device plugin, which tolerates `sku=gpu:NoSchedule`, is no
finding beside GPU pods that tolerate `sku` with `Exists`. When nothing says, the finding
rests on gpulint's default taint and is `info` (`assumed`).

## Why it matters
The DaemonSet controller does not place daemon pods on nodes whose taints they do not
tolerate. A device plugin that does not tolerate the GPU taint never runs on the GPU nodes,
the nodes never advertise `nvidia.com/gpu`, and every GPU pod stays Pending with
`Insufficient nvidia.com/gpu` while the DaemonSet shows `DESIRED 0` and no error at all.
The NFD worker deadlock is the same: without it the node lacks the
`feature.node.kubernetes.io/pci-10de.present` label the device plugin's affinity selects on.

## Example
```yaml
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
spec:
  template:
    spec:
      tolerations:                 # GPU023
      - key: CriticalAddonsOnly
        operator: Exists
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
```

## Use instead
```yaml
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
```

## Options
`taints`: the same list as GPU020 (the taints on your GPU nodes; `gpu-taints:` sets it).
`images` (list of globs, default `[]`): images of more node agents (your own exporter or
plugin), matched like the built-in ones against the image repository; they are reported
as warnings.

## References
- https://github.com/NVIDIA/k8s-device-plugin/issues/68 (a `nvidia.com/gpu:NoSchedule`
  taint repels the device plugin, and GPU jobs never schedule)
- https://github.com/NVIDIA/k8s-device-plugin/issues/1934 (the NFD worker's
  `Equal value=present` toleration misses `nvidia.com/gpu=true`: the device plugin stays at
  `DESIRED 0` and every GPU pod Pending)
- https://github.com/NVIDIA/gpu-operator/issues/2717 (vGPU device manager without the
  toleration), https://github.com/NVIDIA/gpu-operator/issues/156 (the validator)
- https://kubernetes.io/docs/concepts/workloads/controllers/daemonset/#taints-and-tolerations
- `gpulint/data/agents.json` (the agents and where each pattern comes from)
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
    certain_line,
    default_taints_assumed,
    gpu_demand,
    taint_basis,
    taints_from_options,
    tolerates,
    toleration_near_miss,
)

CODE = "GPU023"
NAME = "gpu-node-agent-missing-toleration"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
ASSUMES_CLUSTER = True  # info, said once, when no cluster is described
OPTIONS: dict[str, Any] = {
    "taints": TAINTS_OPTION,
    "images": {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "description": (
            "Image globs of more GPU node agents (matched against the image repository, "
            "without registry host, tag or digest); reported as warnings."
        ),
        "default": [],
    },
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod" or not pod.node_agent:
        return
    from gpulint.api import find_agent  # DaemonSets only: imported when one is met

    agent = find_agent(pod, tuple(ctx.options.get("images", ())))
    if agent is None or gpu_demand(pod, ctx.registry, ctx.claims).gpu:
        return  # an agent that asks for a GPU is a GPU pod: GPU020 reports it
    tolerations = pod.tolerations
    default = default_taints_assumed(ctx.options)
    if default and (agent.passthrough or _own_resource_taint(tolerations, ctx)):
        return
    ground = taint_basis(pod, ctx.cluster, ctx.options, ctx.evidence)
    candidates = taints_from_options(ctx.options)
    related: tuple[Related, ...] = ()
    cited = ""
    hedge = False
    nearer: str | None = None
    apart: str | None = None
    more = 0
    if ground.kind == "evidence" and ground.picture is not None:
        # The applicable taints it does not tolerate (the agent's own toleration is no
        # evidence against itself), looked up through the picture's indexes.
        seen = ground.picture.agent_missing(agent.hardware, tolerations)
        if seen is not None and seen.first is not None:
            # Vendors' agent manifests tolerate their vendor's taint whether the nodes carry
            # it or not: another agent's toleration of it is a hedge, no proof.
            hedge = seen.hedge
            candidates = list(seen.missing)
            more = seen.total - len(seen.missing)
            first = seen.first
            cited = f" ({first.evidence.what}: {first.evidence.cited()})"
            related = first.evidence.related("the evidence for the GPU taint")
            if first.pooled and first.evidence.places:
                pool_file = first.evidence.places[0][0]
                nearer = ground.picture.nearer_pool(ctx.label, pool_file)
                if nearer is None and ground.picture.pool_elsewhere(ctx.label, pool_file):
                    apart = pool_file
        else:
            ground = ground.without_evidence()  # the evidence is about other accelerators
            platform = ground.cluster.gpu_taints if ground.cluster is not None else None
            if ground.kind == "platform" and platform is not None:
                candidates = list(platform)
                cited = f" ({ground.platform_note()})"
    elif ground.kind == "platform":
        platform = ground.cluster.gpu_taints if ground.cluster is not None else None
        if platform is not None:
            candidates = list(platform)
            cited = f" ({ground.platform_note()})"
    if agent.hardware is None and ground.kind == "assumed":
        # An agent of every vendor (the NFD worker) is held to the seed convention's NVIDIA
        # taint: the other vendors' rows are for their own pods and agents.
        candidates = [t for t in candidates if t.hardware is None or "nvidia" in t.hardware]
    missing = [
        taint
        for taint in candidates
        if _applies(taint, agent.hardware)
        and taint.effect in ("NoSchedule", "NoExecute")
        and not any(tolerates(t, taint) for t in tolerations)
    ]
    if not missing:
        return
    # The message names the first taint (one short line); the help line lists them all.
    others = len(missing) - 1 + max(more, 0)
    taints = str(missing[0]) + (f" and {others} more" if others > 0 else "")
    hints = ", ".join(t.toleration_hint() for t in missing)
    has_key = "tolerations" in pod.spec
    where: tuple[Any, ...] = (*pod.path, "tolerations") if has_key else pod.path
    at = "key"
    advice = f"add {hints} to its tolerations"
    close = toleration_near_miss(tolerations, missing, pod.tolerations_path)
    if close is not None:
        advice, where, at = close.advice, close.where, close.at
    auto = agent.agent in AUTO_MODE_PLUGINS and _selects_auto_mode(pod)
    severity, advice = _loudness(
        agent.severity, advice, auto, nearer, apart, hedge, ground, missing
    )
    effect = "its pods stay off those nodes" if auto else agent.effect
    yield Violation(
        where,
        f"this DaemonSet runs the {agent.agent} but does not tolerate the GPU node taint {taints}",
        help=f"{advice}{cited}; otherwise {effect}",
        at=at,
        severity=severity,
        related=related,
    )


def _loudness(
    severity: str,
    advice: str,
    auto: bool,
    nearer: str | None,
    apart: str | None,
    hedge: bool,
    ground: Any,
    missing: list[Taint],
) -> tuple[str, str]:
    """The finding's severity and advice: the agent's, unless what it rests on is weaker (a
    redundant Auto Mode plugin, a pool of another folder's cluster, a pool of one of several
    folders with pools that is not the agent's, another agent's hedge, gpulint's default
    taint), which makes it ``info`` saying so."""
    if auto:
        return "info", advice + (
            " (its nodeSelector picks EKS Auto Mode nodes, which run the device plugin "
            "themselves: there this DaemonSet is redundant)"
        )
    if nearer is not None:
        return "info", advice + (
            f" (assumed: the pool is this DaemonSet's cluster's, though {nearer} describes "
            "node pools of a folder nearer to it: the repository may hold several clusters; "
            f"`{certain_line(missing)}` in .gpulint.yaml makes it certain)"
        )
    if apart is not None:
        return "info", advice + (
            f" (assumed: the pool of {apart} is this DaemonSet's cluster's, though the "
            "repository describes node pools in several folders and this DaemonSet is in none "
            f"of the pool's: it may hold several clusters; `{certain_line(missing)}` in "
            ".gpulint.yaml makes it certain)"
        )
    if hedge:
        return "info", advice + (
            " (the evidence is another agent's toleration of the vendor's taint, which its "
            "manifest carries whether the nodes are tainted or not; "
            f"`{certain_line(missing)}` in .gpulint.yaml makes it certain)"
        )
    if ground.kind == "assumed":
        return "info", advice + (  # nothing says the GPU nodes carry this taint
            " (assumed: gpulint's default GPU taint; "
            f"`{certain_line(missing)}` in .gpulint.yaml makes it certain)"
        )
    return severity, advice


#: Device plugins that EKS Auto Mode's nodes run themselves ("EKS Auto Mode": its
#: accelerated AMIs include the NVIDIA and Neuron device plugins; deploying one is not
#: necessary): a DaemonSet of one on those nodes advertises nothing more.
AUTO_MODE_PLUGINS = frozenset({"NVIDIA device plugin", "AWS Neuron device plugin"})
#: Node labels only EKS Auto Mode's nodes carry: the ``eks.amazonaws.com/instance-*``
#: requirements of its NodePools, and ``eks.amazonaws.com/compute-type: auto`` (the same label
#: says ``fargate`` on Fargate's nodes).
_AUTO_MODE_PREFIX = "eks.amazonaws.com/instance-"
_COMPUTE_TYPE = "eks.amazonaws.com/compute-type"


def _selects_auto_mode(pod: PodSpec) -> bool:
    """The pod's ``nodeSelector`` names a label of EKS Auto Mode's nodes."""
    selector = pod.spec.get("nodeSelector")
    if not isinstance(selector, dict):
        return False
    if selector.get(_COMPUTE_TYPE) == "auto":
        return True
    return any(isinstance(k, str) and k.startswith(_AUTO_MODE_PREFIX) for k in selector)


def _applies(taint: Taint, hardware: str | None) -> bool:
    return taint.hardware is None or hardware is None or hardware in taint.hardware


def _own_resource_taint(tolerations: list[Any], ctx: RuleContext) -> bool:
    """Does the agent tolerate a taint keyed by an accelerator resource name other than the
    default taint's (its own scheme's ExtendedResourceToleration convention)? A name the
    registry lacks counts when it is shaped like one (``xdxct.com/gpu``: a vendor domain
    other than the default taints' and a device word) and its domain is no slip of a default
    taint's (``nvidai.com``)."""
    default_keys = {t.key for t in taints_from_options(ctx.options)}
    default_domains = {key.rpartition("/")[0] for key in default_keys}
    registry = ctx.registry
    for toleration in tolerations:
        key = toleration.get("key") if isinstance(toleration, dict) else None
        if not isinstance(key, str) or key in default_keys:
            continue
        if registry.is_accelerator(key):
            return True
        domain, slash, _ = key.rpartition("/")
        if (
            slash
            and domain not in default_domains
            and not default_domains.intersection(registry.close_domains(domain))
            and registry.looks_like_accelerator(key)
        ):
            return True
    return False
