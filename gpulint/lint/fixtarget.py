"""A target fixed (``--fix``, ``--diff``): read, its fixes applied and linted again.

The runner (:mod:`gpulint.lint.runner`) calls :func:`fix_target` for each file when fixing;
applying the edits is :mod:`gpulint.fix.loop`'s, writing the result the caller's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpulint.fix.loop import FileFix, fix_text
from gpulint.loader.target import Read, collector_paused, read_target

if TYPE_CHECKING:
    from gpulint.lint.engine import Linter
    from gpulint.model import Finding
    from gpulint.util.discover import Target

#: How files are fixed: the mode (``fixer.SAFE`` or ``fixer.UNSAFE``) and whether only the
#: diff is wanted (``--diff``).
Fixing = tuple[str, bool]


def fix_target(
    linter: Linter, target: Target, fixing: Fixing, read: Read | None = None
) -> tuple[list[Finding], FileFix | None]:
    """The target's findings after its fixes (``--fix``, ``--diff``), and what changed.

    Nothing is written here: the new bytes go back to the caller, which writes them (or
    prints the diff). Findings are those of the fixed text (``--diff`` prints none, only
    how many more ``--unsafe-fixes`` would fix).
    """
    raw, problem = read_target(target) if read is None else read
    if raw is None:
        assert problem is not None
        return linter.problem(target.label, problem), None
    from gpulint.fix.loop import encode_like, unified_diff
    from gpulint.loader.decoding import decode

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
