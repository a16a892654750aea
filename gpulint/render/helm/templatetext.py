"""Finding a key path in text that is not YAML yet (a Helm template), line by line.

A template is YAML with Go-template actions in it, so it is read as lines: a line ``key:``
(or ``- key:``) is a key at the column where its text starts; lines that hold only an action
(``{{- if ... }}``, ``{{ toYaml . | nindent 8 }}``), comments and blank lines are left out
when a block's end is looked for. A key path is matched one key at a time, each among the
direct children of the block of the key before it ("the key text under the same parent
keys"); a sequence index picks the item written at that position when the template writes
that many items, else the first (a ``range`` writes one item for many).

A :class:`Template` is read into lines and indexed once; every finding on output it rendered
is matched against that index. Each block's extent and direct children are worked out the
first time a path reaches them and kept, and the ``toYaml``/``with`` lines are found in one
pass, so mapping F findings over a template of S lines costs about F + S, not F x S.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple, overload

_KEY = re.compile(
    r"""^((?:-\s+)*)(?:"([^"]+)"|'([^']+)'|([^\s"'#{}\[\],&*!|>%@`][^:#{}]*?))\s*:(?:\s|$)"""
)
_VALUES_REF = re.compile(r"\.Values((?:\.[A-Za-z0-9_-]+)+)")
_TO_YAML = re.compile(r"toYaml\s+(\$?\.[A-Za-z0-9_.-]*|\.)")
_WITH = re.compile(
    r"\{\{-?\s*(?:with|range)\s+(?:\$\w+\s*(?:,\s*\$\w+\s*)?:=\s*)?\$?\.Values((?:\.[A-Za-z0-9_-]+)+)"
)


class Line(NamedTuple):
    number: int  # 1-based
    indent: int  # column (0-based) of the first character that is not a space
    key: str | None
    key_column: int  # 0-based column of the key text
    item: bool  # starts with "- "
    value: str  # the text after "key:"


def _lines(text: str) -> list[Line]:
    out = []
    for i, raw in enumerate(text.splitlines()):
        stripped = raw.lstrip(" ")
        indent = len(raw) - len(stripped)
        if not stripped or stripped.startswith("#") or stripped.startswith("{{"):
            continue
        m = _KEY.match(stripped)
        if m is None:
            out.append(Line(i + 1, indent, None, indent, stripped.startswith("- "), stripped))
            continue
        key = m.group(2) or m.group(3) or m.group(4)
        key_column = indent + len(m.group(1))
        out.append(Line(i + 1, indent, key, key_column, bool(m.group(1)), stripped[m.end() :]))
    return out


_RANGE = re.compile(r"\{\{-?\s*range\b")


class Match(NamedTuple):
    """How far a key path was found: the lines of the keys found (their count is how many
    of the path's keys matched) and where the deepest one's block is."""

    lines: list[Line]
    depth: int  # how many elements of the path (keys and indexes) were matched
    block: tuple[int, int]  # the deepest match's block, as indexes into the lines
    #: An index was matched to an item it may not be (one past the template's literal
    #: items, or after template logic in the list, a ``range`` or an ``if``, that may write
    #: more or fewer items before it): how many of ``lines`` come before it; -1: none was.
    guessed: int = -1


def _block(lines: list[Line], at: int) -> tuple[int, int]:
    """The lines that belong to ``lines[at]``: a key's value (a sequence may sit at the
    key's own indentation), or an item's keys, the first of which is on the item's line."""
    head = lines[at]
    end = at + 1
    if head.item:
        while end < len(lines) and lines[end].indent > head.indent:
            end += 1
        return at, end
    column = head.key_column
    while end < len(lines):
        line = lines[end]
        if line.indent > column or (line.indent == column and line.item):
            end += 1
            continue
        break
    return at + 1, end


