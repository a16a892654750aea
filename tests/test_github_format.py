"""``--format github``: workflow commands read back the way the Actions runner parses them.

The parser below follows the runner's ``ActionCommand.TryParseV2``: ``::name props::data``,
properties split on ``,`` and then on the first ``=``, with ``%0D``, ``%0A``, ``%3A``,
``%2C`` and ``%25`` unescaped in properties and ``%0D``, ``%0A``, ``%25`` in data.
"""

from __future__ import annotations

import json
from pathlib import Path

from gpulint.model import Finding, ObjectRef, Severity, Span, Suppression
from gpulint.report import Report
from gpulint.reporters import ReportContext, github
from tests.conftest import ROOT
from tests.externals import gpulint

_PROPERTY_ESCAPES = [("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")]
_DATA_ESCAPES = [("%0D", "\r"), ("%0A", "\n"), ("%25", "%")]


def _unescape(text: str, table: list[tuple[str, str]]) -> str:
    for escaped, plain in table:
        text = text.replace(escaped, plain)
    return text


def parse_command(line: str) -> tuple[str, dict[str, str], str] | None:
    if not line.startswith("::"):
        return None
    end = line.find("::", 2)
    if end < 0:
        return None
    head, data = line[2:end], line[end + 2 :]
    name, _, props_text = head.partition(" ")
    props: dict[str, str] = {}
    for pair in props_text.split(","):
        if not pair:
            continue
        key, sep, value = pair.partition("=")
        assert sep, f"property without '=': {pair!r}"
        props[key] = _unescape(value, _PROPERTY_ESCAPES)
    return name, props, _unescape(data, _DATA_ESCAPES)


def test_examples_become_annotations_at_the_findings(tmp_path: Path) -> None:
    proc = gpulint("check", "--format", "github", "examples", cwd=ROOT)
    assert proc.returncode == 1
    findings = json.loads(gpulint("check", "--format", "json", "examples", cwd=ROOT).stdout)
    lines = proc.stdout.splitlines()
    commands = [parse_command(line) for line in lines]
    parsed = [c for c in commands if c is not None]
    assert len(parsed) == len(findings["findings"]) > 0
    assert lines[-1].startswith("Found ") and commands[-1] is None  # the summary, a plain log
    names = {"error": "error", "warning": "warning", "info": "notice"}
    for (name, props, message), f in zip(parsed, findings["findings"], strict=True):
        assert name == names[f["severity"]]
        assert props["file"] == f["path"]
        assert props["line"] == str(f["line"])
        assert props["title"] == f["rule"]
        if f["end_line"] == f["line"]:
            assert props["col"] == str(f["column"])
            assert props["endColumn"] == str(f["end_column"])
            assert props["endLine"] == str(f["line"])
        else:
            assert "endColumn" not in props  # GitHub takes columns only on one line
        obj = f["object"]
        name = "?" if obj is None or obj["name"] is None else obj["name"]
        suffix = f" [{obj['kind']}/{name}]" if obj is not None else ""
        assert message == f"{f['message']}{suffix}"


def _finding(path: str, message: str, span: Span, sev: Severity = Severity.ERROR) -> Finding:
    return Finding("GPU004", "fractional-extended-resource", sev, path, span, message)


def test_escaping_survives_the_runner_parser(tmp_path: Path) -> None:
    # A line break in a message is shown as ``\r\n`` (gpulint.util.textsafe), never sent to the
    # runner as %0D%0A: every other character survives the runner's unescaping exactly.
    message = "100% of 0.5: not whole,\r\nsee docs::here"
    path = "k8s/a,b:c%d.yaml"
    report = Report([_finding(path, message, Span(3, 5, 3, 9), Severity.INFO)], files=1)
    out = github.render(report, ReportContext([], Severity.ERROR, 0, cwd=str(tmp_path)))
    line = out.splitlines()[0]
    assert "\n" not in line and "\r" not in line
    parsed = parse_command(line)
    assert parsed == (
        "notice",
        {
            "file": path,
            "line": "3",
            "endLine": "3",
            "col": "5",
            "endColumn": "9",
            "title": "GPU004",
        },
        "100% of 0.5: not whole,\\r\\nsee docs::here",
    )


def test_regions_over_several_lines_and_absolute_paths(tmp_path: Path) -> None:
    inside = str(tmp_path / "k8s" / "app.yaml")
    outside = "/elsewhere/app.yaml"
    report = Report(
        [
            _finding(inside, "to the next line start", Span(4, 7, 5, 1)),
            _finding(outside, "over lines", Span(4, 7, 9, 3), Severity.WARNING),
        ],
        files=2,
    )
    out = github.render(report, ReportContext([], Severity.ERROR, 1, cwd=str(tmp_path)))
    first, second = (parse_command(line) for line in out.splitlines()[:2])
    assert first == (
        "error",
        {"file": "k8s/app.yaml", "line": "4", "endLine": "4", "col": "7", "title": "GPU004"},
        "to the next line start",
    )
    assert second == (
        "warning",
        {"file": outside, "line": "4", "endLine": "9", "title": "GPU004"},
        "over lines",
    )


def test_suppressed_findings_are_not_annotated(tmp_path: Path) -> None:
    ref = ObjectRef("v1", "Pod", None, "p")
    kept = _finding("a.yaml", "kept", Span(1, 1, 1, 2))
    silenced = Finding(
        "GPU001",
        "extended-resource-requests-without-limits",
        Severity.ERROR,
        "a.yaml",
        Span(2, 1, 2, 2),
        "silenced",
        ref,
        suppression=Suppression("inSource", "comment", "reason"),
    )
    out = github.render(
        Report([kept, silenced], files=1), ReportContext([], Severity.ERROR, 1, cwd=str(tmp_path))
    )
    commands = [c for c in map(parse_command, out.splitlines()) if c]
    assert [c[2] for c in commands] == ["kept"]
    assert "1 suppressed" in out.splitlines()[-1]
