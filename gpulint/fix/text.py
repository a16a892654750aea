"""Text for fixes: a text's lines and offsets, and values written as YAML in its style.

:mod:`gpulint.fix.edits` plans a fix's edits with these: :class:`Source` maps lines and columns
to offsets and knows the file's line break and how it indents sequences; the writers give a
key, a scalar, a flow collection or block lines at an indentation (:func:`block_entry`,
:func:`block_item`), quoting only what would read back differently.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from itertools import accumulate
from typing import Any, NamedTuple

from gpulint.loader.scalars import resolve_plain
from gpulint.model import Path, Span

#: Line breaks as libyaml counts them (its marks are the positions' lines).
BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
#: The breaks other than LF: a text without any has its line starts found by splitting.
_OTHER_BREAKS = ("\r", "\x85", "\u2028", "\u2029")
#: A block sequence written at its key's indentation.
_INDENTLESS = re.compile(r"^( *)[^\s#-][^\r\n]*:[ \t]*\r?\n\1- ", re.MULTILINE)
#: What a text must hold for one of its values to be shared, merged or placed off its
#: mapping's column: an anchor, an alias, a merge key, an explicit key or a tag.
_SHARING = ("&", "*", "<<", "?", "!")
#: One level of indentation for what a fix creates.
INDENT = 2
#: A key or string value is written plain when it matches and reads back as the same
#: string (not `yes`, `null`, ...: go-yaml's YAML 1.1 booleans and nulls are quoted).
_PLAIN_SAFE = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*\Z")


class Source:
    """A text with its line starts: (line, column) <-> offset, both ways."""

    __slots__ = ("_indentless", "_plain", "newline", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        if not any(b in text for b in _OTHER_BREAKS):
            # Only LF breaks, as nearly every manifest: the line starts from the lengths of
            # split lines, in C. The regex below walks every character in Python's regex
            # engine: a quarter of a fix's planning, measured (bench/README.md).
            starts = [0, *accumulate(len(line) + 1 for line in text.split("\n"))]
            starts.pop()
            newline = "\n" if len(starts) > 1 else None
        else:
            starts = [0]
            newline = None
            for m in BREAK.finditer(text):
                starts.append(m.end())
                if newline is None:
                    newline = m.group()
        self.starts = starts
        #: The file's own line break, for the lines a fix adds.
        self.newline = newline if newline in ("\n", "\r\n", "\r") else "\n"
        self._indentless: bool | None = None
        self._plain: bool | None = None

    @property
    def indentless(self) -> bool:
        """Does the text write a block sequence at its key's indentation (``key:`` then
        ``- item`` under the ``k``), as kubectl and most manifests do? Then so do fixes."""
        if self._indentless is None:
            self._indentless = _INDENTLESS.search(self.text) is not None
        return self._indentless

    @property
    def plain(self) -> bool:
        """Is every value's text its own, with each key at its mapping's column? True when
        the text holds none of the characters anchors, aliases, merge keys, explicit keys
        and tags are written with, and ends with a line break (``Places.own`` then has
        nothing to check; without the final break an empty value at the very end lies
        outside its parent's region, which ``own`` refuses)."""
        if self._plain is None:
            text = self.text
            self._plain = text.endswith("\n") and not any(c in text for c in _SHARING)
        return self._plain

    def offset(self, line: int, column: int) -> int:
        line = min(max(line, 1), len(self.starts))
        return min(self.starts[line - 1] + column - 1, len(self.text))

    def point(self, offset: int) -> tuple[int, int]:
        i = bisect_right(self.starts, offset) - 1
        return i + 1, offset - self.starts[i] + 1

    def span(self, start: int, end: int) -> Span:
        return Span(*self.point(start), *self.point(end))

    def line_start(self, offset: int) -> int:
        return self.starts[bisect_right(self.starts, offset) - 1]

    def line_end(self, offset: int) -> int:
        """Where the line holding ``offset`` ends (before its break)."""
        i = bisect_right(self.starts, offset)
        if i >= len(self.starts):
            return len(self.text)
        m = BREAK.search(self.text, self.starts[i - 1])
        return m.start() if m is not None else len(self.text)

    def next_line(self, offset: int) -> int:
        """The start of the line after the one holding ``offset`` (the text's end if none)."""
        i = bisect_right(self.starts, offset)
        return self.starts[i] if i < len(self.starts) else len(self.text)


class Raw(NamedTuple):
    """A value copied as written in the text."""

    text: str


def dotted(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out


def write_scalar(value: Any, quote: str = "") -> str:
    """A scalar written for YAML: as it was (``Raw``), plain when that reads back the same,
    else quoted (``quote``: the quote character the text used, kept)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if value is None:
        return "null"
    text = str(value)
    if quote == "'" and "'" not in text and "\n" not in text:
        return f"'{text}'"
    if not quote and _PLAIN_SAFE.match(text) and resolve_plain(text) == text:
        return text
    return json.dumps(text, ensure_ascii=False)


def write_flow(value: Any) -> str:
    if isinstance(value, dict):
        return (
            "{" + ", ".join(f"{write_scalar(k)}: {write_flow(v)}" for k, v in value.items()) + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(write_flow(v) for v in value) + "]"
    return write_scalar(value)


def block_entry(key: Any, value: Any, indent: int, indentless: bool = False) -> list[str]:
    """``key: value`` as block lines at ``indent`` (a sequence at the key's indentation
    when ``indentless``)."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines = [f"{pad}{write_scalar(key)}:"]
        for k, v in value.items():
            lines.extend(block_entry(k, v, indent + INDENT, indentless))
        return lines
    if isinstance(value, list) and value:
        lines = [f"{pad}{write_scalar(key)}:"]
        for v in value:
            lines.extend(block_item(v, indent if indentless else indent + INDENT))
        return lines
    return [f"{pad}{write_scalar(key)}: {write_flow(value)}"]


def block_item(value: Any, indent: int) -> list[str]:
    """A block sequence item at ``indent`` (the column of its ``-``)."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines: list[str] = []
        for k, v in value.items():
            lines.extend(block_entry(k, v, indent + 2))
        lines[0] = f"{pad}- " + lines[0][indent + 2 :]
        return lines
    return [f"{pad}- {write_flow(value)}"]
