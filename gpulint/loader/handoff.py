"""A file's documents, loaded once, handed from the facts stage to the lint.

The facts stage (:mod:`gpulint.lint.gather`) parses the files whose tolerations, device
plugins or GPU pods say something of the cluster; when the run lints such a file too, the
documents that parse built are handed to the lint instead of being parsed again. They cross
as bytes: a worker process of the facts stage sends them to the process that lints (forked
workers inherit them). The documents' side tables then hold packed spans
(``DocumentStream(compact=True)``), so what is kept is plain data: lists, dictionaries,
strings, numbers and spans.

The bytes are :mod:`pickle`'s, made by this run from what it parsed and read back by this
run only, never written anywhere nor read from a file: no bytes of the linted tree are ever
unpickled (the project's cache, which a pull request can write, is signed JSON:
:mod:`gpulint.util.shards`).

Bounded: a text over :data:`MAX_TEXT` characters, or one that may nest deeper than the
composer reads on this thread (``INLINE_LEVELS``), is not handed over (the lint parses it);
pickle's own recursion stops at the interpreter's limit (a RecursionError: the documents
are not handed over either); a run hands over at most :data:`MAX_RUN_BYTES` in all.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpulint.loader.document import Loads

if TYPE_CHECKING:
    from gpulint.loader.document import Document, Problem
    from gpulint.loader.stream import DocumentStream
    from gpulint.util.discover import Target

#: Texts larger than this are parsed by the lint itself (a big file's documents are never
#: all held at once: gpulint.loader.stream).
MAX_TEXT = 256 * 1024
#: At most this many bytes of documents (and of the files they were read from) are kept in
#: one run, whatever its projects; the files past it are parsed by the lint (as every file
#: was before).
MAX_RUN_BYTES = 64 * 1024 * 1024


def wanted(text: str) -> bool:
    """Whether ``text``'s documents may be handed over (its size and nesting)."""
    if len(text) > MAX_TEXT:
        return False
    from gpulint.loader.compose import INLINE_LEVELS, nesting_bound

    return nesting_bound(text) <= INLINE_LEVELS


def pack(documents: list[Document], problems: list[Problem]) -> bytes | None:
    """The documents of a text, read to its end, and the text's own problems, as bytes
    (None: they cannot be, and the lint parses the text)."""
    import pickle  # not on a plain check's start-up path

    try:
        return pickle.dumps((documents, problems), protocol=pickle.HIGHEST_PROTOCOL)
    except (RecursionError, pickle.PicklingError, TypeError, AttributeError):
        return None


class Loaded:
    """What :func:`pack` kept, iterated as a :class:`~gpulint.loader.stream.DocumentStream`
    is: the documents in order, and the text's problems (complete from the start)."""

    __slots__ = ("_documents", "problems")

    def __init__(self, blob: bytes) -> None:
        import pickle

        documents, problems = pickle.loads(blob)  # this run's own bytes (module docstring)
        self._documents: list[Document] = documents
        self.problems: list[Problem] = problems

    def __iter__(self) -> Iterator[Document]:
        documents, self._documents = self._documents[::-1], []
        while documents:  # each document dropped here once the caller is done with it
            yield documents.pop()


class Listed:
    """The documents of a stream (a :class:`~gpulint.loader.stream.DocumentStream` or
    :class:`Loaded`), read once, when first iterated, and kept: a small text whose documents
    are read twice (a DRA file's claims, then its documents) is parsed once."""

    __slots__ = ("_documents", "_stream")

    def __init__(self, stream: DocumentStream | Loaded) -> None:
        self._stream = stream
        self._documents: list[Document] | None = None

    def __iter__(self) -> Iterator[Document]:
        if self._documents is None:
            self._documents = list(self._stream)
        return iter(self._documents)

    @property
    def problems(self) -> list[Problem]:
        return self._stream.problems


class Handoff:
    """The documents the facts stage built, kept so that no file is parsed twice in a run
    (:mod:`gpulint.loader.handoff`): those of the files the run lints go on to the lint
    (:attr:`loads`); a device plugin's file, parsed before the project's registry is known,
    keeps its documents for its picture record (:attr:`keep_all`)."""

    __slots__ = ("docs", "keep_all", "loads", "named", "spent")

    def __init__(self, named: dict[str, str] | None = None, spent: list[int] | None = None) -> None:
        #: The linted files: absolute path -> the label the run lints it under.
        self.named = named or {}
        #: What goes on to the lint: label -> (the file's bytes, its documents).
        self.loads = Loads()
        #: Each parsed file's documents, by its label in the project (:attr:`keep_all`).
        self.docs: dict[str, bytes] = {}
        #: Keep every parsed file's documents, not only the linted ones' (while the facts
        #: stage parses the project's device plugins: gpulint.lint.gather).
        self.keep_all = False
        #: The bytes kept so far by the run (shared by its projects' handoffs).
        self.spent = spent if spent is not None else [0]

    def linted(self, target: Target) -> str | None:
        """The label the run lints ``target`` under (None: the run does not lint it)."""
        if target.path is None or not self.named:
            return None
        return self.named.get(os.path.abspath(target.path))

    def wants(self, target: Target) -> bool:
        """Whether to keep the documents of ``target`` when it is parsed."""
        return target.label not in self.docs and (self.keep_all or self.linted(target) is not None)

    def add(self, target: Target, raw: bytes, blob: bytes) -> None:
        """Keep ``blob``, the documents of ``target`` read from ``raw`` (within the run's
        bound)."""
        linted = self.linted(target)
        size = len(blob) + (len(raw) if linted is not None else 0)
        if self.spent[0] + size > MAX_RUN_BYTES:
            return
        self.spent[0] += size
        self.docs[target.label] = blob
        if linted is not None:
            self.loads[linted] = (raw, blob)