class Action(NamedTuple):
    """A template action, ``{{ ... }}``: where it starts and ends in the text, and its body
    without the trim markers and the spaces around it."""

    begin: int
    stop: int
    body: str

    @property
    def word(self) -> str:
        """Its first word (``if``, ``range``, ``end``, ``include``...), or ``""``."""
        return self.body.split(None, 1)[0] if self.body else ""


#: The actions that open a block ``{{ end }}`` closes.
OPENS = frozenset(("if", "range", "with", "define", "block"))


def actions(text: str) -> Iterator[Action]:
    """Each ``{{ ... }}`` of ``text``, ending at the first ``}}`` after it, as Go's lexer
    reads them: one pass over the text (a regular expression's lazy match is quadratic in
    the ``{{`` that no ``}}`` closes, and a template comes from the linted tree)."""
    pos = 0
    while True:
        begin = text.find("{{", pos)
        if begin < 0:
            return
        close = text.find("}}", begin + 2)
        if close < 0:
            return
        body = text[begin + 2 : close]
        body = body[1:] if body.startswith("-") else body
        body = body[:-1] if body.endswith("-") else body
        yield Action(begin, close + 2, body.strip())
        pos = close + 2


def without_actions(text: str) -> str:
    """``text`` with every action taken out."""
    out, pos = [], 0
    for a in actions(text):
        out.append(text[pos : a.begin])
        pos = a.stop
    out.append(text[pos:])
    return "".join(out)


class Template:
    """A template's text, split into lines and indexed once for every path looked up in it."""

    def __init__(self, text: str, whole: str | None = None) -> None:
        self.text = text
        self.raw: Sequence[str] = text.splitlines()
        #: The template's lines before it was cut to one of its documents (``sections``).
        self.whole: Sequence[str] = whole.splitlines() if whole is not None else self.raw
        self.lines = _lines(text)
        #: What is worked out once for the whole template and shared by its cuts.
        self.shared: dict[str, Any] = {}
        self._parent: Template | None = None
        self._span = (0, 0)
        self._blocks: dict[int, tuple[int, int]] = {}
        self._children: dict[tuple[int, int, int | None], _Children] = {}
        self._inserted: dict[tuple[int, int, int], tuple[str, ...] | None] = {}
        self._to_yaml: list[tuple[int, str]] | None = None  # (raw index, toYaml argument)
        #: [i]: the last raw index < i with a `with .Values` (-1: none)
        self._with_before: Sequence[int] = []

    @classmethod
    def cut(cls, whole: Template, lo: int, hi: int) -> Template:
        """``Template(kept, text)`` of the template ``whole`` (built from the text alone,
        whose only line break is ``\\n``), ``kept`` its text with the lines outside
        ``lo..hi-1`` (0-based) blanked, without copying or reading the template again:
        its lines are the whole's in that range, its raw lines a view, its ``toYaml``
        lines the whole's (found once). A template of N documents costs N + S, not N x S."""
        t = cls.__new__(cls)
        t.text = ""  # not kept: nothing reads a cut's text
        count = len(whole.raw)
        # the cut text ends with a line break (one blank line less) unless it keeps the last
        ends = whole.text == "" or whole.text.endswith("\n") or lo <= count - 1 < hi
        t.raw = _Blanked(whole.raw, lo, hi, count if ends else count - 1)
        t.whole = whole.raw
        numbers = whole.shared.get("numbers")
        if numbers is None:
            numbers = whole.shared["numbers"] = [line.number for line in whole.lines]
        t.lines = whole.lines[bisect.bisect_right(numbers, lo) : bisect.bisect_right(numbers, hi)]
        t.shared = whole.shared
        t._parent = whole
        t._span = (lo, hi)
        t._blocks, t._children, t._inserted = {}, {}, {}
        t._to_yaml, t._with_before = None, []
        return t

    def block(self, at: int) -> tuple[int, int]:
        got = self._blocks.get(at)
        if got is None:
            got = self._blocks[at] = _block(self.lines, at)
        return got

    def children(self, start: int, end: int, column: int | None) -> _Children:
        key = (start, end, column)
        got = self._children.get(key)
        if got is None:
            found = _children(self.lines, start, end, column)
            keys: dict[str, int] = {}
            for i in found:
                k = self.lines[i].key
                if k is not None and k not in keys:
                    keys[k] = i
            got = self._children[key] = _Children([i for i in found if self.lines[i].item], keys)
        return got

    def actions(self) -> list[tuple[int, str]]:
        """The raw lines with a ``toYaml``, with its argument (found once)."""
        if self._to_yaml is None and self._parent is not None:
            lo, hi = self._span
            found = self._parent.actions()
            a, b = bisect.bisect_left(found, (lo, "")), bisect.bisect_left(found, (hi, ""))
            self._to_yaml = found[a:b]
            self._with_before = _WithIn(self._parent._with_before, lo)
        if self._to_yaml is None:
            self._to_yaml = []
            before: list[int] = []
            last = -1
            for i, chunk in enumerate(self.raw):
                before.append(last)
                m = _TO_YAML.search(chunk)
                if m is not None:
                    self._to_yaml.append((i, m.group(1)))
                w = _WITH.search(chunk)
                if w is not None:
                    last = i
            before.append(last)
            self._with_before = before
        return self._to_yaml


