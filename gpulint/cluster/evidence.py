"""The cluster picture a run gathers from its own files: what they say about the GPU nodes.

When the configuration describes no cluster (no ``gpu-taints``, ``node-pools``, ``platform``
or ``--cluster``), the rules that judge scheduling (GPU020, GPU021, GPU023, GPU040) would
have to assume one. Before assuming, gpulint listens to the repository:

- **Taints the run's GPU pods agree on.** A taint key that at least two GPU pods of the run
  tolerate, and more than half of them, is taken as the GPU nodes' taint
  (``sku=gpu:NoSchedule`` tolerated by three Jobs is the taint a fourth Job lacks). Keys
  every cluster has (``node.kubernetes.io/…``, ``node-role.kubernetes.io/…``), Spot and
  preemptible capacity taints (:data:`gpulint.k8s.taints.CAPACITY_TAINT_KEYS`) and blanket
  tolerations (no key) say nothing about the GPU nodes and are left out.
- **Taints of the GPU node-pool objects in the tree** (every kind of
  ``gpulint/data/node-pools.json``: :mod:`gpulint.cluster.objects`). A pod needs one GPU pool, not
  all: a pool's taints hold against it only when it may land on that pool
  (:meth:`Picture.candidates`), and then those of the pool it misses fewest of.
- **Taints a vendor's node agents tolerate** (:mod:`gpulint.cluster.agenttaints`), for that
  vendor's agents (GPU023) only: an agent tolerates a taint in case it is there, which
  says nothing a GPU pod can be held to.
- **The platform a pod selects** with its node selector or required node affinity: a
  ``cloud.google.com/gke-accelerator`` selector is GKE (whose ExtendedResourceToleration
  admission adds the GPU toleration itself), ``eks.amazonaws.com/nodegroup`` or a
  ``karpenter.k8s.aws/…`` label is EKS, ``kubernetes.azure.com/agentpool`` AKS,
  ``aliyun.accelerator/nvidia_name`` ACK (none of the three taints GPU nodes by itself).
  Each row of :data:`gpulint.cluster.platforms.PLATFORM_LABELS` cites where the platform
  documents the label.

Every fact carries where it came from (file and line), so a finding that rests on it names
its evidence (``Violation.related``), and ``gpulint inspect`` prints the picture. A finding
that rests on nothing but gpulint's defaults is a guess: its rule reports it as ``info``
and the text report says once what was assumed and the configuration line that makes it
certain (:func:`certain_line`).

The facts come from the facts stage, before any file is linted (:mod:`gpulint.lint.gather`,
so every worker process and every file sees the same picture): each file of the project
is parsed at most once for them, or not at all when the project's cache vouches for it.
Only files whose bytes hold ``tolerations`` are parsed for the picture; the other files that
name an accelerator are parsed (to count their GPU pods) only when some taint has the two
pods a consensus needs, so a run whose files tolerate nothing costs one read of each file.
Standard input is not pre-read.

The picture itself, and what a pod asks of it, are :mod:`gpulint.cluster.known`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.cluster.agenttaints import AgentTaint, AgentTally
from gpulint.cluster.consensus import Record, Tally, from_json, generic_key, pod_shapes
from gpulint.cluster.known import (
    Agreed as Agreed,
    Disputed as Disputed,
    Evidence as Evidence,
    KnownTaint as KnownTaint,
    Picture as Picture,
)
from gpulint.cluster.platforms import PLATFORM_NAMES, platform_of_label
from gpulint.k8s.objects import expression_key_path, required_node_terms
from gpulint.k8s.taints import Taint

if TYPE_CHECKING:
    from gpulint.cluster.objects import Found
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.dra import ClaimIndex, DraFacts
    from gpulint.k8s.manifest import Manifest
    from gpulint.k8s.objects import PodSpec
    from gpulint.k8s.workloads import WorkloadTable

#: Bytes (lower case) one of which a file with a GPU pod holds: other files are not parsed.
_GPU_HINTS = (b"gpu", b"neuron", b"tpu", b"gaudi", b"ascend", b"resourceclaim", b"mig-")


def _hints() -> re.Pattern[bytes]:
    """:data:`_GPU_HINTS` in any case, searched without a lower-cased copy of the file."""
    global _HINTS
    if _HINTS is None:
        _HINTS = re.compile(b"|".join(re.escape(h) for h in _GPU_HINTS), re.IGNORECASE)
    return _HINTS


_HINTS: re.Pattern[bytes] | None = None


def pod_platform(pod: PodSpec) -> tuple[str, str, tuple[Any, ...]] | None:
    """The platform a pod's node selector or required node affinity names: ``(platform,
    label, path of the label key)``; None when it names none of :data:`PLATFORM_LABELS`."""
    spec = pod.spec
    selector = spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key in selector:
            found = platform_of_label(key)
            if found is not None:
                return found, key, (*pod.path, "nodeSelector", key)
    for t, term in enumerate(required_node_terms(spec)):
        exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
        for e, expr in enumerate(exprs if isinstance(exprs, list) else ()):
            key = expr.get("key") if isinstance(expr, Mapping) else None
            if not isinstance(key, str) or expr.get("operator") not in ("In", "Exists"):
                continue
            found = platform_of_label(key)
            if found is not None:
                return found, key, expression_key_path(pod.path, t, e)
    return None


def may_hold_gpu_pods(raw: bytes) -> bool:
    """Whether a file's bytes name an accelerator (else it holds no GPU pod to count)."""
    return _hints().search(raw) is not None


