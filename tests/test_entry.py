"""The console entry point's fast path for a plain ``gpulint check PATH...``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gpulint.entry import _plain_check
from tests.conftest import ROOT, gpulint_cmd


@pytest.mark.parametrize(
    ("args", "paths"),
    [
        (["check"], []),
        (["check", "a.yaml", "k8s/"], ["a.yaml", "k8s/"]),
        (["check", "-"], ["-"]),
        (["check", "--format", "json", "a.yaml"], None),
        (["check", "a.yaml", "-j1"], None),
        (["check", "--", "-odd.yaml"], None),
        (["rules"], None),
        ([], None),
    ],
)
def test_only_a_bare_check_takes_the_fast_path(args: list[str], paths: list[str] | None) -> None:
    assert _plain_check(args) == paths


def test_the_fast_path_does_not_import_typer() -> None:
    script = (
        "import sys\n"
        "from gpulint.entry import main\n"
        "try:\n    main(['check', 'examples/good-training-job.yaml'])\n"
        "except SystemExit as exc:\n    code = exc.code\n"
        "print('typer' in sys.modules, code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert proc.stdout.splitlines()[-1] == "False 0"


@pytest.mark.parametrize("path", ["examples/bad-inference.yaml", "examples", "no/such.yaml"])
def test_fast_and_full_paths_print_the_same(path: str) -> None:
    fast = subprocess.run([*gpulint_cmd(), "check", path], cwd=ROOT, capture_output=True, text=True)
    # Any option sends the command line through typer; --color auto is the default anyway.
    full = subprocess.run(
        [*gpulint_cmd(), "check", "--color", "auto", path],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )
    assert fast.stdout or fast.stderr
