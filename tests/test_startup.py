"""What a gpulint process leaves of Python's garbage collector, as its callers see it.

The console entry point pauses the collector while it starts and freezes what start-up
made before the first file (``gpulint.util.startup``; the instructions this saves are
measured in bench/README.md, "Fourth round: garbage collection at start-up"). What a
caller sees of it is tested here: every command line still runs to its usual report and
exit status, serially and with workers; and a program that calls
``gpulint.cli.entry.main`` finds its collector as it left it -- on or off, and nothing of
its own heap moved into the permanent generation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

#: A clean GPU manifest (no finding): the linted file of every case.
GOOD = ROOT / "examples" / "good-training-job.yaml"

#: A program that embeds gpulint: it calls ``main`` and then reports its collector's state.
EMBEDDER = """
import gc, json, sys
{before}
from gpulint.cli import entry
sys.argv = ["gpulint", *sys.argv[1:]]
try:
    entry.main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
sys.stderr.write(
    "STATE " + json.dumps({{"code": code, "enabled": gc.isenabled(),
                           "frozen": gc.get_freeze_count()}}) + "\\n"
)
"""


#: Where the run keeps its bytecode (``make test``: a temporary folder, not the clone).
_BYTECODE = {
    name: os.environ[name]
    for name in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")
    if name in os.environ
}


def _project(tmp_path: Path, files: int = 1) -> Path:
    (tmp_path / ".git").mkdir(exist_ok=True)  # no configuration file above is found
    for i in range(files):
        (tmp_path / f"pod-{i}.yaml").write_bytes(GOOD.read_bytes())
    return tmp_path


def _run(cwd: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **_BYTECODE},
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("check", "pod-0.yaml"), "All checks passed"),
        (("check", "--jobs", "2", "."), "in 81 files"),  # two workers (MIN_FILES_PER_WORKER)
        (("check", "--jobs", "+1", "pod-0.yaml"), "All checks passed"),  # a value for typer
        (("rules",), "GPU001"),
        (("check", "--help"), "Usage"),
    ],
    ids=["plain check", "parallel check", "a value left to typer", "another command", "help"],
)
def test_every_command_line_reports_as_usual(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    project = _project(tmp_path, files=81 if "--jobs" in args and "." in args else 1)
    done = _run(project, [sys.executable, "-m", "gpulint", *args])
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert said in done.stdout


@pytest.mark.parametrize("enabled", [True, False], ids=["collector on", "collector off"])
def test_a_program_that_calls_main_keeps_its_collector(tmp_path: Path, enabled: bool) -> None:
    program = EMBEDDER.format(before="" if enabled else "gc.disable()")
    done = _run(_project(tmp_path), [sys.executable, "-c", program, "check", "pod-0.yaml"])
    lines = [line for line in done.stderr.splitlines() if line.startswith("STATE ")]
    assert len(lines) == 1, done.stderr
    assert json.loads(lines[0][6:]) == {"code": 0, "enabled": enabled, "frozen": 0}
    assert "All checks passed" in done.stdout