def names_node_taint(toleration: Any) -> bool:
    """Whether a pod's toleration names a taint of particular nodes: a key that is neither
    one every cluster's nodes may carry nor a Spot capacity taint, for an effect that keeps
    pods off (``NoSchedule``, ``NoExecute``, or any)."""
    if not isinstance(toleration, Mapping):
        return False
    key = toleration.get("key")
    effect = toleration.get("effect") or "NoSchedule"
    return (
        isinstance(key, str)
        and bool(key)
        and not generic_key(key)
        and effect in ("NoSchedule", "NoExecute")
    )


class Gatherer:
    """The cluster picture of a project's files: :meth:`add` each file's bytes (or
    :meth:`add_record` what a parse or the cache said of it), then :meth:`picture`. What
    each file says is a record (:func:`walk_record`), which the project's cache keeps by the
    file's digest (:mod:`gpulint.lint.gather`)."""

    __slots__ = ("_agents", "_registry", "_table", "_tally")

    def __init__(self, registry: Registry, table: WorkloadTable) -> None:
        self._registry = registry
        self._table = table
        self._tally = Tally()
        self._agents = AgentTally()  # the vendor taints node agents tolerate

    def add(self, label: str, raw: bytes) -> bool:
        """The tolerations of the file's GPU pods, for a file that holds ``tolerations``
        (one that cannot be read adds nothing: the lint reports it). True: the file holds
        none but may hold GPU pods, which count only if some taint may be agreed on
        (:meth:`wants_counts`, then :meth:`count`): a file that tolerates nothing is parsed
        only when it matters."""
        if b"tolerations" not in raw:
            return _hints().search(raw) is not None
        self.add_record(label, self._record(label, raw))
        return False

    def wants_counts(self) -> bool:
        """Some taint has the two GPU pods a consensus needs: the other GPU pods decide."""
        return any(len(pods) >= 2 for pods in self._tally.keys.values())

    def count(self, label: str, raw: bytes) -> None:
        """The GPU pods of a file :meth:`add` set aside (they tolerate nothing)."""
        self.count_record(self._record(label, raw))

    def _record(self, label: str, raw: bytes) -> Record:
        found = from_json(walk_record(label, raw, self._registry, self._table))
        assert found is not None
        return found

    def add_record(self, label: str, found: Record) -> None:
        """:meth:`add` of a file whose record was read already (from the cache, or from the
        one parse the facts stage gave it)."""
        pods, agents = found
        for _, taint, any_value, agent, line in agents:
            self._agents.add_found(label, AgentTaint(0, taint, any_value, agent), line)
        for hardware, keys in pods:
            self._tally.add_shapes(label, keys, hardware)

    def count_record(self, found: Record) -> None:
        """:meth:`count` of a file whose record was read already."""
        self._tally.pods += len(found[0])

    def picture(self, found: Found | None = None) -> Picture:
        """What the files said, with the GPU node pools ``found`` in them
        (:func:`gpulint.cluster.objects.scan`)."""
        return with_pools(self.base(), self._registry, found)

    def base(self) -> Base:
        """What the files' pods and node agents said, before the node pools: the taints
        agreed on and the agents', the GPU pods counted, the keys disputed (the project's
        cache keeps it: :mod:`gpulint.cluster.keptpicture`)."""
        agreed, disputed = self._tally.agreed()
        taints = [
            t._replace(resource=t.resource if self._registry.is_accelerator(t.taint.key) else None)
            for t in agreed
        ]
        known = {t.taint.key for t in taints}
        for taint, any_value, what, places in self._agents.rows(known):
            key = taint.key if self._registry.is_accelerator(taint.key) else None
            taints.append(KnownTaint(taint, any_value, Evidence(what, places), key, agent=True))
        return Base(tuple(taints), self._tally.pods, tuple(disputed))


