"""``--output FILE``: the --format report goes to the file, the terminal keeps the text report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.externals import assert_schema_valid, gpulint


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    return tmp_path


def _without_times(log: dict[str, object]) -> dict[str, object]:
    for run in log["runs"]:  # type: ignore[attr-defined]
        for invocation in run["invocations"]:
            invocation.pop("startTimeUtc")
            invocation.pop("endTimeUtc")
            invocation.pop("commandLine")
            invocation.pop("arguments")
    return log


def test_sarif_to_a_file_and_text_to_the_terminal(workdir: Path) -> None:
    text = gpulint("check", "examples", cwd=workdir)
    to_stdout = gpulint("check", "--format", "sarif", "examples", cwd=workdir)
    proc = gpulint(
        "check", "--format", "sarif", "--output", "reports/gpulint.sarif", "examples", cwd=workdir
    )
    assert proc.returncode == text.returncode == 1
    assert proc.stdout == text.stdout  # the readable report, for the CI log
    assert "\nexamples/bad-inference.yaml:25:13: GPU001 error: " in proc.stdout
    written = json.loads((workdir / "reports" / "gpulint.sarif").read_text(encoding="utf-8"))
    assert_schema_valid(written)
    assert _without_times(written) == _without_times(json.loads(to_stdout.stdout))


def test_the_command_line_offers_every_registered_format() -> None:
    """``--format`` offers the reporter registry's formats, in its order: typer's choices
    are made from it (and the fast parser's, tests/test_entry.py checks they agree)."""
    import typer.main

    from gpulint.cli.app import app
    from gpulint.reporters import FORMATS, streamer

    check = typer.main.get_command(app).commands["check"]  # type: ignore[attr-defined]
    (option,) = [p for p in check.params if p.name == "output_format"]
    assert list(option.type.choices) == list(FORMATS)
    # The line formats stream; the one-document formats render at the end (README).
    assert [f for f in FORMATS if streamer(f)] == ["text", "concise", "github"]


@pytest.mark.parametrize("fmt", ["json", "github", "junit", "text"])
def test_every_format_can_be_written_to_a_file(workdir: Path, fmt: str) -> None:
    proc = gpulint("check", "-f", fmt, "-o", f"out.{fmt}", "examples", cwd=workdir)
    assert proc.returncode == 1
    assert proc.stdout == gpulint("check", "examples", cwd=workdir).stdout
    content = (workdir / f"out.{fmt}").read_text(encoding="utf-8")
    if fmt in ("json", "github", "text"):
        # The same bytes the format prints to standard output (no clock in these formats).
        assert content == gpulint("check", "-f", fmt, "examples", cwd=workdir).stdout
    else:
        assert content.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')


def test_the_file_never_gets_colour_codes(workdir: Path) -> None:
    proc = gpulint("check", "--color", "always", "-o", "out.txt", "examples", cwd=workdir)
    assert "\033[" in proc.stdout
    assert "\033[" not in (workdir / "out.txt").read_text(encoding="utf-8")


def test_dash_means_standard_output(workdir: Path) -> None:
    bad = "examples/bad-inference.yaml"
    proc = gpulint("check", "-f", "json", "-o", "-", bad, cwd=workdir)
    assert json.loads(proc.stdout)["summary"]["findings"] == 7
    assert not (workdir / "-").exists()


@pytest.mark.parametrize("option", [["-o", ""], ["--output="]])
def test_an_empty_output_name_is_a_usage_error_before_linting(
    workdir: Path, option: list[str]
) -> None:
    proc = gpulint("check", "-f", "json", *option, "examples", cwd=workdir)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "gpulint: error: --output needs a file name (`-` is standard output)\n"


def test_an_unwritable_output_is_exit_2_before_anything_is_linted(workdir: Path) -> None:
    (workdir / "taken").mkdir()
    for target in ("taken", "/proc/gpulint.sarif"):
        proc = gpulint("check", "-f", "sarif", "-o", target, "examples", cwd=workdir)
        assert proc.returncode == 2
        assert proc.stderr.startswith(f"gpulint: error: cannot write {target}: ")
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert proc.stdout == ""  # nothing linted, no report lost after minutes of work
