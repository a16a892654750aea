"""Files -> documents: YAML text composed into plain data plus a side table of positions.

Why composed nodes and not a loader: gpulint needs the line and column of every key and value,
and it must never let a YAML tag construct a Python object. ruamel.yaml's C parser
(``ruamel.yaml.clib``) composes the node graph with every scalar left as text; this module then
walks the graph once, iteratively, and builds

* ``data`` -- dicts, lists and scalars resolved the way Kubernetes' YAML decoder (go-yaml v2
  via sigs.k8s.io/yaml) resolves them, so ``2.0`` is a float and ``"2"`` a string, and
* ``positions`` -- a dict keyed by the path inside the document (``("spec", "containers", 0,
  "resources")``) holding the span of the key and of the value.

Positions never enter the manifest data (STYLE.md: no ``__startline__`` keys).

Aliases are expanded into the data (each use gets its own copy) and a finding in aliased
content points at where the value is written, which is where the anchored node's marks are.
Merge keys (``<<``) follow YAML 1.1: explicit keys win, then earlier merged mappings.
Expansion is bounded with go-yaml's own "excessive aliasing" ratio, so an alias bomb stops
after a few thousand nodes with the same verdict kubectl would give.

Nesting is bounded too: the C composer recurses once per level and would overflow the C
stack (a crash, not an exception) on a document nested 100,000 deep, so ``load_text`` bounds
the depth from the text before composing and picks a path that cannot crash (see
``nesting_bound``), and collections nested deeper than go-yaml's 10,000 are a syntax error.
"""

from __future__ import annotations

import _thread
import math
import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.model import Path, Span

#: (key span or None for the document root and sequence items, value span)
Location = tuple["Span | None", Span]

TAG_PREFIX = "tag:yaml.org,2002:"
#: The tag the loader gives plain scalars without an explicit tag, so that ``!!str 2`` (a
#: string) stays distinguishable from ``2`` (resolved to an int as go-yaml does).
PLAIN_TAG = "tag:gpulint,2024:plain"
#: Standard tags that only say what the plain resolver would say anyway.
_STD_TAGS = {
    TAG_PREFIX + t
    for t in ("str", "int", "float", "bool", "null", "map", "seq", "merge", "timestamp", "value")
} | {PLAIN_TAG}

