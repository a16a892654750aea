"""A gpulint process's start-up: the collector paused, then frozen (``gpulint.util.startup``).

Each case runs a real process (``python -c`` calling what the console script calls) and
reads, at exit, how it left the cyclic garbage collector: a plain ``check`` lints with the
collector on and its start-up in the permanent generation, with the YAML library among it;
other commands resume the collector and freeze nothing; a program that calls
``gpulint.cli.entry.main`` keeps the collector as it had it. The instructions this saves are
measured in bench/README.md, not here.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpulint.util import startup
from tests.conftest import ROOT

#: A clean GPU manifest (no finding): the linted file of every case.
GOOD = ROOT / "examples" / "good-training-job.yaml"

# Reports, at exit, the collector's state and what the runner saw when it started linting.
PROBE = """
import atexit, gc, json, sys
import gpulint.lint.engine

seen = []
lint_shaped = gpulint.lint.engine.Linter.lint_shaped

def probe(self, *args, **kwargs):
    seen.append({"frozen": gc.get_freeze_count(), "yaml": "ruamel.yaml.cyaml" in sys.modules})
    return lint_shaped(self, *args, **kwargs)

gpulint.lint.engine.Linter.lint_shaped = probe

@atexit.register
def report():
    state = {"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(), "seen": seen}
    sys.stderr.write("PROBE " + json.dumps(state) + "\\n")

from gpulint.cli import entry
sys.argv = ["gpulint", *sys.argv[1:]]
{call}
"""


def probe(tmp_path: Path, call: str, *args: str) -> dict:
    (tmp_path / ".git").mkdir(exist_ok=True)  # no configuration file above is found
    (tmp_path / "pod.yaml").write_bytes(GOOD.read_bytes())
    done = subprocess.run(
        [sys.executable, "-c", PROBE.replace("{call}", call), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("PROBE ")]
    assert len(lines) == 1, done.stderr
    return {"code": done.returncode, "stdout": done.stdout, **json.loads(lines[0][6:])}


def test_a_plain_check_lints_with_the_collector_on_and_its_start_up_frozen(
    tmp_path: Path,
) -> None:
    state = probe(tmp_path, "entry.console()", "check", "pod.yaml")
    assert state["code"] == 0, state
    assert state["enabled"] is True
    # Frozen before the first file: the modules, the rules and the YAML library.
    assert len(state["seen"]) == 1
    assert state["seen"][0]["yaml"] is True
    assert state["seen"][0]["frozen"] > 10_000
    # Nothing frozen after it (frozen objects freed by reference counting still leave).
    assert 0 < state["frozen"] <= state["seen"][0]["frozen"]


def test_a_parallel_check_keeps_its_start_up_frozen_to_the_end(tmp_path: Path) -> None:
    for i in range(80):  # enough files for two workers (runner.MIN_FILES_PER_WORKER)
        (tmp_path / f"pod-{i}.yaml").write_bytes(GOOD.read_bytes())
    state = probe(tmp_path, "entry.console()", "check", "--jobs", "2", ".")
    assert state["code"] == 0, state
    assert "in 81 files" in state["stdout"]
    assert state["seen"] == []  # linted in the workers
    assert state["enabled"] is True
    assert state["frozen"] > 10_000  # not unfrozen after the pool


@pytest.mark.parametrize(
    "args",
    [("rules",), ("check", "--jobs", "+1", "pod.yaml"), ("check", "--help")],
    ids=["another command", "a value left to typer", "help"],
)
def test_other_command_lines_resume_the_collector_and_freeze_nothing(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    state = probe(tmp_path, "entry.console()", *args)
    assert state["code"] == 0, state
    assert state["enabled"] is True
    assert state["frozen"] == 0


@pytest.mark.parametrize("enabled", [True, False], ids=["collector on", "collector off"])
def test_a_program_that_calls_main_keeps_its_collector(tmp_path: Path, enabled: bool) -> None:
    call = ("" if enabled else "gc.disable()\n") + "entry.main()"
    state = probe(tmp_path, call, "check", "pod.yaml")
    assert state["code"] == 0, state
    assert state["enabled"] is enabled
    assert state["frozen"] == 0


def test_pause_over_and_resume_touch_only_a_collector_they_paused() -> None:
    assert gc.isenabled()
    before = gc.get_freeze_count()
    startup.over()  # not paused: nothing to end
    startup.resume()
    assert gc.isenabled() and gc.get_freeze_count() == before
    gc.disable()
    try:
        startup.pause()  # already off: not paused by gpulint
        assert not startup.paused()
        startup.resume()
        assert not gc.isenabled()
    finally:
        gc.enable()
    startup.pause()
    assert startup.paused() and not gc.isenabled()
    startup.resume()
    assert not startup.paused() and gc.isenabled()
    assert gc.get_freeze_count() == before
