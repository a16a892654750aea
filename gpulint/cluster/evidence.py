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

The facts come from a pre-pass over the files to lint (as the node-pool objects do, so every
worker process and every file sees the same picture). Only files whose bytes hold
``tolerations`` are parsed for it; the other files that name an accelerator are parsed (to
count their GPU pods) only when some taint has the two pods a consensus needs, so a run whose
files tolerate nothing costs one read of each file. Standard input is not pre-read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.cluster.agenttaints import AgentTally
from gpulint.cluster.platforms import PLATFORM_NAMES, platform_of_label
from gpulint.k8s.objects import expression_key_path, required_node_terms
from gpulint.k8s.taints import Taint, capacity_taint
from gpulint.model import Related, Span

if TYPE_CHECKING:
    from gpulint.cluster.objects import Found, Pool
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.objects import PodSpec
    from gpulint.k8s.workloads import WorkloadTable

#: Taint keys every cluster's nodes may carry: tolerating them says nothing of GPU nodes.
_GENERIC_PREFIXES = ("node.kubernetes.io/", "node-role.kubernetes.io/", "node.cloudprovider")
_GENERIC_KEYS = frozenset(
    {
        "CriticalAddonsOnly",
        "ToBeDeletedByClusterAutoscaler",
        # GKE's own, on nodes of one feature (queued provisioning), not of every GPU pool.
        "cloud.google.com/gke-queued",
    }
)
#: Bytes (lower case) one of which a file with a GPU pod holds: other files are not parsed.
_GPU_HINTS = (b"gpu", b"neuron", b"tpu", b"gaudi", b"ascend", b"resourceclaim", b"mig-")


def _hints() -> re.Pattern[bytes]:
    """:data:`_GPU_HINTS` in any case, searched without a lower-cased copy of the file."""
    global _HINTS
    if _HINTS is None:
        _HINTS = re.compile(b"|".join(re.escape(h) for h in _GPU_HINTS), re.IGNORECASE)
    return _HINTS


_HINTS: re.Pattern[bytes] | None = None
#: Places a message lists at most.
_SHOWN = 3
#: Places of evidence kept per taint (the count is kept whole).
_KEPT = 20


class Evidence(NamedTuple):
    """A fact about the GPU nodes and where the files say it."""

    #: What it is, for a message ("tolerated by 3 GPU pods of this run").
    what: str
    #: Where: ``(file, line)`` pairs, in the order met.
    places: tuple[tuple[str, int], ...]

    def related(self, message: str) -> tuple[Related, ...]:
        return tuple(
            Related("evidence", label, Span(line, 1, line, 1), message)
            for label, line in self.places[:_KEPT]
        )

    def cited(self) -> str:
        """``a.yaml:9, b.yaml:12, …``: the first places, for a message."""
        shown = ", ".join(f"{label}:{line}" for label, line in self.places[:_SHOWN])
        return shown + (", …" if len(self.places) > _SHOWN else "")


class KnownTaint(NamedTuple):
    """A taint the files show the GPU nodes carry. ``any_value``: the evidence tolerates
    the key with ``Exists``, so the taint's value is unknown and any value matches."""

    taint: Taint
    any_value: bool
    evidence: Evidence
    #: The taint's key is an accelerator resource's name (``nvidia.com/mig-4g.96gb``: the
    #: ExtendedResourceToleration convention): it is on the nodes of that resource only.
    resource: str | None = None
    #: It is a taint of a node pool in the files (not of the pods' consensus): it is on the
    #: nodes of that pool only.
    pooled: bool = False
    #: It is a taint a vendor's node agent of the files tolerates (weaker evidence).
    agent: bool = False

    def tolerated_by(self, tolerations: Sequence[Any]) -> bool:
        """Whether a pod with these tolerations gets onto nodes with this taint, leniently:
        with an unknown value, any toleration of the key (or a blanket one) will do."""
        from gpulint.k8s.taints import tolerates

        for toleration in tolerations:
            if not isinstance(toleration, Mapping):
                continue
            if tolerates(toleration, self.taint):
                return True
            if (
                self.any_value
                and toleration.get("key") == self.taint.key
                and toleration.get("operator", "Equal") in ("Equal", "Exists")
            ):
                effect = toleration.get("effect")
                if not effect or effect == self.taint.effect:
                    return True
        return False

    def shown(self) -> str:
        return f"{self.taint.key}:{self.taint.effect}" if self.any_value else str(self.taint)