# go-yaml v2 resolve.go: the YAML 1.1 plain-scalar table Kubernetes uses.
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
_FALSE = frozenset({"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
_INF = frozenset({".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})
_NEG_INF = frozenset({"-.inf", "-.Inf", "-.INF"})
_NAN = frozenset({".nan", ".NaN", ".NAN"})
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
# strconv.ParseInt(s, 0, 64) syntax: 0x/0o/0b prefixes (either case), a leading 0 for octal.
_INT_RE = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oObB][0-9]+|0[0-7]*|[1-9][0-9]*)$")
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
# Characters that can start a number or special value; anything else is a string at once.
_NUMERIC_START = frozenset("0123456789+-.")

# go-yaml v3 decode.go: allowedAliasRatio and its range.
_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


def _allowed_alias_ratio(decode_count: int) -> float:
    if decode_count <= _ALIAS_RATIO_LOW:
        return 0.99
    if decode_count >= _ALIAS_RATIO_HIGH:
        return 0.10
    span = _ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW
    return 0.99 - 0.89 * ((decode_count - _ALIAS_RATIO_LOW) / span)


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), then ParseUint; None where both fail (go-yaml then
    tries a float, so ``08`` is the float 8 and ``2**64`` a float too)."""
    match = _INT_RE.match(plain)
    if match is None:
        return None
    body = match.group(1)
    try:
        if body[:2].lower() in ("0x", "0o", "0b"):
            value = int(body, 0)
        else:
            value = int(body, 8) if len(body) > 1 and body[0] == "0" else int(body)
    except ValueError:  # 0o9, 0b2: the prefix is right but a digit is not
        return None
    if plain[0] == "-":
        value = -value
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    if plain[0] not in "+-" and value <= _UINT64_MAX:
        return value
    return None


def resolve_plain(text: str) -> Any:
    """Resolve a plain (unquoted) scalar as go-yaml v2 does for Kubernetes."""
    if text in _NULLS:
        return None
    first = text[0]
    if first not in _NUMERIC_START:
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        return text
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return number
    if _FLOAT_RE.match(plain):
        try:
            return float(plain)
        except ValueError:  # pragma: no cover - the regex admits only valid floats
            return text
    if text in _INF:
        return math.inf
    if text in _NEG_INF:
        return -math.inf
    if text in _NAN:
        return math.nan
    return text


class Problem:
    """Something wrong with the YAML itself, reported with a YMLxxx code.

    Mutable: the loader clamps ``span`` to the end of the text once it is known.
    """

    __slots__ = ("code", "doc_path", "message", "span")

    def __init__(self, code: str, span: Span, message: str, doc_path: Path = ()) -> None:
        self.code = code
        self.span = span
        self.message = message
        self.doc_path = doc_path

    def _key(self) -> tuple[str, Span, str, Path]:
        return (self.code, self.span, self.message, self.doc_path)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, like a dataclass

    def __repr__(self) -> str:
        return f"Problem({self.code!r}, {self.span!r}, {self.message!r}, {self.doc_path!r})"


#: Characters that end a line for libyaml.
_BREAKS = frozenset("\r\n\x85\u2028\u2029")


def _point(text: str, mark: Any) -> Span:
    """The character at a parser mark; an empty span at the end of a line or of the text."""
    index: int = mark.index
    width = 1 if index < len(text) and text[index] not in _BREAKS else 0
    return Span(mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 1 + width)


def _node_span(node: Any) -> Span:
    sm = node.start_mark
    em = node.end_mark
    return Span(sm.line + 1, sm.column + 1, em.line + 1, em.column + 1)


_span = _node_span


class Positions(Mapping[Path, Location]):
    """The side table: document path -> (key span, value span), converted on lookup.

    The builder stores the composed nodes themselves (``(key node | None, value node)``) and
    a span is made only when a finding asks for it: most nodes are never reported, and
    building two spans for each of them was a fifth of the load time. Holding the nodes
    costs memory, though, so for big texts (over COMPACT_TEXT) the builder stores both spans
    packed in one int instead (``_pack``) and the nodes are freed document by document.
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


def _pack(key: Any, node: Any) -> int:
    """Both spans of a side-table entry (0-based marks) in one int: 60 bytes, not 600."""
    sm, em = node.start_mark, node.end_mark
    packed: int = sm.line | sm.column << 32 | em.line << 64 | em.column << 96
    if key is not None:
        ks, ke = key.start_mark, key.end_mark
        packed |= 1 << 128 | ks.line << 129 | ks.column << 161 | ke.line << 193 | ke.column << 225
    return packed


def _unpack(packed: int) -> Location:
    mask = 0xFFFFFFFF

    def span(bits: int) -> Span:
        return Span(
            (bits & mask) + 1,
            (bits >> 32 & mask) + 1,
            (bits >> 64 & mask) + 1,
            (bits >> 96 & mask) + 1,
        )

    key = span(packed >> 129) if packed >> 128 & 1 else None
    return (key, span(packed))


def _location(entry: Any, end: tuple[int, int] | None = None) -> Location:
    if type(entry) is int:
        key, value = _unpack(entry)
    else:
        key, value = entry
        if not isinstance(value, Span):
            value = _node_span(value)
        if key is not None and not isinstance(key, Span):
            key = _node_span(key)
    if end is not None:
        value = clamp(value, end)
        key = clamp(key, end) if key is not None else None
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


class Document:
    """One YAML document: plain data plus the side table of positions."""

    __slots__ = ("data", "index", "positions", "problems", "start")

    def __init__(
        self,
        index: int,
        data: Any,
        positions: Mapping[Path, Location],
        start: Span,
        problems: list[Problem] | None = None,
    ) -> None:
        self.index = index
        self.data = data
        self.positions = positions
        #: The span of the document's top-level node (anchors document-level findings).
        self.start = start
        self.problems: list[Problem] = [] if problems is None else problems

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


# -- limits -----------------------------------------------------------------------------------

#: Kubernetes' YAML decoder (go-yaml, scannerc.go ``max_indents`` and ``max_flow_level``)
#: stops at this many nested block collections, or this many nested flow collections, with
#: "exceeded max depth of 10000"; so does gpulint.
MAX_DEPTH = 10_000
#: Positions are kept for nodes this deep at most; deeper ones report the span of their
#: ancestor at this depth. No Kubernetes path comes close, and a full path tuple for every
#: node of a 10,000-deep document would cost memory quadratic in its depth.
POSITION_DEPTH = 256
#: Texts longer than this keep packed spans in the side table rather than the nodes.
COMPACT_TEXT = 1 << 20
#: The C composer (ruamel.yaml.clib) recurses once per nesting level, ~330 bytes of C stack
#: a level (measured), with no limit of its own: 100,000 levels overflow an 8 MB stack and
#: kill the process. Up to this many possible levels it runs on the calling thread ...
INLINE_LEVELS = 2_000
#: ... up to this many in a thread with THREAD_STACK bytes of stack (4x margin) ...
THREAD_LEVELS = 50_000
THREAD_STACK = 64 << 20
#: ... and beyond that an iterative composer over the parser's events builds the same nodes
#: and stops at MAX_DEPTH. Reached only by files with lines over 25,000 characters or tens
#: of thousands of brackets.


#: A document marker at the start of a line: no collection reaches across one.
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)


def nesting_bound(text: str) -> int:
    """An upper bound on how deeply ``text`` can nest, computed from the text alone.

    A block collection nested in another starts further right than its parent, except a
    sequence written at its parent key's indentation, whose items are again further right:
    so block nesting is at most twice the longest line. Every flow level needs a bracket.
    Each level needs at least one character, so short texts need no counting at all. With
    many brackets the bound is taken per document (a ``---`` line ends every collection, and
    libyaml stops with an error at one inside a flow collection), so a long stream of small
    documents is not mistaken for a deep one.
    """
    if len(text) <= INLINE_LEVELS:
        return len(text)
    brackets = text.count("[") + text.count("{")
    bound = 2 * (_longest_line(text) + 1) + brackets
    if brackets <= INLINE_LEVELS:
        return bound
    # Per document, found from the markers' offsets (no copy of the whole text): first
    # with the longest line of the text, which is usually enough to rule deep nesting out.
    most = max(text.count("[", a, b) + text.count("{", a, b) for a, b in _documents(text))
    loose = 2 * (_longest_line(text) + 1) + most
    if loose <= INLINE_LEVELS:
        return loose
    return max(
        2 * (_longest_line(text[a:b]) + 1) + text.count("[", a, b) + text.count("{", a, b)
        for a, b in _documents(text)
    )


