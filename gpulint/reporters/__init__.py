"""Reporters turn a Report into text. Each lives in its own module, imported on demand."""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gpulint.model import Severity
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


def renderer(fmt: str) -> Renderer:
    module = importlib.import_module(FORMATS[fmt])
    render: Renderer = module.render
    return render


def needs_objects(fmt: str) -> bool:
    """Whether the format lists linted objects, so the run must collect them."""
    return bool(getattr(importlib.import_module(FORMATS[fmt]), "NEEDS_OBJECTS", False))
