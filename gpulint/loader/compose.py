"""Composing: the node graph of each document, with the nesting depth bounded first.

The C composer recurses once per level; ``nesting_bound`` says from the text alone whether it
can run on this thread, in a thread with a large stack, or not at all, in which case
``compose_events`` builds the same nodes without recursion and stops at MAX_DEPTH.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.loader.library import YamlLib

# -- limits -----------------------------------------------------------------------------------

#: Kubernetes' YAML decoder (go-yaml, scannerc.go ``max_indents`` and ``max_flow_level``)
#: stops at this many nested block collections, or this many nested flow collections, with
#: "exceeded max depth of 10000"; so does gpulint.
MAX_DEPTH = 10_000
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


#: A document marker at the start of a line: no collection reaches across one. (A pattern:
#: compiled on first use, see docs/architecture.md; only texts with many brackets need it.)
_DOCUMENT_MARKER = r"^(?:---|\.\.\.)(?=[ \t\r\n]|$)"


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
    for marker in re.finditer(_DOCUMENT_MARKER, text, re.MULTILINE):
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


class TooDeep(Exception):
    def __init__(self, mark: Any) -> None:
        super().__init__("too deep")
        self.mark = mark


def compose_c(parser: Any) -> Iterator[Any]:
    """Document roots from the C composer (recursive: callers bound the depth first)."""
    while parser.check_node():
        yield parser.get_node()


def _tag(event: Any) -> Any:
    """The event's explicit tag, or None (``!`` alone is the plain non-specific tag)."""
    tag = event.ctag
    if tag is None or str(tag) == "!":
        return None
    return tag


def _collection(lib: YamlLib, event: Any, sequence: bool, mapping: bool) -> Any:
    """The empty node a sequence's or a mapping's start event opens."""
    cls: Any
    if sequence:
        cls, default = lib.SequenceNode, lib.seq_tag
    elif mapping:
        cls, default = lib.MappingNode, lib.map_tag
    else:  # pragma: no cover - the parser emits nothing else here
        raise lib.YAMLError(f"unexpected event {event!r}")
    return cls(
        _tag(event) or default,
        [],
        event.start_mark,
        None,
        flow_style=event.flow_style,
        anchor=event.anchor,
    )


def _aliased(lib: YamlLib, anchors: dict[Any, Any], event: Any) -> Any:
    """The node an alias event names; an alias to no anchor before it is an error."""
    node = anchors.get(event.anchor)
    if node is None:
        raise lib.ComposerError(
            None, None, f"found undefined alias {event.anchor!r}", event.start_mark
        )
    return node


def _anchor(anchors: dict[Any, Any], event: Any, node: Any) -> None:
    """Name ``node`` by the event's anchor. A name written again names the later node: YAML
    1.2 (3.2.2.2) and go-yaml, which kubectl, Flux and the API server read with, take it,
    an alias naming the most recent node of that name (the C composer refuses it)."""
    anchors[event.anchor] = node


def compose_events(parser: Any, lib: YamlLib) -> Iterator[Any]:
    """Document roots composed from the parser's events without recursion.

    Builds the same node graph as the C composer, and stops with ``TooDeep`` at the first
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
                node = _aliased(lib, anchors, event)
                opened = False
            else:
                if kind is scalar_ev:
                    node = lib.ScalarNode(
                        _tag(event) or lib.str_tag,
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
                        raise TooDeep(event.start_mark)
                    node = _collection(lib, event, kind is seq_start, kind is map_start)
                    opened = True
                if event.anchor is not None:
                    _anchor(anchors, event, node)
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
