"""The fenced code blocks of README.md and docs/*.md, for the tests that run them.

A block is named by its document, the ``## `` section it is in, its language and its place
among the blocks of that language in that section, so a test keeps finding it when a message
in it changes. Expected command output in a ``console`` block is written after a ``$ command``
line and compared line by line with the real output, with two documented exceptions:

- a line that is exactly ``...`` stands for any number of lines left out;
- where the text just before the block says so ("shortened here"), a line that ends in
  ``...`` stands for any line that starts with what comes before the ``...``.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from functools import cache

from tests.conftest import ROOT

#: The documents whose blocks are inventoried (tests/test_readme.py checks every one is run).
DOCUMENTS = (
    "README.md",
    *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")),
)

_OPEN = re.compile(r"^( *)(```|~~~)([\w+-]*)\s*$")
ELISION = "..."


@dataclass(frozen=True)
class Block:
    doc: str
    section: str
    lang: str
    index: int
    line: int
    text: str
    before: str

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.doc, self.section, self.lang, self.index)

    @property
    def shortened(self) -> bool:
        """The text before the block says its messages are shortened."""
        return "shortened" in self.before


@cache
def blocks(doc: str) -> tuple[Block, ...]:
    lines = (ROOT / doc).read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    section = ""
    counts: dict[tuple[str, str], int] = {}
    prose_start, before = 0, ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## ") or (line.startswith("# ") and not section):
            section = line.lstrip("#").strip()
        opened = _OPEN.match(line)
        if not opened:
            i += 1
            continue
        indent, fence, lang = opened.groups()
        end = lines.index(f"{indent}{fence}", i + 1)
        text = textwrap.dedent("\n".join(lines[i + 1 : end])) + "\n"
        # The prose between the previous block and this one; adjacent blocks share it.
        prose = "\n".join(lines[prose_start:i]).strip()
        before = prose.split("\n\n")[-1] if prose else before
        n = counts.get((section, lang), 0)
        counts[(section, lang)] = n + 1
        out.append(Block(doc, section, lang, n, i + 1, text, before))
        i = prose_start = end + 1
    return tuple(out)


def block(doc: str, section: str, lang: str, index: int = 0) -> Block:
    (found,) = [b for b in blocks(doc) if b.key == (doc, section, lang, index)]
    return found


def console(text: str) -> list[tuple[str, list[str]]]:
    """``$ command`` lines and the output lines written after each."""
    out: list[tuple[str, list[str]]] = []
    for line in text.rstrip("\n").split("\n"):
        if line.startswith("$ "):
            out.append((line[2:], []))
        else:
            assert out, f"output before any command: {line!r}"
            out[-1][1].append(line)
    return out


def output_pattern(expected: list[str], shortened: bool) -> re.Pattern[str]:
    parts = []
    for line in expected:
        if line == ELISION:
            parts.append(r"(?:[^\n]*\n)*?")
        elif shortened and line.endswith(ELISION):
            parts.append(re.escape(line[: -len(ELISION)]) + r"[^\n]*\n")
        else:
            parts.append(re.escape(line) + r"\n")
    return re.compile("".join(parts))


def assert_output(expected: list[str], actual: str, shortened: bool, what: str) -> None:
    """The real output is what the block shows (see the module docstring for ``...``)."""
    text = actual if actual.endswith("\n") or not actual else actual + "\n"
    if output_pattern(expected, shortened).fullmatch(text):
        return
    shown = "\n".join(expected)
    raise AssertionError(f"{what}: the documented output\n{shown}\n--- is not the real one\n{text}")
