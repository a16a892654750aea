"""Run a linter over targets: read each file safely and collect findings in order.

Files are linted in worker processes when there are enough of them (``jobs``): results
stream back in the order the files were found, so the report is the same, byte for byte, as
a serial run's. Nothing but findings crosses back; no parsed document outlives its file.
"""

from __future__ import annotations

import gc
import itertools
import os
import sys
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from gpulint import codes
from gpulint.lint.engine import Linter, once_per_file
from gpulint.lint.parentwatch import die_with_parent
from gpulint.loader.stream import load_library
from gpulint.loader.target import Read, collector_paused, read_target
from gpulint.model import Finding, LintedObject
from gpulint.render.target import UNBUILT, fix_rendered, lint_rendered
from gpulint.report import Report
from gpulint.util import startup
from gpulint.util.discover import Target

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from gpulint.fix.loop import FileFix, Fixing
    from gpulint.render.target import Rendering


def lint_target(
    linter: Linter,
    target: Target,
    seen: list[LintedObject] | None = None,
    read: Read | None = None,
    rendering: Rendering | None = None,
) -> list[Finding]:
    """The target's findings; ``read`` is what :func:`read_target` gave, when already read,
    ``rendering`` how the run renders a chart or Kustomize root."""
    if target.render is not None:
        return lint_rendered(linter, target, rendering, seen)
    if read is None and linter.loads:  # read by the facts stage (gpulint.loader.handoff)
        read = linter.loads.read(target.label)
    raw, problem = read_target(target) if read is None else read
    if raw is None:
        assert problem is not None
        return linter.problem(target.label, problem)
    with collector_paused():
        # A Kustomize patch (or the base a patch completes) linted without --render: the
        # rules that need the whole object are left to the rendered overlay (GL203).
        found = linter.lint_bytes(target.label, raw, seen, part=target.part)
    # One YAML 1.2 note per file, naming its other lines: a plain file's lines are its own
    # (a rendered chart's findings are placed in its templates after linting).
    return once_per_file(found)


#: How many files' worth of work one chart or overlay is when it is rendered, to choose
#: the number of workers: two rendered targets are enough for two workers.
RENDER_WEIGHT = 64

#: Fewer files than this are linted serially. A pool of forked workers costs ~30 ms to start
#: and stop, a gen_corpus file ~0.75 ms to lint: two workers break even near 80 files, more
#: workers sooner (measured: bench/README.md).
PARALLEL_MIN_FILES = 64
#: Each worker gets at least this many files, so a small run does not fork every core.
MIN_FILES_PER_WORKER = 32
#: Files walked ahead, per allowed worker, to choose the number of workers and the chunk
#: size before linting starts (the rest of a walk is done as the files are linted).
PEEK_PER_WORKER = 8 * 64
#: Files sent to a worker at a time: large enough to amortise the round trip, small enough
#: to balance the load and to keep results flowing.
MAX_CHUNK = 64
#: Chunks queued per worker, so a worker never waits for the next one.
IN_FLIGHT_PER_WORKER = 3


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


#: The linter of each target, when the files of a run have configurations of their own
#: (the closest configuration above each file, gpulint.commands.nearest).
LinterFor = Callable[[Target], Linter]
#: A callback that receives each file's findings as soon as the file is done, in order.
OnFile = Callable[[list[Finding]], None]
#: A callback that receives what fixing each file changed (``--fix``, ``--diff``), in order,
#: before its findings.
OnFix = Callable[["FileFix"], None]


