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
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
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


@dataclass(slots=True)
class Problem:
    """Something wrong with the YAML itself, reported with a YMLxxx code."""

    code: str
    span: Span
    message: str
    doc_path: Path = ()


@dataclass(slots=True)
class Document:
    """One YAML document: plain data plus the side table of positions."""

    index: int
    data: Any
    positions: dict[Path, Location]
    #: Whether the document's top-level node is at the start of the file's text
    #: (used to anchor document-level findings).
    start: Span
    problems: list[Problem] = field(default_factory=list)

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
        return positions.get((), (None, self.start))


@dataclass(slots=True)
class LoadResult:
    documents: list[Document]
    problems: list[Problem]


def _span(node: Any) -> Span:
    sm = node.start_mark
    em = node.end_mark
    return Span(sm.line + 1, sm.column + 1, em.line + 1, em.column + 1)


class _AliasLimit(Exception):
    pass


class _Builder:
    """Walk one composed node graph without recursion (documents may nest 10,000 deep)."""

    __slots__ = ("alias_count", "decode_count", "duplicates", "positions", "problems", "seen")

    def __init__(self) -> None:
        self.positions: dict[Path, Location] = {}
        self.problems: list[Problem] = []
        self.seen: set[int] = set()
        #: Key nodes already reported as duplicates: aliased content is walked once per use,
        #: but a duplicate written once is one problem.
        self.duplicates: set[int] = set()
        self.decode_count = 0
        self.alias_count = 0

    def build(self, root: Any) -> Any:
        holder: list[Any] = [None]
        # (node, path, key span, container, slot, inside an alias)
        stack: list[tuple[Any, Path, Span | None, Any, Any, bool]] = [
            (root, (), None, holder, 0, False)
        ]
        positions = self.positions
        seen = self.seen
        while stack:
            node, path, key_span, container, slot, in_alias = stack.pop()
            node_id = id(node)
            if node_id in seen:
                in_alias = True
            else:
                seen.add(node_id)
            self.decode_count += 1
            if in_alias:
                self.alias_count += 1
                if (
                    self.alias_count > 100
                    and self.decode_count > 1000
                    and self.alias_count / self.decode_count
                    > _allowed_alias_ratio(self.decode_count)
                ):
                    raise _AliasLimit
            span = _span(node)
            positions[path] = (key_span, span)
            tag = node.tag
            if tag not in _STD_TAGS and not in_alias:  # reported once, where it is written
                self._unknown_tag(node, path, span)
            node_id_kind = node.id
            if node_id_kind == "scalar":
                value = node.value
                if tag == PLAIN_TAG:
                    container[slot] = resolve_plain(value)
                else:
                    container[slot] = self._typed_scalar(node)
            elif node_id_kind == "sequence":
                items = node.value
                out: list[Any] = [None] * len(items)
                container[slot] = out
                for i in range(len(items) - 1, -1, -1):
                    stack.append((items[i], (*path, i), None, out, i, in_alias))
            else:
                mapping: dict[str, Any] = {}
                container[slot] = mapping
                entries = self._entries(node, path)
                pending = []
                for key, key_node, value_node in entries:
                    mapping[key] = None
                    pending.append((value_node, (*path, key), _span(key_node), mapping, key))
                for value_node, child_path, child_key_span, target, key in reversed(pending):
                    stack.append((value_node, child_path, child_key_span, target, key, in_alias))
        return holder[0]

    def _typed_scalar(self, node: Any) -> Any:
        """A quoted or block scalar, or a plain one with an explicit tag."""
        tag = node.tag
        value = node.value
        if tag == TAG_PREFIX + "str" or not tag.startswith(TAG_PREFIX):
            return value
        resolved = resolve_plain(value) if value else None
        if tag == TAG_PREFIX + "null":
            return None
        if tag in (TAG_PREFIX + "int", TAG_PREFIX + "float", TAG_PREFIX + "bool"):
            return resolved if not isinstance(resolved, str) else value
        return value

    def _unknown_tag(self, node: Any, path: Path, span: Span) -> None:
        tag = str(node.tag)
        shown = "!!" + tag[len(TAG_PREFIX) :] if tag.startswith(TAG_PREFIX) else tag
        self.problems.append(
            Problem(
                "YML003",
                span,
                f"tag {shown} is not a Kubernetes YAML tag; gpulint read the value as plain "
                "data and constructed nothing, but the API server's decoder will reject or "
                "misread it: remove the tag",
                path,
            )
        )

    def _entries(self, node: Any, path: Path, depth: int = 0) -> list[tuple[str, Any, Any]]:
        """The mapping's (key, key node, value node) with merge keys applied.

        ``depth`` > 0 while reading a merge source: its duplicates were reported where it is
        written, and a merge chain deeper than 32 (or a cycle) stops there.
        """
        explicit: list[tuple[str, Any, Any]] = []
        index: dict[str, int] = {}
        merges: list[Any] = []
        for key_node, value_node in node.value:
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
        for source in self._merge_sources(merges):
            for key, key_node, value_node in self._entries(source, path, depth + 1):
                if key not in present:
                    present.add(key)
                    result.append((key, key_node, value_node))
        return result

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


@cache
def _parser_cls() -> Any:
    from ruamel.yaml.nodes import ScalarNode

    base: Any
    try:
        from ruamel.yaml.cyaml import CBaseLoader

        base = CBaseLoader
    except ImportError:  # pragma: no cover - no compiler for ruamel.yaml.clib
        from ruamel.yaml.loader import BaseLoader

        base = BaseLoader

    class _Loader(base):  # type: ignore[misc]
        """Tags untagged plain scalars PLAIN_TAG; everything else as the base loader does."""

        def resolve(self, kind: Any, value: str, implicit: Any) -> Any:
            if kind is ScalarNode and implicit[0]:
                return PLAIN_TAG
            return super().resolve(kind, value, implicit)

    return _Loader


def load_text(text: str) -> LoadResult:
    """Compose every document of ``text`` and build data plus positions for each."""
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    documents: list[Document] = []
    problems: list[Problem] = []
    parser = _parser_cls()(text)
    index = 0
    try:
        while parser.check_node():
            node = parser.get_node()
            builder = _Builder()
            start = _span(node)
            try:
                data = builder.build(node)
            except _AliasLimit:
                problems.append(
                    Problem(
                        "YML004",
                        start,
                        "document contains excessive aliasing (an alias bomb?): it expands to "
                        "far more nodes than it writes, as kubectl's decoder also refuses; the "
                        "document was not expanded or linted",
                    )
                )
                index += 1
                continue
            documents.append(Document(index, data, builder.positions, start, builder.problems))
            index += 1
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        col = mark.column + 1 if mark is not None else 1
        what = exc.problem or "invalid YAML"
        if exc.context:
            what = f"{what} {exc.context}"
        problems.append(
            Problem("YML001", Span(line, col, line, col + 1), f"YAML syntax error: {what}")
        )
    except YAMLError as exc:
        problems.append(Problem("YML001", Span(1, 1, 1, 1), f"YAML syntax error: {exc}"))
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return LoadResult(documents, problems)
