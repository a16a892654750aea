"""A unified diff of a text and the text some known edits make of it, in time linear in the
text: difflib compares the lines around each run of edits only (the rest is known equal),
then the hunks are grouped and written as ``difflib.unified_diff`` writes them (three lines
of context). A whole-file ``SequenceMatcher`` costs the square of the lines when many lines
repeat (a values file of a thousand workers, each fixed: 16 s).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.model import Edit

Opcode = tuple[str, int, int, int, int]

#: Lines of context around each change, as ``diff -u`` writes them.
CONTEXT = 3


def edited_opcodes(old: str, new: str, edits: Iterable[Edit]) -> list[Opcode] | None:
    """``SequenceMatcher.get_opcodes`` of ``old``'s and ``new``'s lines, ``new`` being
    ``old`` with ``edits`` (offsets into ``old``) made; None when they do not make it."""
    import difflib

    a = old.splitlines(keepends=True)
    starts = [0]
    for line in a:
        starts.append(starts[-1] + len(line))
    blocks: list[list[int]] = []  # [first line, end line) of old, runs of edits merged
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    runs: list[list[Edit]] = []
    last = len(a) - 1 if a and not a[-1].endswith(("\n", "\r")) else len(a)
    for e in ordered:
        # An edit at the end of a text whose last line has no break changes that line.
        lo = max(min(bisect_right(starts, e.start) - 1, last), 0)
        hi = min(bisect_right(starts, e.end), len(a))
        hi = max(hi, min(lo + 1, len(a)))
        if blocks and lo <= blocks[-1][1]:
            blocks[-1][1] = max(blocks[-1][1], hi)
            runs[-1].append(e)
        else:
            blocks.append([lo, hi])
            runs.append([e])
    out: list[Opcode] = []
    pieces: list[str] = []
    i = j = 0
    for (lo, hi), run in zip(blocks, runs, strict=True):
        if lo > i:
            out.append(("equal", i, lo, j, j + lo - i))
            pieces.append(old[starts[i] : starts[lo]])
            j += lo - i
        begin, end = starts[lo], starts[hi]
        text = _apply(old, begin, end, run)
        if text is None:
            return None
        pieces.append(text)
        b_lines = text.splitlines(keepends=True)
        matcher = difflib.SequenceMatcher(None, a[lo:hi], b_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            out.append((tag, lo + i1, lo + i2, j + j1, j + j2))
        i, j = hi, j + len(b_lines)
    if i < len(a):
        out.append(("equal", i, len(a), j, j + len(a) - i))
        pieces.append(old[starts[i] :])
        j += len(a) - i
    b = new.splitlines(keepends=True)
    if "".join(pieces) != new or j != len(b):
        return None
    for kind, i1, i2, j1, j2 in out:  # what is said to be equal is
        if kind == "equal" and a[i1:i2] != b[j1:j2]:
            return None
    return out


def composed(text: str, first: Sequence[Edit], then: Sequence[Edit]) -> list[Edit] | None:
    """Edits of ``text`` that make what ``first`` then ``then`` (offsets into the text
    ``first`` makes) make of it, in time linear in the edits and the text they touch; None
    when ``first`` overlaps itself. (A fix's rounds each plan on the previous round's text;
    the diff is of the file as it was.)"""
    ordered = sorted(first, key=lambda e: (e.start, e.end))
    # Each edit of `first` as an interval of the text it makes, with its own in `text`.
    spans: list[tuple[int, int, int, int, Edit]] = []  # new start, new end, old start, old end
    shift = 0
    at = 0
    for e in ordered:
        if e.start < at:
            return None
        at = e.end
        begin = e.start + shift
        spans.append((begin, begin + len(e.content), e.start, e.end, e))
        shift += len(e.content) - (e.end - e.start)
    middle = _apply(text, 0, len(text), ordered)
    if middle is None:
        return None
    ends = [f for _, f, *_rest in spans]
    later = sorted(then, key=lambda e: (e.start, e.end))
    # Merge, in the middle text's offsets, the intervals of both lists that overlap or touch.
    marks = sorted(
        [(b, f, 0, i) for i, (b, f, *_rest) in enumerate(spans)]
        + [(e.start, e.end, 1, i) for i, e in enumerate(later)]
    )
    out: list[Edit] = []
    k = 0
    while k < len(marks):
        lo, hi = marks[k][0], marks[k][1]
        olds: list[int] = []
        news: list[int] = []
        while k < len(marks) and marks[k][0] <= hi:
            hi = max(hi, marks[k][1])
            (olds if marks[k][2] == 0 else news).append(marks[k][3])
            k += 1
        old_lo = _old_offset(spans, ends, lo, olds, start=True)
        old_hi = _old_offset(spans, ends, hi, olds, start=False)
        run = [later[i]._replace(start=later[i].start - lo, end=later[i].end - lo) for i in news]
        content = _apply(middle[lo:hi], 0, hi - lo, run)
        if content is None:
            return None
        model = spans[olds[0]][4] if olds else later[news[0]]
        out.append(model._replace(start=old_lo, end=old_hi, content=content))
    return out


def _old_offset(
    spans: list[tuple[int, int, int, int, Edit]],
    ends: list[int],
    at: int,
    inside: list[int],
    start: bool,
) -> int:
    """``at`` (an end of a merged interval, an offset of the middle text) in the first text:
    the old end of an edit of ``first`` it bounds, else shifted by the edits before it."""
    for i in inside if start else reversed(inside):
        b, f, old_b, old_f, _ = spans[i]
        if start and b == at:
            return old_b
        if not start and f == at:
            return old_f
    k = bisect_right(ends, at) - 1
    return at if k < 0 else at - (spans[k][1] - spans[k][3])


def _apply(old: str, begin: int, end: int, run: list[Edit]) -> str | None:
    """``old[begin:end]`` with ``run`` (sorted offsets into ``old``) made; None when two
    overlap (as :func:`gpulint.fix.loop.apply` refuses them)."""
    out: list[str] = []
    at = begin
    for e in run:
        if e.start < at:
            return None
        out.append(old[at : e.start])
        out.append(e.content)
        at = e.end
    out.append(old[at:end])
    return "".join(out)


def grouped(codes: list[Opcode], n: int = CONTEXT) -> Iterator[list[Opcode]]:
    """``SequenceMatcher.get_grouped_opcodes`` of these opcodes."""
    codes = _merged([c for c in codes if c[1] != c[2] or c[3] != c[4]]) or [("equal", 0, 1, 0, 1)]
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _merged(codes: list[Opcode]) -> list[Opcode]:
    """Adjacent ``equal`` opcodes made one (a block's own ends and the runs between)."""
    out: list[Opcode] = []
    for code in codes:
        if out and code[0] == "equal" and out[-1][0] == "equal":
            tag, i1, _, j1, _ = out[-1]
            out[-1] = (tag, i1, code[2], j1, code[4])
        else:
            out.append(code)
    return out


def _range(start: int, stop: int) -> str:
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def unified_lines(
    a: Sequence[str], b: Sequence[str], codes: list[Opcode], label: str
) -> Iterator[str]:
    """The lines ``difflib.unified_diff(a, b, label, label)`` writes for these opcodes."""
    started = False
    for group in grouped(codes):
        if not started:
            started = True
            yield f"--- {label}\n"
            yield f"+++ {label}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    yield " " + line
                continue
            if tag in ("replace", "delete"):
                for line in a[i1:i2]:
                    yield "-" + line
            if tag in ("replace", "insert"):
                for line in b[j1:j2]:
                    yield "+" + line
