"""``gpulint check --fix`` / ``--diff``: apply the fixes findings carry, re-lint, repeat.

The edits of each fix (``gpulint.fix.edits``) are applied to the file's original text; every byte
outside them is kept. Fixes are taken in the findings' order, and one whose edits overlap an
edit already taken waits for the next round: after applying, the result is linted again
(its fixes are planned on the new text) until no fix is left or ``MAX_ROUNDS`` is reached,
as ruff does. A round whose result no longer parses the same way (a new YAML problem, a
different number of documents) is refused and the file keeps the previous round's text.

The bytes written back keep the file's encoding and byte-order mark. Whether and where the
result is written is the caller's (``gpulint.commands.check``): this module only computes.
A plain file is fixed by :func:`fix_target` (read, fixed, linted again), which the runner
calls with what it needs of linting (:class:`TargetLinter`); a rendered chart's or
overlay's fixes are made where its values are written (``gpulint.render.fixvalues``).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, NamedTuple, Protocol

from gpulint.loader.decoding import byte_order_mark
from gpulint.model import Edit, Finding

if TYPE_CHECKING:
    from gpulint.loader.document import Problem
    from gpulint.loader.target import Read
    from gpulint.util.discover import Part, Target

#: A text's shape as the fix loop compares it: its number of documents and its YAML problems'
#: codes, sorted.
Shape = tuple[int, list[str]]
#: How the fix loop lints a text: ``(label, text)`` -> its findings and :data:`Shape`
#: (:meth:`gpulint.lint.engine.Linter.lint_shaped`, with what else the file needs bound).
Relint = Callable[[str, str], tuple[list[Finding], Shape]]

#: Rounds of fix-and-re-lint at most (ruff: 100; gpulint's fixes settle in one or two).
MAX_ROUNDS = 10

#: Fix modes: ``--fix`` applies safe fixes, ``--unsafe-fixes`` unsafe ones too.
SAFE, UNSAFE = "safe", "unsafe"
#: How files are fixed: the mode (:data:`SAFE` or :data:`UNSAFE`) and whether only the diff
#: is wanted (``--diff``).
Fixing = tuple[str, bool]


class FileFix(NamedTuple):
    """What fixing one file changed, for the caller to write or print: ``data`` is the new
    content (``None``: unchanged, or ``--diff``), ``diff`` the unified diff with ``--diff``."""

    path: str | None  # None: standard input
    label: str
    fixed: int
    data: bytes | None
    diff: str
    notes: list[str]


class Fixed(NamedTuple):
    """What fixing one text gave: the new text, its findings, how many findings the fixes
    applied repaired, and notes (fixes skipped, with the reason)."""

    text: str
    findings: list[Finding]
    fixed: int
    notes: list[str]
    #: Edits of the original text that make ``text`` (the rounds' edits composed), for a
    #: diff of the lines around them; None when they could not be composed.
    edits: list[Edit] | None = None


def wanted(f: Finding, mode: str) -> bool:
    """Is ``f``'s fix applied in ``mode`` (``"safe"``, ``"unsafe"``)?"""
    fix = f.fix
    return (
        f.suppression is None
        and fix is not None
        and fix.available
        and (mode == UNSAFE or fix.applicability == "safe")
    )


