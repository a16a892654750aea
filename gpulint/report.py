"""What a run found (:class:`Report`): the value the runner fills and the reporters read.

It sits below both: reporters format a report without depending on how it was produced
(serially, in worker processes, or built from a list in a test).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gpulint.model import NOTICE_CODES, TOOL_ERROR_CODES, Finding, LintedObject, Severity


class Report:
    """What a run found: the findings (unless streamed), and counts that are always kept.

    The counts and the exit status are kept as files are added, so a report that streams
    its findings to the output (``keep_findings=False``) still knows its summary without
    holding one finding. ``Report(findings, files=1)`` makes a finished report from a list.
    """

    __slots__ = (
        "_counts",
        "_keep",
        "_notices",
        "_worst",
        "files",
        "findings",
        "fixable",
        "fixed",
        "objects",
        "rule_errors",
        "suppressed",
        "unsafe_fixable",
    )

    def __init__(
        self,
        findings: Iterable[Finding] = (),
        files: int = 0,
        objects: Iterable[LintedObject] = (),
        keep_findings: bool = True,
    ) -> None:
        self.findings: list[Finding] = []
        self.files = files
        #: The objects linted, collected only when ``run(..., collect_objects=True)``.
        self.objects: list[LintedObject] = list(objects)
        #: How many findings a suppression silenced.
        self.suppressed = 0
        #: How many GL900 (a rule raised) and GL202 (no renderer) findings: exit code 2.
        self.rule_errors = 0
        #: How many findings ``--fix`` repaired; of the findings left, how many have a safe
        #: fix (``--fix``) and how many an unsafe one (``--unsafe-fixes``).
        self.fixed = 0
        self.fixable = 0
        self.unsafe_fixable = 0
        self._counts = {s.label: 0 for s in sorted(Severity, reverse=True)}
        #: Of those, the notices (NOTICE_CODES: something was not checked), per severity.
        self._notices = dict(self._counts)
        self._worst: Severity | None = None
        self._keep = keep_findings
        self.extend(list(findings))

    def extend(self, findings: Sequence[Finding]) -> None:
        """Count ``findings`` (and keep them, unless the report streams)."""
        for f in findings:
            if f.suppression is not None:
                self.suppressed += 1
                continue
            self._counts[f.severity.label] += 1
            if f.rule in NOTICE_CODES:
                self._notices[f.severity.label] += 1
            if f.rule in TOOL_ERROR_CODES:
                self.rule_errors += 1
            if self._worst is None or f.severity > self._worst:
                self._worst = f.severity
            if f.fix is not None and f.fix.available:
                if f.fix.applicability == "safe":
                    self.fixable += 1
                else:
                    self.unsafe_fixable += 1
        if self._keep:
            self.findings.extend(findings)

    def counts(self) -> dict[str, int]:
        """Findings not suppressed, per severity label, most severe first."""
        return dict(self._counts)

    @property
    def notices(self) -> int:
        """How many findings not suppressed say that something was not checked."""
        return sum(self._notices.values())

    def problems(self) -> dict[str, int]:
        """Findings not suppressed that are not notices, per severity label."""
        return {label: n - self._notices[label] for label, n in self._counts.items()}

    def failed(self, fail_on: Severity) -> bool:
        return self._worst is not None and self._worst >= fail_on
