"""The cluster picture (:class:`Picture`): what the run's files show of the GPU nodes
(:mod:`gpulint.cluster.evidence` gathers it), and the questions a GPU pod asks of it.

A run may hold thousands of node pools, each with taints of its own, and thousands of pods:
nothing a pod asks walks pools x taints. The pools' taints are indexed once per run
(:class:`_Index`); a pod's tolerations become a few sets a taint is looked up in
(:class:`Tolerations`); the taints that apply to a pod (:class:`Agreed`) list the pods'
consensus and test the pools' one at a time; and pods of one shape (tolerations, node
selector, resources) are answered once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.cluster.poolindex import (
    AgentMissing,
    AgentView,
    PoolIndex,
    selectable,
)
from gpulint.k8s.taints import Taint
from gpulint.model import Related, Span

if TYPE_CHECKING:
    from gpulint.cluster.objects import Pool
    from gpulint.k8s.objects import PodSpec

#: Places a message lists at most.
_SHOWN = 3
#: Places of evidence kept per taint (the count is kept whole).
_KEPT = 20


class Evidence(NamedTuple):
    """A fact about the GPU nodes and where the files say it."""

    #: What it is, for a message ("tolerated by 3 GPU pods of this project").
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


class Disputed(NamedTuple):
    """A taint key the project's GPU pods tolerate, but in ways no one taint satisfies."""

    key: str
    evidence: Evidence


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
    #: The evidence tolerates the key with no effect: the taint's effect is unknown, and a
    #: toleration of either effect will do.
    any_effect: bool = False
    #: For the pods' consensus: how many GPU pods tolerate it, of how many in the project.
    witnesses: int = 0
    pods: int = 0
    #: For a pool's taint: the hardware of the pool's accelerators (None: unknown), whose
    #: node agents alone it holds (GPU023).
    vendors: frozenset[str] | None = None

    def unanimous(self) -> bool:
        """Every other GPU pod of the project (at least two) tolerates this consensus taint:
        the pod judged, which misses it, is the only one that does not."""
        return not self.pooled and self.witnesses >= 2 and self.witnesses >= self.pods - 1

    def tolerated_by(self, tolerations: Sequence[Any]) -> bool:
        """Whether a pod with these tolerations gets onto nodes with this taint, leniently:
        with an unknown value, any toleration of the key (or a blanket one) will do."""
        from gpulint.k8s.taints import tolerates

        for toleration in tolerations:
            if not isinstance(toleration, Mapping):
                continue
            if tolerates(toleration, self.taint):
                return True
            if toleration.get("key") != self.taint.key or not (self.any_value or self.any_effect):
                continue
            operator = toleration.get("operator") or "Equal"
            value_ok = operator == "Exists" or (
                operator == "Equal"
                and (self.any_value or (toleration.get("value") or "") == self.taint.value)
            )
            effect = toleration.get("effect")
            effect_ok = (
                not effect
                or effect == self.taint.effect
                or (self.any_effect and effect in ("NoSchedule", "NoExecute"))
            )
            if value_ok and effect_ok:
                return True
        return False

    def shown(self) -> str:
        if self.any_effect:
            return self.taint.key if self.any_value else f"{self.taint.key}={self.taint.value}"
        return f"{self.taint.key}:{self.taint.effect}" if self.any_value else str(self.taint)


def _applies(
    known: KnownTaint, hardware: frozenset[str] | None, names: frozenset[str] | None
) -> bool:
    """Whether a taint of the picture applies to a pod of ``hardware`` that requests the
    resources ``names`` (None: any; see :func:`applicable`)."""
    return (
        known.taint.hardware is None or hardware is None or bool(known.taint.hardware & hardware)
    ) and (known.resource is None or names is None or known.resource in names)


class Agreed(NamedTuple):
    """The picture's taints (a node agent's left out) that apply to one GPU pod
    (:meth:`Picture.agreed`): the pods' consensus listed, the pools' tested one at a time
    through the picture's index (a run may have thousands of pools: nothing per pod walks
    them all)."""

    #: The consensus taints that apply, in the picture's order.
    own: tuple[KnownTaint, ...]
    hardware: frozenset[str] | None
    names: frozenset[str] | None
    #: Some pool taint applies too.
    pooled: bool

    def __bool__(self) -> bool:
        return bool(self.own) or self.pooled

    def applies(self, known: KnownTaint) -> bool:
        return _applies(known, self.hardware, self.names)


