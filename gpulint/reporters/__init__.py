"""Reporters turn a Report into text. Each lives in its own module, imported on demand."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gpulint.model import Severity
    from gpulint.rule import Rule
    from gpulint.runner import Report

#: --format name -> module; a module exposes ``render(report, ctx) -> str``.
FORMATS: dict[str, str] = {
    "text": "gpulint.reporters.text",
    "json": "gpulint.reporters.json",
}


@dataclass(slots=True)
class ReportContext:
    rules: Sequence[Rule]
    fail_on: Severity
    exit_code: int
    color: bool = False
    argv: Sequence[str] = field(default_factory=list)


class Renderer(Protocol):
    def __call__(self, report: Report, ctx: ReportContext) -> str: ...


def renderer(fmt: str) -> Renderer:
    module = importlib.import_module(FORMATS[fmt])
    render: Renderer = module.render
    return render
