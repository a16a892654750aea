"""``--format concise``: ``path:line:col: CODE severity: what is wrong [Kind/name]``.

The text format's line without the advice: a message is cut before its first ``; `` outside
parentheses (what the rule says to do follows it), as ruff's concise output keeps the
diagnostic alone. ``gpulint rule CODE`` and the text format say how to fix it. Summary and
``--statistics`` are the text format's; the note on an assumed cluster is left out.
"""

from __future__ import annotations

from gpulint.model import Finding
from gpulint.report import Report
from gpulint.reporters import ReportContext, text
from gpulint.reporters.text import format_finding


def concise(finding: Finding) -> Finding:
    """The finding with its message cut before the advice: at the first ``; `` outside
    parentheses, brackets and backquotes (a quoted value or a note keeps its own ``;``)."""
    depth, quoted, message = 0, False, finding.message
    for i, ch in enumerate(message):
        if ch == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == ";" and depth == 0 and message[i + 1 : i + 2] == " ":
            return finding._replace(message=message[:i])
    return finding


class Stream(text.Stream):
    notes = False

    def line(self, finding: Finding) -> str:
        return format_finding(concise(finding), self.ctx.color)


def render(report: Report, ctx: ReportContext) -> str:
    stream = Stream(ctx)
    return stream.file(report.findings) + stream.end(report)
