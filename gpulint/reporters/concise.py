"""``--format concise``: ``path:line:col: CODE severity: what is wrong [Kind/name]``.

The text format's first line, without its help line, as ruff's concise output keeps the
diagnostic alone. ``gpulint rule CODE`` and the text format say how to fix it. Summary and
``--statistics`` are the text format's; the note on an assumed cluster is left out.
"""

from __future__ import annotations

from gpulint.model import Finding
from gpulint.report import Report
from gpulint.reporters import ReportContext, text
from gpulint.reporters.text import format_finding


class Stream(text.Stream):
    notes = False

    def line(self, finding: Finding) -> str:
        return format_finding(finding, self.ctx.color, help=False)


def render(report: Report, ctx: ReportContext) -> str:
    stream = Stream(ctx)
    return stream.file(report.findings) + stream.end(report)
