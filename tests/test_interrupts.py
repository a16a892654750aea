"""Ctrl-C, SIGTERM, a closed stdout and a killed parent stop a parallel run cleanly.

Each test starts the installed ``gpulint check --jobs 2`` over 1,536 small manifests in a
session of its own (as a terminal puts a command in its own process group), stops it the
way a user or a caller would, and checks what the user sees -- the exit status, stderr
without a traceback -- and that no process of that session is left: no orphaned or hung
worker. Signals are sent at seeded random moments spread over a whole run (start-up,
walking, linting and reporting).

The clock starts once gpulint has installed its signal handlers (the first thing ``main``
does: SIGTERM shows as caught in /proc/PID/status). Before that the Python interpreter
itself is starting and its own default applies. The one bound on time is ``HANG``: long
enough that only a real hang fails a test on a busy machine (gpulint stops within
milliseconds of the signal).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, NamedTuple

import pytest

from gpulint.lint.runner import PEEK_PER_WORKER
from tests.conftest import gpulint_cmd

from .test_cli import GPU_POD

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="reads the process table from /proc; workers die with their parent through "
    "Linux's PR_SET_PDEATHSIG",
)

#: Two workers walk 2 * PEEK_PER_WORKER = 1,024 files ahead before they start; the last
#: third of these 1,536 is walked while they lint, in the same 64-file chunks as in a run of
#: 3,000 (runner.MAX_CHUNK). So a run still has every phase (start-up, the walk ahead,
#: forking, linting while walking, the streamed report, ~1.2 MB: more than a reader below
#: reads), and the signals' moments, scaled to the measured run (``Baseline.span``), still
#: fall across all of them. More files would only make each phase, and each trial, longer.
#: Read from the runner's constant, the tree follows it if the walk-ahead changes.
FILES = 3 * PEEK_PER_WORKER
FOLDERS = 32
#: Seconds after which a run that has not stopped counts as hung.
HANG = 10.0
#: Exit statuses: 128 + the signal's number.
EXIT_SIGINT = 128 + signal.SIGINT
EXIT_SIGTERM = 128 + signal.SIGTERM
EXIT_SIGPIPE = 128 + signal.SIGPIPE


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,536 GPU pods (each with findings) in 32 folders."""
    root = tmp_path_factory.mktemp("big")
    for n in range(FILES):
        folder = root / f"team-{n // (FILES // FOLDERS):02d}"
        folder.mkdir(exist_ok=True)
        pod = GPU_POD.replace("name: trainer\n", f"name: trainer-{n}\n", 1)
        (folder / f"pod-{n:04d}.yaml").write_text(pod, encoding="utf-8")
    return root


def _session(sid: int) -> list[tuple[int, str]]:
    """(pid, state) of every live process in session ``sid``; zombies have exited.

    Each ``stat`` file is read as bytes through a bare descriptor: the waits below scan the
    process table every few milliseconds, and pathlib's text reading made a scan three times
    as costly (bench/README.md, "The test suite", eighth round)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{entry}/stat", os.O_RDONLY)
        except OSError:  # exited meanwhile
            continue
        try:
            stat = os.read(fd, 4096)
        except OSError:  # exited meanwhile
            continue
        finally:
            os.close(fd)
        fields = stat[stat.rindex(b")") + 2 :].split()  # after "pid (comm) "
        state, session = fields[0].decode(), int(fields[3])
        if session == sid and state != "Z":
            members.append((int(entry), state))
    return members


def _left_after(sid: int, bound: float = HANG) -> list[tuple[int, str]]:
    """The processes of session ``sid`` still alive once they all exited or ``bound`` passed."""
    deadline = time.monotonic() + bound
    while (left := _session(sid)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return left


def _kill_session(sid: int) -> None:
    for pid, _ in _session(sid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _catches_sigterm(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


def _exited(pid: int) -> bool:
    """Whether ``pid`` (our child) has exited, without reaping it."""
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    return os.waitid(os.P_PID, pid, flags) is not None


def _exits_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` (our child) exits within ``seconds``, without reaping it."""
    deadline = time.monotonic() + seconds
    while not _exited(pid):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(left, 0.002))
    return True


