"""The console entry point: a fast path for ``gpulint check``, and no tracebacks.

A pre-commit hook runs ``gpulint check [ARGS] FILE...`` on every commit and pays the
start-up each time. Importing typer (and the click it vendors) and building its command line
is about half of gpulint's start-up, so ``check`` is parsed here, without typer, when every
option on the command line is written in a form click accepts the same way. Both parsers
are derived from one table, :data:`gpulint.commands.checkoptions.CHECK_OPTIONS` (typer's
``check`` command in ``gpulint/cli/app.py`` is built from its rows), and both hand
``gpulint.commands.check.run_check`` the same :class:`CheckOptions` (``tests/test_entry.py``
compares the two parses over a table of command lines). Anything else -- another command,
``--help``, an unknown option, a missing, empty or malformed value, a value that looks like
an option -- goes to the typer application, so every message stays typer's. Both paths
call the same function, so their output cannot differ; checks beyond a value's type and
choices belong in ``run_check``, which both paths share. (Measured in bench/README.md.)
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

from gpulint.commands.checkoptions import (
    CHECK_OPTIONS,
    FLAG,
    MANY,
    SWITCH,
    CheckOptions,
    Rejected,
)
from gpulint.errors import GpulintError
from gpulint.util import startup

_BY_NAME = {name: row for row in CHECK_OPTIONS for name in row.names}


def _parse_check(args: Sequence[str]) -> tuple[list[str] | None, CheckOptions]:
    """``check``'s paths and options, as click would parse them, or :class:`Rejected`."""
    values: dict[str, Any] = {}
    paths: list[str] = []
    i, n = 0, len(args)
    while i < n:
        arg = args[i]
        i += 1
        if arg == "--":
            paths.extend(args[i:])
            break
        if arg[:1] != "-" or arg == "-":
            paths.append(arg)  # click takes options and paths in any order
            continue
        if arg[:2] == "--":
            name, equals, inline = arg.partition("=")
        else:  # -fjson, -j2: a short option's value may follow it directly
            name, inline = arg[:2], arg[2:]
            equals = "=" if inline else ""
        row = _BY_NAME.get(name)
        if row is None:
            raise Rejected(name)
        if row.takes in (FLAG, SWITCH):
            if equals:
                raise Rejected(arg)
            values[row.field] = not (row.takes == SWITCH and name.startswith("--no-"))
            continue
        if equals:
            value = inline
        elif i < n:
            value = args[i]
            i += 1
        else:
            raise Rejected(arg)  # typer's "requires an argument"
        if not value or (value[:1] == "-" and value != "-"):
            raise Rejected(value)  # click would take it as the value; typer's choice
        if row.takes == MANY:
            values[row.field] = [*values.get(row.field, ()), row.convert(value)]
        else:
            values[row.field] = row.convert(value)
    return paths or None, CheckOptions(**values)


def _fast_check(args: Sequence[str]) -> tuple[list[str] | None, CheckOptions] | None:
    """``run_check``'s arguments for a ``check`` command line, or None to use typer."""
    if not args or args[0] != "check":
        return None
    try:
        return _parse_check(args[1:])
    except Rejected:
        return None


