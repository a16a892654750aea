"""The two ways tests run gpulint (tests/conftest.py) agree, and the in-process one leaves
nothing behind.

Most command-line tests run gpulint in-process; that is only worth it if what they see is
what the installed console script prints. These compare the two runners over command lines
that take every path through the entry point (the fast ``check`` parser, typer, usage
errors, help, stdin, a rule folder), and check that an in-process run puts back what it may
change: the environment, the working directory, ``sys.path``, imported rule modules.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, gpulint_in_process, gpulint_subprocess

POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n"

COMMAND_LINES = [
    ["check", "examples/"],  # the fast parser, findings, exit 1
    ["check", "-f", "json", "--select", "GPU", "examples/bad-inference.yaml"],
    ["check", "--bogus"],  # typer's usage error, named after the console script
    [],  # bare gpulint: the help, exit 2
    ["rules"],  # wrapped at the width of a non-terminal
    ["check", "-", "--stdin-filename", "x.yaml"],
    ["--version"],
    ["config", "--isolated"],
    ["check", "--help"],
    ["check", "--rule-dir", "policy", "pod.yaml"],  # a rule folder's module is imported
]

RULE = '''\
"""Flags every pod spec (a rule folder's module)."""
from gpulint.rule import Violation

CODE = "ORG001"
NAME = "every-pod"
SEVERITY = "warning"
SCOPE = "pod"


def check(pod, ctx):
    yield Violation(pod.path, "MESSAGE")
'''


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The repository's examples and a rule folder, in a folder of its own."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "org001.py").write_text(RULE, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("args", COMMAND_LINES, ids=lambda a: " ".join(a) or "bare")
def test_both_runners_see_the_same_run(args: list[str], workdir: Path) -> None:
    real = gpulint_subprocess(*args, cwd=workdir, stdin=POD)
    here = gpulint_in_process(*args, cwd=workdir, stdin=POD)
    assert (here.returncode, here.stdout, here.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )
    assert real.stdout or real.stderr


def test_an_in_process_run_leaves_nothing_behind(workdir: Path) -> None:
    before = (dict(os.environ), os.getcwd(), list(sys.path), set(sys.modules))
    env = {**os.environ, "GPULINT_ALLOW_PLUGINS": "1", "NO_COLOR": "1"}
    proc = gpulint_in_process("check", "--rule-dir", "policy", "pod.yaml", cwd=workdir, env=env)
    # The rule folder's module was imported and ran.
    assert "ORG001 warning: MESSAGE" in proc.stdout, proc.stdout + proc.stderr
    after = (dict(os.environ), os.getcwd(), list(sys.path), set(sys.modules))
    assert after[:3] == before[:3]
    assert not [name for name in after[3] - before[3] if name.startswith("_gpulint_local_")]
    # The next run imports the module again, not the one this run left.
    (workdir / "policy" / "org001.py").write_text(
        RULE.replace("MESSAGE", "CHANGED MESSAGE"), encoding="utf-8"
    )
    again = gpulint_in_process("check", "--rule-dir", "policy", "pod.yaml", cwd=workdir)
    assert "ORG001 warning: CHANGED MESSAGE" in again.stdout, again.stdout + again.stderr


def test_the_in_process_runner_refuses_to_fork() -> None:
    with pytest.raises(AssertionError, match="gpulint_subprocess"):
        gpulint_in_process("check", "--jobs", "2", "examples", cwd=ROOT)
