"""Run a linter over targets: read each file safely and collect findings in order.

Files are linted in worker processes when there are enough of them (``jobs``): results
stream back in the order the files were found, so the report is the same, byte for byte, as
a serial run's. Nothing but findings crosses back; no parsed document outlives its file.
"""

from __future__ import annotations

import gc
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from gpulint.discover import Target
from gpulint.engine import Linter
from gpulint.model import Finding, LintedObject, Severity, Span
from gpulint.yamlload import Problem


@dataclass(slots=True)
class Report:
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    #: The objects linted, collected only when ``run(..., collect_objects=True)``.
    objects: list[LintedObject] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counts = {s.label: 0 for s in sorted(Severity, reverse=True)}
        for f in self.findings:
            if f.suppression is None:
                counts[f.severity.label] += 1
        return counts

    def failed(self, fail_on: Severity) -> bool:
        return any(f.suppression is None and f.severity >= fail_on for f in self.findings)


#: Larger inputs are not read (YML005): parsing one would take minutes and gigabytes, and no
#: manifest is this big (the API server takes objects of at most 3 MiB).
MAX_FILE_BYTES = 256 << 20


def _too_large() -> Problem:
    return Problem(
        "YML005",
        Span(1, 1, 1, 1),
        f"larger than {MAX_FILE_BYTES >> 20} MiB: not linted (no manifest is this big)",
    )


def read_target(target: Target) -> tuple[bytes | None, Problem | None]:
    """The file's bytes, or a YML005 problem saying why it could not be read."""
    try:
        if target.path is None:
            raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
            return (None, _too_large()) if len(raw) > MAX_FILE_BYTES else (raw, None)
        # Never open a FIFO or device: opening blocks or reads forever.
        info = os.stat(target.path)
        if not stat.S_ISREG(info.st_mode):
            what = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "not a regular file"
            return None, Problem("YML005", Span(1, 1, 1, 1), f"{what}: not linted")
        if info.st_size > MAX_FILE_BYTES:
            return None, _too_large()
        with open(target.path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)  # the size may have changed since stat
        return (None, _too_large()) if len(raw) > MAX_FILE_BYTES else (raw, None)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return None, Problem("YML005", Span(1, 1, 1, 1), f"cannot read the file: {reason}")


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one file is linted.

    A file's documents are acyclic and freed by reference counting, but while a big file is
    linted they hold millions of objects that every full collection walks again: two thirds
    of the time on a 50 MB manifest. Anything cyclic left behind is collected after.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def lint_target(
    linter: Linter, target: Target, seen: list[LintedObject] | None = None
) -> list[Finding]:
    raw, problem = read_target(target)
    if raw is None:
        assert problem is not None
        return linter.problem(target.label, problem)
    with _collector_paused():
        return linter.lint_bytes(target.label, raw, seen)


#: Fewer files than this are linted serially. A pool of forked workers costs ~30 ms to start
#: and stop, a gen_corpus file ~0.75 ms to lint: two workers break even near 80 files, more
#: workers sooner (measured: bench/README.md).
PARALLEL_MIN_FILES = 64
#: Each worker gets at least this many files, so a small run does not fork every core.
MIN_FILES_PER_WORKER = 32


def available_cores() -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup CPU quota."""
    counter = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if counter is not None:
        cores = counter() or 1
    elif hasattr(os, "sched_getaffinity"):
        cores = len(os.sched_getaffinity(0)) or 1
    else:  # pragma: no cover - macOS, Windows
        cores = os.cpu_count() or 1
    try:  # a container limited with --cpus: cgroup v2 "quota period"
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as fh:
            quota, period = fh.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, -(-int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return cores


#: Workers are forked: they start in milliseconds with the rules, configuration and plugins
#: already loaded, nothing is pickled but file names and findings. Where fork is not the safe
#: default (macOS, Windows) files are linted serially.
CAN_FORK = hasattr(os, "fork") and sys.platform != "darwin"


def worker_count(jobs: int, files: int) -> int:
    """How many processes lint ``files`` files when ``jobs`` are allowed (1: serial)."""
    if jobs <= 1 or files < PARALLEL_MIN_FILES or not CAN_FORK:
        return 1
    return max(1, min(jobs, files // MIN_FILES_PER_WORKER))


def run(
    linter: Linter, targets: Iterable[Target], jobs: int = 1, collect_objects: bool = False
) -> Report:
    """Lint every target; ``jobs`` > 1 allows that many worker processes.

    ``collect_objects`` also records every object linted and the rules that ran on it
    (``Report.objects``, for the JUnit format).
    """
    targets = list(targets)
    workers = worker_count(jobs, len(targets))
    results: Iterable[_Result]
    if workers > 1:
        results = _lint_parallel(linter, targets, workers, collect_objects)
    else:
        results = (_lint_one(linter, target, collect_objects) for target in targets)
    report = Report()
    for findings, objects in results:
        report.findings.extend(findings)
        if objects:
            report.objects.extend(objects)
        report.files += 1
    return report


# -- worker processes -------------------------------------------------------------------------

_worker_linter: Linter | None = None

#: A file to lint in a worker: the target, for stdin what the parent read from it, and
#: whether to record the objects linted.
_Task = tuple[Target, "tuple[bytes | None, Problem | None] | None", bool]
#: What linting one file gives back: its findings, and the objects linted when asked.
_Result = tuple[list[Finding], "list[LintedObject] | None"]


def _lint_one(linter: Linter, target: Target, collect: bool) -> _Result:
    seen: list[LintedObject] | None = [] if collect else None
    return lint_target(linter, target, seen), seen


def _init_worker(linter: Linter) -> None:
    import signal

    global _worker_linter
    _worker_linter = linter
    # Ctrl-C reaches the whole process group; the parent alone handles it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _lint_task(task: _Task) -> _Result:
    target, stdin, collect = task
    linter = _worker_linter
    assert linter is not None
    if stdin is None:
        return _lint_one(linter, target, collect)
    raw, problem = stdin
    if raw is None:
        assert problem is not None
        return linter.problem(target.label, problem), [] if collect else None
    seen: list[LintedObject] | None = [] if collect else None
    with _collector_paused():
        return linter.lint_bytes(target.label, raw, seen), seen


def _lint_parallel(
    linter: Linter, targets: Sequence[Target], workers: int, collect: bool = False
) -> Iterator[_Result]:
    """Findings per target, in order, from a pool of ``workers`` forked processes.

    Results stream back in chunks as they are done and are yielded in the targets' order.
    Stdin is read here, once. A worker that dies is an error (BrokenProcessPool), not a hang.
    """
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    tasks: list[_Task] = [(t, read_target(t) if t.path is None else None, collect) for t in targets]
    context = multiprocessing.get_context("fork")
    chunksize = max(1, min(64, len(tasks) // (workers * 8)))
    gc.freeze()  # keep the parent's objects out of the workers' copy-on-write pages
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_init_worker, initargs=(linter,)
    )
    try:
        yield from pool.map(_lint_task, tasks, chunksize=chunksize)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
        gc.unfreeze()
