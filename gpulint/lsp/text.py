"""Positions: gpulint's spans to the protocol's positions, and back.

gpulint counts lines from 1 and columns in Unicode code points from 1 (SARIF's
``unicodeCodePoints``), and breaks lines where YAML's C scanner does: at ``\\n``, ``\\r\\n``
and ``\\r``, and also at NEL, LS and PS (``gpulint.suppress.directives.split_lines``). The Language
Server Protocol counts lines from 0, breaks them at ``\\n``, ``\\r\\n`` and ``\\r`` only, and
counts characters in UTF-16 code units (its default ``positionEncoding``): a character outside
the Basic Multilingual Plane (an emoji, most CJK extension B ideographs) is two units. Every
conversion goes through a code-point offset into the text, so the two line models never
meet.
"""

from __future__ import annotations

import bisect
import itertools
import re

#: Line breaks as gpulint (YAML's C scanner) counts them; the protocol's are the first three.
_GPULINT_BREAKS = re.compile("\r\n|\r|\n|\x85|\u2028|\u2029")
_LSP_BREAKS = re.compile("\r\n|\r|\n")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
#: Characters that make gpulint's lines differ from the protocol's.
_EXTRA_BREAKS = re.compile("[\x85\u2028\u2029]")


def _starts(pattern: re.Pattern[str], text: str) -> list[int]:
    if "\r" not in text and pattern is _LSP_BREAKS:
        # Only "\n": str.split is ten times faster than the regex on a large text.
        return list(itertools.accumulate((len(line) + 1 for line in text.split("\n")), initial=0))[
            :-1
        ]
    return [0, *(m.end() for m in pattern.finditer(text))]


class LineIndex:
    """Where each line of one text starts, in both line models.

    When the text has no character outside the BMP and no NEL, LS or PS (nearly always),
    gpulint's positions are the protocol's less one, and a span converts without the line
    tables, which are built on first use only (140,000 lines of a 5 MB manifest take a
    tenth of a second).
    """

    __slots__ = ("_astral", "_extra", "_gpulint_starts", "_lsp_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        plain = text.isascii()
        self._extra = not plain and _EXTRA_BREAKS.search(text) is not None
        # Faster than a search: a character outside the BMP takes two UTF-16 units.
        self._astral = not plain and len(text.encode("utf-16-le", "surrogatepass")) > 2 * len(text)
        self._lsp_starts: list[int] | None = None
        self._gpulint_starts: list[int] | None = None

    @property
    def _lsp(self) -> list[int]:
        if self._lsp_starts is None:
            self._lsp_starts = _starts(_LSP_BREAKS, self.text)
        return self._lsp_starts

    @property
    def _gpulint(self) -> list[int]:
        if self._gpulint_starts is None:
            self._gpulint_starts = _starts(_GPULINT_BREAKS, self.text) if self._extra else self._lsp
        return self._gpulint_starts

    def offset(self, line: int, column: int) -> int:
        """The code-point offset of gpulint's 1-based ``line`` and ``column`` (clamped to
        the text: a span may end past the last line)."""
        starts = self._gpulint
        if line < 1:
            return 0
        if line > len(starts):
            return len(self.text)
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.text)
        return min(start + max(column - 1, 0), end)

    def position(self, offset: int) -> tuple[int, int]:
        """The protocol's (line, UTF-16 character) of a code-point offset."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self._lsp, offset) - 1
        start = self._lsp[line]
        character = offset - start
        if self._astral:
            character += len(_ASTRAL.findall(self.text, start, offset))
        return line, character

    def span_range(
        self, line: int, column: int, end_line: int, end_column: int
    ) -> tuple[tuple[int, int], tuple[int, int]]:
        """A gpulint span as the protocol's (start, end) positions."""
        if not self._astral and not self._extra:
            return (line - 1, column - 1), (end_line - 1, end_column - 1)
        start = self.offset(line, column)
        end = max(self.offset(end_line, end_column), start)
        return self.position(start), self.position(end)

    def to_offset(self, line: int, character: int) -> int:
        """The code-point offset of the protocol's (line, UTF-16 character); a character past
        the end of its line is the line's end, as the protocol says."""
        starts = self._lsp
        if line < 0:
            return 0
        if line >= len(starts):
            return len(self.text)
        start = starts[line]
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        # The line without its break: a position never points inside "\r\n".
        while end > start and self.text[end - 1] in "\r\n":
            end -= 1
        if not self._astral:
            return min(start + max(character, 0), end)
        units = 0
        offset = start
        while offset < end and units < character:
            units += 2 if ord(self.text[offset]) > 0xFFFF else 1
            offset += 1
        return offset

    def gpulint_line(self, offset: int) -> int:
        """gpulint's 1-based line of a code-point offset."""
        return bisect.bisect_right(self._gpulint, offset)

    def lsp_line_text(self, line: int) -> str:
        """The protocol's line ``line`` (0-based) without its line break."""
        starts = self._lsp
        if not 0 <= line < len(starts):
            return ""
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        return self.text[starts[line] : end].rstrip("\r\n")

    def line_start(self, line: int) -> int:
        """The code-point offset where the protocol's line ``line`` (0-based) starts."""
        starts = self._lsp
        return starts[max(0, min(line, len(starts) - 1))]

    @property
    def line_count(self) -> int:
        return len(self._lsp)


_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _split_lines(text: str) -> list[str]:
    """``text`` as the protocol's lines, each with its line break."""
    return _LSP_LINE.findall(text)


def _code_points(line: str, units: int) -> int:
    """The code points of ``line`` that ``units`` UTF-16 code units cover."""
    if line.isascii() or _ASTRAL.search(line) is None:
        return min(units, len(line))
    count = 0
    for i, char in enumerate(line):
        if count >= units:
            return i
        count += 2 if ord(char) > 0xFFFF else 1
    return len(line)


class Buffer:
    """An open document's text, changed in place by the protocol's incremental changes.

    Kept as a list of lines, so a change costs the lines it touches, not the document: a
    5 MB manifest takes a keystroke in microseconds (pygls's own document re-split the
    whole text on each change, ~100 ms at that size). The text is joined again only when it
    is read. Lines break at ``\\r\\n``, ``\\r`` and ``\\n`` only, as the protocol says.
    """

    __slots__ = ("_lines", "_text", "language", "version")

    def __init__(self, text: str, version: int | None = None, language: str = "") -> None:
        self._text: str | None = text
        self._lines: list[str] | None = None
        self.version = version
        self.language = language

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "".join(self._lines or ())
        return self._text

    def change(self, start: tuple[int, int] | None, end: tuple[int, int], new: str) -> None:
        """Replace the range from ``start`` to ``end`` (protocol positions) with ``new``;
        ``start`` None replaces the whole text."""
        if start is None:
            self._text, self._lines = new, None
            return
        if self._lines is None:
            self._lines = _split_lines(self.text)
        lines = self._lines
        (l1, c1), (l2, c2) = sorted([start, end])
        l1 = max(0, min(l1, len(lines)))
        l2 = max(l1, min(l2, len(lines)))
        first = lines[l1] if l1 < len(lines) else ""
        last = lines[l2] if l2 < len(lines) else ""
        prefix = first[: _code_points(first.rstrip("\r\n"), c1)]
        suffix = last[_code_points(last.rstrip("\r\n"), c2) :]
        lines[l1 : l2 + 1] = _split_lines(prefix + new + suffix)
        self._text = None
