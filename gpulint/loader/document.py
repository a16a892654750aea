"""What the loader returns: documents (data plus positions) and the problems of the YAML."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gpulint.loader.positions import Location
from gpulint.model import Path, Span


class Problem:
    """Something wrong with the YAML itself, reported with a YMLxxx code.

    Mutable: the loader clamps ``span`` to the end of the text once it is known.
    """

    __slots__ = ("code", "doc_path", "dropped", "message", "severity", "span")

    def __init__(
        self,
        code: str,
        span: Span,
        message: str,
        doc_path: Path = (),
        severity: str | None = None,
        dropped: Span | None = None,
    ) -> None:
        self.code = code
        self.span = span
        self.message = message
        self.doc_path = doc_path
        #: A severity for this problem other than its rule's (``"warning"`` for what strict
        #: YAML 1.2 rejects but Kubernetes reads), or None; configuration still wins.
        self.severity = severity
        #: For a duplicate key (YML002): the span of the first value, which a reader that
        #: keeps the last drops.
        self.dropped = dropped

    def _key(self) -> tuple[str, Span, str, Path]:
        return (self.code, self.span, self.message, self.doc_path)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, like a dataclass

    def __repr__(self) -> str:
        return f"Problem({self.code!r}, {self.span!r}, {self.message!r}, {self.doc_path!r})"


class Document:
    """One YAML document: plain data plus the side table of positions."""

    __slots__ = ("data", "folded", "index", "positions", "problems", "start")

    def __init__(
        self,
        index: int,
        data: Any,
        positions: Mapping[Path, Location],
        start: Span,
        problems: list[Problem] | None = None,
        folded: Iterable[Path] = (),
    ) -> None:
        self.index = index
        self.data = data
        self.positions = positions
        #: The span of the document's top-level node (anchors document-level findings).
        self.start = start
        self.problems: list[Problem] = [] if problems is None else problems
        #: The paths of the block sequence items written as a plain or quoted scalar over
        #: several lines, whose line breaks YAML reads as spaces (``- --opt=x`` and an
        #: ``echo`` on the next line, indented: one string); not literal or folded blocks.
        self.folded: frozenset[Path] = frozenset(folded)

    def __repr__(self) -> str:
        return f"Document(index={self.index}, start={self.start!r}, problems={self.problems!r})"

    def value_span(self, path: Path) -> Span:
        """The span of the value at ``path``; the nearest enclosing node if it is absent."""
        loc = self._nearest(path)
        return loc[1]

    def key_span(self, path: Path) -> Span:
        """The span of the mapping key at ``path`` (the value's for sequence items)."""
        loc = self._nearest(path)
        return loc[0] if loc[0] is not None else loc[1]

    def _nearest(self, path: Path) -> Location:
        positions = self.positions
        while path:
            loc = positions.get(path)
            if loc is not None:
                return loc
            path = path[:-1]
        loc = positions.get(())
        return loc if loc is not None else (None, self.start)


class LoadResult:
    __slots__ = ("documents", "problems")

    def __init__(self, documents: list[Document], problems: list[Problem]) -> None:
        self.documents = documents
        self.problems = problems


#: The documents of a file's text, ``(label, text)``, from a caller that parsed it already: the
#: facts stage parses a rare file (a node pool, a DRA object, a ConfigMap) once for all the
#: facts it holds (gpulint.lint.gather).
Parse = Callable[[str, str], Iterable["Document"]]


class Loads(dict[str, tuple[bytes, bytes]]):
    """Files a run parsed before linting them (the facts stage), by the label the run lints
    each under: its bytes and its documents as :func:`gpulint.loader.handoff.pack` keeps
    them. Each is linted from there, not read or parsed again."""

    def take(self, label: str, raw: bytes) -> bytes | None:
        """The documents of the file ``label`` when its bytes are ``raw``, taken once (None:
        none were handed over, or the file was read otherwise)."""
        handed = self.pop(label, None) if self else None
        return handed[1] if handed is not None and handed[0] == raw else None

    def read(self, label: str) -> tuple[bytes, None] | None:
        """The bytes read for the file ``label``, as ``read_target`` gives them (None: none
        were kept)."""
        handed = self.get(label) if self else None
        return (handed[0], None) if handed is not None else None