class Base(NamedTuple):
    """The cluster picture of a project before its node pools (:meth:`Gatherer.base`)."""

    taints: tuple[KnownTaint, ...]
    gpu_pods: int
    disputed: tuple[Disputed, ...]


def with_pools(base: Base, registry: Registry, found: Found | None) -> Picture:
    """The picture of ``base`` with the GPU node pools ``found`` in the files."""
    taints = list(base.taints)
    known = {t.taint.key: i for i, t in enumerate(taints)}
    pools = found.pools if found is not None else ()
    for pool in pools:
        # A GPU pool: it makes GPU nodes, or a taint is keyed by an accelerator resource
        # (the ExtendedResourceToleration convention: nvidia.com/gpu:NoSchedule).
        accelerated = [t.key for t in pool.taints if registry.is_accelerator(t.key)]
        if not pool.gpus and not accelerated:
            continue
        for taint in pool.taints:
            if taint.effect not in ("NoSchedule", "NoExecute"):
                continue
            at = known.get(taint.key)
            # A node agent's toleration of the key with Exists says the key, not the value:
            # the pool that writes the taint says both, and wins.
            if at is not None and not (taints[at].agent and taints[at].any_value):
                continue
            what = f"a taint of the GPU {pool.shown()} in this project's files"
            resource = taint.key if taint.key in accelerated else None
            evidence = Evidence(what, _place(pool.source))
            vendors = _vendors(registry, (*pool.resources, *accelerated))
            made = KnownTaint(taint, False, evidence, resource, pooled=True, vendors=vendors)
            if at is None:
                known[taint.key] = len(taints)
                taints.append(made)
            else:
                taints[at] = made
    queue = found.tolerations if found is not None else ()
    runtime = found.runtime if found is not None else ()
    hooks = found.webhooks if found is not None else ()
    return Picture(tuple(taints), base.gpu_pods, queue, pools, base.disputed, runtime, hooks)


def _vendors(registry: Registry, names: Iterable[str]) -> frozenset[str] | None:
    """The hardware of a pool's accelerators (its nodes' resources, the resources its taints
    are keyed by): its taints are for that vendor's node agents (a Neuron device plugin is
    not held to an NVIDIA pool's taint). None: unknown, every vendor's."""
    found = set()
    for name in names:
        entry = registry.get(name)
        if entry is not None and entry.hardware:
            found.add(entry.hardware)
    return frozenset(found) or None


def walk_record(
    label: str, raw: bytes, registry: Registry, table: WorkloadTable, dra: DraFacts | None = None
) -> dict[str, Any]:
    """What a file says of the GPU nodes, as JSON data (the cache keeps it): ``p``, each GPU
    pod's hardware and the keys it tolerates (:func:`pod_shapes`); ``a``, each node agent's
    tolerations of its vendor's taints. A pod's DRA claims are looked up in the file, then
    in ``dra`` (the DRA objects of the file's project). A file that cannot be read says
    nothing (the lint reports it)."""
    from gpulint.k8s.manifest import Manifest
    from gpulint.loader.decoding import decode

    record = new_record()
    text, problem = decode(raw)
    if text is None or problem is not None:
        return record
    try:
        manifest = Manifest(label, text, table)
        claims = project_claims(manifest, dra)
        for view in manifest.views():
            record_view(record, view, claims, registry)
    except Exception:  # the lint reports what cannot be read
        return record
    return record


def project_claims(manifest: Manifest, dra: DraFacts | None) -> ClaimIndex:
    """The claim index a file's pods are judged with: the file's claims, then those of its
    project (``dra``), as the lint's rules see them (:mod:`gpulint.lint.engine`)."""
    from gpulint.k8s.dra import NO_CLAIMS, ClaimIndex as Index

    if dra is None:
        return manifest.claims
    claims = Index((), manifest.label) if manifest.claims is NO_CLAIMS else manifest.claims
    claims.run = dra
    return claims


def new_record() -> dict[str, Any]:
    return {"p": [], "a": []}


