"""Building: one composed node graph walked into plain data plus its side table of positions.

Aliases are expanded (each use gets its own copy) under go-yaml's "excessive aliasing" ratio,
merge keys follow YAML 1.1 and duplicate keys are YML002.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint import codes
from gpulint.loader.compose import MAX_DEPTH, TooDeep
from gpulint.loader.document import Problem
from gpulint.loader.library import YamlLib
from gpulint.loader.positions import node_span
from gpulint.loader.scalars import TAG_PREFIX, resolve_plain
from gpulint.loader.strict import PLAIN_DASH, StrictChecks
from gpulint.model import Path

#: Positions are kept for nodes this deep at most; deeper ones report the span of their
#: ancestor at this depth. No Kubernetes path comes close, and a full path tuple for every
#: node of a 10,000-deep document would cost memory quadratic in its depth.
POSITION_DEPTH = 256
#: Texts longer than this, when all their documents are kept (``load_text``), keep packed
#: spans in the side table rather than the nodes.
COMPACT_TEXT = 1 << 20

#: ``pack_spans``'s flag for an entry with a key span.
_KEY_BIT = 1 << 128
#: Plain scalars already typed (``resolve_plain``): manifests repeat the same short values
#: (``NoSchedule``, ``Exists``, ``'1'``) in every file. Only texts up to _RESOLVED_LENGTH
#: characters are kept, and at most _RESOLVED_COUNT of them a process, so the table's memory
#: is bounded whatever the input; a value past the bound is typed each time, as before.
_RESOLVED: dict[str, Any] = {}
_RESOLVED_LENGTH = 64
_RESOLVED_COUNT = 4096
_UNRESOLVED = object()

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


def _nesting(node: Any, depth: int, flows: int) -> int:
    """The flow collections around a collection's children, counting ``node``; raises
    TooDeep past MAX_DEPTH of block or of flow nesting, as the composer does."""
    if node.flow_style:
        flows += 1
        if flows > MAX_DEPTH:
            raise TooDeep(node.start_mark)
    elif depth - flows > MAX_DEPTH:
        raise TooDeep(node.start_mark)
    return flows


class AliasLimit(Exception):
    """The document expands too much (go-yaml's ratio), or a merge key reaches its own
    mapping (go-yaml: "anchor 'a' value contains itself")."""

    def __init__(self, anchor: str | None = None) -> None:
        super().__init__("excessive aliasing")
        #: The anchor whose value contains itself, for a recursive merge.
        self.anchor = anchor


class Builder(StrictChecks):
    """Walk one composed node graph without recursion (documents may nest 10,000 deep)."""

    __slots__ = (
        "alias_count",
        "compact",
        "decode_count",
        "duplicates",
        "folded",
        "lib",
        "positions",
        "problems",
        "seen",
        "shared",
        "text",
    )

    def __init__(self, lib: YamlLib, text: str, shared: bool = True, compact: bool = False) -> None:
        self.lib = lib
        #: The whole text being loaded (every document's builder is given the same string).
        self.text = text
        #: Whether the document's own text holds a ``&``: only an alias reaches a node
        #: twice, and an alias needs an anchor, so a document without one (most manifests)
        #: skips the bookkeeping of nodes seen and of go-yaml's ratio, which an alias-free
        #: document can never exceed. The caller finds it from the document's span (see
        #: ``gpulint.loader.stream._Anchors``): asking the whole text once per document made
        #: a file of many documents quadratic.
        self.shared = shared
        #: Keep packed spans in the side table, not the nodes (``DocumentStream``'s
        #: ``packed``, for a text over COMPACT_TEXT whose documents are all kept).
        self.compact = compact
        self.positions: dict[Path, Any] = {}
        self.problems: list[Problem] = []
        self.seen: set[int] = set()
        #: Nodes already reported (duplicate keys, unknown tags): aliased content is walked
        #: once per use, but a problem written once is one problem.
        self.duplicates: set[int] = set()
        self.decode_count = 0
        self.alias_count = 0
        #: Sequence items written as a plain or quoted scalar over several lines
        #: (``Document.folded``): YAML reads their line breaks as spaces.
        self.folded: list[Path] = []

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
        shared = self.shared
        resolved = _RESOLVED
        while stack:
            node, path, key_node, container, slot, in_alias, depth, flows = pop()
            if shared:
                in_alias = self._count(node, in_alias)
            if depth <= POSITION_DEPTH:
                if compact:  # positions.pack_spans, written out: it runs for every node
                    sm, em = node.start_mark, node.end_mark
                    packed = sm.line | sm.column << 32 | em.line << 64 | em.column << 96
                    if key_node is not None:
                        ks, ke = key_node.start_mark, key_node.end_mark
                        packed |= (
                            _KEY_BIT
                            | ks.line << 129
                            | ks.column << 161
                            | ke.line << 193
                            | ke.column << 225
                        )
                    positions[path] = packed
                else:
                    positions[path] = (key_node, node)
            kind = node.id
            if kind == "scalar":
                if node.ctag is str_tag:
                    value = node.value
                    if node.style:
                        container[slot] = value
                    else:
                        if value == "-":
                            self._syntax(node.start_mark, PLAIN_DASH)
                        typed = resolved.get(value, _UNRESOLVED)
                        if typed is _UNRESOLVED:
                            typed = resolve_plain(value)
                            if len(value) <= _RESOLVED_LENGTH and len(resolved) < _RESOLVED_COUNT:
                                resolved[value] = typed
                        container[slot] = typed
                else:
                    container[slot] = self._tagged_scalar(node, path)
                continue
            flow_style = node.flow_style
            flows = _nesting(node, depth, flows)
            if kind == "mapping" and flow_style and _template_action(node):
                # `{{ .Values.gpus }}` unquoted: YAML reads a mapping whose key is a mapping.
                # It is a template placeholder left unrendered: kept as its text, so rules
                # see a placeholder (GPU007), never "a dict is not a quantity" (GPU005).
                container[slot] = self.text[node.start_mark.index : node.end_mark.index]
                continue
            ctag = node.ctag
            if ctag is not seq_tag and ctag is not map_tag:
                self._check_tag(node, path)
            # Multi-line children of a block collection, for the YAML 1.2 layout checks
            # (which read only scalars and flow collections: nested block collections are
            # checked as collections of their own).
            multi: list[Any] | None = None if flow_style or in_alias else []
            inner = path if depth >= POSITION_DEPTH else None
            child = (in_alias, depth + 1, flows)
            if kind == "sequence":
                container[slot] = self._push_items(node, path, inner, child, multi, push)
                continue
            mapping = self._push_plain_entries(node, path, inner, child, multi, push)
            if mapping is None:  # _entries counts merged mappings against the alias budget
                mapping = self._push_entries(node, path, inner, child, multi, push)
            container[slot] = mapping
        return holder[0]

    def _count(self, node: Any, in_alias: bool) -> bool:
        """Count one node read against go-yaml's alias budget; whether it is read through
        an alias (reached before, or under a node that was)."""
        node_id = id(node)
        if node_id in self.seen:
            in_alias = True
        else:
            self.seen.add(node_id)
        self.decode_count += 1
        if in_alias:
            self.alias_count += 1
            if (
                self.alias_count > 100
                and self.decode_count > 1000
                and self.alias_count / self.decode_count > _allowed_alias_ratio(self.decode_count)
            ):
                raise AliasLimit
        return in_alias

    def _push_items(
        self,
        node: Any,
        path: Path,
        inner: Path | None,
        child: tuple[bool, int, int],
        multi: list[Any] | None,
        push: Any,
    ) -> list[Any]:
        """A sequence's list, its items pushed for ``build`` to fill in (at ``inner`` when
        their positions are their ancestor's, else at their own paths)."""
        items = node.value
        out: list[Any] = [None] * len(items)
        in_alias, depth, flows = child
        for i in range(len(items) - 1, -1, -1):
            item = items[i]
            if (
                multi is not None
                and item.end_mark.line != item.start_mark.line
                and (item.id == "scalar" or item.flow_style)
            ):
                multi.append(item)
                if item.id == "scalar" and item.style not in ("|", ">") and inner is None:
                    self.folded.append((*path, i))
            push(
                (item, (*path, i) if inner is None else inner, None, out, i, in_alias, depth, flows)
            )
        if multi:
            self._layout(node, multi)
        return out

    def _push_plain_entries(
        self,
        node: Any,
        path: Path,
        inner: Path | None,
        child: tuple[bool, int, int],
        multi: list[Any] | None,
        push: Any,
    ) -> dict[str, Any] | None:
        """``_push_entries`` in one pass for a mapping whose keys are all scalars, each
        written once, without a merge key (most mappings); None for any other, untouched:
        ``_entries`` then reports its duplicates and applies its merges."""
        pairs = node.value
        mapping: dict[str, Any] = {}
        for k_node, _v_node in pairs:
            if k_node.id != "scalar":
                return None
            key = k_node.value
            if key in mapping or (key == "<<" and not k_node.style):
                return None
            mapping[key] = None
        if multi is not None:
            for _k_node, v_node in pairs:
                if v_node.end_mark.line != v_node.start_mark.line and (
                    v_node.id == "scalar" or v_node.flow_style
                ):
                    multi.append(v_node)
            if multi:
                self._layout(node, multi)
        in_alias, depth, flows = child
        for i in range(len(pairs) - 1, -1, -1):
            k_node, v_node = pairs[i]
            key = k_node.value
            at = (*path, key) if inner is None else inner
            push((v_node, at, k_node, mapping, key, in_alias, depth, flows))
        return mapping

    def _push_entries(
        self,
        node: Any,
        path: Path,
        inner: Path | None,
        child: tuple[bool, int, int],
        multi: list[Any] | None,
        push: Any,
    ) -> dict[str, Any]:
        """A mapping's dict, keys in order, its values pushed for ``build`` to fill in."""
        mapping: dict[str, Any] = {}
        entries = self._entries(node, path, multi=multi)
        if multi:
            self._layout(node, multi)
        for key, _key_node, _value_node in entries:
            mapping[key] = None
        for key, k_node, v_node in reversed(entries):
            push((v_node, (*path, key) if inner is None else inner, k_node, mapping, key, *child))
        return mapping

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
                first_span = node_span(first)
                self.problems.append(
                    Problem(
                        codes.DUPLICATE_KEY,
                        node_span(key_node),
                        f"duplicate key {key!r} (first at line {first_span.line}): kubectl's "
                        "strict decoding rejects the object; keep one of them (non-strict "
                        "decoding silently keeps the last)",
                        (*path, key),
                        dropped=node_span(explicit[index[key]][2]),
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
                raise AliasLimit(self._anchor(source))
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
                raise AliasLimit

    def _merge_sources(self, merges: list[Any]) -> Iterator[Any]:
        for value_node in merges:
            if value_node.id == "mapping":
                yield value_node
            elif value_node.id == "sequence":
                for item in value_node.value:
                    if item.id == "mapping":
                        yield item


def _template_action(node: Any) -> bool:
    """Is this flow mapping a Go-template action written unquoted (``{{ .Values.x }}``,
    ``{{ .Values.x | default 1 }}``): one entry, whose key is itself a one-entry flow
    mapping with an empty value, and whose own value is empty?"""
    if len(node.value) != 1:
        return False
    key, value = node.value[0]
    if key.id != "mapping" or not key.flow_style or len(key.value) != 1:
        return False
    inner_value = key.value[0][1]
    return (
        value.id == "scalar"
        and value.value == ""
        and not value.style
        and inner_value.id == "scalar"
        and inner_value.value == ""
        and not inner_value.style
    )