def _usage_error(exc: Exception) -> NoReturn:
    """Click's usage error (unknown option, bad value, ...) as one line on stderr, exit 2."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `gpulint`: the help is the message
        sys.stderr.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
        sys.exit(2)
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "gpulint"
    from gpulint.commands.common import error

    error(f"{message} (see `{command} --help`)")
    sys.exit(2)


def _paths_not_options(args: Sequence[str]) -> list[str]:
    """``args`` with every argument that names an existing file or folder made a path.

    pre-commit (and a shell glob such as ``gpulint check *``) appends the file names of the
    tree after the options, and a pull request chooses those names: a file named
    ``--rule-dir=.yaml`` (pre-commit passes it: its name ends in ``.yaml``) would otherwise
    be read as ``--rule-dir .yaml`` and import the Python of a ``.yaml/`` folder, since
    folders on the command line are trusted. An argument that begins with ``-`` and exists
    is therefore a path, written ``./NAME`` so that neither parser can take it for an
    option (the file's label stays ``NAME``). The price: an option spelled exactly like a
    file in the working directory is read as that file, which no real command line does.
    ``-`` (standard input) is never a file name here.
    """
    out = list(args)
    for i, arg in enumerate(out[1:], start=1):
        if arg[:1] == "-" and arg != "-" and os.path.lexists(arg):
            out[i] = os.path.join(os.curdir, arg)
    return out


def _dispatch(args: Sequence[str]) -> int:
    args = _paths_not_options(args)
    fast = _fast_check(args)
    if fast is not None:
        from gpulint.commands.check import run_check

        return run_check(*fast)  # the runner ends start-up (gpulint.util.startup)
    startup.resume()  # not a plain check: nothing to freeze
    from gpulint.cli.app import app

    code = app(args=list(args), standalone_mode=False)
    return code if isinstance(code, int) else 0


class Interrupted(BaseException):
    """A signal asked gpulint to stop (SIGINT: Ctrl-C; SIGTERM: ``kill``, a CI timeout).

    Raised by the signal handler in the main thread, so ``finally`` blocks on the way up
    run (the worker processes are killed, files being written are cleaned up). A
    ``BaseException`` like ``KeyboardInterrupt``, but not one: click and typer turn a
    ``KeyboardInterrupt`` into an exit code of their own, and ``except Exception`` (a rule
    that raises is a finding) must not swallow it either.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals that stop a run, and the exit status each gives: 128 + the signal's number,
#: what a shell reports for a command a signal killed (130: Ctrl-C, 143: SIGTERM). gpulint
#: exits with it rather than dying of the signal, so that its workers are stopped first.
STOP_SIGNALS = ("SIGINT", "SIGTERM")
#: Standard output was closed before the report was written (``gpulint check | head -1``):
#: 128 + SIGPIPE, what the shell reports for ``yes | head -1`` under ``set -o pipefail``.
#: Neither 0 (nothing found: the run did not finish) nor 1 (findings: none may be).
EXIT_BROKEN_PIPE = 128 + 13

_leaving = False
#: The stop signal received, if any. CPython sometimes wraps the exception a handler
#: raises in another (a RuntimeError from ``__set_name__`` while a class is created, an
#: ImportError) or loses it: every exit path looks here too.
_signalled: int | None = None


def _interrupted_message(signum: int) -> str:
    import signal

    if signum == signal.SIGINT:
        return "gpulint: interrupted\n"
    return f"gpulint: interrupted by {signal.Signals(signum).name}\n"


def _exit_now(code: int, message: str = "") -> NoReturn:
    """Write ``message`` to stderr and end the process at once.

    ``os._exit``: no atexit handler runs (concurrent.futures' joins its pool's threads,
    which is how an interrupted run used to hang), and standard output is not flushed
    (after an interrupt the report is cut short anyway; after EPIPE it cannot be written).
    """
    if message:
        try:
            sys.stderr.write(message)
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed too: the exit status says it
            pass
    os._exit(code)


def _on_signal(signum: int, frame: object) -> None:
    global _signalled
    # A second Ctrl-C (or a SIGTERM after it) changes nothing: this one is being handled.
    _ignore_stop_signals()
    _signalled = signum
    if _leaving:  # the run is over and gpulint is exiting with its status
        return
    _exit_after(STOP_DEADLINE, signum)
    raise Interrupted(signum)


#: Seconds the run has to unwind after a stop signal before the process ends regardless.
#: Unwinding takes milliseconds; the deadline is for an exception CPython drops (the
#: handler can run inside a weakref callback or a ``__del__``, e.g. while a module is
#: imported, where an exception is only "ignored") and for cleanup that would block. The
#: workers die with the process (see gpulint.lint.runner).
STOP_DEADLINE = 0.5


def _exit_after(seconds: float, signum: int) -> None:
    # _thread, not threading: the handler may run while ``threading`` is half imported.
    import _thread

    def expire() -> None:
        time.sleep(seconds)
        _exit_now(128 + signum, _interrupted_message(signum))

    _thread.start_new_thread(expire, ())


def _ignore_stop_signals() -> None:
    signal = _signal_module()
    try:
        for name in STOP_SIGNALS:
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    except ValueError:  # not the main thread: no handler was installed either
        pass


def _signal_module() -> Any:
    """``_signal``, the C module ``signal`` wraps: the same functions, numbers and handlers
    without the enums ``signal`` builds when imported, ~1 % of a one-file run's start-up
    (the message of an interrupt imports ``signal`` for the signal's name)."""
    import _signal  # type: ignore[import-not-found]  # no stub: it is ``signal``'s core

    return _signal


def _catch_stop_signals() -> None:
    signal = _signal_module()
    try:
        for name in STOP_SIGNALS:
            signal.signal(getattr(signal, name), _on_signal)
    except ValueError:  # main() called from a thread: only the main thread handles signals
        return
    previous = sys.unraisablehook

    def unraisable(info: Any) -> None:
        # The handler ran inside a callback (a weakref's, a __del__) and Python dropped
        # its exception with a traceback on stderr: the deadline ends the run instead.
        if not isinstance(info.exc_value, Interrupted):
            previous(info)

    sys.unraisablehook = unraisable


def console() -> None:
    """The console script and ``python -m gpulint``: :func:`main` in a process of its own.

    The process is gpulint's alone, so its start-up runs with the cyclic garbage collector
    paused and, for a plain ``check``, frozen once it is over (:mod:`gpulint.util.startup`).
    A program (or a test) that calls :func:`main` keeps its collector as it is.
    """
    startup.pause()
    main()


def main(argv: Sequence[str] | None = None) -> None:
    """Run gpulint; never lets a traceback reach the user.

    SIGINT and SIGTERM raise ``Interrupted`` wherever the run is: exit 130 or 143 with
    a one-line message, the workers killed. A closed standard output ends the run with
    ``EXIT_BROKEN_PIPE`` and no message. Once the run is over (the report written) they
    are ignored: the process is exiting with the report's status, and Python's shutdown
    would otherwise reset their handlers and let one kill it without a word.
    """
    global _leaving, _signalled
    _leaving = False
    _signalled = None
    args = sys.argv[1:] if argv is None else argv
    stdout = sys.stdout
    try:
        try:
            _catch_stop_signals()
            code = _main(args, stdout)
        finally:
            _leaving = True
            _ignore_stop_signals()
    except Interrupted as exc:  # raised anywhere above, even while handling an error
        _exit_now(128 + exc.signum, _interrupted_message(exc.signum))
    except KeyboardInterrupt:  # raised by code rather than by a signal
        _exit_now(130, "gpulint: interrupted\n")
    if _signalled is not None:  # the handler's exception was lost on the way
        _exit_now(128 + _signalled, _interrupted_message(_signalled))
    sys.exit(code)


def _main(args: Sequence[str], stdout: object) -> int:
    try:
        code = _dispatch_unless_stopped(args)
    except SystemExit as exc:
        # typer answers EPIPE with sys.exit(1) after swapping in a sys.stdout that swallows
        # the error: a closed stdout, not findings.
        if sys.stdout is not stdout or (exc.code in (None, 0, 1) and _stdout_closed()):
            _exit_now(EXIT_BROKEN_PIPE)
        raise
    except GpulintError as exc:  # what every command raises for its user: caught here, once
        from gpulint.commands.common import report

        code = report(exc)
    except BrokenPipeError:
        # The reader went away (``gpulint check . | head``): stop, silently, as `yes` does.
        _exit_now(EXIT_BROKEN_PIPE)
    except Exception as exc:  # the promise: a one-line message, exit 2, no traceback
        # Click's exceptions (typer vendors its own copy of click): a usage error has
        # exit_code 2 and a message of its own.
        if getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message"):
            _usage_error(exc)
        from gpulint.util.textsafe import escape  # the message may quote the linted files

        sys.stderr.write(f"gpulint: internal error: {type(exc).__name__}: {escape(str(exc))}\n")
        sys.exit(2)
    if code in (0, 1) and _stdout_closed():
        _exit_now(EXIT_BROKEN_PIPE)
    return code


def _dispatch_unless_stopped(args: Sequence[str]) -> int:
    """``_dispatch``; any exception after a stop signal is that signal's ``Interrupted``."""
    try:
        return _dispatch(args)
    except BaseException as exc:
        if _signalled is not None and not isinstance(exc, Interrupted):
            raise Interrupted(_signalled) from None  # the signal's, wrapped in another
        raise


def _stdout_closed() -> bool:
    """Whether standard output is a pipe that nobody reads any more.

    A write into a pipe whose reader exits half-way returns a short count rather than an
    error, and Python does not always try the rest: a report cut off that way raises
    nothing. The pipe says it afterwards: poll(2) reports POLLERR on a pipe with no
    reader left (only a FIFO is asked: files and terminals never are).
    """
    try:
        sys.stdout.flush()
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        import select

        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except BrokenPipeError:
        return True
    except (OSError, ValueError, AttributeError):  # no fileno, closed, or no poll()
        return False
