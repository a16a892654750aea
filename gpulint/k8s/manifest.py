"""One file's view: its documents' Kubernetes objects, pod specs and owners, built once.

The engine lints a file document by document (``loader.stream.DocumentStream``): each document is
composed, linted, handed to suppression and dropped before the next, so a big file holds
one document's nodes at a time. The view follows that shape:

* :class:`Manifest` -- the per-file part: the label, the text and the DRA claim index
  (the only thing that crosses documents: claims and device classes are names, read in a
  first pass only when the text can hold a DRA object, see :func:`gpulint.k8s.dra.may_hold_dra`),
  which each document's view shares and hands to whoever asks about a pod's claims;
* :class:`DocumentView` -- one document's objects (walked once, when the view is built),
  each object's pod specs (found once, on first use) and which object owns a path or a line.

Rules, the suppressor and ``gpulint inspect`` all read the same view: nothing after it walks
a document's objects or computes a pod spec again (the DRA claim pass reads its own,
earlier, composition of the text; tests/test_manifest.py counts the walks). Nothing in the
view points back at it, so a document's nodes and data go as soon as its view does.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence

from gpulint.k8s.chartvalues import named, values_object
from gpulint.k8s.dra import NO_CLAIMS, ClaimIndex, DraFacts, may_hold_dra
from gpulint.k8s.workloads import K8sObject, PodSpec, WorkloadTable, objects
from gpulint.loader.document import Document, Problem
from gpulint.loader.handoff import MAX_TEXT as ONCE_TEXT, Listed, Loaded, pack
from gpulint.loader.stream import DocumentStream
from gpulint.model import ObjectRef, Path


class DocumentView:
    """One document's objects, their pod specs and owners (built once, dropped with it)."""

    __slots__ = ("_pods", "claims", "doc", "objects", "table")

    def __init__(
        self,
        doc: Document,
        table: WorkloadTable,
        claims: ClaimIndex | None = None,
        label: str = "",
    ) -> None:
        self.doc = doc
        self.table = table
        #: The DRA claim index of the file (``Manifest.claims``), passed to whatever asks
        #: whether a pod gets accelerators from a claim (the engine's ``RuleContext.claims``,
        #: ``inspect``); else one over this document's own objects (filled from them, not
        #: walked again). The objects themselves carry no per-file state.
        self.claims = claims if claims is not None else ClaimIndex(())
        #: Every Kubernetes object of the document, outer ones before the List items they
        #: hold: the one walk of the document.
        self.objects: list[K8sObject] = list(objects(doc))
        if claims is None:
            self.claims.fill(self.objects)
        #: Pod specs per object (by its position in ``objects``), found on first use. Kept
        #: here, not on the objects: a pod spec points to its object, and the view, not a
        #: cycle, decides how long they live.
        self._pods: list[list[PodSpec] | None] = [None] * len(self.objects)
        if not self.objects:
            # No object, but a chart's values read as written: the object that stands
            # for them (gpulint.k8s.chartvalues).
            values = values_object(doc, label)
            if values is not None:
                self.objects.append(values[0])
                self._pods.append(None if values[1] else [])

    def __repr__(self) -> str:
        return f"DocumentView(document={self.doc.index}, {len(self.objects)} objects)"

    @property
    def index(self) -> int:
        return self.doc.index

    def pod_specs(self, position: int) -> list[PodSpec]:
        """The pod specs of ``self.objects[position]``, found once."""
        pods = self._pods[position]
        if pods is None:
            pods = self._pods[position] = self.table.pod_specs(self.objects[position])
        return pods

    def items(self) -> Iterator[tuple[K8sObject, list[PodSpec]]]:
        """Every object with its pod specs."""
        for position, obj in enumerate(self.objects):
            yield obj, self.pod_specs(position)

    def owner(self, path: Path) -> ObjectRef | None:
        """The innermost object whose path contains ``path`` (None: outside every object)."""
        best = None
        for obj in self.objects:
            ref = named(obj)  # a chart's values: no object to name
            if ref is not None and path[: len(obj.path)] == obj.path:
                best = ref
        return best

    def owners_at_lines(self, wanted: Sequence[int]) -> dict[int, ObjectRef | None]:
        """The innermost object of each of the sorted ``wanted`` lines (1-based) that the
        document spans; lines outside it are left out of the answer.

        One pass over the objects for all the lines (asking line by line walked every
        object for every stale directive: 10,000 of them took 211 s), and the lines of the
        document found by bisection, so a file's directives cost each document a lookup,
        not a scan.
        """
        if not wanted:
            return {}
        root = self.doc.value_span(())
        lo = bisect.bisect_left(wanted, root.line)
        hi = bisect.bisect_right(wanted, root.end_line)
        pending = wanted[lo:hi]
        best: dict[int, ObjectRef | None] = dict.fromkeys(pending)
        if not pending:
            return best
        for obj in self.objects:
            ref = named(obj)
            if ref is None:  # a chart's values: no object to name
                continue
            span = self.doc.value_span(obj.path)
            first = bisect.bisect_left(pending, span.line)
            last = bisect.bisect_right(pending, span.end_line)
            for line in pending[first:last]:
                best[line] = ref  # later objects are inner ones (List items)
        return best


