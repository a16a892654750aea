"""``--format github``: GitHub Actions workflow commands that annotate the pull request diff.

One line per finding, then the text summary as a plain log line::

    ::error file=k8s/a.yaml,line=25,endLine=25,col=13,endColumn=27,title=GPU001::<message>

``error`` and ``warning`` findings use the commands of the same name; ``info`` uses
``notice``. The title is the rule code, and the message ends with the object
(``[Deployment/name]``) as in the text format. Columns are given only for a region on one
line: GitHub accepts ``col``/``endColumn`` only when ``line`` and ``endLine`` are equal, so a
region spanning lines is annotated by its lines (a region that ends where the next line
starts is on one line: ``col`` without ``endColumn``).

Paths are as given on the command line, except that an absolute path inside the working
directory is made relative to it (annotations need paths relative to the repository
root, which is where a workflow runs). Suppressed findings produce no annotation.

Escaping, in two steps, so that every line is exactly one command and text from the linted
files cannot start another (``::add-mask::``, a forged ``::error``): first the path, title and
message get the visible escaping of every human-facing output (:mod:`gpulint.util.textsafe`:
control characters and line separators as ``\\n``, ``\\x1b``, ``\\u2028``, an undecodable
file-name byte as ``\\xff``), so no line break is left in them; then the Actions toolkit's
own escaping (``escapeData`` / ``escapeProperty`` in ``@actions/core``): ``%``, CR and LF in
the message, and also ``:`` and ``,`` in property values. The runner's parser
(``ActionCommand.TryParseV2`` in actions/runner) ends the properties at the first ``::`` after
the command's own and splits them on ``,`` and the first ``=``: with ``:`` and ``,`` escaped, a
file named ``::error file=README.md::Approved`` or ``a,title=x`` stays the one ``file``
value. The first step also writes ``##[`` as ``##\\[`` (no legacy command either). This
format sets ``WORKFLOW_COMMANDS``: its commands are not passed through
:func:`gpulint.util.textsafe.plain`, its other lines (the summary) are.
"""

from __future__ import annotations

import os

from gpulint.model import Finding, Severity
from gpulint.report import Report
from gpulint.reporters import ReportContext, text
from gpulint.util.textsafe import escape, plain

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
#: This format writes real workflow commands (gpulint.reporters: not passed through ``plain``).
WORKFLOW_COMMANDS = True


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def display_path(path: str, cwd: str) -> str:
    """Absolute paths inside ``cwd`` become relative; everything else is kept."""
    if not os.path.isabs(path):
        return path
    try:
        relative = os.path.relpath(path, cwd)
    except ValueError:  # another drive (Windows)
        return path
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return path
    return relative.replace(os.sep, "/")


def format_finding(f: Finding, cwd: str) -> str:
    s = f.span
    props = [("file", escape(display_path(f.path, cwd))), ("line", str(s.line))]
    if s.end_line == s.line:
        props += [("endLine", str(s.line)), ("col", str(s.column))]
        props.append(("endColumn", str(s.end_column)))
    elif s.end_line == s.line + 1 and s.end_column == 1:
        # Ends where the next line starts: a region on one line, to its end.
        props += [("endLine", str(s.line)), ("col", str(s.column))]
    else:
        props.append(("endLine", str(s.end_line)))
    props.append(("title", escape(f.rule)))
    head = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    obj = f" [{f.object.label()}]" if f.object is not None else ""
    message = f"{f.message}{obj}"
    return f"::{COMMANDS[f.severity]} {head}::{escape_data(escape(message))}"


class Stream(text.Stream):
    """One workflow command per finding as each file is done, then the text summary."""

    def line(self, finding: Finding) -> str:
        return format_finding(finding, self.ctx.cwd)

    def end(self, report: Report) -> str:
        return plain(super().end(report))


def render(report: Report, ctx: ReportContext) -> str:
    stream = Stream(ctx)
    return stream.file(report.findings) + stream.end(report)