class _Blanked(Sequence[str]):
    """The raw lines of a cut: the whole's in ``lo..hi-1``, blank elsewhere (``count``
    lines, as the cut text's ``splitlines`` gives them)."""

    def __init__(self, whole: Sequence[str], lo: int, hi: int, count: int) -> None:
        self._whole, self._lo, self._hi, self._count = whole, lo, hi, count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            start, stop, step = i.indices(self._count)
            if step != 1:
                return [self[j] for j in range(start, stop, step)]
            lo, hi = max(start, self._lo), min(stop, self._hi)
            if lo >= hi:
                return [""] * max(stop - start, 0)
            whole = self._whole
            return [""] * (lo - start) + list(whole[lo:hi]) + [""] * (stop - hi)
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError(i)
        return self._whole[i] if self._lo <= i < self._hi else ""


class _WithIn(Sequence[int]):
    """A cut's ``_with_before``: the whole's, where that line is inside the cut."""

    def __init__(self, whole: Sequence[int], lo: int) -> None:
        self._whole, self._lo = whole, lo

    def __len__(self) -> int:
        return len(self._whole)

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> list[int]: ...

    def __getitem__(self, i: int | slice) -> int | list[int]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        w = self._whole[i]
        return w if w >= self._lo else -1


class _Children(NamedTuple):
    items: list[int]  # the children that are sequence items, in order
    keys: dict[str, int]  # each key's first child line


def find(template: Template | str, path: tuple[Any, ...]) -> Match:
    """Match ``path`` (mapping keys and sequence indexes) against the template's lines."""
    t = template if isinstance(template, Template) else Template(template)
    lines = t.lines
    start, end = 0, len(lines)
    found: list[Line] = []
    depth = 0
    block = (start, end)
    column: int | None = None  # the children's column, when known (inside an item)
    guessed = -1
    for part in path:
        children = t.children(start, end, column)
        column = None
        if isinstance(part, int):
            items = children.items
            if not items:
                break
            pick = items[part] if part < len(items) else items[0]
            after = found[-1].number if found else 0  # the list's key line
            before = t.raw[after : lines[pick].number - 1]
            # every item of a list that is one `range` body comes from that one item
            ranged = len(items) == 1 and any(_RANGE.search(raw) for raw in before)
            logic = part >= len(items) or any("{{" in raw for raw in before)
            if guessed < 0 and logic and not ranged:
                guessed = len(found)
            start, end = t.block(pick)
            column = lines[pick].key_column
            depth += 1
            block = (start, end)
            continue
        hit = children.keys.get(part) if isinstance(part, str) else None
        if hit is None:
            break
        found.append(lines[hit])
        depth += 1
        # a key on an item's line (`- template:`): its value is below it, not the item
        start, end = _value_block(lines, hit) if lines[hit].item else t.block(hit)
        block = (start, end)
    return Match(found, depth, block, guessed)