class Picture(NamedTuple):
    """What the run's files say about the GPU nodes (empty: nothing)."""

    taints: tuple[KnownTaint, ...] = ()
    #: GPU pods the pre-pass saw (for ``inspect``).
    gpu_pods: int = 0
    #: Tolerations Kueue's ResourceFlavors of the files give the pods it admits.
    queue_tolerations: tuple[Mapping[str, str], ...] = ()
    #: The node pools of the files (:class:`gpulint.cluster.objects.Pool`), for ``inspect``.
    pools: tuple[Pool, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.taints)

    def candidates(
        self, agreed: Sequence[KnownTaint], pod: PodSpec, names: Iterable[str]
    ) -> list[Pool]:
        """The GPU pools of the files the pod may land on: they offer what it asks for
        (``names``; none: any accelerator) and its node selector does not rule them out."""
        wanted = set(names)
        return [
            p
            for p in self.pools
            if (p.gpus or any(k.pooled and k.taint in p.taints for k in agreed))
            and (not wanted or not p.resources or wanted & set(p.resources))
            and _selectable(p, pod.spec.get("nodeSelector"))
        ]

    def reaches(self, agreed: Sequence[KnownTaint], pod: PodSpec, names: Iterable[str]) -> bool:
        """Whether the ``agreed`` taints say anything of the nodes the pod may get: the pods'
        consensus does, a pool's taints only when the pod may land on some pool of the files."""
        return any(not k.pooled for k in agreed) or bool(self.candidates(agreed, pod, names))

    def untolerated(
        self, agreed: Sequence[KnownTaint], tolerations: Sequence[Any], pod: PodSpec,
        names: Iterable[str],
    ) -> list[KnownTaint]:  # fmt: skip
        """The ``agreed`` taints that keep the pod off the GPU nodes. A pod needs one GPU
        pool, not all: of the pools' taints, only those of the :meth:`candidates` pool it
        misses fewest of count (none when it tolerates one pool's, or has no candidate)."""
        from gpulint.k8s.taints import tolerates

        left = [k for k in agreed if not k.tolerated_by(tolerations)]
        own = [k for k in left if not k.pooled]
        if len(own) == len(left):
            return left
        best: list[KnownTaint] | None = None
        for pool in self.candidates(agreed, pod, names):
            enforced = [t for t in pool.taints if t.effect in ("NoSchedule", "NoExecute")]
            if all(any(tolerates(t2, t) for t2 in tolerations) for t in enforced):
                return own
            missed = [k for k in left if k.pooled and k.taint in enforced]
            if missed and (best is None or len(missed) < len(best)):
                best = missed
        return own + (best or [])


def _selectable(pool: Pool, selector: Any) -> bool:
    """Whether a pod's node selector may pick the pool: no label of the pool's says
    otherwise, a pool-name label it asks for (``eks.amazonaws.com/nodegroup``) is the pool's,
    and an instance type it asks for is one of the pool's (when the pool names its types)."""
    from gpulint.cluster.catalog import INSTANCE_TYPE_LABEL
    from gpulint.cluster.poolkinds import pool_labels

    if not isinstance(selector, Mapping):
        return True
    labels = pool.labels
    for key, value in selector.items():
        if key in labels and labels[key] != value:
            return False
        if key not in labels and key in pool_labels():
            return False
        if key == INSTANCE_TYPE_LABEL and pool.instance_types and value not in pool.instance_types:
            return False
    return True


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


def _generic(key: str) -> bool:
    """Keys every cluster's nodes may carry, and Spot or preemptible capacity taints
    (:data:`gpulint.k8s.taints.CAPACITY_TAINT_KEYS`): neither is the GPU nodes' taint."""
    return key in _GENERIC_KEYS or key.startswith(_GENERIC_PREFIXES) or capacity_taint(key)


class _Tally:
    """Tolerations of the run's GPU pods, per taint key (each pod counted once a key)."""

    __slots__ = ("keys", "pods")

    def __init__(self) -> None:
        self.pods = 0
        #: key -> (effect -> count, value -> count (None: Exists), places, hardware)
        self.keys: dict[str, tuple[dict[str, int], dict[str | None, int], list[Any], set[str]]] = {}

    def add(
        self,
        label: str,
        tolerations: Sequence[Any],
        lines: Sequence[int],
        hardware: Iterable[str] = (),
    ) -> None:
        self.pods += 1
        seen: set[str] = set()
        for toleration, line in zip(tolerations, lines, strict=True):
            if not isinstance(toleration, Mapping):
                continue
            key = toleration.get("key")
            if not isinstance(key, str) or not key or _generic(key) or key in seen:
                continue
            effect = toleration.get("effect") or "NoSchedule"
            if not isinstance(effect, str) or effect not in ("NoSchedule", "NoExecute"):
                continue
            operator = toleration.get("operator") or "Equal"
            if operator not in ("Equal", "Exists"):
                continue  # GPU022's: the API server rejects it
            raw = toleration.get("value")
            if operator == "Equal" and raw is not None and not isinstance(raw, str):
                continue
            value = (raw or "") if operator == "Equal" else None
            seen.add(key)
            effects, values, places, kinds = self.keys.setdefault(key, ({}, {}, [], set()))
            effects[effect] = effects.get(effect, 0) + 1
            values[value] = values.get(value, 0) + 1
            places.append((label, line))
            kinds.update(hardware)

    def agreed(self) -> list[KnownTaint]:
        out = []
        for key, (effects, values, places, kinds) in self.keys.items():
            count = len(places)
            if count < 2 or count * 2 <= self.pods:
                continue
            effect = max(effects, key=lambda e: (effects[e], e == "NoSchedule"))
            value = max(values, key=lambda v: (values[v], v is not None))
            taint = Taint(key, value or "", effect, frozenset(kinds) or None)
            what = f"tolerated by {count} of the {self.pods} GPU pods of this run"
            out.append(KnownTaint(taint, value is None, Evidence(what, tuple(places)), key))
        return out