def run(
    linter: Linter,
    targets: Iterable[Target],
    jobs: int = 1,
    collect_objects: bool = False,
    *,
    on_file: OnFile | None = None,
    keep_findings: bool = True,
    rendering: Rendering | None = None,
    fixing: Fixing | None = None,
    on_fix: OnFix | None = None,
    prepare: Callable[[list[Finding]], list[Finding]] | None = None,
    linter_for: LinterFor | None = None,
    keep: Callable[[tuple[str, str, Any]], None] | None = None,
) -> Report:
    """Lint every target; ``jobs`` > 1 allows that many worker processes.

    Targets are consumed lazily and each file's findings are handed to ``on_file`` as soon
    as they are known (in the targets' order), so a caller that streams its report and
    passes ``keep_findings=False`` runs in memory that does not grow with the number of
    files. ``collect_objects`` also records every object linted and the rules that ran on
    it (``Report.objects``, for the JUnit format). ``rendering`` is how charts and
    Kustomize roots among the targets are rendered (:func:`lint_rendered`; forked
    workers inherit it). ``fixing``
    applies the findings' fixes (:func:`fix_target`); ``on_fix`` gets what changed in each
    file. ``prepare`` sees each file's findings first, and what it returns is what is
    counted and handed on (the baseline marks the findings it holds as suppressed).
    ``linter_for`` gives the linter of each target (else ``linter`` lints every one); the
    workers are forked with it, so every linter it gives should be built before. ``keep``
    gets the findings a linter's project cache should keep (:attr:`Linter.kept`), in this
    process: the workers' copies of the cache are not saved.
    """
    # Enough targets to choose the number of workers; the rest stay unwalked until needed.
    pending = iter(targets)
    head = list(itertools.islice(pending, jobs * PEEK_PER_WORKER)) if jobs > 1 else []
    size = len(head)
    if rendering is not None and rendering[0].enabled:
        # A chart or overlay costs a render (~0.1 s of helm or kubectl), not a file's ~1 ms.
        size += (RENDER_WEIGHT - 1) * sum(1 for t in head if t.render is not None)
    workers = worker_count(jobs, size)
    if startup.paused():
        if workers == 1:
            # The YAML library is start-up too: imported now, it is frozen with the rest.
            # (Worker processes import it each, at the same time, rather than wait for
            # this process to import it before they are forked.)
            load_library()
        startup.over()
    everything = itertools.chain(head, pending)
    results: Iterable[_Result]
    if workers > 1:
        chunksize = max(1, min(MAX_CHUNK, len(head) // (workers * 8)))
        results = _lint_parallel(
            linter, everything, workers, collect_objects, chunksize, fixing, linter_for, rendering
        )
    else:
        results = (
            _lint_one(
                linter_for(target) if linter_for else linter,
                target,
                collect_objects,
                None,
                fixing,
                rendering,
            )
            for target in everything
        )
    report = Report(keep_findings=keep_findings)
    # A Kustomize base two failing roots share is built (and fails) on behalf of each: its
    # findings are reported once (gpulint.render.target).
    rendered: set[object] = set()
    try:
        for findings, objects, fixed, entry in results:
            if entry is not None and keep is not None:
                keep(entry)
            if rendering is not None and rendering[0].enabled:
                findings = _first_time(findings, rendered)
            for one in fixed if isinstance(fixed, list) else () if fixed is None else (fixed,):
                report.fixed += one.fixed
                if on_fix is not None:
                    on_fix(one)
            if prepare is not None:
                findings = prepare(findings)
            report.extend(findings)
            if objects:
                report.objects.extend(objects)
            report.files += 1
            if on_file is not None and findings:
                on_file(findings)
    finally:
        # Stop the workers now, not when the generator is collected: an interrupt or a
        # closed stdout raised here must not leave them running until the process exits.
        if isinstance(results, Generator):
            results.close()
    return report


UNBUILT_MARK = UNBUILT.split("{", 1)[0]


def _first_time(findings: list[Finding], seen: set[object]) -> list[Finding]:
    """``findings`` without the rendered ones (or render failures) already reported. A
    rendered finding another root reported at the same place, with the same message, about
    an object of the same kind and name (a component's patch two roots build, one of them
    with a ``namespace:``) is that finding again: it is shown once."""
    out = []
    for f in findings:
        key: object = f
        if any(r.kind == "rendered" for r in f.related):
            kind, name = (f.object.kind, f.object.name) if f.object else (None, None)
            key = (f.rule, f.severity, f.path, f.span, f.message, kind, name)
        if (
            key is not f
            or f.rule in (codes.RENDER_FAILED, codes.GPU_CONTENT_NOT_CHECKED)
            or UNBUILT_MARK in f.message
        ):
            if key in seen:
                continue
            seen.add(key)
        out.append(f)
    return out


# -- worker processes -------------------------------------------------------------------------

_worker_linter: Linter | None = None
_worker_linter_for: LinterFor | None = None
_worker_rendering: Rendering | None = None
#: What a worker of :func:`map_parallel` does with each chunk (inherited when forked).
_worker_call: Callable[[list[Any]], list[Any]] | None = None

#: A file to lint in a worker: the target, for stdin what the parent read from it,
#: whether to record the objects linted, and how to fix it (``None``: do not).
_Task = tuple[Target, "Read | None", bool, "Fixing | None"]
#: What linting one file gives back: its findings, the objects linted when asked, and
#: what fixing it changed when asked.
#: A rendered chart or overlay may change several files (values.yaml, a -f file, patches).
#: And the findings to keep in the project's cache (gpulint.lint.kept): the project's root,
#: the entry's key, the entry.
_Result = tuple[
    list[Finding],
    "list[LintedObject] | None",
    "FileFix | list[FileFix] | None",
    "tuple[str, str, Any] | None",
]


def _lint_one(
    linter: Linter,
    target: Target,
    collect: bool,
    read: Read | None = None,
    fixing: Fixing | None = None,
    rendering: Rendering | None = None,
) -> _Result:
    if fixing is not None and target.render is None:
        # --fix records no objects: the JUnit format's passing checks are of a plain run.
        from gpulint.fix.loop import fix_target  # only --fix and --diff need it

        findings, fixed = fix_target(linter, target, fixing, read)
        return once_per_file(findings), None, fixed, None
    if fixing is not None and rendering is not None and rendering[0].enabled:
        # A rendered chart's or overlay's fixes are made where the values are written
        # (values files, patches), checked by rendering again (gpulint.render.fixvalues).
        findings, changed = fix_rendered(linter, target, fixing, rendering)
        return findings, None, changed, None
    kept = linter.kept
    if kept is not None and not collect and target.render is None and target.part is None:
        # A plain file its project's cache may hold the findings of (gpulint.lint.kept).
        got = linter.loads.read(target.label) if read is None else read
        got = read_target(target) if got is None else got
        if got[0] is not None and target.path is not None:
            key = kept.key(target.label, got[0])
            hit = kept.get(key)
            if hit is not None:
                linter.loads.pop(target.label, None)
                return hit, None, None, None
            findings = lint_target(linter, target, None, got, rendering)
            from gpulint.lint.kept import to_json

            entry = to_json(findings)
            return findings, None, None, (kept.root, key, entry) if entry is not None else None
        read = got
    seen: list[LintedObject] | None = [] if collect else None
    return lint_target(linter, target, seen, read, rendering), seen, None, None


#: The signals a worker ignores: the parent decides when a run stops and stops its workers
#: itself. A Ctrl-C goes to the terminal's whole process group, a caller's ``timeout`` or
#: ``systemctl stop`` signals every process: a worker that died of it first would turn the
#: interrupt into a broken pool, and print a traceback of its own.
WORKER_IGNORES = ("SIGINT", "SIGTERM")


def _init_worker(
    linter: Linter | None,
    parent: int,
    linter_for: LinterFor | None = None,
    rendering: Rendering | None = None,
    call: Callable[[list[Any]], list[Any]] | None = None,
) -> None:
    import signal

    global _worker_linter, _worker_linter_for, _worker_rendering, _worker_call
    _worker_linter, _worker_linter_for = linter, linter_for
    _worker_rendering, _worker_call = rendering, call
    for name in WORKER_IGNORES:
        signal.signal(getattr(signal, name), signal.SIG_IGN)
    # The parent forked this worker with these signals blocked (see _submit): one
    # that arrived since is discarded now that it is ignored, never delivered.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _blocked_signals())
    die_with_parent(parent)


def _blocked_signals() -> set[int]:
    import signal

    return {getattr(signal, name) for name in WORKER_IGNORES}


def _lint_task(task: _Task) -> _Result:
    target, stdin, collect, fixing = task
    linter = _worker_linter_for(target) if _worker_linter_for is not None else _worker_linter
    assert linter is not None
    return _lint_one(linter, target, collect, stdin, fixing, _worker_rendering)


def _lint_chunk(tasks: list[_Task]) -> list[_Result]:
    return [_lint_task(task) for task in tasks]


def _lint_parallel(
    linter: Linter,
    targets: Iterable[Target],
    workers: int,
    collect: bool = False,
    chunksize: int = MAX_CHUNK,
    fixing: Fixing | None = None,
    linter_for: LinterFor | None = None,
    rendering: Rendering | None = None,
) -> Iterator[_Result]:
    """Findings per target, in order, from a pool of ``workers`` forked processes.

    Targets go out in chunks, at most ``IN_FLIGHT_PER_WORKER`` chunks per worker at a
    time, and results are yielded in the targets' order as they come back: neither the
    targets nor the results of the whole run are ever held at once. Stdin is read here,
    once. A worker that dies is an error (BrokenProcessPool), not a hang.
    """
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    def chunks() -> Iterator[list[_Task]]:
        it = iter(targets)
        while chunk := list(itertools.islice(it, chunksize)):
            yield [(t, read_target(t) if t.path is None else None, collect, fixing) for t in chunk]

    context = multiprocessing.get_context("fork")
    gc.freeze()  # keep the parent's objects out of the workers' copy-on-write pages
    pool = ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(linter, os.getpid(), linter_for, rendering),
    )
    try:
        in_flight: deque[Future[list[_Result]]] = deque()
        todo = chunks()
        for chunk in itertools.islice(todo, workers * IN_FLIGHT_PER_WORKER):
            in_flight.append(_submit(pool, chunk))
        while in_flight:
            done = in_flight.popleft().result()
            for chunk in itertools.islice(todo, 1):
                in_flight.append(_submit(pool, chunk))
            yield from done
        pool.shutdown(wait=True)  # the workers exit once they have had their last chunk
    finally:
        # On an interrupt, a closed stdout or any error: stop the workers at once. They
        # hold nothing but files being linted, so they are killed rather than asked to
        # finish: waiting for them is how an interrupted pool used to hang.
        _kill_workers(pool)
        if not startup.frozen():
            # A program that called the runner gets its collector back as it was; a gpulint
            # process keeps its start-up frozen until it exits (gpulint.util.startup).
            gc.unfreeze()


def _submit(
    pool: ProcessPoolExecutor,
    chunk: list[Any],
    call: Callable[[list[Any]], list[Any]] = _lint_chunk,
) -> Future[list[Any]]:
    """``pool.submit``, with the signals the workers ignore held until it returns.

    The first submit forks the workers (and starts the pool's threads): a worker forked
    with the signals blocked cannot be killed by a Ctrl-C before it ignores them, and an
    interrupt never lands half-way through the pool's bookkeeping. Signals that arrive
    meanwhile are delivered as soon as this returns.
    """
    import signal

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _blocked_signals())
    try:
        return pool.submit(call, chunk)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