def apply(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with non-overlapping ``edits`` (offsets into it) applied."""
    out: list[str] = []
    at = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < at:
            raise ValueError("overlapping edits")
        out.append(text[at : e.start])
        out.append(e.content)
        at = e.end
    out.append(text[at:])
    return "".join(out)


def _choose(
    findings: list[Finding], mode: str, refused: set[tuple[Edit, ...]]
) -> list[tuple[tuple[Edit, ...], int]]:
    """The fixes that can be applied together (their edits do not overlap), each with how
    many findings it fixes; a fix that overlaps one taken waits for the next round."""
    taken = _Taken()
    chosen: dict[tuple[Edit, ...], int] = {}
    for f in findings:
        if not wanted(f, mode):
            continue
        assert f.fix is not None
        edits = f.fix.edits
        if edits in refused:
            continue
        if edits in chosen:  # content reported once per use (aliases): one fix
            chosen[edits] += 1
            continue
        if any(taken.overlaps(e) for e in edits):
            continue
        for e in edits:
            taken.add(e.start, e.end)
        chosen[edits] = 1
    return list(chosen.items())


class _Taken:
    """The edits taken in a round, sorted, so that whether another overlaps one of them is a
    few lookups (each fix compared with every edit taken was quadratic in fixes: a file of
    4,000 fixed pods spent 10 s there). Edits taken never overlap one another, so only the
    last non-empty one starting before an edit, those starting inside it and the insertion
    points inside it can overlap it."""

    __slots__ = ("points", "spans")

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []  # non-empty, by start
        self.points: list[int] = []  # insertions

    def add(self, start: int, end: int) -> None:
        if start == end:
            insort(self.points, start)
        else:
            insort(self.spans, (start, end))

    def overlaps(self, e: Edit) -> bool:
        lo, hi = bisect_left(self.points, e.start), bisect_right(self.points, e.end)
        if any(_overlaps(e, p, p) for p in self.points[lo:hi]):
            return True
        i = bisect_left(self.spans, (e.start, -1))
        if i > 0 and _overlaps(e, *self.spans[i - 1]):
            return True
        j = bisect_right(self.spans, (e.end, e.end + 1))
        return any(_overlaps(e, a, b) for a, b in self.spans[i:j])


def _overlaps(e: Edit, start: int, end: int) -> bool:
    if e.start == e.end and start == end:
        return e.start == start  # two insertions at one place: their order is unknown
    return (e.start < end and start < e.end) or (e.start == e.end and start < e.start < end)


def fix_text(lint: Relint, label: str, text: str, mode: str) -> Fixed:
    """Apply the fixes of ``mode`` to ``text`` until none is left (at most ``MAX_ROUNDS``),
    linting each round's result with ``lint``."""
    findings, shape = lint(label, text)
    fixed = 0
    notes: list[str] = []
    refused: set[tuple[Edit, ...]] = set()
    current = text
    made: list[Edit] | None = []
    for _ in range(MAX_ROUNDS):
        chosen = _choose(findings, mode, refused)
        if not chosen:
            break
        taking = [e for edits, _ in chosen for e in edits]
        candidate = apply(current, taking)
        count = sum(n for _, n in chosen)
        # Linting the result is how it is checked: it parses as the text did, or the
        # round's fixes are taken again one by one.
        new_findings, new_shape = lint(label, candidate)
        if new_shape != shape:
            # Fixes that do not overlap can still clash (two add the same key): take them
            # one by one, keeping each that leaves the text parsing as before.
            kept: list[Edit] = []
            taking = kept
            count = 0
            candidate = current
            for edits, n in chosen:
                attempt = apply(current, [*kept, *edits])
                attempt_findings, attempt_shape = lint(label, attempt)
                if attempt_shape == shape:
                    kept.extend(edits)
                    candidate, count = attempt, count + n
                    new_findings = attempt_findings
                elif not kept:  # it breaks the text on its own: never applied
                    refused.add(edits)
                    notes.append(
                        f"{label}: a fix was not applied: the fixed text would no longer "
                        "parse the same way (a bug in the rule's fix; please report it)"
                    )
            if not kept:
                continue
        if made is not None:
            from gpulint.fix.diff import composed

            made = composed(text, made, taking)
        current = candidate
        fixed += count
        findings = new_findings
    for f in findings:
        fix = f.fix
        if f.suppression is None and fix is not None and fix.skipped is not None:
            if mode == UNSAFE or fix.applicability == "safe":
                notes.append(f"{f.path}:{f.line}:{f.column}: {f.rule} not fixed: {fix.skipped}")
        elif wanted(f, mode) and f.fix is not None and f.fix.edits not in refused:
            notes.append(
                f"{f.path}:{f.line}:{f.column}: {f.rule} not fixed: it overlaps another fix "
                f"still to apply after {MAX_ROUNDS} rounds"
            )
    return Fixed(current, findings, fixed, list(dict.fromkeys(notes)), made)


def encode_like(raw: bytes, text: str) -> bytes:
    """``text`` encoded as ``raw`` was: its byte-order mark and encoding kept."""
    mark = byte_order_mark(raw)
    if mark is None:
        return text.encode("utf-8")
    bom, codec = mark
    return bom + text.encode(codec)


def unified_diff(label: str, old: str, new: str, edits: Iterable[Edit] | None = None) -> str:
    """A unified diff of ``old`` -> ``new`` (``git apply`` and ``patch -p0`` read it; the
    file's name quoted as git quotes one when it holds a control character). With the
    ``edits`` that make ``new`` of ``old``, only the lines around them are compared
    (:mod:`gpulint.fix.diff`: linear in the text, however many lines repeat)."""
    import difflib

    from gpulint.util.textsafe import diff_path

    shown = diff_path(label)  # no control character from a file name in the header
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    codes = None
    if edits is not None:
        from gpulint.fix.diff import edited_opcodes

        codes = edited_opcodes(old, new, edits)
    if codes is not None:
        from gpulint.fix.diff import unified_lines

        lines: Iterable[str] = unified_lines(a, b, codes, shown)
    else:
        lines = difflib.unified_diff(a, b, fromfile=shown, tofile=shown)
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


# -- a plain file fixed: read, its fixes applied and linted again ----------------------------
class TargetLinter(Protocol):
    """What fixing a file needs of linting: a text linted with its :data:`Shape`, and a
    problem reading the file as its finding. Passed down by the caller (the runner; a
    :class:`gpulint.lint.engine.Linter` is one), never imported."""

    def lint_shaped(
        self, label: str, text: str, *, part: Part | None = None
    ) -> tuple[list[Finding], Shape]: ...

    def problem(self, label: str, problem: Problem) -> list[Finding]: ...


def fix_target(
    linter: TargetLinter, target: Target, fixing: Fixing, read: Read | None = None
) -> tuple[list[Finding], FileFix | None]:
    """The target's findings after its fixes (``--fix``, ``--diff``), and what changed.

    Nothing is written here: the new bytes go back to the caller, which writes them (or
    prints the diff). Findings are those of the fixed text (``--diff`` prints none, only
    how many more ``--unsafe-fixes`` would fix).
    """
    from gpulint.loader.decoding import decode
    from gpulint.loader.target import collector_paused, read_target

    raw, problem = read_target(target) if read is None else read
    if raw is None:
        assert problem is not None
        return linter.problem(target.label, problem), None
    text, problem = decode(raw)
    if text is None:
        assert problem is not None
        return linter.problem(target.label, problem), None
    mode, diff = fixing
    with collector_paused():
        part = target.part
        result = fix_text(
            lambda label, text: linter.lint_shaped(label, text, part=part), target.label, text, mode
        )
        findings = result.findings  # with --diff too: only the counts are shown, of what is left
    changed = result.text != text
    return findings, FileFix(
        target.path,
        target.label,
        result.fixed,
        # Standard input is written back whole, fixed or not (`gpulint check --fix - | ...`).
        encode_like(raw, result.text) if (changed or target.path is None) and not diff else None,
        unified_diff(target.label, text, result.text, result.edits) if changed and diff else "",
        result.notes,
    )