def record_view(record: dict[str, Any], view: Any, claims: Any, registry: Registry) -> None:
    """Add what one document's view says of the GPU nodes to ``record`` (see
    :func:`walk_record`)."""
    from gpulint.cluster.agenttaints import agent_taints
    from gpulint.k8s.resources import gpu_demand

    pods: list[Any] = record["p"]
    agents: list[Any] = record["a"]
    for _, specs in view.items():
        for pod in specs:
            base = (*pod.path, "tolerations")
            if pod.node_agent and pod.location == "pod":
                for found in agent_taints(pod, registry):
                    t = found.taint
                    line = view.doc.value_span((*base, found.position)).line
                    hardware = sorted(t.hardware or ())
                    row = [t.key, t.value, t.effect, hardware, found.any_value]
                    agents.append([*row, found.agent, line])
            if pod.location != "pod" or pod.node_agent:
                continue
            demand = gpu_demand(pod, registry, claims)
            if not demand.gpu:
                continue
            kinds = {c.hardware for c in demand.claims}
            for entry in demand.entries:
                resource = registry.get(entry.name)
                if resource is not None:
                    kinds.add(resource.hardware)
            tolerations = pod.own_tolerations
            lines = [view.doc.value_span((*base, i)).line for i in range(len(tolerations))]
            keys = [
                [key, [list(s) for s in shapes], line]
                for key, shapes, line in pod_shapes(tolerations, lines)
            ]
            pods.append([sorted(k for k in kinds if isinstance(k, str)), keys])


def _place(source: str) -> tuple[tuple[str, int], ...]:
    label, _, line = source.rpartition(":")
    return ((label, int(line)),) if label and line.isdigit() else ()


def certain_line(taints: Iterable[Taint]) -> str:
    """The configuration line that makes an assumed taint certain."""
    shown = ", ".join(f'"{t}"' for t in taints)
    return f"gpu-taints: [{shown}]"


def platform_name(platform: str) -> str:
    return PLATFORM_NAMES.get(platform, platform)


class Basis(NamedTuple):
    """What a toleration rule knows of the GPU nodes' taints for one pod.

    ``kind``: ``"configured"`` (the configuration describes the cluster or its taints: the
    rule judges as it always did), ``"platform"`` (the pod's node selector names a platform:
    judge with ``cluster``, that platform's profile, and name ``label`` as the reason),
    ``"evidence"`` (the run's files show taints: ``picture``), or ``"assumed"`` (nothing:
    gpulint's default taint, and the finding is a guess).
    """

    kind: str
    cluster: Any = None
    label: str = ""
    picture: Picture | None = None

    def without_evidence(self) -> Basis:
        """What is left when none of the picture's taints applies to the pod."""
        if self.cluster is not None:
            return Basis("platform", self.cluster, self.label)
        return Basis("assumed")

    def platform_note(self) -> str:
        platform = getattr(self.cluster, "platform", None) or ""
        return f"{platform_name(platform)}, from this pod's node selector {self.label}"


def taint_basis(
    pod: PodSpec, cluster: Any, options: Mapping[str, Any], picture: Picture | None
) -> Basis:
    """How sure the rule can be (see :class:`Basis`): configuration first, then the pod's
    own platform, then the run's files, else an assumption."""
    from gpulint.k8s.taints import default_taints_assumed

    if cluster is not None or not default_taints_assumed(options):
        return Basis("configured", cluster)
    found = pod_platform(pod)
    platform = None
    if found is not None:
        from gpulint.cluster.pools import build_cluster

        platform = build_cluster(found[0], ())
    if picture:
        # What the repository shows wins over a platform's defaults; the platform's
        # admission (GKE's ExtendedResourceToleration) still adds its tolerations.
        return Basis("evidence", platform, found[1] if found else "", picture)
    if found is not None:
        return Basis("platform", platform, found[1])
    return Basis("assumed")


def applicable(
    picture: Picture, hardware: Iterable[str] | None, names: Iterable[str] | None = None
) -> list[KnownTaint]:
    """The picture's taints that apply to a pod of ``hardware`` (None: any) that requests
    the resources ``names`` (None: any; a taint keyed by a resource's name applies only to
    a pod that requests it)."""
    wanted = set(hardware) if hardware is not None else None
    requested = set(names) if names is not None else None
    return [
        known
        for known in picture.taints
        if (known.taint.hardware is None or wanted is None or known.taint.hardware & wanted)
        and (known.resource is None or requested is None or known.resource in requested)
    ]