_Item = TypeVar("_Item")
_Out = TypeVar("_Out")


def map_parallel(
    call: Callable[[list[_Item]], list[_Out]], items: list[_Item], jobs: int
) -> list[_Out]:
    """``call`` over ``items`` in chunks, in worker processes forked as the lint's are (the
    same signals, death with the parent), the results in the items' order: the facts stage
    parses a project's files so (gpulint.lint.gather). ``call`` is inherited by the forked
    workers, never pickled (a closure will do); only the items and results cross. Serial
    when fork is not the safe default."""
    workers = worker_count(jobs, len(items))
    if workers <= 1:
        return call(items)
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    size = max(1, min(MAX_CHUNK, len(items) // (workers * 8)))
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    gc.freeze()
    pool = ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_init_worker,
        initargs=(None, os.getpid(), None, None, call),
    )
    out: list[_Out] = []
    try:
        todo = iter(chunks)
        in_flight: deque[Future[list[Any]]] = deque(
            _submit(pool, chunk, _call_chunk)
            for chunk in itertools.islice(todo, workers * IN_FLIGHT_PER_WORKER)
        )
        while in_flight:
            done = in_flight.popleft().result()
            for chunk in itertools.islice(todo, 1):
                in_flight.append(_submit(pool, chunk, _call_chunk))
            out.extend(done)
        pool.shutdown(wait=True)
    finally:
        _kill_workers(pool)
        if not startup.frozen():
            gc.unfreeze()
    return out


def _call_chunk(chunk: list[Any]) -> list[Any]:
    assert _worker_call is not None
    return _worker_call(chunk)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's live workers and shut it down without waiting for anything.

    ``ProcessPoolExecutor.kill_workers()`` from Python 3.14; before that, the same steps
    on the pool's process table.
    """
    kill = getattr(pool, "kill_workers", None)
    if kill is not None:  # pragma: no cover - Python 3.14+
        kill()
        return
    processes = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        try:
            if process.is_alive():
                process.kill()
        except (ValueError, ProcessLookupError):  # already closed or reaped
            continue
