"""Reporters turn a Report into text. Each lives in its own module, imported on demand.

A format whose output is a sequence of lines (``text``, ``github``) also defines a
``Stream`` class: ``Stream(ctx).file(findings)`` is the output for one file's findings and
``.end(report)`` what follows the last file, so ``gpulint check`` writes each file's
findings as soon as they are known and holds none of them (memory does not grow with the
number of files). Its ``render`` is built from the same ``Stream``, so both ways print the
same bytes. ``json``, ``sarif`` and ``junit`` are one document each, rendered at the end
from the findings kept.

Whatever the format, its output reaches the caller through :func:`renderer` or
:func:`streamer`, which pass it through :func:`gpulint.util.textsafe.plain`: printed to a CI log,
no line of it is a GitHub workflow command, however a new format builds its lines. The one
exception is a format that sets ``WORKFLOW_COMMANDS = True`` (``github``): its commands are
real, it escapes their properties and data itself, and passes its other lines through
``plain``.

May import: :mod:`gpulint.util`, :mod:`gpulint.model`, :mod:`gpulint.report` and the rule
API (:mod:`gpulint.rule`, for the catalog in SARIF); never linting or configuration.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from datetime import datetime

    from gpulint.model import Finding, Severity
    from gpulint.report import Report
    from gpulint.rule import Rule

#: --format name -> module; a module exposes ``render(report, ctx) -> str`` and may set
#: ``NEEDS_OBJECTS = True`` to receive every linted object in ``report.objects``.
FORMATS: dict[str, str] = {
    "text": "gpulint.reporters.text",
    "concise": "gpulint.reporters.concise",
    "json": "gpulint.reporters.json",
    "sarif": "gpulint.reporters.sarif",
    "github": "gpulint.reporters.github",
    "junit": "gpulint.reporters.junit",
    "gitlab": "gpulint.reporters.gitlab",
}


class ReportContext:
    """What a format needs besides the findings: the rules, the run and where it ran.

    A plain class, not a dataclass: this module is on the start-up path of every check
    (bench/README.md, "Start-up").
    """

    __slots__ = (
        "argv",
        "assumption",
        "color",
        "cwd",
        "ended",
        "errors",
        "exit_code",
        "fail_on",
        "fixing",
        "quiet",
        "rules",
        "show_rendered",
        "started",
        "statistics",
        "stdin_label",
    )

    def __init__(
        self,
        rules: Sequence[Rule],
        fail_on: Severity,
        exit_code: int,
        color: bool = False,
        argv: Sequence[str] = (),
        cwd: str | None = None,
        stdin_label: str | None = None,
        started: float | None = None,
        ended: float | None = None,
        errors: Sequence[str] = (),
        show_rendered: bool = False,
        fixing: str | None = None,
        assumption: str | None = None,
    ) -> None:
        #: What rules assumed of the cluster for want of a description (the text report
        #: says it once, after an ``info`` finding of a rule that ``assumes_cluster``); None:
        #: nothing assumed.
        self.assumption = assumption
        self.rules = rules
        #: Text output: show each finding's place in a chart's or overlay's rendered output.
        self.show_rendered = show_rendered
        self.fail_on = fail_on
        self.exit_code = exit_code
        self.color = color
        self.argv = argv
        #: The working directory: relative paths are relative to it (SARIF ``%SRCROOT%``).
        self.cwd = os.getcwd() if cwd is None else cwd
        #: The label findings in standard input carry, when ``-`` was linted.
        self.stdin_label = stdin_label
        #: When the run started and ended (``time.time()``), for formats that record the
        #: invocation; ``start_time`` and ``end_time`` give them as UTC datetimes.
        self.started = started
        self.ended = ended
        #: Tool errors reported on stderr (a missing path, ...): exit code 2.
        self.errors = errors
        #: ``"safe"`` (``--fix``) or ``"unsafe"`` (``--fix --unsafe-fixes``) when fixes were
        #: applied, ``"show-unsafe"`` for ``--unsafe-fixes`` alone, else ``None``.
        self.fixing = fixing
        #: Line formats: the findings and nothing else, no note or summary (``-q``).
        self.quiet = False
        #: Line formats: a count per rule instead of the findings (``--statistics``).
        self.statistics = False

    @property
    def start_time(self) -> datetime | None:
        return _utc(self.started)

    @property
    def end_time(self) -> datetime | None:
        return _utc(self.ended)


def _utc(seconds: float | None) -> datetime | None:
    if seconds is None:
        return None
    from datetime import datetime, timezone  # only the formats that record times need it

    return datetime.fromtimestamp(seconds, timezone.utc)


class Renderer(Protocol):
    def __call__(self, report: Report, ctx: ReportContext) -> str: ...


class Stream(Protocol):
    """Output written while the files are linted (see the module docstring)."""

    def file(self, findings: Sequence[Finding]) -> str: ...

    def end(self, report: Report) -> str: ...


class _Plain:
    """A format's ``Stream`` whose output goes through :func:`gpulint.util.textsafe.plain`."""

    __slots__ = ("stream",)

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def file(self, findings: Sequence[Finding]) -> str:
        from gpulint.util.textsafe import plain

        return plain(self.stream.file(findings))

    def end(self, report: Report) -> str:
        from gpulint.util.textsafe import plain

        return plain(self.stream.end(report))


def streamer(fmt: str) -> Callable[[ReportContext], Stream] | None:
    """The format's ``Stream`` class, or None when it renders only at the end; its output is
    made no workflow command (the module docstring)."""
    module = importlib.import_module(FORMATS[fmt])
    stream: Callable[[ReportContext], Stream] | None = getattr(module, "Stream", None)
    if stream is None or getattr(module, "WORKFLOW_COMMANDS", False):
        return stream
    made = stream
    return lambda ctx: _Plain(made(ctx))


def renderer(fmt: str) -> Renderer:
    """The format's ``render``; its output is made no workflow command (the module docstring)."""
    module = importlib.import_module(FORMATS[fmt])
    render: Renderer = module.render
    if getattr(module, "WORKFLOW_COMMANDS", False):
        return render

    def plain_render(report: Report, ctx: ReportContext) -> str:
        from gpulint.util.textsafe import plain

        return plain(render(report, ctx))

    return plain_render


def needs_objects(fmt: str) -> bool:
    """Whether the format lists linted objects, so the run must collect them."""
    return bool(getattr(importlib.import_module(FORMATS[fmt]), "NEEDS_OBJECTS", False))
