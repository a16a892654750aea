"""The side table of positions: document path -> (key span, value span), and the helpers that
turn parser marks into 1-based spans that never point past the end of the text."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.model import Path, Span

#: (key span or None for the document root and sequence items, value span)
Location = tuple["Span | None", Span]

#: Characters that end a line for libyaml.
_BREAKS = frozenset("\r\n\x85\u2028\u2029")


def mark_span(text: str, mark: Any) -> Span:
    """The character at a parser mark; an empty span at the end of a line or of the text."""
    index: int = mark.index
    width = 1 if index < len(text) and text[index] not in _BREAKS else 0
    return Span(mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 1 + width)


#: ``Span(a, b, c, d)`` without the Python-level ``__new__`` every NamedTuple has: every
#: finding and every fix's lookups make spans here.
_new_span = tuple.__new__


def node_span(node: Any) -> Span:
    sm = node.start_mark
    em = node.end_mark
    return _new_span(Span, (sm.line + 1, sm.column + 1, em.line + 1, em.column + 1))


class Positions(Mapping[Path, Location]):
    """The side table: document path -> (key span, value span), converted on lookup.

    The builder stores the composed nodes themselves (``(key node | None, value node)``) and
    a span is made only when a finding asks for it: most nodes are never reported, and
    building two spans for each of them was a fifth of the load time. Holding the nodes
    costs memory, though, so for big texts (over COMPACT_TEXT) whose documents are all kept
    (``load_text``) the builder stores both spans packed in one int instead (``pack_spans``) and
    the nodes are freed document by document. A stream read one document at a time
    (``DocumentStream``, what the engine lints) holds one document's nodes and packs none.
    Entries that already are spans (tables built by hand) are returned as they are.
    """

    __slots__ = ("_end", "_raw")

    def __init__(
        self, raw: dict[Path, Any] | None = None, end: tuple[int, int] | None = None
    ) -> None:
        self._raw: dict[Path, Any] = {} if raw is None else raw
        #: Where the text ends: libyaml's marks may point one line past it.
        self._end = end

    def __getitem__(self, path: Path) -> Location:
        return _location(self._raw[path], self._end)

    def get(self, path: Path, default: Any = None) -> Any:
        entry = self._raw.get(path)
        return default if entry is None else _location(entry, self._end)

    def __contains__(self, path: object) -> bool:
        return path in self._raw

    def __iter__(self) -> Iterator[Path]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


def pack_spans(key: Any, node: Any) -> int:
    """Both spans of a side-table entry (0-based marks) in one int: 60 bytes, not 600."""
    sm, em = node.start_mark, node.end_mark
    packed: int = sm.line | sm.column << 32 | em.line << 64 | em.column << 96
    if key is not None:
        ks, ke = key.start_mark, key.end_mark
        packed |= 1 << 128 | ks.line << 129 | ks.column << 161 | ke.line << 193 | ke.column << 225
    return packed


_MASK = 0xFFFFFFFF


def _unpack(packed: int) -> Location:
    m = _MASK
    value = _new_span(
        Span,
        ((packed & m) + 1, (packed >> 32 & m) + 1, (packed >> 64 & m) + 1, (packed >> 96 & m) + 1),
    )
    if not packed >> 128 & 1:
        return (None, value)
    k = packed >> 129
    key = _new_span(Span, ((k & m) + 1, (k >> 32 & m) + 1, (k >> 64 & m) + 1, (k >> 96 & m) + 1))
    return (key, value)


def _location(entry: Any, end: tuple[int, int] | None = None) -> Location:
    if type(entry) is int:
        key, value = _unpack(entry)
    else:
        key, value = entry
        if not isinstance(value, Span):
            value = node_span(value)
        if key is not None and not isinstance(key, Span):
            key = node_span(key)
    if end is not None:
        # clamp(), with the common case (the span ends before the text does) first.
        line, column = end
        if value[2] > line or (value[2] == line and value[3] > column):
            value = clamp(value, end)
        if key is not None and (key[2] > line or (key[2] == line and key[3] > column)):
            key = clamp(key, end)
    return (key, value)


def text_end(text: str) -> tuple[int, int]:
    """The (line, column) just past the text's last character, 1-based, counting line
    breaks as libyaml does (LF, CR, CRLF, NEL, LS, PS)."""
    breaks = text.count("\n") + text.count("\r") - text.count("\r\n")
    last = max(text.rfind("\n"), text.rfind("\r"))
    for other in ("\x85", "\u2028", "\u2029"):
        if other in text:
            breaks += text.count(other)
            last = max(last, text.rfind(other))
    return breaks + 1, len(text) - last


def clamp(span: Span, end: tuple[int, int]) -> Span:
    """``span`` with no position past ``end`` (libyaml puts the end of the stream on the
    line after the last, which a file without a final newline does not have)."""
    if (span.end_line, span.end_column) <= end:
        return span
    start = min((span.line, span.column), end)
    return Span(*start, *end)
