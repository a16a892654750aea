"""The template line a rendered line is a copy of, found by its text.

A finding about a whole document (or one no key of the template was matched to) is placed
by its rendered line's text: the one template line that reads the same. When the template
holds that text several times (a CRD's description repeated in each version, as
controller-gen writes them), has no ``range`` (so each of its lines is written at most
once) and helm's output of it holds the text as many times, the line of the same rank is
the one; anything else is not known.
"""

from __future__ import annotations

import re

from gpulint.model import Span

#: A ``range`` action: the template may write one of its lines several times.
_RANGE_ACTION = re.compile(r"\{\{-?\s*range\b")


def same_line(
    output: list[str], bounds: tuple[int, int], template: list[str], line: int
) -> Span | None:
    """The span of the template line (``template``: its lines, right-stripped) that wrote the
    rendered ``line`` of ``output`` (helm's lines; ``bounds``: the first line of the
    template's output and the line after its last), if it is known."""
    if not 0 < line <= len(output):
        return None
    want = output[line - 1].rstrip()
    if not want.strip() or "{{" in want:
        return None
    hits = [i for i, text in enumerate(template) if text == want]
    rank = 0
    if len(hits) > 1:
        if _RANGE_ACTION.search("\n".join(template)):
            return None
        lo, hi = bounds
        same = [n for n in range(lo, hi) if output[n - 1].rstrip() == want]
        if len(same) != len(hits) or line not in same:
            return None
        rank = same.index(line)
    elif len(hits) != 1:
        return None
    at = hits[rank] + 1
    start = len(want) - len(want.lstrip()) + 1
    return Span(at, start, at, len(want) + 1)