def _value_block(lines: list[Line], at: int) -> tuple[int, int]:
    """The lines of the value of the key on the item line ``lines[at]`` (``- template:``
    and the mapping indented under it)."""
    column, end = lines[at].key_column, at + 1
    while end < len(lines) and (
        lines[end].indent > column or (lines[end].indent == column and lines[end].item)
    ):
        end += 1
    return at + 1, end


def _children(lines: list[Line], start: int, end: int, column: int | None = None) -> list[int]:
    """The direct children in ``lines[start:end]``: the lines at the block's own column
    (a sequence's items at their dash, a mapping's keys at their text)."""
    if start >= end:
        return []
    if column is not None:  # an item's keys: the first on the item's line, then below it
        return [
            i
            for i in range(start, end)
            if lines[i].key_column == column and (i == start or not lines[i].item)
        ]
    column = min(line.indent if line.item else line.key_column for line in lines[start:end])
    return [
        i
        for i in range(start, end)
        if (lines[i].indent if lines[i].item else lines[i].key_column) == column
    ]


def values_ref(text: str) -> tuple[str, ...] | None:
    """The values path a line's text uses (``{{ .Values.gpu.count }}``: ``gpu``, ``count``)."""
    m = _VALUES_REF.search(text)
    return tuple(m.group(1).strip(".").split(".")) if m else None


def inserted_values(template: Template | str, match: Match) -> tuple[str, ...] | None:
    """The values path a block inserts whole (``{{- toYaml .Values.resources | nindent 12
    }}``, or ``toYaml .`` inside ``{{- with .Values.tolerations }}``) below the deepest key
    matched, when the rest of the path is not written in the template."""
    t = template if isinstance(template, Template) else Template(template)
    raw, lines = t.raw, t.lines
    if match.lines:
        first = match.lines[-1].number  # the key's own line: `resources: {{ toYaml ... }}`
        b_end = match.block[1]
        last = lines[b_end].number - 1 if b_end < len(lines) else len(raw)
        # a `with` that wraps the key sits on the lines just above it
        above = max(0, first - 4)
    else:
        first, last, above = 1, len(raw), 0
    key = (first, last, above)
    if key not in t._inserted:
        t._inserted[key] = _inserted(t, first, last, above)
    return t._inserted[key]


def _inserted(t: Template, first: int, last: int, above: int) -> tuple[str, ...] | None:
    """The first ``toYaml`` in raw lines ``first..last`` (1-based) that names values: its
    own ``.Values.x``, or for ``toYaml .`` the nearest ``with``/``range .Values.x`` above it
    (from line ``above``, 0-based). A line repeated in the block is searched from where its
    text first appears there."""
    actions = t.actions()
    seen: dict[str, int] = {}  # a line's text: the raw index it first appears at
    at = bisect.bisect_left(actions, (first - 1, ""))
    while at < len(actions) and actions[at][0] < last:
        i, arg = actions[at]
        at += 1
        i = seen.setdefault(t.raw[i], i)
        if arg.lstrip("$").startswith(".Values."):
            return tuple(arg.lstrip("$")[len(".Values.") :].split("."))
        if arg == ".":
            w = t._with_before[i]
            if w >= above:
                m = _WITH.search(t.raw[w])
                assert m is not None
                return tuple(m.group(1).strip(".").split("."))
    return None


def copies(template: Template, parent: tuple[Any, ...], key: str) -> list[Line] | None:
    """Every line that writes ``key`` among the children of ``parent`` (a key path), in
    order: a key written twice under the same parent keys is two lines. None when the
    parent itself is not written in the template."""
    match = find(template, parent)
    if match.depth != len(parent):
        return None
    start, end = match.block
    lines = template.lines
    column = lines[start].key_column if parent and isinstance(parent[-1], int) else None
    return [lines[i] for i in _children(lines, start, end, column) if lines[i].key == key]