class _Index:
    """The picture's taints indexed once, so that what a pod asks of them costs the pod's
    own size and the pools it may land on, never pools x taints (a hostile file of
    thousands of node pools stays linear)."""

    __slots__ = (
        "agents",
        "by_key",
        "by_key_value",
        "consensus",
        "first",
        "hardware_only",
        "memo",
        "plain",
        "pool_dirs",
        "pool_folders",
        "pool_keys",
        "pooled",
        "pools",
        "resources",
        "unagented",
    )

    def __init__(self, taints: Sequence[KnownTaint]) -> None:
        #: Pool taint -> (position in the picture, known taint); a key is known once.
        self.pooled: dict[Taint, tuple[int, KnownTaint]] = {}
        self.consensus: tuple[KnownTaint, ...] = tuple(
            k for k in taints if not k.pooled and not k.agent
        )
        self.plain = False  # a pool taint for every accelerator
        self.resources: dict[str, KnownTaint] = {}  # pool taints keyed by a resource's name
        self.hardware_only: set[str] = set()  # hardware of pool taints of no resource
        for position, known in enumerate(taints):
            if not known.pooled:
                continue
            self.pooled[known.taint] = (position, known)
            if known.resource is not None:
                self.resources[known.resource] = known
            elif known.taint.hardware is None:
                self.plain = True
            else:
                self.hardware_only.update(known.taint.hardware)
        #: The taints GPU021 holds a CPU pod's tolerations to (a node agent's left out),
        #: by key and by key and value.
        self.unagented: tuple[KnownTaint, ...] = tuple(k for k in taints if not k.agent)
        self.by_key: dict[str, list[Taint]] = {}
        self.by_key_value: dict[tuple[str, str], list[Taint]] = {}
        for taint in (k.taint for k in self.unagented):
            self.by_key.setdefault(taint.key, []).append(taint)
            self.by_key_value.setdefault((taint.key, taint.value), []).append(taint)
        #: The first taint a toleration tolerates (:meth:`Picture.first_tolerated`).
        self.first: dict[tuple[str, str, str, str], Taint | None] = {}
        #: What :meth:`Picture.untolerated` and :meth:`Picture.reaches` said of a pod's shape.
        self.memo: dict[tuple[Any, ...], Any] = {}
        #: The keys of the pools' taints (:meth:`Picture.pool_keys`), on the first question.
        self.pool_keys: frozenset[str] | None = None
        #: Every folder (as its path's parts) holding a pool's file, at any depth, with the
        #: first such file (:meth:`Picture.nearer_pool`), on the first question.
        self.pool_folders: dict[tuple[str, ...], str] | None = None
        #: The folders (as their paths' parts) that hold a pool's file
        #: (:meth:`Picture.pool_elsewhere`), on the first question.
        self.pool_dirs: frozenset[tuple[str, ...]] | None = None
        #: The pools indexed (:class:`PoolIndex`), on the first question about them.
        self.pools: PoolIndex | None = None
        #: The taints that apply to a node agent, per agent hardware (:class:`AgentView`).
        self.agents: dict[str | None, AgentView] = {}

    def pooled_applies(self, hardware: frozenset[str] | None, names: frozenset[str] | None) -> bool:
        """Some pool taint applies to a pod of ``hardware`` requesting ``names``."""
        if self.plain:
            return True
        if hardware is None and self.hardware_only:
            return True
        if hardware is not None and not self.hardware_only.isdisjoint(hardware):
            return True
        found = (
            self.resources.values()
            if names is None
            else (self.resources[n] for n in names if n in self.resources)
        )
        return any(_applies(k, hardware, names) for k in found)


