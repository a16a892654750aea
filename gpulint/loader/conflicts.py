"""Unresolved merge conflicts: Git's three markers left in a text.

A merge that stopped on a conflict writes both sides into the file between markers, each at
the start of its own line::

    <<<<<<< HEAD
      version: "535.104.05"
    =======
      version: "470.82.01"
    >>>>>>> feature/driver-bump

A text holding them is no longer YAML for any parser (kubectl, ``helm install -f``), whatever
tool it is for. Only all three, in this order and at column 0, are a conflict: a line of
seven ``=`` alone is also a Markdown heading's underline, and a block scalar's content (a
script, a README) that shows the markers is indented past its key.

One pass over the text already read: each marker is searched for once, from where the one
before it was found (``re`` scans in C; the work is the text's length in characters).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from gpulint.model import Span

#: The three markers, each at the start of a line: ``<<<<<<< `` and ``>>>>>>> `` followed by
#: the side's name, ``=======`` alone on its line (a CR before the LF allowed). Compiled on
#: first use by ``re``, and only for texts that fail to parse or are another tool's files.
_OURS = r"^<<<<<<< [^\r\n]*"
_SPLIT = r"^=======\r?$"
_THEIRS = r"^>>>>>>> [^\r\n]*"
#: How a conflict's message starts (a YML001 syntax error that a file which is not Kubernetes
#: gets too: ``gpulint.lint.foreign``).
CONFLICT = "YAML syntax error: unresolved merge conflict"
#: A marker line longer than this is cut in a message (which stays within 160 characters).
_SHOWN = 24


class Conflict(NamedTuple):
    """The first conflict of a text: each marker's 1-based line and the text of the first
    and last marker lines, and where in the text the first one starts."""

    start: int
    ours_line: int
    split_line: int
    theirs_line: int
    ours: str
    theirs: str

    def message(self, stopped: int | None = None) -> str:
        """What the finding says, naming every marker's line, and its help line (after
        ``; ``) with ``stopped``, the line a parser stopped at before the conflict, if any."""
        earlier = "" if stopped is None else f" (the parser stopped earlier, at line {stopped})"
        return (
            f"{CONFLICT}: '{_shown(self.ours)}' at line {self.ours_line}, '=======' at line "
            f"{self.split_line}, '{_shown(self.theirs)}' at line {self.theirs_line}; Git left "
            "both sides of a conflict in the file, so no YAML parser reads it (kubectl apply "
            f"and helm install -f refuse it){earlier}: keep one side and delete the three "
            "marker lines"
        )

    def span(self) -> Span:
        """The first marker's line, from column 1 to its end."""
        return Span(self.ours_line, 1, self.ours_line, len(self.ours) + 1)


def _shown(marker: str) -> str:
    return marker if len(marker) <= _SHOWN else marker[: _SHOWN - 1] + "\u2026"


def find_conflict(text: str) -> Conflict | None:
    """The first unresolved merge conflict of ``text`` (its three markers in order, each
    at column 0), or None. One pass: each search starts where the previous marker was."""
    if "<<<<<<< " not in text:  # nearly every text: one scan, no pattern compiled
        return None
    ours = re.compile(_OURS, re.MULTILINE).search(text)  # re caches the compiled pattern
    if ours is None:
        return None
    split = re.compile(_SPLIT, re.MULTILINE).search(text, ours.end())
    if split is None:
        return None
    theirs = re.compile(_THEIRS, re.MULTILINE).search(text, split.end())
    if theirs is None:
        return None
    first = text.count("\n", 0, ours.start()) + 1
    middle = first + text.count("\n", ours.start(), split.start())
    last = middle + text.count("\n", split.start(), theirs.start())
    return Conflict(ours.start(), first, middle, last, ours.group(), theirs.group())
