"""What ``gpulint check`` says besides its report: warnings on stderr, a fix's diff and the
``--diff`` summary (:mod:`gpulint.commands.check` runs the check)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.report import Report


#: The paths a "nothing to lint" warning names at most (pre-commit may pass thousands).
MAX_NAMED_PATHS = 5


def no_files_warning(paths: list[str]) -> None:
    """One line on stderr when a run linted no file: which paths held nothing to lint.

    Paths that do not exist are errors of their own and are not repeated here. A file counts
    as linted when it was read (or found unreadable, YML005), whether or not it held a
    Kubernetes object; files left out by ``exclude`` (``force-exclude`` for files named on
    the command line) do not.
    """
    if not paths:
        return
    from gpulint.config.file import warn  # escapes: the paths may be a pull request's names

    shown = ", ".join(paths[:MAX_NAMED_PATHS])
    if len(paths) > MAX_NAMED_PATHS:
        shown += f" and {len(paths) - MAX_NAMED_PATHS} more"
    warn(
        f"no files linted: {shown} held no *.yaml or *.yml file to lint (or every one was excluded)"
    )


def warn_fix(note: str) -> None:
    """A fix not applied, and why, on stderr (escaped: the note names the tree's paths)."""
    from gpulint.util.textsafe import escape

    sys.stderr.write(f"gpulint: warning: {escape(note)}\n")


def escape_diff(diff: str) -> str:
    """A diff with no control character but tab and line breaks (the text is a stranger's),
    and no line a GitHub workflow command: a context line is the file's line behind one
    space, and the runner trims that space (:func:`gpulint.util.textsafe.plain`)."""
    from gpulint.util.textsafe import escape, plain

    return plain(
        "".join(
            escape(line.rstrip("\r\n")) + line[len(line.rstrip("\r\n")) :]
            for line in diff.splitlines(keepends=True)
        )
    )


def diff_summary(report: Report, fixes: int, unsafe: bool, errors: list[str]) -> int:
    """``--diff``'s ending: one line on stderr, exit 1 when something would be fixed."""
    more = report.unsafe_fixable if not unsafe else 0
    line = f"Would fix {fixes} problem{'s' * (fixes != 1)}" if fixes else "No fixes to apply"
    if more:
        line += f" ({more} more with --unsafe-fixes)"
    sys.stderr.write(line + ".\n")
    if errors:
        return 2
    return 1 if fixes else 0
