"""Fixes as rules declare them (``Repair``) -> exact text edits (``Fix``) of the original text.

A rule says *what* to change in document-path terms (rename this key, move this entry under
``limits``, add this toleration); this module finds *where* in the text, with the document's
side table of positions, and writes the smallest edit that does it in the style around it:

* a block mapping gets a new line at the indentation of its keys, a flow mapping ``k: v``
  between its braces; a sequence gets an item the same way;
* a new line is inserted before the first key that starts a line (after the comment lines
  just above it), so no existing line is touched; a mapping or sequence that is missing is
  created in its parent (``limits:`` in ``resources``);
* a deleted entry takes its whole lines; a comment on them stays, on a line of its own;
* a moved value is copied as written (quoting and all);
* line breaks are the file's own (CRLF stays CRLF).

Nothing else of the file changes: every byte outside the edits is kept, so comments, quoting,
key order, anchors, a byte-order mark and the other documents of the file survive. A fix is
*skipped*, with the reason in ``Fix.skipped``, when an edit would land in content shared
through a YAML anchor (it would change every use), in a Go/Helm template (``{{ }}``), or where
the text cannot be edited safely (a mapping written as ``null``, a key that shares its line
with a ``- ``). The fixer (``gpulint.fix.loop``) applies the edits, re-lints, and refuses a result
that does not parse.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, NamedTuple

from gpulint.fix.places import MISSING, Owned, Places, Skip
from gpulint.fix.text import (
    BREAK,
    Source,
    block_entry,
    block_item,
    dotted,
    write_flow,
    write_scalar,
)
from gpulint.loader.document import Document
from gpulint.model import (
    AddEntry,
    AppendItem,
    Change,
    DeleteKey,
    Edit,
    Fix,
    MoveKey,
    Path,
    RenameKey,
    Repair,
)


class _Edit(NamedTuple):
    start: int
    end: int
    content: str


def plan(src: Source, doc: Document, repair: Repair, owned: Owned | None = None) -> Fix:
    """The text edits of ``repair`` in ``doc`` (a document of ``src``), or a skipped fix.
    ``owned``: what earlier plans of the same document found (``Places.own``)."""
    try:
        planner = _Planner(src, doc, owned)
        edits: list[_Edit] = []
        for change in repair.changes:
            edits.extend(planner.change(change))
        edits.sort(key=lambda e: (e.start, e.end))
        for a, b in itertools.pairwise(edits):
            if a.end > b.start or (a.start == a.end == b.start == b.end):
                raise Skip("its edits overlap")
        touched = [(e.start, e.end) for e in edits] + planner.touched
        if any("{{" in e.content for e in edits) or any(
            "{{" in src.text[src.line_start(a) : src.line_end(b)] for a, b in touched
        ):
            raise Skip("it would edit a Go template ({{ ... }})")
    except Skip as exc:
        return Fix(repair.message, (), repair.applicability, str(exc))
    out = tuple(Edit(src.span(e.start, e.end), e.start, e.end, e.content) for e in edits)
    return Fix(repair.message, out, repair.applicability)


class _Planner(Places):
    def __init__(self, src: Source, doc: Document, owned: Owned | None = None) -> None:
        super().__init__(src, doc, owned)
        #: Regions a change reads or rewrites beyond its edits (a renamed key's value):
        #: a Go template there makes the fix skipped too.
        self.touched: list[tuple[int, int]] = []

    # -- the changes ---------------------------------------------------------------------------
    def change(self, change: Change) -> list[_Edit]:
        if isinstance(change, RenameKey):
            return [self.rename(change.path, change.to)]
        if isinstance(change, DeleteKey):
            return [self.delete(change.path, change.prune)]
        if isinstance(change, MoveKey):
            return self.move(change)
        if isinstance(change, AddEntry):
            return [self.add(change.mapping, change.key, change.value)]
        if isinstance(change, AppendItem):
            return [self.append(change.sequence, change.value)]
        raise Skip(f"unknown change {type(change).__name__}")

    def rename(self, path: Path, to: str) -> _Edit:
        self.own(path)
        key, _ = self.loc(path)
        if key is None or not isinstance(path[-1], str):
            raise Skip("it renames something that is not a mapping key")
        start, end = self.range(key)
        self.touched.append((start, self.extent(path)))
        written = self.text[start:end]
        if "\n" in written or "\r" in written:
            raise Skip("the key spans several lines")
        quote = written[:1] if written[:1] in ("'", '"') else ""
        return _Edit(start, end, write_scalar(to, quote))

    def delete(self, path: Path, prune: int = 1) -> _Edit:
        path = self.pruned(path, prune)
        self.own(path)
        parent = path[:-1]
        if self.flow(parent):
            return self.delete_flow(path)
        return self.delete_block(path)

    def move(self, change: MoveKey) -> list[_Edit]:
        path, to = change.path, change.to
        key = change.key if change.key is not None else path[-1]
        if not isinstance(key, str):
            raise Skip("it moves something that is not a mapping entry")
        self.own(path)
        value = self.raw_value(path)
        self.touched.append((self.range(self.loc(path)[1])[0], self.extent(path)))
        gone = self.pruned(path, change.prune)
        target = self.data(to)
        # `requests: {gpu: 1}` holding only the moved entry, next to a missing `limits`:
        # renaming the emptied mapping's key is the whole move, and keeps every byte else.
        if (
            target is MISSING
            and len(gone) == len(path) - 1
            and to[:-1] == gone[:-1]
            and key == path[-1]
            and isinstance(to[-1], str)
        ):
            return [self.rename(gone, to[-1])]
        removed = self.delete(path, change.prune)
        start, above, inline = self.described(path)
        entry = self.src.line_start(self.range(self.loc(path)[0] or self.loc(path)[1])[0])
        # Only a block mapping can carry them (a flow mapping, or an empty value filled in,
        # would drop them: there they stay where they were). A mapping the move creates is
        # written into the first one that exists above it.
        where = to
        while where and self.data(where) is MISSING:
            where = where[:-1]
        carried = isinstance(self.data(where), dict) and not self.flow(where)
        if carried and (above or inline) and removed.start == entry:
            # the comments that describe the entry go with it: above it and after its value
            pad = " " * (self.range(self.loc(path)[0] or self.loc(path)[1])[0] - entry)
            kept = removed.content
            said = f"{pad}{inline.lstrip(' ')}{self.src.newline}"
            if inline and said in kept:
                kept = kept.replace(said, "", 1)
            removed = _Edit(start, removed.end, kept)
            return [removed, self.add(to, key, value, (above, inline))]
        return [removed, self.add(to, key, value)]

    def described(self, path: Path) -> tuple[int, list[str], str]:
        """The comment lines right above the entry at ``path`` (its own indentation, no
        blank line between: where they start, their texts) and the comment after its value
        on its line, with the spaces before it (``""``: none)."""
        src, text = self.src, self.text
        key, _ = self.loc(path)
        if key is None:
            return 0, [], ""
        start = self.range(key)[0]
        line = src.line_start(start)
        top = self.above_comments(line, start - line)
        above = [raw.strip() for raw in text[top:line].splitlines() if raw.strip()]
        end = self.extent(path)
        rest = text[end : src.line_end(end)].rstrip(" ")
        return top, above, rest if rest.lstrip(" ").startswith("#") else ""

    def add(
        self, mapping: Path, key: str, value: Any, comments: tuple[list[str], str] | None = None
    ) -> _Edit:
        current = self.data(mapping)
        if current is MISSING:
            parent = mapping[:-1]
            if not mapping or not isinstance(mapping[-1], str):
                raise Skip("the place to add to does not exist")
            return self.add(parent, mapping[-1], {key: value}, comments)
        if current is None and mapping and isinstance(mapping[-1], str):
            return self.fill(mapping, {key: value})
        if not isinstance(current, dict):
            raise Skip(f"{dotted(mapping) or 'the document'} is not a mapping")
        self.own(mapping)
        if key in current:
            raise Skip(f"{dotted(mapping)} already has {key}")
        if self.flow(mapping):
            return self.insert_flow(
                mapping, list(current), f"{write_scalar(key)}: {write_flow(value)}"
            )
        less = self.src.indentless
        return self.insert_block(
            mapping,
            list(current),
            lambda indent: _described(block_entry(key, value, indent, less), comments),
        )

    def append(self, sequence: Path, value: Any) -> _Edit:
        current = self.data(sequence)
        if current is MISSING:
            if not sequence or not isinstance(sequence[-1], str):
                raise Skip("the place to add to does not exist")
            return self.add(sequence[:-1], sequence[-1], [value])
        if current is None and sequence and isinstance(sequence[-1], str):
            return self.fill(sequence, [value])
        if not isinstance(current, list):
            raise Skip(f"{dotted(sequence)} is not a sequence")
        self.own(sequence)
        if self.flow(sequence):
            return self.insert_flow(sequence, list(range(len(current))), write_flow(value))
        if not current:
            raise Skip(f"{dotted(sequence)} is empty")
        _, first = self.loc(sequence)
        dash = self.src.offset(first.line, first.column)
        if self.text[dash : dash + 1] != "-" or self.text[self.src.line_start(dash) : dash].strip():
            raise Skip("the sequence's first item does not start its line")
        indent = dash - self.src.line_start(dash)
        at = self.above_comments(self.src.line_start(dash), indent)
        return _Edit(at, at, self.lines(block_item(value, indent)))

    def fill(self, path: Path, value: Any) -> _Edit:
        """Give a key written with no value (``tolerations:``, ``limits: null``) ``value``,
        a one-entry mapping or sequence; a comment after the key stays on its line."""
        self.own(path)
        key, span = self.loc(path)
        if key is None:
            raise Skip(f"{dotted(path)} is not a mapping entry")
        src, text = self.src, self.text
        start, end = self.range(span)
        if text[start:end] not in ("", "null", "Null", "NULL", "~"):
            raise Skip(f"{dotted(path)} is not a mapping or a sequence")
        if self.flow(path[:-1]):
            if start == end:
                raise Skip(f"{dotted(path)} has no value to replace")
            return _Edit(start, end, write_flow(value))
        rest = text[end : src.line_end(end)]
        if rest.strip(" ") and not rest.lstrip(" ").startswith("#"):
            raise Skip(f"{dotted(path)} shares its line with other content")
        key_start = self.range(key)[0]
        indent = key_start - src.line_start(key_start)
        body = block_entry("k", value, indent, src.indentless)[1:]
        return _Edit(start, src.line_end(end), rest + src.newline + src.newline.join(body))

    # -- edits ---------------------------------------------------------------------------------
    def insert_block(self, mapping: Path, keys: list[Any], make: Any) -> _Edit:
        src, text = self.src, self.text
        _, whole = self.loc(mapping)
        lo, hi = self.range(whole)
        # Only the mapping's own keys: a key merged in (`<<: *defaults`) is written elsewhere.
        keys = [
            k
            for k in keys
            if (found := self.loc((*mapping, k))[0]) is not None
            and found.column == whole.column
            and lo <= self.range(found)[0] < max(hi, lo + 1)
        ]
        for k in keys:
            key, _ = self.loc((*mapping, k))
            if key is None:
                continue
            start = self.range(key)[0]
            line = src.line_start(start)
            if not text[line:start].strip(" "):
                indent = start - line
                at = self.above_comments(line, indent)
                return _Edit(at, at, self.lines(make(indent)))
        # Every key shares its line with a `- ` (`- name: x`): add after the last entry.
        if not keys:
            raise Skip(f"{dotted(mapping)} is empty")
        first, _ = self.loc((*mapping, keys[0]))
        last = (*mapping, keys[-1])
        assert first is not None
        start = self.range(first)[0]
        indent = start - src.line_start(start)
        end = self.extent(last)
        rest = text[end : src.line_end(end)]
        if rest.strip(" ") and not rest.lstrip(" ").startswith("#"):
            raise Skip(f"{dotted(mapping)} ends inside a line")
        at = src.line_end(end)
        nl = src.newline
        if at == len(text):
            return _Edit(at, at, nl + nl.join(make(indent)))
        at = src.next_line(end)
        return _Edit(at, at, self.lines(make(indent)))

    def insert_flow(self, path: Path, keys: list[Any], item: str) -> _Edit:
        _, span = self.loc(path)
        start, end = self.range(span)
        if self.text[end - 1 : end] not in ("}", "]"):
            raise Skip(f"{dotted(path)} does not end with a bracket")
        if "<<" in self.text[start:end]:
            raise Skip("it would edit content merged through a YAML anchor")
        if not keys:
            return _Edit(start + 1, start + 1, item)
        return _Edit(self.extent((*path, keys[-1])), self.extent((*path, keys[-1])), ", " + item)

    def delete_block(self, path: Path) -> _Edit:
        src, text = self.src, self.text
        key, _ = self.loc(path)
        if key is None:
            raise Skip("it deletes something that is not a mapping entry")
        start = self.range(key)[0]
        line = src.line_start(start)
        if text[line:start].strip(" "):
            raise Skip("the entry shares its line with other content")
        end = self.extent(path)
        if end > src.line_start(end) or end == start:
            rest = text[end : src.line_end(end)]
            if rest.strip(" ") and not rest.lstrip(" ").startswith("#"):
                raise Skip("the entry ends inside a line")
            end = src.next_line(end)
        comments = self.comments(path, line, end)
        indent = " " * (start - line)
        keep = "".join(f"{indent}{c}{src.newline}" for c in comments)
        if end == len(text) and keep and not BREAK.search(text[line:end][-2:]):
            keep = keep[: -len(src.newline)]
        return _Edit(line, end, keep)

    def comments(self, path: Path, start: int, end: int) -> list[str]:
        """The comments in ``text[start:end]``, the text of the entry at ``path``."""
        text = self.text
        if "#" not in text[start:end]:
            return []
        covered: list[tuple[int, int]] = []
        for p, node in [(path, self.data(path)), *self.descendants(path, self.data(path))]:
            where = self.doc.positions.get(p)
            if where is None:
                continue
            key, value = where
            if not isinstance(node, (dict, list)):
                covered.append(self.range(value))
            if key is not None:
                covered.append(self.range(key))
        found = []
        at = start
        while at < end:
            line_end = min(self.src.line_end(at), end)
            i = at
            while True:
                i = text.find("#", i, line_end)
                if i < 0:
                    break
                if (i == at or text[i - 1] in " \t") and not any(a <= i < b for a, b in covered):
                    found.append(text[i:line_end].rstrip())
                    break
                i += 1
            at = self.src.next_line(at)
        return found

    def delete_flow(self, path: Path) -> _Edit:
        text = self.text
        key, _ = self.loc(path)
        if key is None:
            raise Skip("it deletes something that is not a mapping entry")
        start = self.range(key)[0]
        end = self.extent(path)
        if "#" in text[start:end]:
            raise Skip("the entry holds a comment")
        after = re.compile(r"[ \t]*,[ \t]*").match(text, end)
        if after is not None:
            return _Edit(start, after.end(), "")
        before = re.compile(r",[ \t]*\Z").search(text, 0, start)
        if before is not None:
            return _Edit(before.start(), end, "")
        return _Edit(start, end, "")


def _described(lines: list[str], comments: tuple[list[str], str] | None) -> list[str]:
    """An added entry's lines with the comments that described it where it was: those above
    it before its last line (the moved key's), the one after its value at that line's end."""
    if not comments or not lines:
        return lines
    above, inline = comments
    last = lines[-1]
    pad = last[: len(last) - len(last.lstrip(" "))]
    tail = f"{last}{inline}" if inline else last  # the comment after its own spaces
    return [*lines[:-1], *(pad + c for c in above), tail]
