"""``--format json``: one object, ``{"version", "findings": [...], "summary": {...}}``.

This shape is a public contract (README "JSON output"); fields are only ever added.
Lines and columns are 1-based; ``end_line``/``end_column`` point just past the region.
Strings are the exact values; a byte of a file name that is not UTF-8 is written ``\\xff``
(:func:`gpulint.util.textsafe.json_text`), so the document is valid UTF-8 for any file name.
"""

from __future__ import annotations

from typing import Any

from gpulint import __version__
from gpulint.model import Finding
from gpulint.report import Report
from gpulint.reporters import ReportContext
from gpulint.util.textsafe import json_text


def finding_json(f: Finding) -> dict[str, Any]:
    sup = f.suppression
    return {
        "rule": f.rule,
        "name": f.name,
        "severity": f.severity.label,
        "path": f.path,
        "line": f.span.line,
        "column": f.span.column,
        "end_line": f.span.end_line,
        "end_column": f.span.end_column,
        "message": f.message,
        "help": f.help,
        "object": f.object.as_json() if f.object is not None else None,
        "document": f.document,
        "yaml_path": list(f.doc_path),
        "related": [
            {
                "kind": r.kind,
                "path": r.path,
                "line": r.span.line,
                "column": r.span.column,
                "end_line": r.span.end_line,
                "end_column": r.span.end_column,
                "message": r.message,
            }
            for r in f.related
        ],
        "fix": fix_json(f),
        "suppressed": sup is not None,
        "suppression": (
            None
            if sup is None
            else {"kind": sup.kind, "source": sup.source, "justification": sup.justification}
        ),
    }


def fix_json(f: Finding) -> dict[str, Any] | None:
    """The fix a finding carries, with its edits (regions of the file as it was linted and
    code-point offsets into its decoded text), or ``None``."""
    fix = f.fix
    if fix is None:
        return None
    return {
        "message": fix.message,
        "applicability": fix.applicability,
        "skipped": fix.skipped,
        "edits": [
            {
                "line": e.span.line,
                "column": e.span.column,
                "end_line": e.span.end_line,
                "end_column": e.span.end_column,
                "start": e.start,
                "end": e.end,
                "content": e.content,
            }
            for e in fix.edits
        ],
    }


def render(report: Report, ctx: ReportContext) -> str:
    counts = report.counts()
    doc = {
        "version": __version__,
        "findings": [finding_json(f) for f in report.findings],
        "summary": {
            "files": report.files,
            "findings": sum(counts.values()),
            "errors": counts["error"],
            "warnings": counts["warning"],
            "info": counts["info"],
            # Of the findings, those that say something was not checked (GL201, GL203,
            # GL204, GL205): notices, not problems.
            "notices": report.notices,
            "suppressed": report.suppressed,
            "fixed": report.fixed,
            "fixable": report.fixable,
            "unsafe_fixable": report.unsafe_fixable,
            "fail_on": ctx.fail_on.label,
            "exit_code": ctx.exit_code,
            # Paths that do not exist and rules that raised (GL900): exit code 2.
            "tool_errors": len(ctx.errors) + report.rule_errors,
        },
    }
    return json_text(doc) + "\n"