class Gatherer:
    """The pre-pass: :meth:`add` each file's bytes, then :meth:`picture`."""

    __slots__ = ("_agents", "_registry", "_table", "_tally")

    def __init__(self, registry: Registry, table: WorkloadTable) -> None:
        self._registry = registry
        self._table = table
        self._tally = _Tally()
        self._agents = AgentTally()  # the vendor taints node agents tolerate

    def add(self, label: str, raw: bytes) -> bool:
        """The tolerations of the file's GPU pods, for a file that holds ``tolerations``
        (one that cannot be read adds nothing: the lint reports it). True: the file holds
        none but may hold GPU pods, which count only if some taint may be agreed on
        (:meth:`wants_counts`, then :meth:`count`): a run whose files tolerate nothing is
        not parsed twice."""
        if b"tolerations" not in raw:
            return _hints().search(raw) is not None
        self._walk(label, raw, record=True)
        return False

    def wants_counts(self) -> bool:
        """Some taint has the two GPU pods a consensus needs: the other GPU pods decide."""
        return any(len(places) >= 2 for _, _, places, _ in self._tally.keys.values())

    def count(self, label: str, raw: bytes) -> None:
        """The GPU pods of a file :meth:`add` set aside (they tolerate nothing)."""
        self._walk(label, raw, record=False)

    def _walk(self, label: str, raw: bytes, record: bool) -> None:
        from gpulint.k8s.manifest import Manifest
        from gpulint.k8s.resources import gpu_demand
        from gpulint.loader.decoding import decode

        text, problem = decode(raw)
        if text is None or problem is not None:
            return
        try:
            manifest = Manifest(label, text, self._table)
            for view in manifest.views():
                for _, pods in view.items():
                    for pod in pods:
                        if pod.node_agent and record and pod.location == "pod":
                            self._agents.add(label, pod, self._registry, view.doc)
                        if pod.location != "pod" or pod.node_agent:
                            continue
                        demand = gpu_demand(pod, self._registry, manifest.claims)
                        if not demand.gpu:
                            continue
                        if not record:
                            self._tally.pods += 1
                            continue
                        hardware = {c.hardware for c in demand.claims}
                        for entry in demand.entries:
                            resource = self._registry.get(entry.name)
                            if resource is not None:
                                hardware.add(resource.hardware)
                        tolerations = pod.own_tolerations
                        base = (*pod.path, "tolerations")
                        lines = [
                            view.doc.value_span((*base, i)).line for i in range(len(tolerations))
                        ]
                        self._tally.add(label, tolerations, lines, hardware)
        except Exception:  # the lint reports what cannot be read
            return

    def picture(self, found: Found | None = None) -> Picture:
        """What the files said, with the GPU node pools ``found`` in them
        (:func:`gpulint.cluster.objects.scan`)."""
        taints = [
            t._replace(resource=t.resource if self._registry.is_accelerator(t.taint.key) else None)
            for t in self._tally.agreed()
        ]
        known = {t.taint.key for t in taints}
        for taint, any_value, what, places in self._agents.rows(known):
            key = taint.key if self._registry.is_accelerator(taint.key) else None
            taints.append(KnownTaint(taint, any_value, Evidence(what, places), key, agent=True))
        pools = found.pools if found is not None else ()
        for pool in pools:
            # A GPU pool: it makes GPU nodes, or a taint is keyed by an accelerator resource
            # (the ExtendedResourceToleration convention: nvidia.com/gpu:NoSchedule).
            accelerated = [t.key for t in pool.taints if self._registry.is_accelerator(t.key)]
            if not pool.gpus and not accelerated:
                continue
            for taint in pool.taints:
                if taint.effect not in ("NoSchedule", "NoExecute") or taint.key in known:
                    continue
                known.add(taint.key)
                what = f"a taint of the GPU {pool.shown()} in this run's files"
                resource = taint.key if taint.key in accelerated else None
                evidence = Evidence(what, _place(pool.source))
                taints.append(KnownTaint(taint, False, evidence, resource, pooled=True))
        queue = found.tolerations if found is not None else ()
        return Picture(tuple(taints), self._tally.pods, queue, pools)


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


def basis(pod: PodSpec, cluster: Any, options: Mapping[str, Any], picture: Picture | None) -> Basis:
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
