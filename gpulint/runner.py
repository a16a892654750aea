"""Run a linter over targets: read each file safely and collect findings in order."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpulint.discover import Target
from gpulint.engine import Linter
from gpulint.model import Finding, LintedObject, Severity, Span
from gpulint.yamlload import Problem


@dataclass(slots=True)
class Report:
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    #: The objects linted, collected only when ``run(..., collect_objects=True)``.
    objects: list[LintedObject] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {s.label: 0 for s in sorted(Severity, reverse=True)}
        for f in self.findings:
            if f.suppression is None:
                counts[f.severity.label] += 1
        return counts

    def failed(self, fail_on: Severity) -> bool:
        return any(f.suppression is None and f.severity >= fail_on for f in self.findings)


def read_target(target: Target) -> tuple[bytes | None, Problem | None]:
    """The file's bytes, or a YML005 problem saying why it could not be read."""
    if target.path is None:
        return sys.stdin.buffer.read(), None
    try:
        # Never open a FIFO or device: opening blocks or reads forever.
        mode = os.stat(target.path).st_mode
        if not stat.S_ISREG(mode):
            what = "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
            return None, Problem("YML005", Span(1, 1, 1, 1), f"{what}: not linted")
        with open(target.path, "rb") as fh:
            return fh.read(), None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return None, Problem("YML005", Span(1, 1, 1, 1), f"cannot read the file: {reason}")


def lint_target(
    linter: Linter, target: Target, seen: list[LintedObject] | None = None
) -> list[Finding]:
    raw, problem = read_target(target)
    if raw is None:
        assert problem is not None
        return linter.problem(target.label, problem)
    return linter.lint_bytes(target.label, raw, seen)


def run(linter: Linter, targets: Iterable[Target], collect_objects: bool = False) -> Report:
    report = Report()
    seen = report.objects if collect_objects else None
    for target in targets:
        report.findings.extend(lint_target(linter, target, seen))
        report.files += 1
    return report
