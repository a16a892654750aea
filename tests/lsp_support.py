"""Shared by the language server tests: what ``gpulint check --format json`` says about a
text, in the protocol's terms, and edits applied as an editor applies them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gpulint.lsp.text import LineIndex
from tests.conftest import gpulint_in_process

SERVER = [sys.executable, "-m", "gpulint", "lsp"]


def check_json(path: Path, *args: str) -> list[dict[str, Any]]:
    """The unsuppressed findings of ``gpulint check --format json PATH``, run in the file's
    folder (so it finds the same configuration the server does).

    The command runs in this process (the entry point ``python -m gpulint`` and the console
    script both call, with the same argv, working directory and environment): what is
    compared is what the command line reports, not how a process starts."""
    out = gpulint_in_process("check", "--format", "json", *args, path.name, cwd=path.parent)
    assert out.returncode in (0, 1), out.stderr
    return [f for f in json.loads(out.stdout)["findings"] if not f["suppressed"]]


def expected_diagnostics(path: Path) -> list[tuple[str, int, int, int, int, str, int]]:
    """The CLI's findings as (code, start line, start character, end line, end character,
    message, LSP severity), positions converted from code points to UTF-16 units."""
    index = LineIndex(path.read_text(encoding="utf-8"))
    severity = {"error": 1, "warning": 2, "info": 3}
    out = []
    for f in check_json(path):
        (sl, sc), (el, ec) = index.span_range(
            f["line"], f["column"], f["end_line"], f["end_column"]
        )
        obj = f["object"]
        label = f" [{obj['kind'] or '?'}/{obj['name'] or '?'}]" if obj else ""
        helped = f"\nhelp: {f['help']}" if f["help"] else ""
        message = f["message"] + label + helped
        out.append((f["rule"], sl, sc, el, ec, message, severity[f["severity"]]))
    return sorted(out)


def as_tuples(diagnostics: Any) -> list[tuple[str, int, int, int, int, str, int]]:
    return sorted(
        (
            d.code,
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            d.message,
            int(d.severity),
        )
        for d in diagnostics
    )


def apply_edits(text: str, edits: Any) -> str:
    """``TextEdit``s applied to ``text`` as an editor does (UTF-16 positions, all against
    the original text, the last first)."""
    index = LineIndex(text)
    spans = sorted(
        (
            index.to_offset(e.range.start.line, e.range.start.character),
            index.to_offset(e.range.end.line, e.range.end.character),
            e.new_text,
        )
        for e in edits
    )
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text
