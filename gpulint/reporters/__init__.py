"""Reporters turn a Report into text. Each lives in its own module, imported on demand.

A format whose output is a sequence of lines (``text``, ``github``) also defines a
``Stream`` class: ``Stream(ctx).file(findings)`` is the output for one file's findings and
``.end(report)`` what follows the last file, so ``gpulint check`` writes each file's
findings as soon as they are known and holds none of them (memory does not grow with the
number of files). Its ``render`` is built from the same ``Stream``, so both ways print the
same bytes. ``json``, ``sarif`` and ``junit`` are one document each, rendered at the end
from the findings kept.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gpulint.model import Finding, Severity
    from gpulint.rule import Rule
    from gpulint.runner import Report

#: --format name -> module; a module exposes ``render(report, ctx) -> str`` and may set
#: ``NEEDS_OBJECTS = True`` to receive every linted object in ``report.objects``.
FORMATS: dict[str, str] = {
    "text": "gpulint.reporters.text",
    "json": "gpulint.reporters.json",
    "sarif": "gpulint.reporters.sarif",
    "github": "gpulint.reporters.github",
    "junit": "gpulint.reporters.junit",
}


@dataclass(slots=True)
class ReportContext:
    rules: Sequence[Rule]
    fail_on: Severity
    exit_code: int
    color: bool = False
    argv: Sequence[str] = field(default_factory=list)
    #: The working directory: relative paths are relative to it (SARIF ``%SRCROOT%``).
    cwd: str = field(default_factory=os.getcwd)
    #: The label findings in standard input carry, when ``-`` was linted.
    stdin_label: str | None = None
    #: When the run started and ended (UTC), for formats that record the invocation.
    start_time: datetime | None = None
    end_time: datetime | None = None
    #: Tool errors reported on stderr (a missing path, ...): exit code 2.
    errors: Sequence[str] = field(default_factory=list)


class Renderer(Protocol):
    def __call__(self, report: Report, ctx: ReportContext) -> str: ...


class Stream(Protocol):
    """Output written while the files are linted (see the module docstring)."""

    def file(self, findings: Sequence[Finding]) -> str: ...

    def end(self, report: Report) -> str: ...


def streamer(fmt: str) -> Callable[[ReportContext], Stream] | None:
    """The format's ``Stream`` class, or None when it renders only at the end."""
    stream: Callable[[ReportContext], Stream] | None = getattr(
        importlib.import_module(FORMATS[fmt]), "Stream", None
    )
    return stream


def renderer(fmt: str) -> Renderer:
    module = importlib.import_module(FORMATS[fmt])
    render: Renderer = module.render
    return render


def needs_objects(fmt: str) -> bool:
    """Whether the format lists linted objects, so the run must collect them."""
    return bool(getattr(importlib.import_module(FORMATS[fmt]), "NEEDS_OBJECTS", False))