class Picture:
    """What the run's files say about the GPU nodes (empty: nothing)."""

    __slots__ = (
        "_index",
        "_runtime",
        "disputed",
        "gpu_pods",
        "pod_webhooks",
        "pools",
        "queue_tolerations",
        "runtime_tolerations",
        "taints",
    )

    def __init__(
        self,
        taints: tuple[KnownTaint, ...] = (),
        gpu_pods: int = 0,
        queue_tolerations: tuple[Mapping[str, str], ...] = (),
        pools: tuple[Pool, ...] = (),
        disputed: tuple[Disputed, ...] = (),
        runtime_tolerations: tuple[tuple[str, Mapping[str, Any]], ...] = (),
        pod_webhooks: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.taints = taints
        #: GPU pods the pre-pass saw (for ``inspect``).
        self.gpu_pods = gpu_pods
        #: Tolerations Kueue's ResourceFlavors of the files give the pods it admits.
        self.queue_tolerations = queue_tolerations
        #: The node pools of the files (:class:`gpulint.cluster.objects.Pool`), for ``inspect``.
        self.pools = pools
        #: Taint keys the GPU pods tolerate in ways no one taint satisfies: no consensus.
        self.disputed = disputed
        #: The files' RuntimeClasses' ``scheduling.tolerations``, as (class name, toleration).
        self.runtime_tolerations = runtime_tolerations
        #: The files' mutating webhooks that change pods as they are created, as (webhook
        #: name, ``file:line``): one may add a toleration a pod lacks.
        self.pod_webhooks = pod_webhooks
        self._runtime: dict[str, list[Mapping[str, Any]]] | None = None
        self._index: _Index | None = None

    def __bool__(self) -> bool:
        return bool(self.taints)

    def disputes(self) -> str:
        """`` (the GPU pods of this project tolerate different taints of sku: a.yaml:9, …)``
        for a finding that assumes, or ``""``."""
        if not self.disputed:
            return ""
        shown = "; ".join(f"{d.key}: {d.evidence.cited()}" for d in self.disputed[:2])
        return f" (the GPU pods of this project tolerate different taints of {shown})"

    def runtime_class_tolerations(self, runtime_class: Any) -> list[Mapping[str, Any]]:
        """The tolerations the RuntimeClass ``runtime_class`` (a pod's
        ``runtimeClassName``) of the files adds to the pod at admission."""
        if not isinstance(runtime_class, str) or not self.runtime_tolerations:
            return []
        if self._runtime is None:  # one lookup a pod, however many classes
            self._runtime = {}
            for name, toleration in self.runtime_tolerations:
                self._runtime.setdefault(name, []).append(toleration)
        return self._runtime.get(runtime_class, [])

    def _fields(self) -> tuple[Any, ...]:
        return (
            self.taints,
            self.gpu_pods,
            self.queue_tolerations,
            self.pools,
            self.disputed,
            self.runtime_tolerations,
            self.pod_webhooks,
        )

    def __reduce__(self) -> tuple[Any, ...]:  # to a worker process, without the index
        return (Picture, self._fields())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Picture):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # it holds mappings

    def __repr__(self) -> str:
        return (
            f"Picture({len(self.taints)} taints, {self.gpu_pods} GPU pods, {len(self.pools)} pools)"
        )

    def _indexed(self) -> _Index:
        if self._index is None:
            self._index = _Index(self.taints)
        return self._index

    def agreed(self, hardware: Iterable[str] | None, names: Iterable[str] | None) -> Agreed:
        """The picture's taints, a node agent's left out, that apply to a pod of ``hardware``
        requesting ``names`` (:func:`applicable`), without listing the pools' taints."""
        index = self._indexed()
        wanted = frozenset(hardware) if hardware is not None else None
        requested = frozenset(names) if names is not None else None
        own = tuple(k for k in index.consensus if _applies(k, wanted, requested))
        return Agreed(own, wanted, requested, index.pooled_applies(wanted, requested))

    def binds(self, pod: PodSpec) -> bool:
        """Whether the pod's node selector or required node affinity holds it to node pools
        of the files: it asks for a pool-name label of theirs (``karpenter.sh/nodepool``,
        ``eks.amazonaws.com/nodegroup``, ...) or a label their nodes' template sets that no
        node gets by itself (not a ``kubernetes.io`` or ``karpenter.sh`` one). A pool of the
        files proves its own nodes are tainted, not that the files list every pool: only a
        pod held to that pool is certain to meet its taints (:mod:`gpulint.cluster.binding`)."""
        from gpulint.cluster.binding import binds

        if not self.pools:
            return False
        return binds(self._pool_index(), pod)

    def nearer_pool(self, label: str, pool_label: str) -> str | None:
        """The file of a node pool of the files (of any nodes) that shares more of
        ``label``'s folders than ``pool_label`` (a GPU pool's file) does, if any: the folder
        of ``label`` has pools of its own, so the pool of ``pool_label`` may be another
        cluster's, of a repository that holds several (a folder per cluster, each with its
        pools). None: none is nearer, or no file is named. The pools' folders are indexed
        once (their paths' length in all); a question costs its own path's length."""
        if not label or not pool_label:
            return None
        index = self._indexed()
        if index.pool_folders is None:
            folders: dict[tuple[str, ...], str] = {}
            for pool in self.pools:
                where = _pool_file(pool.source)
                parts = _folders(where)
                for depth in range(len(parts) + 1):
                    folders.setdefault(tuple(parts[:depth]), where)
            index.pool_folders = folders
        here = _folders(label)
        shared = _shared(here, _folders(pool_label))
        if shared >= len(here):
            return None  # the pool's file is in the agent's own folder, or below it
        # A pool's file under the agent's folders one level deeper than the two share.
        return index.pool_folders.get(tuple(here[: shared + 1]))

    def pool_elsewhere(self, label: str, pool_label: str) -> bool:
        """Whether the pool of ``pool_label`` may be another cluster's than that of the file
        ``label``: the files describe node pools in more than one folder (a repository with a
        folder per cluster: a Terraform root per cloud), and the pool's folder is not the
        file's own or one above it. The pools' folders are gathered once."""
        if not label or not pool_label:
            return False
        index = self._indexed()
        if index.pool_dirs is None:
            index.pool_dirs = frozenset(
                tuple(_folders(_pool_file(pool.source))) for pool in self.pools
            )
        if len(index.pool_dirs) < 2:
            return False
        pool_dir, here = _folders(pool_label), _folders(label)
        return here[: len(pool_dir)] != pool_dir

    def pool_keys(self) -> frozenset[str]:
        """The keys of every taint of the files' node pools, gathered once per run (a
        finding asks; each walked every pool: pods x pools)."""
        index = self._indexed()
        if index.pool_keys is None:
            index.pool_keys = frozenset(t.key for p in self.pools for t in p.taints)
        return index.pool_keys

    def unagented(self) -> tuple[KnownTaint, ...]:
        """The picture's taints, a node agent's left out, in order (GPU021's evidence)."""
        return self._indexed().unagented

    def agent_missing(
        self, hardware: str | None, tolerations: Sequence[Any]
    ) -> AgentMissing | None:
        """What a node agent of ``hardware`` (None: every vendor's) misses of the picture's
        taints that apply to it (GPU023): found through indexes by key and by value, so an
        agent costs its own tolerations and the taints it is told about, not every taint of
        the picture (None: past :data:`POOL_BUDGET` taints skipped; the picture is no
        evidence for that agent)."""
        index = self._indexed()
        view = index.agents.get(hardware)
        if view is None:
            view = index.agents[hardware] = AgentView(self.taints, hardware)
        return view.missing(tolerations)

    def first_tolerated(self, toleration: Any) -> Taint | None:
        """The first of :meth:`unagented` a toleration tolerates (None: none), found through
        the index by key, or by key and value."""
        from gpulint.k8s.taints import tolerates

        if not isinstance(toleration, Mapping):
            return None
        index = self._indexed()
        # As ToleratesTaint reads them: a field that is not text is empty.
        key, operator, value, effect = (
            v if isinstance(v, str) else ""
            for v in (toleration.get(f) for f in ("key", "operator", "value", "effect"))
        )
        fields = (key, operator, value, effect)
        if fields in index.first:
            return index.first[fields]
        pool: Iterable[Taint] = (k.taint for k in index.unagented)
        if key and operator == "Exists":
            pool = index.by_key.get(key, ())
        elif key and operator in ("", "Equal"):
            pool = index.by_key_value.get((key, value), ())
        found = next((t for t in pool if tolerates(toleration, t)), None)
        index.first[fields] = found
        return found

    def candidates(self, agreed: Agreed, pod: PodSpec, names: Iterable[str]) -> list[Pool]:
        """The GPU pools of the files the pod may land on: they offer what it asks for
        (``names``; none: any accelerator) and its node selector does not rule them out."""
        return list(self._candidates(agreed, pod, names))

    def _candidates(self, agreed: Agreed, pod: PodSpec, names: Iterable[str]) -> Iterator[Pool]:
        from gpulint.cluster.catalog import INSTANCE_TYPE_LABEL
        from gpulint.cluster.poolkinds import pool_labels

        index = self._indexed()
        pooled = index.pooled
        wanted = frozenset(names)
        selector = pod.spec.get("nodeSelector")
        keys = pool_labels()
        for p in self.pools:
            if (
                (p.gpus or any(t in pooled and agreed.applies(pooled[t][1]) for t in p.taints))
                and (not wanted or not p.resources or not wanted.isdisjoint(p.resources))
                and selectable(p, selector, keys, INSTANCE_TYPE_LABEL)
            ):
                yield p

    def reaches(self, agreed: Agreed, pod: PodSpec, names: Iterable[str]) -> bool:
        """Whether the ``agreed`` taints say anything of the nodes the pod may get: the pods'
        consensus does, a pool's taints only when the pod may land on some pool of the files."""
        if agreed.own:
            return True
        key = _shape("reaches", agreed, (), pod, names)
        memo = self._indexed().memo
        if key is not None and key in memo:
            return bool(memo[key])
        found = self._pool_index().reaches(agreed, pod, frozenset(names))
        if key is not None:
            memo[key] = found
        return found

    def takes_as_is(
        self, agreed: Agreed, pod: PodSpec, names: Iterable[str], tolerations: Sequence[Any]
    ) -> bool:
        """Whether a GPU pool of the files that may take the pod (:meth:`candidates`) has no
        taint it misses: the pod lands there as it is, whatever a default taint says."""
        if not self.pools:
            return False
        return self._pool_index().takes_as_is(agreed, pod, frozenset(names), tolerations)

    def untolerated(
        self, agreed: Agreed, tolerations: Sequence[Any], pod: PodSpec, names: Iterable[str]
    ) -> list[KnownTaint]:
        """The ``agreed`` taints that keep the pod off the GPU nodes. A pod needs one GPU
        pool, not all: of the pools' taints, only those of the :meth:`candidates` pool it
        misses fewest of count (none when it tolerates one pool's, or has no candidate).
        Pods of one shape (the same tolerations, node selector, resources) are answered once."""
        key = _shape("untolerated", agreed, tolerations, pod, names)
        memo = self._indexed().memo
        if key is not None and key in memo:
            return list(memo[key])
        found = self._untolerated(agreed, tolerations, pod, names)
        if key is not None:
            memo[key] = tuple(found)
        return found

    def _pool_index(self) -> PoolIndex:
        index = self._indexed()
        if index.pools is None:
            index.pools = PoolIndex(self.pools, index.pooled)
        return index.pools

    def _untolerated(
        self, agreed: Agreed, tolerations: Sequence[Any], pod: PodSpec, names: Iterable[str]
    ) -> list[KnownTaint]:
        own = [k for k in agreed.own if not k.tolerated_by(tolerations)]
        if not agreed.pooled:
            return own
        best = self._pool_index().fewest_missed(agreed, tolerations, pod, frozenset(names))
        return own + (best or [])


