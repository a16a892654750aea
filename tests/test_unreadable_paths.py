"""Unreadable paths are findings that say "permission denied", never silence or "no such file".

These tests need a process the file modes apply to. The suite often runs as root (CI), which
reads any file whatever its mode, so there gpulint runs with the two capabilities that let
root bypass file modes (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) removed by util-linux's
``setpriv``, or else as the user ``nobody``; the mechanism is proved to deny a mode-000 file
before it is used, and the tests skip with the reason when none works.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gpulint.lint.runner import PARALLEL_MIN_FILES
from tests.conftest import ROOT
from tests.test_cli import GPU_POD, parse_text

GOOD = (ROOT / "examples" / "good-training-job.yaml").read_text(encoding="utf-8")


def _denies(prefix: list[str], preexec: Callable[[], None] | None, probe: Path) -> bool:
    """Whether a process started this way runs and is refused a mode-000 file."""
    try:
        proc = subprocess.run(
            [*prefix, sys.executable, "-c", "import sys; open(sys.argv[1]).read()", str(probe)],
            capture_output=True,
            text=True,
            preexec_fn=preexec,
            timeout=60,
            check=False,
        )
    except OSError:  # this user cannot even start the interpreter
        return False
    return proc.returncode != 0 and "PermissionError" in proc.stderr


def _as_nobody() -> None:
    user = pwd.getpwnam("nobody")
    os.setgroups([])
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)


class Unprivileged:
    """Runs gpulint in a process that file modes apply to."""

    def __init__(self, prefix: list[str], preexec: Callable[[], None] | None) -> None:
        self.prefix = prefix
        self.preexec = preexec

    def __call__(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        exe = Path(sys.executable).with_name("gpulint")
        return subprocess.run(
            [*self.prefix, str(exe), *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            encoding="utf-8",
            preexec_fn=self.preexec,
            timeout=120,
            check=False,
        )


@pytest.fixture
def workdir() -> Iterator[Path]:
    """A folder every user may enter (pytest's own tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="gpulint-perm-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for folder, dirs, _ in os.walk(path):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
        shutil.rmtree(path)


@pytest.fixture(scope="module")
def _mechanism() -> Iterator[Unprivileged | str]:
    """How this machine runs a process that file modes apply to, found once for the module
    (each try starts interpreters), or why none can: the reason to skip with."""
    folder = Path(tempfile.mkdtemp(prefix="gpulint-perm-"))
    folder.chmod(0o755)
    try:
        yield _find_mechanism(folder)
    finally:
        shutil.rmtree(folder)


@pytest.fixture
def unprivileged(_mechanism: Unprivileged | str) -> Unprivileged:
    if isinstance(_mechanism, str):
        pytest.skip(_mechanism)
    return _mechanism


def _find_mechanism(folder: Path) -> Unprivileged | str:
    probe = folder / "probe"
    probe.write_text("secret", encoding="utf-8")
    probe.chmod(0)
    if os.geteuid() != 0:
        if not _denies([], None, probe):
            return "this user reads mode-000 files (a capability?): cannot test denial"
        return Unprivileged([], None)
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        caps = "-dac_override,-dac_read_search"
        prefix = [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]
        if _denies(prefix, None, probe):
            return Unprivileged(prefix, None)
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        return "running as root without setpriv or a 'nobody' user: modes cannot deny"
    if _denies([], _as_nobody, probe):
        return Unprivileged([], _as_nobody)
    return (
        "running as root where setpriv cannot drop CAP_DAC_OVERRIDE and 'nobody' cannot run "
        "this checkout's Python: file modes cannot deny a read here"
    )


def _locked(path: Path) -> Path:
    path.chmod(0)
    return path


def _assert_denied(proc: subprocess.CompletedProcess[str], label: str, what: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "no such file" not in proc.stdout + proc.stderr
    assert "All checks passed" not in proc.stdout
    denied = [f for f in parse_text(proc.stdout) if f["path"] == label]
    assert [(f["rule"], f["message"]) for f in denied] == [
        ("YML005", f"cannot read the {what}: Permission denied")
    ]


def test_a_named_directory_that_cannot_be_read(workdir: Path, unprivileged: Unprivileged) -> None:
    (workdir / "locked").mkdir()
    (workdir / "locked" / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    _locked(workdir / "locked")
    _assert_denied(unprivileged("check", "locked", cwd=workdir), "locked", "directory")
    # A file inside it cannot be looked at: permission denied, not "no such file".
    _assert_denied(unprivileged("check", "locked/pod.yaml", cwd=workdir), "locked/pod.yaml", "file")
    inspect = unprivileged("inspect", "locked", cwd=workdir)
    assert "Permission denied" in inspect.stdout and "no such file" not in inspect.stderr


def test_an_unreadable_file(workdir: Path, unprivileged: Unprivileged) -> None:
    (workdir / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    _locked(workdir / "pod.yaml")
    _assert_denied(unprivileged("check", "pod.yaml", cwd=workdir), "pod.yaml", "file")
    _assert_denied(unprivileged("check", ".", cwd=workdir), "pod.yaml", "file")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_directory_met_while_walking_is_reported_in_its_place(
    workdir: Path, unprivileged: Unprivileged, jobs: str
) -> None:
    tree = workdir / "k8s"
    for name in ("a", "b", "c"):
        (tree / name).mkdir(parents=True)
    for i in range(PARALLEL_MIN_FILES):  # enough files for worker processes
        (tree / "a" / f"{i:03d}.yaml").write_text(GOOD, encoding="utf-8")
    (tree / "b" / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    (tree / "c" / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    _locked(tree / "b")
    proc = unprivileged("check", "--jobs", jobs, "--format", "json", "k8s", cwd=workdir)
    assert proc.returncode == 1, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    paths = [f["path"] for f in report["findings"]]
    assert paths[0] == "k8s/b" and set(paths[1:]) == {"k8s/c/pod.yaml"}
    assert report["findings"][0]["message"] == "cannot read the directory: Permission denied"
    assert report["summary"]["files"] == PARALLEL_MIN_FILES + 2  # the folder counts as one
    _assert_denied(unprivileged("check", "--jobs", jobs, "k8s", cwd=workdir), "k8s/b", "directory")