def _documents(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of the text between document markers, one at a time."""
    start = 0
    for marker in _DOCUMENT_MARKER.finditer(text):
        yield start, marker.start()
        start = marker.end()
    yield start, len(text)


def _longest_line(text: str, chunk: int = 1 << 20) -> int:
    """The length of the longest ``\n``-separated line, reading ``text`` a megabyte at a
    time (splitting a 50 MB text at once made two million strings)."""
    longest = carried = 0
    for start in range(0, len(text), chunk):
        lines = text[start : start + chunk].split("\n")
        if len(lines) == 1:
            carried += len(lines[0])
            continue
        longest = max(longest, carried + len(lines[0]), max(map(len, lines[1:-1]), default=0))
        carried = len(lines[-1])
    return max(longest, carried)


#: YML001 messages for what the YAML 1.2 grammar rejects and libyaml -- like go-yaml, so
#: kubectl too -- reads anyway. The document is still linted as Kubernetes would read it.
_STRICT = "YAML syntax error (YAML 1.2; Kubernetes' parser lets it through): "
#: A line that only closes flow collections: "}", "]," or "} # comment".
_CLOSER = re.compile(r"[\]}][\]},\s]*(#.*)?$")
_PLAIN_DASH = "a plain value cannot be a lone '-': quote it (\"-\")"


class _AliasLimit(Exception):
    """The document expands too much (go-yaml's ratio), or a merge key reaches its own
    mapping (go-yaml: "anchor 'a' value contains itself")."""

    def __init__(self, anchor: str | None = None) -> None:
        super().__init__("excessive aliasing")
        #: The anchor whose value contains itself, for a recursive merge.
        self.anchor = anchor


class _TooDeep(Exception):
    def __init__(self, mark: Any) -> None:
        super().__init__("too deep")
        self.mark = mark


# -- the YAML library, imported on first use --------------------------------------------------


class _Lib:
    """ruamel.yaml classes, the fast parser and the shared tags (imported lazily)."""

    def __init__(self) -> None:
        from ruamel.yaml import events, tokens
        from ruamel.yaml.composer import ComposerError
        from ruamel.yaml.error import MarkedYAMLError, YAMLError
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
        from ruamel.yaml.tag import Tag

        def shared(suffix: str) -> Any:
            tag = Tag(suffix=TAG_PREFIX + suffix)
            tag.trval  # noqa: B018 - computes and caches the tag text once
            return tag

        self.str_tag, self.seq_tag, self.map_tag = shared("str"), shared("seq"), shared("map")
        tags = {ScalarNode: self.str_tag, SequenceNode: self.seq_tag, MappingNode: self.map_tag}
        self.ScalarNode, self.SequenceNode, self.MappingNode = ScalarNode, SequenceNode, MappingNode
        self.events = events
        self.tokens = tokens
        self.ComposerError = ComposerError
        self.MarkedYAMLError, self.YAMLError = MarkedYAMLError, YAMLError

        def resolve(_self: Any, kind: Any, value: Any, implicit: Any) -> Any:
            # Every untagged node gets the generic tag; scalars are typed by resolve_plain.
            # Returning shared Tag objects spares a Tag per node and lets the builder test
            # tags by identity.
            return tags[kind]

        def descend(_self: Any, parent: Any, index: Any) -> None:
            return None

        def ascend(_self: Any) -> None:
            return None

        hooks = {"resolve": resolve, "descend_resolver": descend, "ascend_resolver": ascend}
        self.c_parser: Any = None
        try:
            from ruamel.yaml.cyaml import CParser  # type: ignore[attr-defined]

            # A bare CParser with the resolver hooks the C composer calls back for every
            # node: a third faster than CBaseLoader, whose hooks are general Python code.
            self.c_parser = type("FastParser", (CParser,), hooks)
        except ImportError:  # pragma: no cover - no compiler for ruamel.yaml.clib
            pass
        self.resolve = resolve

    def event_parser(self, text: str) -> Any:
        """An object with ``get_event()`` and ``dispose()`` over ``text``."""
        if self.c_parser is not None:
            return self.c_parser(text)
        from ruamel.yaml.loader import BaseLoader  # pragma: no cover - pure-Python fallback

        return BaseLoader(text)  # pragma: no cover


_LIB: _Lib | None = None


def _lib() -> _Lib:
    global _LIB
    if _LIB is None:
        _LIB = _Lib()
    return _LIB


# -- composing --------------------------------------------------------------------------------


def _compose_c(parser: Any) -> Iterator[Any]:
    """Document roots from the C composer (recursive: callers bound the depth first)."""
    while parser.check_node():
        yield parser.get_node()


def _compose_events(parser: Any, lib: _Lib) -> Iterator[Any]:
    """Document roots composed from the parser's events without recursion.

    Builds the same node graph as the C composer, and stops with ``_TooDeep`` at the first
    collection nested deeper than MAX_DEPTH, before reading the rest of the file.
    """
    ev = lib.events
    scalar_ev, alias_ev = ev.ScalarEvent, ev.AliasEvent
    seq_start, map_start = ev.SequenceStartEvent, ev.MappingStartEvent
    seq_end, map_end = ev.SequenceEndEvent, ev.MappingEndEvent
    stream_end = ev.StreamEndEvent
    get = parser.get_event
    get()  # StreamStartEvent
    while True:
        event = get()
        if type(event) is stream_end:
            return
        # a DocumentStartEvent
        anchors: dict[Any, Any] = {}
        # open collections: [node, pending mapping key, flow style]
        stack: list[list[Any]] = []
        flows = 0  # how many of them are flow collections
        root: Any = None
        while True:
            event = get()
            kind = type(event)
            if kind is seq_end or kind is map_end:
                closed, _key, flow = stack.pop()
                flows -= flow
                closed.end_mark = event.end_mark
                if not stack:
                    root = closed
                    break
                continue
            if kind is alias_ev:
                node = anchors.get(event.anchor)
                if node is None:
                    raise lib.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                    )
                opened = False
            else:
                tag = event.ctag
                if tag is None or str(tag) == "!":
                    tag = None
                if kind is scalar_ev:
                    node = lib.ScalarNode(
                        tag or lib.str_tag,
                        event.value,
                        event.start_mark,
                        event.end_mark,
                        style=event.style,
                        anchor=event.anchor,
                    )
                    opened = False
                else:
                    flow = bool(event.flow_style)
                    if (flows if flow else len(stack) - flows) >= MAX_DEPTH:
                        raise _TooDeep(event.start_mark)
                    cls: Any
                    if kind is seq_start:
                        cls, default = lib.SequenceNode, lib.seq_tag
                    elif kind is map_start:
                        cls, default = lib.MappingNode, lib.map_tag
                    else:  # pragma: no cover - the parser emits nothing else here
                        raise lib.YAMLError(f"unexpected event {event!r}")
                    node = cls(
                        tag or default,
                        [],
                        event.start_mark,
                        None,
                        flow_style=event.flow_style,
                        anchor=event.anchor,
                    )
                    opened = True
                anchor = event.anchor
                if anchor is not None:
                    if anchor in anchors:  # as the C composer does
                        raise lib.ComposerError(
                            "found duplicate anchor; first occurrence",
                            anchors[anchor].start_mark,
                            "second occurrence",
                            event.start_mark,
                        )
                    anchors[anchor] = node
            if stack:
                parent = stack[-1]
                if parent[0].id == "sequence":
                    parent[0].value.append(node)
                elif parent[1] is None:
                    parent[1] = node
                else:
                    parent[0].value.append((parent[1], node))
                    parent[1] = None
            if opened:
                stack.append([node, None, flow])
                flows += flow
            elif not stack:
                root = node
                break
        get()  # DocumentEndEvent
        yield root


# -- building data and positions --------------------------------------------------------------


class _Source:
    """The text being loaded (shared by the builders of its documents)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Builder:
    """Walk one composed node graph without recursion (documents may nest 10,000 deep)."""

    __slots__ = (
        "alias_count",
        "compact",
        "decode_count",
        "duplicates",
        "lib",
        "positions",
        "problems",
        "seen",
        "source",
    )

    def __init__(self, lib: _Lib, source: _Source | None = None) -> None:
        self.lib = lib
        self.source = source or _Source("")
        self.compact = len(self.source.text) > COMPACT_TEXT
        self.positions: dict[Path, Any] = {}
        self.problems: list[Problem] = []
        self.seen: set[int] = set()
        #: Nodes already reported (duplicate keys, unknown tags): aliased content is walked
        #: once per use, but a problem written once is one problem.
        self.duplicates: set[int] = set()
        self.decode_count = 0
        self.alias_count = 0

    def build(self, root: Any) -> Any:
        lib = self.lib
        str_tag, seq_tag, map_tag = lib.str_tag, lib.seq_tag, lib.map_tag
        holder: list[Any] = [None]
        # (node, path, key node, container, slot, inside an alias, depth, flow ancestors)
        stack: list[tuple[Any, Path, Any, Any, Any, bool, int, int]] = [
            (root, (), None, holder, 0, False, 1, 0)
        ]
        push, pop = stack.append, stack.pop
        positions = self.positions
        compact = self.compact
        seen = self.seen
        decode_count = self.decode_count
        alias_count = self.alias_count
        while stack:
            node, path, key_node, container, slot, in_alias, depth, flows = pop()
            node_id = id(node)
            if node_id in seen:
                in_alias = True
            else:
                seen.add(node_id)
            decode_count += 1
            if in_alias:
                alias_count += 1
                if (
                    alias_count > 100
                    and decode_count > 1000
                    and alias_count / decode_count > _allowed_alias_ratio(decode_count)
                ):
                    raise _AliasLimit
            if depth <= POSITION_DEPTH:
                positions[path] = _pack(key_node, node) if compact else (key_node, node)
            ctag = node.ctag
            kind = node.id
            if kind == "scalar":
                if ctag is str_tag:
                    value = node.value
                    if node.style:
                        container[slot] = value
                    else:
                        if value == "-":
                            self._syntax(node.start_mark, _PLAIN_DASH)
                        container[slot] = resolve_plain(value)
                else:
                    container[slot] = self._tagged_scalar(node, path)
                continue
            if node.flow_style:
                flows += 1
                if flows > MAX_DEPTH:
                    raise _TooDeep(node.start_mark)
            elif depth - flows > MAX_DEPTH:
                raise _TooDeep(node.start_mark)
            if ctag is not seq_tag and ctag is not map_tag:
                self._check_tag(node, path)
            # Multi-line children of a block collection, for the YAML 1.2 layout checks.
            multi: list[Any] | None = None if node.flow_style or in_alias else []
            child_depth = depth + 1
            deep = depth >= POSITION_DEPTH
            if kind == "sequence":
                items = node.value
                out: list[Any] = [None] * len(items)
                container[slot] = out
                for i in range(len(items) - 1, -1, -1):
                    item = items[i]
                    if multi is not None and item.end_mark.line != item.start_mark.line:
                        multi.append(item)
                    push(
                        (
                            item,
                            path if deep else (*path, i),
                            None,
                            out,
                            i,
                            in_alias,
                            child_depth,
                            flows,
                        )
                    )
                if multi:
                    self._layout(node, multi)
            else:
                mapping: dict[str, Any] = {}
                container[slot] = mapping
                # _entries counts merged mappings against the same alias budget.
                self.decode_count, self.alias_count = decode_count, alias_count
                entries = self._entries(node, path, multi=multi)
                decode_count, alias_count = self.decode_count, self.alias_count
                if multi:
                    self._layout(node, multi)
                for key, _key_node, _value_node in entries:
                    mapping[key] = None
                for key, k_node, v_node in reversed(entries):
                    push(
                        (
                            v_node,
                            path if deep else (*path, key),
                            k_node,
                            mapping,
                            key,
                            in_alias,
                            child_depth,
                            flows,
                        )
                    )
        self.decode_count = decode_count
        self.alias_count = alias_count
        return holder[0]

    def _tagged_scalar(self, node: Any, path: Path) -> Any:
        """A scalar with an explicit tag: typed as the tag says, unknown tags reported."""
        tag = self._check_tag(node, path)
        value = node.value
        if tag == TAG_PREFIX + "null":
            return None
        if tag in (TAG_PREFIX + "int", TAG_PREFIX + "float", TAG_PREFIX + "bool"):
            resolved = resolve_plain(value) if value else None
            return resolved if not isinstance(resolved, str) else value
        return value

    # -- YAML 1.2 rules that libyaml (and so Kubernetes' go-yaml) does not enforce ----------
    # They read the text around a node through its marks (character offsets): a 50 MB text
    # is never split into lines.

    @property
    def text(self) -> str:
        return self.source.text

    def _syntax(
        self, mark: Any, message: str, line: int | None = None, col: int = 0, width: int = 1
    ) -> None:
        """A YML001 problem the YAML 1.2 grammar gives but the parser let through."""
        if line is None:
            line, col = mark.line, mark.column
        span = Span(line + 1, col + 1, line + 1, col + 1 + width)
        self.problems.append(Problem("YML001", span, f"{_STRICT}{message}"))

    def _before(self, mark: Any) -> str:
        """The text of the mark's line before the mark."""
        index: int = mark.index
        return self.text[index - mark.column : index]

    def _layout(self, node: Any, children: list[Any]) -> None:
        """Check the multi-line flow values and block scalars of one block collection."""
        children = [c for c in children if c.id == "scalar" or c.flow_style]
        if not children:
            return  # nested block collections: checked on their own
        if node.id == "mapping":
            first = node.value[0][0].start_mark
            indent: int = first.column
            before = self._before(first).rstrip(" ")
            if before.endswith("?"):  # an explicit key: "? key"
                indent = len(before) - 1
        else:  # the column of the "-" before the first item
            first = node.value[0].start_mark
            indent = max(self._before(first).rfind("-"), 0)
        for child in children:
            if child.id == "scalar":
                if child.style in ("|", ">"):
                    self._block_scalar(child, indent)
                else:
                    self._continuation(child, indent)
            elif child.flow_style:
                self._continuation(child, indent)

    def _continuation(self, node: Any, indent: int) -> None:
        """A flow value (quoted or plain scalar, flow collection) written over several lines
        inside a block collection: every continuation line is indented more than the
        collection (YAML 1.2 s-flow-line-prefix; tabs are not indentation).

        One deviation: a line holding only closing brackets may sit at the collection's own
        indentation -- JSON-style ``key: {`` ... ``}`` is common in real manifests and every
        YAML parser in use reads it.
        """
        start, end = node.start_mark, node.end_mark
        lines = self.text[start.index : end.index].split("\n")
        for offset, line in enumerate(lines[1:], start=1):
            body = line.lstrip(" ")
            if not body.strip():
                continue  # empty lines may be indented less
            spaces = len(line) - len(body)
            if spaces < indent or (spaces == indent and not _CLOSER.match(body)):
                self._syntax(
                    None,
                    f"this line continues a value written over several lines and must be "
                    f"indented more than its parent collection (more than {indent} spaces; "
                    "tabs do not count)",
                    start.line + offset,
                    spaces,
                )
                return

    def _block_scalar(self, node: Any, indent: int) -> None:
        """A ``|`` or ``>`` scalar without an indentation indicator: no leading empty line
        may have more spaces than the first content line (YAML 1.2 l-empty, auto-detection)."""
        text = self.text
        start = node.start_mark
        eol = text.find("\n", start.index)
        if eol < 0:
            return
        header = text[start.index : eol]
        marker = min((i for i in (header.find("|"), header.find(">")) if i >= 0), default=-1)
        if marker < 0 or any(c.isdigit() for c in header[marker + 1 : marker + 3]):
            return
        widest, widest_line, number = 0, 0, start.line
        while eol >= 0:
            begin, number = eol + 1, number + 1
            eol = text.find("\n", begin)
            line = text[begin : eol if eol >= 0 else len(text)]
            if not line.strip():
                spaces = len(line) - len(line.lstrip(" "))
                if spaces > widest:
                    widest, widest_line = spaces, number
                continue
            content = len(line) - len(line.lstrip(" "))
            if indent < content < widest:  # the first line of text, and less indented
                self._syntax(
                    None,
                    f"this leading empty line of a block scalar has {widest} spaces, more than "
                    f"the scalar's first line of text (line {number + 1}, {content} spaces)",
                    widest_line,
                    0,
                    width=widest,
                )
            return

    def _check_tag(self, node: Any, path: Path) -> str:
        """The node's tag text; a YML003 problem if Kubernetes would not accept it."""
        tag = str(node.tag)
        if tag not in _STD_TAGS and id(node) not in self.duplicates:
            # Reported once, where it is written, however often an alias repeats it.
            self.duplicates.add(id(node))
            index = node.start_mark.index
            written = self.text[index : index + 1024].split(None, 1)
            if written and written[0].startswith("!") and not written[0].startswith("!<"):
                bad = next((c for c in written[0] if c in ",[]{}"), None)
                if bad is not None:
                    self._syntax(node.start_mark, f"a tag cannot contain {bad!r}")
            shown = "!!" + tag[len(TAG_PREFIX) :] if tag.startswith(TAG_PREFIX) else tag
            self.problems.append(
                Problem(
                    "YML003",
                    _node_span(node),
                    f"tag {shown} is not a Kubernetes YAML tag; gpulint read the value as "
                    "plain data and constructed nothing, but the API server's decoder will "
                    "reject or misread it: remove the tag",
                    path,
                )
            )
        return tag

    def _entries(
        self,
        node: Any,
        path: Path,
        depth: int = 0,
        multi: list[Any] | None = None,
        chain: frozenset[int] = frozenset(),
    ) -> list[tuple[str, Any, Any]]:
        """The mapping's (key, key node, value node) with merge keys applied.

        ``depth`` > 0 while reading a merge source: its duplicates were reported where it is
        written, and a merge chain deeper than 32 stops there. Values written over several
        lines are added to ``multi`` when it is a list.

        Merge keys are bounded as go-yaml bounds them (decode.go ``merge``, which decodes
        each merged mapping through ``unmarshal``): every merged mapping read, and each of
        its pairs, counts against the alias budget of ``build`` (aliased when the mapping
        was already built, which is what an alias to it is), so ``<<: [*a, *a, ...]``
        chains stop with YML004 after a few thousand reads instead of growing as 8^32. A
        merge that reaches a mapping being merged already -- ``a: &a {<<: *a}`` -- is
        go-yaml's "anchor 'a' value contains itself": YML004 at once, never a loop.
        """
        explicit: list[tuple[str, Any, Any]] = []
        index: dict[str, int] = {}
        merges: list[Any] = []
        for key_node, value_node in node.value:
            if multi is not None and value_node.end_mark.line != value_node.start_mark.line:
                multi.append(value_node)
            if key_node.id != "scalar":
                continue  # complex keys have no JSON form; Kubernetes cannot use them
            key = key_node.value
            if key == "<<" and not key_node.style:
                merges.append(value_node)
                continue
            if key in index:
                if depth or id(key_node) in self.duplicates:
                    explicit[index[key]] = (key, key_node, value_node)
                    continue
                self.duplicates.add(id(key_node))
                first = explicit[index[key]][1]
                first_span = _span(first)
                self.problems.append(
                    Problem(
                        "YML002",
                        _span(key_node),
                        f"duplicate key {key!r} (first at line {first_span.line}): kubectl's "
                        "strict decoding rejects the object, and non-strict decoding keeps only "
                        "the last value, silently dropping the first",
                        (*path, key),
                    )
                )
                explicit[index[key]] = (key, key_node, value_node)
                continue
            index[key] = len(explicit)
            explicit.append((key, key_node, value_node))
        if not merges or depth > 32:
            return explicit
        result = list(explicit)
        present = set(index)
        chain = chain | {id(node)}
        seen = self.seen
        for source in self._merge_sources(merges):
            if id(source) in chain:
                raise _AliasLimit(self._anchor(source))
            self._count_merge(source, aliased=id(source) in seen or depth > 0)
            for key, key_node, value_node in self._entries(source, path, depth + 1, None, chain):
                if key not in present:
                    present.add(key)
                    result.append((key, key_node, value_node))
        return result

    def _anchor(self, node: Any) -> str:
        """The anchor written on ``node`` (the composer keeps none), or ""."""
        index = node.start_mark.index
        written = self.text[index : index + 1025]
        if not written.startswith("&"):
            return ""
        return re.split(r"[\s,\[\]{}]", written[1:], maxsplit=1)[0][:1024]

    def _count_merge(self, source: Any, aliased: bool) -> None:
        """Count one merged mapping and its pairs as go-yaml's ``unmarshal`` counts them."""
        reads = 1 + len(source.value)
        self.decode_count += reads
        if aliased:
            self.alias_count += reads
            if (
                self.alias_count > 100
                and self.decode_count > 1000
                and self.alias_count / self.decode_count > _allowed_alias_ratio(self.decode_count)
            ):
                raise _AliasLimit

    def _merge_sources(self, merges: list[Any]) -> Iterator[Any]:
        for value_node in merges:
            if value_node.id == "mapping":
                yield value_node
            elif value_node.id == "sequence":
                for item in value_node.value:
                    if item.id == "mapping":
                        yield item


def decode(raw: bytes) -> tuple[str | None, Problem | None]:
    """Bytes to text: UTF-8 (with or without BOM), or UTF-16/32 with a BOM."""
    if raw.startswith(b"\xef\xbb\xbf"):
        encoding, raw = "utf-8", raw[3:]
    elif raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        encoding = "utf-32"
    elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8"
        if b"\x00" in raw:
            offset = raw.index(b"\x00")
            line = raw.count(b"\n", 0, offset) + 1
            return None, Problem(
                "YML005",
                Span(line, 1, line, 1),
                "binary content (a NUL byte) in a YAML file: not linted",
            )
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        start = exc.start if encoding == "utf-8" else 0
        line = raw.count(b"\n", 0, start) + 1
        line_start = raw.rfind(b"\n", 0, start) + 1
        # Columns count code points: the bytes before the bad one on its line are valid.
        col = len(raw[line_start:start].decode(encoding, "replace")) + 1
        return None, Problem(
            "YML005",
            Span(line, col, line, col + 1),
            f"the file is not valid {encoding.upper()} (byte {start}): YAML must be UTF-8, or "
            "UTF-16/32 with a byte-order mark; not linted",
        )


def load_text(text: str) -> LoadResult:
    """Compose every document of ``text`` and build data plus positions for each.

    Never recurses without a bound: the C composer runs on this thread only when the text
    cannot nest deeper than INLINE_LEVELS, in a thread with a large stack up to
    THREAD_LEVELS, and the iterative event composer takes anything deeper.
    """
    stream = DocumentStream(text)
    documents = list(stream)
    return LoadResult(documents, stream.problems)


class DocumentStream:
    """The documents of a text, composed and built one at a time as they are iterated.

    What ``load_text`` returns, without holding every document at once: a caller that
    lints each document and drops it keeps one document's nodes, data and positions in
    memory, not the whole file's (a 50 MB file took 33 times its size). ``problems`` (the
    text's own: syntax errors, YML004 documents, YAML 1.2 token rules) is complete once the
    iteration ends. Iterate once.

    Texts whose depth bound needs the large-stack thread (lines of 1,000 to 25,000
    characters) are composed there and handed over one document at a time.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.problems: list[Problem] = []

    def __iter__(self) -> Iterator[Document]:
        text, lib = self.text, _lib()
        bound = nesting_bound(text)
        if lib.c_parser is None or bound > THREAD_LEVELS:
            yield from _iter_load(text, lib, self.problems, iterative=True)
        elif bound <= INLINE_LEVELS:
            yield from _iter_load(text, lib, self.problems, iterative=False)
        else:
            yield from _iter_in_large_stack(text, lib, self.problems)
        if _needs_token_pass(text) and not any(p.code == "YML001" for p in self.problems):
            self.problems.extend(_token_problems(text, lib))


#: Serializes the stack-size change around thread creation. (``_thread`` is what
#: ``threading.Lock`` is; threading itself is imported only when a deep document needs it.)
_THREAD_LOCK = _thread.allocate_lock()

#: Characters before a "#" that libyaml takes for the start of a comment but YAML 1.2 does
#: not (a comment needs white space before it): flow indicators, quotes, block scalar
#: headers ("|-", ">2") and directive arguments.
_BEFORE_HASH = frozenset("[]{},\"'|>+-0123456789")


def _needs_token_pass(text: str) -> bool:
    """Whether ``text`` may break a YAML 1.2 rule only the scanner's tokens show."""
    if text.startswith("%") or "\n%" in text:
        return True
    i = text.find("#")
    while i > 0:
        if text[i - 1] in _BEFORE_HASH:
            return True
        i = text.find("#", i + 1)
    return False


def _token_problems(text: str, lib: _Lib) -> list[Problem]:
    """YAML 1.2 rules on tokens that libyaml does not enforce: a comment needs white space
    before it, and a directive may only follow the start of the stream or a ``...``."""
    tk = lib.tokens
    directive, scalar = tk.DirectiveToken, tk.ScalarToken
    may_precede_directive = (tk.StreamStartToken, tk.DocumentEndToken, directive)
    no_comment_after = (
        directive,
        tk.FlowEntryToken,
        tk.FlowSequenceStartToken,
        tk.FlowSequenceEndToken,
        tk.FlowMappingStartToken,
        tk.FlowMappingEndToken,
    )
    problems: list[Problem] = []

    def problem(mark_line: int, col: int, message: str) -> None:
        span = Span(mark_line + 1, col + 1, mark_line + 1, col + 2)
        problems.append(Problem("YML001", span, _STRICT + message))

    parser = lib.event_parser(text)
    previous: Any = None
    try:
        while True:
            token = parser.get_token()
            if token is None or isinstance(token, tk.StreamEndToken):
                break
            kind = type(token)
            end = token.end_mark
            if kind is directive and previous not in may_precede_directive:
                sm = token.start_mark
                problem(
                    sm.line,
                    sm.column,
                    "a directive must follow '...', the end of the document before it",
                )
            if kind in no_comment_after or (kind is scalar and token.style in ('"', "'")):
                if text.startswith("#", end.index):
                    problem(end.line, end.column, "a comment needs white space before '#'")
            elif kind is scalar and token.style in ("|", ">"):
                start = token.start_mark
                at = start.index + 1
                while at < len(text) and text[at] in "+-0123456789":
                    at += 1
                if text.startswith("#", at):
                    problem(
                        start.line,
                        start.column + at - start.index,
                        "a comment needs white space before '#'",
                    )
            if kind is not tk.BlockEndToken:
                previous = kind
    except lib.YAMLError:
        pass  # the composer reported it
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return problems


def _iter_in_large_stack(text: str, lib: _Lib, problems: list[Problem]) -> Iterator[Document]:
    """``_iter_load`` with the C composer in a thread with THREAD_STACK bytes of stack,
    handing each document over to the calling thread as it is built (at most one waits)."""
    import queue
    import threading  # only for a deep document: keeps it off the start-up path

    handoff: queue.Queue[Any] = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def hand(item: Any) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def target() -> None:
        try:
            for doc in _iter_load(text, lib, problems, iterative=False):
                if not hand(doc):
                    return
                del doc
            hand(done)
        except BaseException as exc:  # re-raised on the calling thread
            hand(exc)

    try:
        with _THREAD_LOCK:
            previous = threading.stack_size(THREAD_STACK)
            try:
                thread = threading.Thread(target=target, name="gpulint-yaml", daemon=True)
                thread.start()
            finally:
                threading.stack_size(previous)
    except (RuntimeError, ValueError, MemoryError):
        # No thread to be had (memory or thread limits): compose without recursion instead.
        yield from _iter_load(text, lib, problems, iterative=True)
        return
    try:
        while True:
            item = handoff.get()
            if item is done:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
            del item
    finally:
        stop.set()  # a hand-over waiting on a full queue gives up within 0.1 s
        thread.join()


def _load(text: str, lib: _Lib, *, iterative: bool) -> LoadResult:
    problems: list[Problem] = []
    documents = list(_iter_load(text, lib, problems, iterative=iterative))
    return LoadResult(documents, problems)


def _iter_load(
    text: str, lib: _Lib, problems: list[Problem], *, iterative: bool
) -> Iterator[Document]:
    """The documents of ``text`` one at a time; problems of the text as a whole (syntax
    errors, YML004) are added to ``problems`` as they are met. Nothing of a document is
    kept here once the next one is composed."""
    parser = lib.event_parser(text) if iterative else lib.c_parser(text)
    roots = _compose_events(parser, lib) if iterative else _compose_c(parser)
    source = _Source(text)
    end = text_end(text)
    index = 0
    try:
        for node in roots:
            builder = _Builder(lib, source)
            start = _node_span(node)
            try:
                data = builder.build(node)
            except _AliasLimit as exc:
                if exc.anchor is not None:
                    shown = f"anchor &{exc.anchor}" if exc.anchor else "a mapping"
                    message = (
                        f"{shown} merges itself (a '<<' merge key reaches the mapping it is "
                        f'in): kubectl\'s decoder refuses it ("anchor value contains itself"); '
                        "the document was not expanded or linted"
                    )
                else:
                    message = (
                        "document contains excessive aliasing (an alias bomb?): it expands to "
                        "far more nodes than it writes, counting merge keys (<<), as kubectl's "
                        "decoder also refuses; the document was not expanded or linted"
                    )
                problems.append(Problem("YML004", clamp(start, end), message))
                index += 1
                continue
            positions = Positions(builder.positions, end)
            doc = Document(index, data, positions, clamp(start, end), builder.problems)
            for problem in doc.problems:
                problem.span = clamp(problem.span, end)
            del node, builder, data, positions
            index += 1
            yield doc
            del doc
    except _TooDeep as exc:
        line, col = exc.mark.line + 1, exc.mark.column + 1
        problems.append(
            Problem(
                "YML001",
                clamp(Span(line, col, line, col + 1), end),
                f"YAML syntax error: more than {MAX_DEPTH:,} nested block collections or "
                f"{MAX_DEPTH:,} nested flow collections; "
                f"Kubernetes' YAML decoder stops here too (exceeded max depth of {MAX_DEPTH})",
            )
        )
    except lib.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem or "invalid YAML"
        if exc.context:
            what = f"{what} {exc.context}"
        span = _point(text, mark) if mark is not None else Span(1, 1, 1, 1)
        problems.append(Problem("YML001", clamp(span, end), f"YAML syntax error: {what}"))
    except lib.YAMLError as exc:
        problems.append(Problem("YML001", Span(1, 1, 1, 1), f"YAML syntax error: {exc}"))
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


class SourceError(Exception):
    """A small YAML file (configuration, declarative rule) that cannot be used.

    ``problems`` are ``(line, message)`` pairs; line is None when the file was not read.
    """

    def __init__(self, problems: list[tuple[int | None, str]]) -> None:
        super().__init__(problems[0][1])
        self.problems = problems


def load_one_document(path: os.PathLike[str] | str) -> Document | None:
    """The single document of a YAML file gpulint itself reads, or None when it is empty.

    Unreadable bytes, YAML problems and a second document raise SourceError.
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise SourceError([(None, f"cannot read: {exc.strerror or exc}")]) from None
    text, problem = decode(raw)
    if text is None:
        assert problem is not None
        raise SourceError([(problem.span.line, problem.message)])
    result = load_text(text)
    problems = [*result.problems, *(p for d in result.documents for p in d.problems)]
    if problems:
        raise SourceError([(p.span.line, p.message) for p in problems])
    docs = [d for d in result.documents if d.data is not None]
    if len(docs) > 1:
        raise SourceError([(docs[1].start.line, "one YAML document expected, not several")])
    return docs[0] if docs else None