def _frozen(value: Any) -> Any:
    """A hashable copy of a toleration list or a node selector, one level of mappings deep
    (None: something deeper, which is answered without the memo)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        items = []
        for k, v in value.items():
            if not isinstance(k, str) or not (v is None or isinstance(v, (str, int, float, bool))):
                return None
            items.append((k, type(v).__name__, v))
        return ("map", tuple(items))
    return None


def _shape(
    what: str, agreed: Agreed, tolerations: Sequence[Any], pod: PodSpec, names: Iterable[str]
) -> tuple[Any, ...] | None:
    """What :meth:`Picture.untolerated` and :meth:`Picture.reaches` read of a pod, as a memo
    key (None: not memoizable)."""
    frozen = []
    for toleration in tolerations:
        f = _frozen(toleration)
        if f is None and toleration is not None:
            return None
        frozen.append(f)
    selector = pod.spec.get("nodeSelector")
    shown = _frozen(selector)
    if shown is None and selector is not None:
        return None
    # ``agreed.own`` follows from the hardware and the names.
    return (what, agreed.hardware, agreed.names, tuple(frozen), shown, tuple(names))


def _pool_file(source: str) -> str:
    """The file of a pool's ``source`` (``file:line``, or the file alone)."""
    return source.rpartition(":")[0] or source


def _folders(label: str) -> list[str]:
    """The folders of a file's label, outermost first."""
    return label.replace("\\", "/").split("/")[:-1]


def _shared(a: list[str], b: list[str]) -> int:
    """How many leading folders ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
