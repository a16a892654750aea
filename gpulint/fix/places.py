"""Where a fix's changes are in the text: the planner's lookups (``gpulint.fix.edits``).

A path of the document -> its key and value spans and their offsets in the text; the data
there; whether it is written in flow style; whether its text belongs to it alone (no
anchor, alias or merge key on the way: ``Places.own``); how far its text reaches; a value
as written; the comment lines above a line. Each raises :class:`Skip` with the reason when
the text cannot be edited there.
"""

from __future__ import annotations

from typing import Any

from gpulint.fix.text import BREAK, Raw, Source, dotted
from gpulint.loader.document import Document
from gpulint.model import Path, Span

#: The most nodes an edited entry may hold (a resources mapping holds a handful).
MAX_ENTRY_NODES = 10_000


class Skip(Exception):
    """A fix that cannot be made; the message says why."""


#: Paths of a document already known to be its own text (``Places.own``), with the
#: region and column their children are checked against.
Owned = dict[Path, tuple[tuple[int, int], int]]


class _Missing:
    pass


#: What ``Places.data`` returns for a path the document does not have.
MISSING: Any = _Missing()


class Places:
    """Lookups in one document of a text; ``owned`` may be shared by its plans."""

    def __init__(self, src: Source, doc: Document, owned: Owned | None = None) -> None:
        self.src = src
        self.text = src.text
        self.doc = doc
        self.owned: Owned = {} if owned is None else owned
        #: Side-table lookups already made (a plan asks for most paths more than once).
        self._locs: dict[Path, tuple[Span | None, Span]] = {}

    def loc(self, path: Path) -> tuple[Span | None, Span]:
        found = self._locs.get(path)
        if found is None:
            found = self.doc.positions.get(path)
            if found is None:
                raise Skip(f"nothing is written at {dotted(path) or 'the document'}")
            self._locs[path] = found
        return found

    def range(self, span: Span) -> tuple[int, int]:
        # Source.offset twice, written out: a plan asks this a dozen times.
        starts, size = self.src.starts, len(self.text)
        last = len(starts)
        line, end_line = min(max(span.line, 1), last), min(max(span.end_line, 1), last)
        return (
            min(starts[line - 1] + span.column - 1, size),
            min(starts[end_line - 1] + span.end_column - 1, size),
        )

    def data(self, path: Path) -> Any:
        node: Any = self.doc.data
        for step in path:
            in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
            if (isinstance(node, dict) and step in node) or in_list:
                node = node[step]
            else:
                return MISSING
        return node

    def flow(self, path: Path) -> bool:
        _, value = self.loc(path)
        start = self.src.offset(value.line, value.column)
        return self.text[start : start + 1] in ("{", "[")

    def own(self, path: Path) -> None:
        """Raise unless the text at ``path`` belongs to this path alone (no anchor, no alias,
        no merge key on the way: an edit there would change every use)."""
        # Each prefix is checked from its parent's region; what was checked is remembered
        # for the document (``owned``): a fix's changes, and a pod's fixes, share prefixes.
        if self.src.plain and path in self.doc.positions:
            return  # nothing in the text can share, merge or shift a value
        owned = self.owned
        depth = len(path)
        while depth and path[:depth] not in owned:
            depth -= 1
        if depth:
            outer, column = owned[path[:depth]]
        else:
            _, root = self.loc(())
            outer, column = self.range(root), root.column
        for i in range(depth + 1, len(path) + 1):
            prefix = path[:i]
            key, value = self.loc(prefix)
            start, end = self.range(value)
            if self.text[start : start + 1] in ("&", "*"):
                raise Skip("it would edit content shared through a YAML anchor")
            lo = self.src.offset(key.line, key.column) if key is not None else start
            merged = not outer[0] <= lo < max(outer[1], outer[0] + 1)
            if key is not None:
                # A key of a block mapping sits at the mapping's column; one further in came
                # from a merge key (`<<: &defaults {...}`), and a flow mapping with `<<`
                # may hold merged keys anywhere.
                flow = self.text[outer[0] : outer[0] + 1] == "{"
                if flow:
                    merged = merged or "<<" in self.text[outer[0] : outer[1]]
                else:
                    merged = merged or key.column != column
            if merged:
                raise Skip("it would edit content merged or shared through a YAML anchor")
            outer = (start, end)
            column = value.column
            owned[prefix] = (outer, column)

    def pruned(self, path: Path, prune: int) -> Path:
        """The entry to delete: ``path``, or the enclosing mapping it would leave empty."""
        while prune > 0 and len(path) >= 2 and isinstance(path[-2], str):
            parent = self.data(path[:-1])
            grand = self.data(path[:-2])
            if not (isinstance(parent, dict) and len(parent) == 1 and isinstance(grand, dict)):
                break
            path = path[:-1]
            prune -= 1
        return path

    def extent(self, path: Path) -> int:
        """Where the text of the value at ``path`` ends (block collections end at their last
        scalar, not at the next token, where the parser puts them)."""
        value = self.data(path)
        _, span = self.loc(path)
        if not isinstance(value, (dict, list)) or self.flow(path):
            return self.range(span)[1]
        end = self.range(span)[0]
        for p, node in self.descendants(path, value):
            found = self.doc.positions.get(p)
            if found is None:
                continue
            key, sub = found
            if isinstance(node, (dict, list)) and not self.flow(p):
                if key is not None:
                    end = max(end, self.range(key)[1])
                continue
            end = max(end, self.range(sub)[1])
        return end

    def descendants(self, path: Path, value: Any) -> list[tuple[Path, Any]]:
        """The paths below ``path`` and their values, from the data (a fix's entry is small:
        walking the data, not the whole side table, keeps planning linear in the file)."""
        out: list[tuple[Path, Any]] = []
        stack: list[tuple[Path, Any]] = [(path, value)]
        while stack:
            here, node = stack.pop()
            if isinstance(node, dict):
                children: Any = node.items()
            elif isinstance(node, list):
                children = enumerate(node)
            else:
                continue
            for step, child in children:
                out.append(((*here, step), child))
                stack.append(((*here, step), child))
            if len(out) > MAX_ENTRY_NODES:
                raise Skip("the entry is too large to edit")
        return out

    def raw_value(self, path: Path) -> Raw:
        value = self.data(path)
        _, span = self.loc(path)
        start, end = self.range(span)
        written = self.text[start:end]
        if isinstance(value, (dict, list)) and not self.flow(path):
            raise Skip("only a value written on one line can be moved")
        if not written or BREAK.search(written):
            raise Skip("only a value written on one line can be moved")
        return Raw(written)

    def above_comments(self, line_start: int, indent: int) -> int:
        """``line_start`` moved up over the comment lines just above it at ``indent``."""
        src, text = self.src, self.text
        at = line_start
        while at > 0:
            prev = src.line_start(at - 1)
            line = text[prev : src.line_end(prev)]
            if not line.lstrip(" ").startswith("#") or len(line) - len(line.lstrip(" ")) != indent:
                break
            at = prev
        return at

    def lines(self, lines: list[str]) -> str:
        nl = self.src.newline
        return "".join(line + nl for line in lines)