class Run:
    """``gpulint ARGS`` (or ``argv``) in a session of its own, stderr kept in a file."""

    def __init__(
        self,
        *args: str,
        stdout: int | IO[bytes] = subprocess.DEVNULL,
        argv: list[str] | None = None,
    ) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.proc = subprocess.Popen(
            argv or [*gpulint_cmd(), *args],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=self.stderr,
            start_new_session=True,
        )
        self.pid = self.proc.pid

    def wait_ready(self) -> None:
        """Wait until gpulint's own signal handlers are installed."""
        deadline = time.monotonic() + HANG
        while not _catches_sigterm(self.pid):
            assert not _exited(self.pid), "gpulint exited before it installed its handlers"
            assert time.monotonic() < deadline, "gpulint did not start"
            time.sleep(0.002)

    def wait_workers(self, count: int) -> None:
        """Wait until the session holds the main process and ``count`` workers."""
        deadline = time.monotonic() + HANG
        while len(_session(self.pid)) < 1 + count:
            assert not _exited(self.pid), "the run ended before its workers started"
            assert time.monotonic() < deadline, "the workers did not start"
            time.sleep(0.005)

    def wait(self, bound: float = HANG) -> int:
        """The exit status; a run that does not stop within ``bound`` seconds is killed and
        fails the test."""
        try:
            return self.proc.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            _kill_session(self.pid)
            self.proc.wait()
            pytest.fail(f"gpulint hung: {self.err()!r}")

    def err(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode(errors="replace")

    def close(self) -> None:
        _kill_session(self.pid)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def runs() -> Iterator[list[Run]]:
    """Every Run a test starts; whatever is left of them is killed afterwards."""
    started: list[Run] = []
    yield started
    for run in started:
        run.close()


def _send(target: str, pid: int, signum: int) -> None:
    """A signal to the process group (as a terminal sends Ctrl-C) or to the main process."""
    try:
        if target == "group":
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)
    except ProcessLookupError:  # reaped already: nothing left to signal
        pass


class Baseline(NamedTuple):
    span: float  #: seconds an uninterrupted run takes once its handlers are in place
    report: bytes  #: its complete standard output


@pytest.fixture(scope="module")
def baseline(tree: Path) -> Baseline:
    out = tempfile.TemporaryFile()  # noqa: SIM115 - read after the run
    run = Run("check", "--jobs", "2", str(tree), stdout=out)
    try:
        run.wait_ready()
        started = time.monotonic()
        assert run.wait() == 1, run.err()  # every pod has findings
        span = time.monotonic() - started
        assert run.err() == ""
        out.seek(0)
        return Baseline(span, out.read())
    finally:
        run.close()
        out.close()


def _interrupt_at_random(
    tree: Path, baseline: Baseline, runs: list[Run], signum: int, trials: int, seed: int
) -> int:
    """Signal ``trials`` runs at random moments; return how many the signal stopped.

    The moments fall anywhere in the first 60% of a run, stratified, more of them early
    (start-up, forking the workers, walking), where the races are. A signal that arrives once the
    report is complete, while gpulint is exiting, changes nothing: the report must then
    be whole and the status its own.
    """
    rng = random.Random(seed)
    # One moment in each of ``trials`` equal slices of the span, in a shuffled order: every
    # phase gets its share however few the trials, and no kind of trial (to the group or
    # the main process, one signal or two) keeps to one part of the run.
    slices = list(range(trials))
    rng.shuffle(slices)
    expected = f"gpulint: interrupted by {signal.Signals(signum).name}\n"
    if signum == signal.SIGINT:
        expected = "gpulint: interrupted\n"
    hits = 0
    for trial in range(trials):
        target = "main" if trial % 4 == 3 else "group"
        twice = trial % 3 == 1  # a second signal 20-400 ms later (a double Ctrl-C)
        delay = 0.6 * baseline.span * ((slices[trial] + rng.random()) / trials) ** 2
        with tempfile.TemporaryFile() as out:
            run = Run("check", "--jobs", "2", str(tree), stdout=out)
            runs.append(run)
            run.wait_ready()
            time.sleep(delay)
            sent = not _exited(run.pid)
            if sent:
                _send(target, run.pid, signum)
            # Once gpulint has exited (its workers die with it and ignore the signal), a
            # second signal changes nothing: the rest of the interval is not waited for.
            if sent and twice and not _exits_within(run.pid, rng.uniform(0.02, 0.4)):
                _send(target, run.pid, signum)
            code = run.wait()
            out.seek(0)
            report = out.read()
        name = signal.Signals(signum).name
        context = f"trial {trial}: {name} to the {target} after {delay:.2f}s: {run.err()}"
        if code == 1 or not sent:  # the run was over before the signal
            assert (code, run.err()) == (1, ""), context
            assert report == baseline.report, context
        else:
            assert (code, run.err()) == (128 + signum, expected), context
            hits += 1
        assert _left_after(run.pid) == [], f"{context}: processes left"
    return hits