class Manifest:
    """One file (or stdin stream): its documents, one :class:`DocumentView` at a time."""

    __slots__ = ("_stream", "claims", "kept", "label", "table")

    def __init__(
        self,
        label: str,
        text: str,
        table: WorkloadTable,
        *,
        loaded: bytes | None = None,
        keep: bool = False,
    ) -> None:
        """``loaded``: the file's documents as the facts stage parsed them
        (:mod:`gpulint.loader.handoff`), not parsed again; ``keep``: keep the documents as
        they are read, for :meth:`handed`."""
        self.label = label
        self.table = table
        self._stream: DocumentStream | Loaded | Listed = (
            Loaded(loaded) if loaded is not None else DocumentStream(text, compact=keep)
        )
        #: The documents read so far, when kept (``keep``).
        self.kept: list[Document] | None = [] if keep else None
        # Cross-document lookups (DRA claims) see the documents of the same file; a text
        # that cannot hold a DRA object needs no first pass. Documents already loaded, or a
        # text small enough to hold every document of at once (the handoff's bound), are
        # read once for both; a bigger one is read twice, one document at a time.
        self.claims = NO_CLAIMS
        if may_hold_dra(text):
            if isinstance(self._stream, Loaded) or len(text) <= ONCE_TEXT:
                self._stream = Listed(self._stream)
                self.claims = ClaimIndex(self._stream, label)
            else:
                self.claims = ClaimIndex(DocumentStream(text), label)

    @classmethod
    def of_documents(
        cls,
        documents: Iterable[Document],
        table: WorkloadTable,
        label: str = "",
        run: DraFacts | None = None,
    ) -> list[DocumentView]:
        """Views of documents already loaded (``gpulint inspect``), sharing one claim index
        (``run``: the DRA objects of the file's project)."""
        claims = ClaimIndex((), label, run)
        views = [DocumentView(doc, table, claims, label) for doc in documents]
        claims.fill(obj for view in views for obj in view.objects)
        return views

    def views(self) -> Iterator[DocumentView]:
        """Each document's view in turn; drop it before asking for the next."""
        kept = self.kept
        for doc in self._stream:
            if kept is not None:
                kept.append(doc)
            yield DocumentView(doc, self.table, self.claims, self.label)

    def handed(self) -> bytes | None:
        """The documents read and the text's problems, as the lint can take them instead of
        parsing (after :meth:`views` is done; None: not kept, or they cannot be)."""
        if self.kept is None:
            return None
        return pack(self.kept, self._stream.problems)

    @property
    def problems(self) -> list[Problem]:
        """Problems of the stream outside any document (read after ``views`` is done)."""
        return self._stream.problems
