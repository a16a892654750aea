"""``path:line:col: CODE severity: message [Kind/name]``, then ``  help: what to do``, per
finding, then a summary.

The first line's shape matches the standard ``file:line:col`` problem matchers of editors
and CI: it says what is wrong and where, in one short sentence; the help line below it, set
in by two spaces, says what to do, as ruff's and kube-linter's do (why it matters is
``gpulint rule CODE``). Suppressed findings are not printed; the summary counts them.

The path, rule code, message and object come from the linted files and are printed through
:func:`gpulint.util.textsafe.escape`: a finding's first line always starts with the path,
its help line with spaces, and no control character reaches the terminal. A path that
starts with ``:`` is written ``./:...`` (:func:`gpulint.util.textsafe.lead`), so that the
line cannot open a GitHub workflow command; :func:`gpulint.reporters.renderer` and
``streamer`` pass every line through :func:`gpulint.util.textsafe.plain` as well.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpulint.model import Finding, Related, Severity
from gpulint.report import Report
from gpulint.reporters import ReportContext
from gpulint.util.textsafe import escape, lead

_COLORS = {Severity.ERROR: "\033[31m", Severity.WARNING: "\033[33m", Severity.INFO: "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def format_finding(f: Finding, color: bool = False, help: bool = True) -> str:
    """The finding's line, and its help line (``help``: the text format; ``concise`` has
    the first line only)."""
    where = f"{escape(lead(f.path))}:{f.span.line}:{f.span.column}:"
    obj = f" [{escape(f.object.label())}]" if f.object is not None else ""
    sev = f.severity.label
    rule, message = escape(f.rule), escape(f.message)
    said = f"\n  help: {escape(f.help)}" if help and f.help else ""
    if color:
        c = _COLORS[f.severity]
        head = f"{_BOLD}{where}{_RESET} {c}{_BOLD}{rule}{_RESET} {c}{sev}{_RESET}"
        return f"{head}: {message}{_DIM}{obj}{_RESET}{said}"
    return f"{where} {rule} {sev}: {message}{obj}{said}"


#: A parenthetical this long is evidence or advice, not the finding itself (the GPU pods that
#: agree on a taint, the API server's words): the text report prints it once.
_LONG_ASIDE = 60


def once(finding: Finding, said: set[str]) -> Finding:
    """``finding`` with each long top-level parenthetical of its message and help that an
    earlier line of the run printed written ``(as above)``: twenty GPU020 lines do not
    repeat the same evidence twenty times. Only the text report does this; every other
    format (JSON, SARIF, ...) keeps each message whole, and so does the first line that
    says it."""
    finding = finding._replace(message=_once(finding.message, said))
    return finding._replace(help=_once(finding.help, said)) if finding.help else finding


def _once(message: str, said: set[str]) -> str:
    if "(" not in message:
        return message
    out: list[str] = []
    depth, start, last = 0, -1, 0
    for i, ch in enumerate(message):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0 and i - start > _LONG_ASIDE:
                aside = message[start : i + 1]
                if aside in said:
                    between = message[last:start]
                    if not (out and out[-1].endswith("(as above)") and not between.strip()):
                        out.append(between + "(as above)")  # two in a row read as one
                    last = i + 1
                else:
                    said.add(aside)
    if not out:
        return message
    return "".join(out) + message[last:]


def related_line(r: Related) -> str:
    """``--show-rendered``: another place a finding is about, on its own indented line."""
    return f"    {r.kind}: {escape(r.path)}:{r.span.line}:{r.span.column}: {escape(r.message)}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 or word == "info" else "s")


def summary(report: Report, ctx: ReportContext) -> str:
    """The last line: what was found, and whether the run was complete.

    Problems are counted per severity; notices (findings that say something was not
    checked: ``NOTICE_CODES``) apart, as ``and 2 notices``.

    "All checks passed" only when files were linted and nothing went wrong; a run that
    linted no file, or had a tool error (a path that does not exist, a rule that raised:
    exit code 2), says so instead.
    """
    counts = report.problems()
    total = sum(counts.values())
    notices = report.notices
    suppressed = report.suppressed
    files = _plural(report.files, "file")
    extra = f", {suppressed} suppressed" if suppressed else ""
    tool_errors = len(ctx.errors) + report.rule_errors
    if total:
        parts = ", ".join(_plural(counts[s.label], s.label) for s in sorted(Severity, reverse=True))
        also = f" and {_plural(notices, 'notice')}" if notices else ""
        head = f"Found {_plural(total, 'problem')} ({parts}){also} in {files}{extra}"
    elif report.files == 0:
        head = "No files linted"
    elif notices:
        head = f"No problems found and {_plural(notices, 'notice')} in {files}{extra}"
    elif tool_errors:
        head = f"No problems found in {files}{extra}"
    else:
        return f"All checks passed: no findings in {files}{extra}."
    if tool_errors:
        return f"{head}; {_plural(tool_errors, 'tool error')}: not everything was checked."
    return f"{head}." if total or notices else f"{head}: nothing was checked."


def fix_summary(report: Report, ctx: ReportContext) -> str:
    """The line about fixes: how many were applied and how many more could be (ruff's)."""
    safe, unsafe = report.fixable, report.unsafe_fixable
    mode = ctx.fixing
    if mode in ("safe", "unsafe"):
        head = f"Fixed {_plural(report.fixed, 'problem')}"
        if mode == "safe" and unsafe:
            head += f"; {unsafe} more fixable with --unsafe-fixes"
        return head + "."
    if mode != "show-unsafe":
        # A plain check says nothing of fixes: its last line stays the summary that CI logs
        # and scripts read (`--unsafe-fixes` alone asks for the count).
        return ""
    safe, unsafe = safe + unsafe, 0
    if not safe:
        return ""
    return f"[*] {safe} fixable with --fix --unsafe-fixes ({report.fixable} with --fix alone)."


class Stream:
    """One line per finding as each file is done, and the summary after the last file.

    Other line formats (``github``) override ``line``.
    """

    #: Say once, before the summary, what was assumed of an undescribed cluster (one short
    #: line, as ruff's notes); ``concise`` and ``-q`` print no note.
    notes = True

    def __init__(self, ctx: ReportContext) -> None:
        self.ctx = ctx
        #: A finding rests on the assumed cluster (ReportContext.assumption).
        self.assumed = False
        #: The rules whose findings can rest on an assumed cluster (``Rule.assumes_cluster``).
        self.assuming = frozenset(r.code for r in ctx.rules if r.assumes_cluster)
        #: ``--statistics``: (code, name) -> [count, fixable], in the order first met.
        self.counts: dict[tuple[str, str], list[int]] = {}
        #: The long parentheticals already printed (:func:`once`).
        self.said: set[str] = set()

    def line(self, finding: Finding) -> str:
        text = format_finding(once(finding, self.said), self.ctx.color)
        if self.ctx.show_rendered and finding.related:
            text += "".join(f"\n{related_line(r)}" for r in finding.related)
        return text

    def file(self, findings: Sequence[Finding]) -> str:
        shown = [f for f in findings if f.suppression is None]
        self.assumed = self.assumed or any(
            f.rule in self.assuming and f.severity is Severity.INFO for f in shown
        )
        if self.ctx.statistics:
            for f in shown:
                row = self.counts.setdefault((f.rule, f.name), [0, 0, 0])
                row[0] += 1
                row[1] += f.fix is not None and f.fix.applicability == "safe"
                row[2] += f.fix is not None
            return ""
        return "".join(self.line(f) + "\n" for f in shown)

    def end(self, report: Report) -> str:
        table = statistics(self.counts) if self.ctx.statistics else ""
        if self.ctx.quiet:
            return table
        note = ""
        if self.notes and self.assumed and self.ctx.assumption:
            note = f"note: {escape(self.ctx.assumption)}\n"
        fixes = fix_summary(report, self.ctx)
        return table + note + summary(report, self.ctx) + "\n" + (fixes + "\n" if fixes else "")


def statistics(counts: dict[tuple[str, str], list[int]]) -> str:
    """``--statistics`` (ruff's): one line per rule, most findings first: the count, the
    code, ``[*]`` when every finding of it has a fix ``--fix`` applies, ``[-]`` when every
    one has a fix but some only ``--unsafe-fixes`` applies, and the rule's name."""
    rows = sorted(counts.items(), key=lambda item: (-item[1][0], item[0][0]))
    width = max((len(str(row[0])) for _, row in rows), default=1)
    out = []
    for (code, name), (n, safe, fixable) in rows:
        mark = "[*]" if safe == n else "[-]" if fixable == n else "   "
        out.append(f"{n:>{width}}\t{escape(code)}\t{mark} {escape(name)}\n")
    return "".join(out)


def render(report: Report, ctx: ReportContext) -> str:
    stream = Stream(ctx)
    return stream.file(report.findings) + stream.end(report)