def test_ctrl_c_at_any_moment_stops_the_run_and_its_workers(
    tree: Path, baseline: Baseline, runs: list[Run]
) -> None:
    trials = 16  # 12 would cover every kind of trial once; the moments are stratified
    hits = _interrupt_at_random(tree, baseline, runs, signal.SIGINT, trials, seed=10)
    assert hits >= trials // 2, f"only {hits} of {trials} signals reached a running gpulint"


def test_sigterm_stops_the_run_and_its_workers(
    tree: Path, baseline: Baseline, runs: list[Run]
) -> None:
    assert _interrupt_at_random(tree, baseline, runs, signal.SIGTERM, 6, seed=18) >= 3


def test_sigterm_stops_a_serial_run(tree: Path, runs: list[Run]) -> None:
    run = Run("check", "--jobs", "1", str(tree))
    runs.append(run)
    run.wait_ready()
    time.sleep(0.2)
    os.kill(run.pid, signal.SIGTERM)
    assert (run.wait(), run.err()) == (EXIT_SIGTERM, "gpulint: interrupted by SIGTERM\n")


@pytest.mark.parametrize(
    "options",
    [
        [],  # the fast path, without typer
        ["--jobs", "2"],
        ["--jobs", "2", "--format", "json"],  # one write at the end, cut short
    ],
    ids=["plain", "jobs", "json"],
)
def test_a_closed_stdout_is_141_under_pipefail(
    tree: Path, baseline: Baseline, runs: list[Run], options: list[str]
) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = 'set -o pipefail; "$@" | head -1'
    out = tempfile.TemporaryFile()  # noqa: SIM115 - read after the run
    # The session leader is bash; gpulint and head are its children.
    argv = [bash, "-c", script, "bash", *gpulint_cmd(), "check", *options, str(tree)]
    run = Run(stdout=out, argv=argv)
    runs.append(run)
    # JSON is written whole at the end: the run lints every file before its first write
    # fails, so it is hung only once a whole run's time has passed too (on a machine busy
    # with other work that was more than HANG alone).
    assert run.wait(HANG + baseline.span) == EXIT_SIGPIPE
    assert run.err() == ""  # no message, no traceback
    assert _left_after(run.pid) == []
    out.seek(0)
    assert len(out.read().splitlines()) == 1


def test_a_reader_that_leaves_at_any_moment(tree: Path, runs: list[Run]) -> None:
    rng = random.Random(141)
    for trial in range(4):
        run = Run("check", "--jobs", "2", str(tree), stdout=subprocess.PIPE)
        runs.append(run)
        assert run.proc.stdout is not None
        run.proc.stdout.read(rng.randrange(1, 200_000))
        run.proc.stdout.close()
        assert (run.wait(), run.err()) == (EXIT_SIGPIPE, ""), f"trial {trial}"
        assert _left_after(run.pid) == [], f"trial {trial}: processes left"


def test_workers_die_with_a_killed_parent(tree: Path, runs: list[Run]) -> None:
    """SIGKILL runs no cleanup: the workers must notice on their own, and free stdout."""
    rng = random.Random(9)
    for trial in range(4):
        run = Run("check", "--jobs", "2", str(tree), stdout=subprocess.PIPE)
        runs.append(run)
        run.wait_workers(2)
        time.sleep(rng.uniform(0, 0.3))
        os.kill(run.pid, signal.SIGKILL)
        assert run.wait() == -signal.SIGKILL
        assert _left_after(run.pid) == [], f"trial {trial}: workers outlived their parent"
        assert run.proc.stdout is not None
        run.proc.stdout.read()  # EOF: no worker holds the caller's stdout open
