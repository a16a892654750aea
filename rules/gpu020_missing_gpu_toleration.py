"""GPU pod does not tolerate the GPU node taint.

## What it does
Flags a pod that requests a GPU resource but has no toleration matching every configured GPU
taint of its vendor (default: `nvidia.com/gpu=present:NoSchedule` for NVIDIA,
`aws.amazon.com/neuron=true:NoSchedule` for AWS Neuron, `google.com/tpu=present:NoSchedule`
for Google TPUs; AMD, Intel, Gaudi and Ascend document no node taint). Matching follows
Kubernetes exactly: an empty `effect` matches every effect, `operator: Exists` matches any
value, an empty `key` with `Exists` matches every taint, and a missing operator means `Equal`.

A pod that gets GPUs through Dynamic Resource Allocation counts as a GPU pod too: a
`spec.resourceClaims` entry whose ResourceClaim or ResourceClaimTemplate (in its file or another
file of its project) asks for a GPU device class such as `gpu.nvidia.com` (the registry's `dra`
section, or a DeviceClass of the project that selects a GPU driver), in the pod judged and in the
pods whose tolerations make the project's consensus alike. So does a GPU written in the pod-level
`resources` (rejected there, GPU030: once it moves into a container the pod needs the toleration),
and so does a GPU its operator writes into it from a field of its own (the workload table's
`operator_gpus`: NVIDIA Dynamo's `resources.limits.gpu: "1"` becomes the main container's
`nvidia.com/gpu`). An explicit `nvidia.com/gpu: 0` is a CPU pod. A name that only looks like an
accelerator (`nvidia.com/gpus`, GPU010) makes a GPU pod of unknown hardware: only taints without
`hardware` apply to it. This is the same GPU pod as GPU021's, declarative rules' `when: {gpu: true}`
and `gpulint inspect`'s (see References). Where a workload kind gives its pods default tolerations
(an Argo template without tolerations runs with the workflow's `spec.templateDefaults.tolerations`
or `spec.tolerations`), those are the pod's tolerations. A KServe InferenceService predictor
without tolerations whose `model` takes its container from a serving runtime (`runtime:` or
`modelFormat`) is not flagged: KServe builds its pod from the runtime's pod spec, whose
`tolerations` it keeps, and gpulint does not merge the two.

When a toleration is meant for the taint (its key, or an empty one, or the key in another
case or one or two edits off) but does not match, the finding is at what to change in it
(at the pod when the tolerations are a workload's shared default) and says exactly what:
the value under `Equal` (`value: "true"` for the taint's `present`), a missing operator
(which means `Equal` with an empty value: add `operator: Exists`), an operator in the wrong
case (`exists`), the effect, or the key. When what to change is a field the API server
rejects (`operator: exists`, `effect: noschedule`), that is GPU022's finding, at the same
field, and GPU020 leaves it to GPU022: one cause, one finding. A toleration that is also
invalid elsewhere, or meant for another taint, leaves both findings: two causes.
When the rule runs with the default taint, the message says so and how to set the
cluster's own (`gpu-taints:` in `.gpulint.yaml`, `[]` on GKE).

With a cluster described (`node-pools:`, `--cluster`, `platform:`; docs/cluster.md), the
taints are the GPU nodes' own: the pod is flagged only when every node that offers what it
asks for has a taint it does not tolerate, and the message names the closest pool and where
it is described. The tolerations the platform adds count: GKE's ExtendedResourceToleration
(`{key: <resource>, operator: Exists, effect: NoSchedule}` per extended resource requested)
and, for a pod that names a Kueue queue, the ResourceFlavors' tolerations. So do, with or
without a cluster described, the `scheduling.tolerations` of the pod's RuntimeClass when the
project's files define it (the RuntimeClass admission controller merges them into the pod:
an `nvidia` class that tolerates `nvidia.com/gpu`). With only a
platform, its GPU taints are used (GKE's `nvidia.com/gpu=present:NoSchedule`, none on EKS,
AKS, ACK and OpenShift) unless `taints` is configured.

How sure it is decides the severity. With a cluster described, or `gpu-taints`/`taints`
configured, a finding is an error. Without them, the rule first reads what the run's files say
(gpulint/cluster/evidence.py, docs/cluster.md): a taint most of the run's GPU pods tolerate
(at least two), or a taint of a GPU node-pool object in the files (Karpenter, Kueue,
eksctl, OpenShift MachineSet, Cluster API, Config Connector, Azure Service Operator:
gpulint/data/node-pools.json), is the GPU nodes' taint, and a pod that does not tolerate it
is flagged, naming that evidence (`related` places of kind `evidence`). What the files say
is not verification, and a taint gpulint cannot verify makes a finding `info` at most: a
pool of the files proves its own nodes are tainted, not that the files list every pool, so a
pool's taint is an error only when the pod's own node selector or required node affinity
holds it to that pool (its name label, `karpenter.sh/nodepool: gpu`,
`eks.amazonaws.com/nodegroup`, `cloud.google.com/gke-nodepool`, or a label only the pools'
node templates set: gpulint/cluster/binding.py), else `info`; other pods' tolerations are
never verification: a whole taint every other GPU pod of the project tolerates (at least
two) is a `warning` at most, anything less unanimous (4 of 7 pods) `info`. Below error the
message says what it assumed and names the `gpu-taints:` line that makes it certain. A
consensus on a taint keyed by the resource the pod requests itself (`nvidia.com/gpu`) that no
node pool of the files carries is `info`: pods tolerate that key in case the nodes carry it,
and a cluster with the ExtendedResourceToleration admission adds the toleration itself. So is
a node pool's `NoSchedule` taint so keyed when the pod does not name that pool: the pool may
be another cluster's of the same repository (an OpenShift MachineSet beside a GKE demo),
and the pod's own cluster may add the toleration.
When the project's files hold a MutatingWebhookConfiguration that changes pods as they are
created (a rule on `pods` for `CREATE`: a GPU isolation or scheduling webhook that injects
the GPU pool's toleration and affinity), a finding that rests on the files' evidence is
`info` at most, naming the webhook: what it adds is not in the files. A
pod that asks for a MIG instance or a shared replica of a GPU (`nvidia.com/mig-1g.10gb`,
`nvidia.com/gpu.shared`) lands on the nodes of that GPU: a taint keyed by the GPU's name
(`nvidia.com/gpu=true`, which the project's GPU pods agree on) applies to it too, so it is
judged by that taint rather than by gpulint's default. A taint the
repository's node agents tolerate is no evidence for a pod (the device plugins' manifests
tolerate their vendor's taint whether the nodes carry it or not): that is GPU023's. A pod
needs one GPU pool, not all: a pool's taints count against it only when no GPU pool of the
files that offers what it asks for, and that its node selector does not rule out, takes it.
A pod whose node selector or required affinity names a platform (`cloud.google.com/gke-accelerator`,
`cloud.google.com/compute-class`, `cloud.google.com/gke-spot`: GKE, which adds the
toleration itself; `eks.amazonaws.com/nodegroup`, `kubernetes.azure.com/agentpool`,
`aliyun.accelerator/nvidia_name`: platforms that taint no GPU pool by themselves; the full
list is `gpulint/cluster/platforms.py`'s, each label citing its platform's page) is judged
as with that `platform:`. When nothing says what the taint
is, the finding rests on gpulint's default taint: it is `info`, says `assumed`, and names the
`gpu-taints:` line that makes it certain. A GPU pool of the files that carries no taint the pod
misses, and that the pod may land on (it offers what the pod asks for and the node selector
does not rule it out: `karpenter.sh/nodepool: gpu` names it), contradicts the default: no
finding (a Karpenter NodePool of g6 nodes with no taint takes the pod as it is). A pod that
itself tolerates a taint of particular nodes (`gpupod=true:NoSchedule`,
`dedicated=ml:NoSchedule`: not a key every cluster has, nor a Spot capacity taint) names its GPU
nodes' own taint: it is not held to the default one, nor to a taint only other pods tolerate
(a repository of several GPU pools, `g5-gpu` for some pods and `g6-gpu` for others; a pool
of the files that carries the taint still counts). So does a toleration of the default taint's
key that differs from it only in the value or the effect (`nvidia.com/gpu=true:NoSchedule`,
EKS's usual GPU taint; `NoExecute`; no operator, which tolerates only the empty value): such a
toleration is reported against a taint the configuration, the project's files or the platform
names, never against the default one. A key in another case or misspelt, or an operator
written `exists`, is reported against the default taint too: no cluster's taint is so.

Only taints that keep the pod off the node count: a `PreferNoSchedule` taint is a preference,
and a pod bound with `spec.nodeName` skips the scheduler, so only `NoExecute` taints (which
the kubelet enforces at admission) apply to it. Tolerations an operator adds to the pods it
makes count as the pod's (the workload table's `added_tolerations`: a KAITO Workspace's pods
tolerate `nvidia.com/gpu` and `sku=gpu`, the taints of the GPU nodes KAITO provisions).

## Why it matters
GPU node pools are tainted so that ordinary pods stay off expensive nodes. A GPU pod that
does not tolerate the taint fits nowhere: the GPU nodes repel it and the other nodes have no
GPUs. It stays `Pending` with `node(s) had untolerated taint {nvidia.com/gpu: present}`.

## Example
```yaml
spec:                      # GPU020
  containers:
  - name: train
    resources:
      limits:
        nvidia.com/gpu: 1
```

## Use instead
```yaml
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  containers:
  - name: train
    resources:
      limits:
        nvidia.com/gpu: 1
```

## Fix safety
Unsafe: adds a toleration of each missing taint (`operator: Exists` and its effect) to the
pod spec's `tolerations` (created when absent); the pod may then run on the tainted nodes.
No fix when the tolerations come from elsewhere (an Argo workflow's) or one almost matches.

## Options
`taints` (list, default one taint per vendor that documents one: `[{key: nvidia.com/gpu,
value: present, effect: NoSchedule, hardware: [nvidia]}, {key: aws.amazon.com/neuron, value:
"true", effect: NoSchedule, hardware: [aws-neuron]}, {key: google.com/tpu, value: present,
effect: NoSchedule, hardware: [google-tpu]}]`, sources in `gpulint/k8s/taints.py`): the taints on
your GPU nodes. AKS docs use `sku=gpu:NoSchedule`. On
GKE the `ExtendedResourceToleration` admission plugin adds the toleration itself: set
`taints: []` (or ignore GPU020). `hardware` limits a taint to pods that ask for resources of
that accelerator vendor (the registry's `hardware` field; cGPU, HAMi and gpu-manager keys
run on NVIDIA hardware); omit it for every accelerator.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#gpu-pods (what makes a GPU pod)
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#taints-and-tolerations
  (`ToleratesTaint`, GKE and AKS taints)
- https://github.com/gpulint/gpulint/blob/main/docs/cluster.md (node pools and platforms)
- https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/
- argoproj/argo-workflows `workflow/controller/workflowpod.go` (`addSchedulingConstraints`:
  template tolerations, else the workflow's)
- kubernetes `pkg/kubelet/lifecycle/predicate.go` (the kubelet checks only `NoExecute` taints)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    TAINTS_OPTION,
    AppendItem,
    KnownTaint,
    Node,
    PodSpec,
    Repair,
    RuleContext,
    Taint,
    TooLarge,
    Violation,
    added_tolerations,
    certain_line,
    completed_by_runtime,
    default_taints_assumed,
    describes_nodes,
    fewest_untolerated,
    gpu_demand,
    names_kueue_queue,
    names_node_taint,
    pool_label,
    taint_basis,
    taints_from_options,
    tolerates,
    toleration_near_miss,
)

CODE = "GPU020"
NAME = "gpu-pod-missing-toleration"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
FIX = "unsafe"  # what it changes: the "Fix safety" section
ASSUMES_CLUSTER = True  # info, said once, when no cluster is described
#: A toleration the API server rejects (`operator: exists`) is GPU022's: where the near
#: miss GPU020 points at is that field, GPU020 yields to it.
YIELDS_TO = ("GPU022",)
OPTIONS: dict[str, Any] = {"taints": TAINTS_OPTION}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod":
        return  # a lone container or ResourceRequirements has no tolerations of its own
    registry = ctx.registry
    demand = gpu_demand(pod, registry, ctx.claims)
    if not demand.gpu:
        return
    # What the pod's operator writes into it from a field of its own (Dynamo's gpu: "1").
    operated = {name: path for name, path in demand.operator}
    hardware, first = _gpu_request(demand, registry, operated)
    tolerations = pod.tolerations
    if not tolerations and completed_by_runtime(pod):
        return  # KServe merges its serving runtime's tolerations into it: not read here
    node_name = pod.spec.get("nodeName")
    bound = isinstance(node_name, str) and bool(node_name)
    names = [e.name for e in demand.entries] + [n for n in operated if n not in demand.pod_level]
    ground = taint_basis(pod, ctx.cluster, ctx.options, ctx.evidence)
    wanted = [*names, *demand.pod_level]
    # A MIG instance or a shared replica is on the nodes of the GPU it is carved from: a taint
    # keyed by that GPU's name (nvidia.com/gpu=true, the project's consensus) is on them too.
    wanted += [w for w in {registry.carved_from(n) for n in wanted} if w and w not in wanted]
    # A node agent's toleration is a hedge (NVIDIA's and Neuron's device plugin manifests
    # tolerate their taint whether the nodes carry it or not): GPU023's, left out here.
    agreed = ground.picture.agreed(hardware, wanted) if ground.picture is not None else None
    if ground.kind == "evidence" and (
        not agreed or ground.picture is None or not ground.picture.reaches(agreed, pod, wanted)
    ):
        # The evidence is about other accelerators, or pools the pod cannot land on.
        ground = ground.without_evidence()
    if ground.kind == "platform":
        ctx = ctx._replace(cluster=ground.cluster)  # the platform the pod's selector names
    # The operator's own (a KAITO Workspace's pods tolerate the GPU nodes KAITO provisions).
    effective = [*tolerations, *pod.added_tolerations, *_added(pod, ctx, ground, names)]
    if ctx.evidence is not None:
        # Its RuntimeClass's scheduling.tolerations, which admission merges into the pod.
        effective += ctx.evidence.runtime_class_tolerations(pod.spec.get("runtimeClassName"))
    evidence: list[KnownTaint] = []
    if ground.kind == "evidence":
        assert ground.picture is not None and agreed is not None
        evidence = [
            k
            for k in ground.picture.untolerated(agreed, effective, pod, wanted)
            if _enforced(k.taint.effect, bound)  # a bound pod: the kubelet's NoExecute only
        ]
        if not evidence:
            return
        found: tuple[list[Taint], Node | None, int] | None = (
            [k.taint for k in evidence],
            None,
            0,
        )
    else:
        judged = _untolerated(pod, ctx, demand, hardware, bound, effective)
        if isinstance(judged, TooLarge):
            # Never an error from a partial look at the nodes.
            yield Violation(
                pod.tolerations_path or pod.path,
                f"the pod {first}, and the cluster is too large to judge exactly whether it "
                f"tolerates the taints of some GPU node ({judged.shapes} node shapes; gpulint "
                "compares a pod with at most 512): it may stay Pending",
                severity="info",
            )
            return
        found = judged
    if found is None:
        return
    missing, pool, others = found
    taints = ", ".join(k.shown() for k in evidence) if evidence else ", ".join(map(str, missing))
    where, at, advice, fix, inherited, close = _remedy(pod, missing)
    if pool is not None:
        more = f", and {others} other GPU pool{'s' * (others > 1)} repel it too" if others else ""
        yield Violation(
            where,
            f"the pod {first} but does not tolerate the taint {taints} of the GPU "
            f"{pool_label(pool)}",
            help=f"{advice}{inherited}{more}",
            at=at,
        )
        return
    if evidence:
        if close is None and _own_pool(evidence, ground.picture, tolerations):
            return  # its own pool's taint, not a slip of theirs: meant for other GPU nodes
        cited = "; ".join(f"{k.evidence.what}: {k.evidence.cited()}" for k in evidence)
        related = tuple(
            r for k in evidence for r in k.evidence.related(f"the evidence for {k.shown()}")
        )
        picture = ground.picture
        assert picture is not None
        severity, hedge = _webhooks_weight(
            picture, *_evidence_weight(evidence, picture, pod, wanted, missing)
        )
        yield Violation(
            where,
            f"the pod {first} but does not tolerate the GPU node taint {taints}: it stays "
            "Pending on those nodes",
            help=f"{advice}{inherited} ({cited}){hedge}",
            at=at,
            fix=fix,
            related=related,
            severity=severity,
        )
        return
    severity = None
    if ground.kind == "platform":
        inherited += f" ({ground.platform_note()})"
    elif ground.kind == "assumed":
        # Nothing says the GPU nodes carry this taint: a guess is never an error.
        severity = "info"
        keys = {t.key for t in missing}
        own = next(
            (t for t in tolerations if names_node_taint(t) and t.get("key") not in keys), None
        )
        if close.variant if close is not None else own is not None:
            # The pod tolerates a taint of particular nodes (gpupod=true:NoSchedule), or the
            # default taint's key with its own value, effect or operator (nvidia.com/gpu=true,
            # EKS's usual GPU taint): its author names the GPU nodes' own taint, which the
            # default only guesses at.
            return
        if _open_pool(ctx.evidence, hardware, wanted, pod, effective, bound):
            return
        disputes = ctx.evidence.disputes() if ctx.evidence is not None else ""
        advice += (
            f" (assumed: gpulint's default GPU taint{disputes}; "
            f"`{certain_line(missing)}` in .gpulint.yaml makes it certain)"
        )
    yield Violation(
        where,
        f"the pod {first} but does not tolerate the GPU node taint {taints}: it stays Pending",
        help=f"{advice}{inherited}",
        at=at,
        fix=fix,
        severity=severity,
    )


_LOUDNESS = {"info": 0, "warning": 1, "error": 2}


def _own_pool(evidence: list[KnownTaint], picture: Any, tolerations: list[Any]) -> bool:
    """Does the pod tolerate a taint of particular nodes of its own (``g6-gpu``) when the
    only evidence against it is other pods' tolerations (``g5-gpu``, no pool of the files
    carries it)? Then it is meant for other GPU nodes than theirs: a repository of several
    GPU pools, each pod tolerating its own."""
    pool_keys = picture.pool_keys()
    if any(k.pooled or k.taint.key in pool_keys for k in evidence):
        return False
    keys = {k.taint.key for k in evidence}
    return any(
        isinstance(t, dict) and names_node_taint(t) and t.get("key") not in keys
        for t in tolerations
    )


def _webhooks_weight(picture: Any, severity: str | None, hedge: str) -> tuple[str | None, str]:
    """``(severity, hedge)`` made ``info`` when the project's files hold a webhook that
    changes pods as they are created (it may add the toleration), saying so."""
    if not picture.pod_webhooks or severity == "info":
        return severity, hedge
    name, source = picture.pod_webhooks[0]
    return "info", hedge + (
        f" (assumed: the project's mutating webhook {name} ({source}), which changes pods as "
        "they are created, does not add it)"
    )


def _evidence_weight(
    evidence: list[KnownTaint], picture: Any, pod: PodSpec, wanted: list[str], missing: list[Taint]
) -> tuple[str | None, str]:
    """How loud a finding that rests on the files' evidence may be, and what it says it
    assumed: (severity, None for the rule's error; the clause). Each taint of the evidence
    allows at most: a pool's taint, an error when the pod's own selector holds it to that
    pool, else info (the files list the pools they describe, not every pool of the cluster);
    the pods' consensus, a warning when every other GPU pod of the project tolerates the
    whole taint, else info (other pods' tolerations are no verification), and info when it
    is keyed by the resource this pod requests and no pool carries it (pods tolerate that
    key in case; the ExtendedResourceToleration admission adds it). The finding is as loud
    as its loudest taint allows."""
    pool_keys = picture.pool_keys()
    line = f"`{certain_line(missing)}` in .gpulint.yaml makes it certain"
    loudest = "info"
    why = ""
    for k in evidence:
        if k.pooled or k.taint.key in pool_keys:
            # A pool of the files carries it (the pods' consensus may name it first).
            if picture.binds(pod):
                allowed = "error"
            elif k.taint.key in wanted and k.taint.effect == "NoSchedule":
                # A pool's taint keyed by the resource the pod asks for, on a pool the pod does
                # not name: the pod's own cluster may be another (a repository of several),
                # where the ExtendedResourceToleration admission (GKE's) adds the toleration.
                allowed = "info"
                why = why or (
                    "assumed: the pod names no node pool, and a cluster with the "
                    "ExtendedResourceToleration admission adds a toleration of the resource it "
                    "asks for itself"
                )
            else:
                allowed = "warning" if k.unanimous() else "info"
                why = why or (
                    "assumed: the pod names no node pool, and the files need not list every "
                    "pool of the cluster"
                )
        elif k.taint.key in wanted:
            allowed = "info"
            why = why or (
                "assumed from the other pods; a cluster with the ExtendedResourceToleration "
                "admission adds it itself"
            )
        elif k.unanimous():
            allowed = "warning"
        else:
            allowed = "info"
            why = why or "assumed from some of the other pods, not all"
        if _LOUDNESS[allowed] > _LOUDNESS[loudest]:
            loudest = allowed
    if loudest == "error":
        return None, ""
    if loudest == "warning":
        return "warning", f" (every other GPU pod of this project tolerates it; {line})"
    return "info", f" ({why}; {line})"


def _gpu_request(demand: Any, registry: Any, operated: dict[str, Any]) -> tuple[set[str], str]:
    """The hardware the pod asks for, and what makes it a GPU pod in words: a known device
    first, else the claim, else the look-alike name (whose hardware is unknown: only taints
    for every accelerator apply)."""
    hardware: set[str] = set()
    known: list[str] = []
    for name in [*(e.name for e in demand.entries), *demand.pod_level, *operated]:
        resource = registry.get(name)
        if resource is not None:
            hardware.add(resource.hardware)
            known.append(name)
    hardware.update(claim.hardware for claim in demand.claims)
    if not known and demand.claims:
        return hardware, f"gets a GPU through {demand.claims[0].describe()}"
    requested = known or [e.name for e in demand.entries] or [*demand.pod_level, *operated]
    first = f"requests {requested[0]}"
    if requested[0] in {e.name for e in demand.entries}:
        pass
    elif requested[0] in demand.pod_level:
        first += " in its pod-level resources"
    elif requested[0] in operated:
        field = ".".join(str(p) for p in operated[requested[0]])
        # The operator's component that asks for it: its resources' path would not fit a line.
        first = f"gets {requested[0]} from {field.rsplit('.resources', 1)[0]}"
    return hardware, first


def _added(pod: PodSpec, ctx: RuleContext, ground: Any, names: list[str]) -> list[Any]:
    """The tolerations admission adds to the pod: the platform's (none when no cluster is
    described), the evidence's cluster's, and a queue's."""
    extra = (
        added_tolerations(ctx.cluster, names, names_kueue_queue(pod))
        if ctx.cluster is not None
        else []
    )
    if ground.kind == "evidence" and ground.cluster is not None:
        extra += added_tolerations(ground.cluster, names, names_kueue_queue(pod))
    if ground.picture is not None and ground.picture.queue_tolerations and names_kueue_queue(pod):
        extra = [*extra, *ground.picture.queue_tolerations]
    return extra


def _remedy(
    pod: PodSpec, missing: list[Taint]
) -> tuple[tuple[Any, ...], str, str, Repair | None, str, Any]:
    """Where to point, what to advise and the fix, for tolerations that miss ``missing``:
    (where, at, advice, fix, where the tolerations come from in words, the near miss)."""
    hints = ", ".join(t.toleration_hint() for t in missing)
    has_key = "tolerations" in pod.spec
    source = pod.tolerations_path
    inherited = ""
    if source is not None and source != (*pod.path, "tolerations"):
        inherited = f" (its tolerations come from {'.'.join(str(p) for p in source)})"
    where: tuple[Any, ...] = (*pod.path, "tolerations") if has_key else pod.path
    # A toleration meant for the taint that gets one thing wrong: name it and the fix, and
    # point at what to change.
    advice = f"add {hints} to its tolerations"
    at = "key"
    fix: Repair | None = None
    if source is None or source == (*pod.path, "tolerations"):
        fix = Repair(
            f"add {hints} to the tolerations",
            tuple(AppendItem((*pod.path, "tolerations"), _toleration(t)) for t in missing),
            "unsafe",
        )
    close = toleration_near_miss(pod.tolerations, missing, source)
    if close is not None:
        advice = close.advice
        fix = None  # which field to change is the user's call
        if not inherited:
            # Point at what to change. Tolerations a workload shares between its pods (an
            # Argo workflow's) stay reported at each pod, which the message names them for.
            where, at = close.where, close.at
    return where, at, advice, fix, inherited, close


def _toleration(taint: Taint) -> dict[str, str]:
    """The toleration ``toleration_hint`` describes, as data."""
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def _untolerated(
    pod: PodSpec,
    ctx: RuleContext,
    demand: Any,
    hardware: set[str],
    bound: bool,
    tolerations: list[Any],
) -> tuple[list[Taint], Node | None, int] | TooLarge | None:
    """The taints that keep the pod off its GPU nodes, the pool they are on (None: the
    configured or platform taints), and how many other GPU pools also repel it; None when
    the pod tolerates some pool's taints (or no pool offers what it asks for); TooLarge when
    the described cluster has too many GPU node shapes to judge that exactly."""
    cluster = ctx.cluster
    if describes_nodes(cluster):
        names = [e.name for e in demand.entries if ctx.registry.is_accelerator(e.name)]
        names += [n for n in demand.pod_level if ctx.registry.is_accelerator(n)]
        names += [n for n, _ in demand.operator if ctx.registry.is_accelerator(n)]
        # No name: a DRA claim (or a look-alike name), which any GPU node may serve.
        found = fewest_untolerated(
            cluster, names or None, ctx.registry.is_accelerator, tolerations, bound
        )
        if found is None or isinstance(found, TooLarge):
            return found
        return found.left, found.node, found.others
    taints = taints_from_options(ctx.options)
    if (
        cluster is not None
        and cluster.gpu_taints is not None
        and default_taints_assumed(ctx.options)
    ):
        taints = list(cluster.gpu_taints)  # the platform's, unless the user set their own
    missing = [
        taint
        for taint in taints
        if (taint.hardware is None or taint.hardware & hardware)
        and _enforced(taint.effect, bound)
        and not any(tolerates(t, taint) for t in tolerations)
    ]
    return (missing, None, 0) if missing else None


def _open_pool(
    picture: Any, hardware: set[str], wanted: list[str], pod: PodSpec, tolerations: Any, bound: bool
) -> bool:
    """Whether a GPU pool of the project's files takes the pod as it is: it makes nodes with
    what the pod asks for, the pod's node selector does not rule it out (it may name it:
    `karpenter.sh/nodepool: gpu`), and the pod tolerates every taint it has (a Karpenter
    NodePool of g6 nodes with none). The default taint is then contradicted, not assumed.
    A pod bound to its node is left to the assumption (the kubelet reads only NoExecute)."""
    if picture is None or bound:
        return False
    return bool(picture.takes_as_is(picture.agreed(hardware, wanted), pod, wanted, tolerations))


def _enforced(effect: str, bound: bool) -> bool:
    """Does a taint with this effect keep an untolerating pod off the node?

    The scheduler enforces NoSchedule and NoExecute; a pod with ``spec.nodeName`` bypasses it,
    and the kubelet only rejects it for NoExecute taints (``lifecycle/predicate.go``).
    """
    if bound:
        return effect == "NoExecute"
    return effect in ("NoSchedule", "NoExecute")
