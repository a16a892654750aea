"""Nothing passes silently: a run that lints no file, and error exits in the summary.

Unreadable paths are in tests/test_unreadable_paths.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.externals import gpulint
from tests.test_cli import GPU_POD, parse_text

GOOD = (ROOT / "examples" / "good-training-job.yaml").read_text(encoding="utf-8")
WARNING = "gpulint: warning: no files linted: "


# -- zero files -------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the configuration search stops here
    (tmp_path / "empty").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.rst").write_text("Not YAML\n", encoding="utf-8")
    (tmp_path / "docs" / "notes.txt").write_text("apiVersion: v1\n", encoding="utf-8")
    return tmp_path


def _warning(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if line.startswith(WARNING)]
    return line


@pytest.mark.parametrize("paths", [["empty"], ["docs"], ["empty", "docs"]])
def test_no_file_linted_is_a_warning_naming_the_paths(repo: Path, paths: list[str]) -> None:
    proc = gpulint("check", *paths, cwd=repo)
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == [
        f"{WARNING}{', '.join(paths)} held no *.yaml, *.yml or Markdown file to lint "
        "(or every one was excluded)"
    ]
    assert proc.stdout == "No files linted: nothing was checked.\n"
    assert parse_text(proc.stdout) == []


def test_fail_if_no_files_from_the_command_line_and_the_configuration(repo: Path) -> None:
    assert gpulint("check", "--fail-if-no-files", "empty", cwd=repo).returncode == 1
    report = json.loads(
        gpulint("check", "--fail-if-no-files", "-f", "json", "docs", cwd=repo).stdout
    )
    assert report["summary"] == {
        "files": 0,
        "findings": 0,
        "errors": 0,
        "warnings": 0,
        "info": 0,
        "notices": 0,
        "suppressed": 0,
        "fixed": 0,
        "fixable": 0,
        "unsafe_fixable": 0,
        "fail_on": "error",
        "exit_code": 1,
        "tool_errors": 0,
    }
    (repo / ".gpulint.yaml").write_text("fail-if-no-files: true\n", encoding="utf-8")
    proc = gpulint("check", "empty", cwd=repo)
    assert proc.returncode == 1 and _warning(proc.stderr)
    assert gpulint("check", "--no-fail-if-no-files", "empty", cwd=repo).returncode == 0
    # Files were linted: the setting changes nothing.
    (repo / "job.yaml").write_text(GOOD, encoding="utf-8")
    proc = gpulint("check", "job.yaml", cwd=repo)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "All checks passed: no findings in 1 file.\n"
    shown = json.loads(gpulint("config", "--format", "json", cwd=repo).stdout)
    assert shown["settings"]["fail-if-no-files"] == {"value": True, "origin": ".gpulint.yaml:1"}
    flag = json.loads(gpulint("config", "-f", "json", "--no-fail-if-no-files", cwd=repo).stdout)
    assert flag["settings"]["fail-if-no-files"] == {
        "value": False,
        "origin": "command line (--no-fail-if-no-files)",
    }


def test_fail_if_no_files_in_pyproject(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        "[tool.gpulint]\nfail-if-no-files = true\n", encoding="utf-8"
    )
    assert gpulint("check", "empty", cwd=repo).returncode == 1
    (repo / "pyproject.toml").write_text(
        '[tool.gpulint]\nfail-if-no-files = "yes"\n', encoding="utf-8"
    )
    proc = gpulint("check", "empty", cwd=repo)
    assert proc.returncode == 2 and "fail-if-no-files" in proc.stderr


def test_yaml_without_kubernetes_objects_counts_as_linted(repo: Path) -> None:
    (repo / "ci").mkdir()
    (repo / "ci" / "workflow.yml").write_text("on: push\njobs: {}\n", encoding="utf-8")
    proc = gpulint("check", "--fail-if-no-files", "ci", "empty", cwd=repo)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "All checks passed: no findings in 1 file.\n"


def test_files_left_out_by_exclude_do_not_count(repo: Path) -> None:
    (repo / "vendor").mkdir()
    (repo / "vendor" / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    (repo / ".gpulint.yaml").write_text("exclude: [vendor]\nforce-exclude: true\n", "utf-8")
    for path in ("vendor", "vendor/pod.yaml"):
        proc = gpulint("check", "--fail-if-no-files", path, cwd=repo)
        assert proc.returncode == 1
        assert _warning(proc.stderr).startswith(f"{WARNING}{path} held no")


def test_many_paths_are_named_up_to_five(repo: Path) -> None:
    names = [f"d{i}" for i in range(8)]
    for name in names:
        (repo / name).mkdir()
    proc = gpulint("check", *names, cwd=repo)
    assert _warning(proc.stderr).startswith(f"{WARNING}d0, d1, d2, d3, d4 and 3 more held no")


def test_an_error_exit_never_says_all_checks_passed(repo: Path) -> None:
    proc = gpulint("check", "nope.yaml", cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr == "gpulint: error: nope.yaml: no such file or directory\n"  # no warning
    assert proc.stdout == "No files linted; 1 tool error: not everything was checked.\n"
    assert parse_text(proc.stdout) == []
    # A typo inside a quoted glob is a path that does not exist either.
    proc = gpulint("check", "manifets/*.yaml", "empty", cwd=repo)
    assert proc.returncode == 2
    assert "manifets/*.yaml: no such file or directory" in proc.stderr
    assert _warning(proc.stderr).startswith(f"{WARNING}empty held no")  # only what exists
    # Files linted and a missing path: the findings, then the tool error.
    (repo / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    for args in ([], ["--fail-on", "info"], ["--ignore", "GPU"]):
        proc = gpulint("check", *args, "pod.yaml", "nope.yaml", cwd=repo)
        assert proc.returncode == 2
        assert "All checks passed" not in proc.stdout
        assert proc.stdout.splitlines()[-1].endswith(
            "in 1 file; 1 tool error: not everything was checked."
        )
        parse_text(proc.stdout)
