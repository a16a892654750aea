"""The console entry point: a fast path for plain ``gpulint check``, and no tracebacks.

A pre-commit hook runs ``gpulint check FILE...`` on every commit and pays the start-up each
time. Importing typer (and the click it vendors) is about half of gpulint's start-up, so when
the command line is exactly ``check`` followed by paths -- no options at all -- the check runs
straight through ``gpulint.commands.run_check`` with the defaults typer would have filled in.
Any option, ``--``, or another command goes through the typer application in
``gpulint/cli.py``; both paths call the same function, so their output cannot differ.
(Measured in bench/README.md.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import NoReturn


def _plain_check(args: Sequence[str]) -> list[str] | None:
    """The paths of ``check PATH...`` when nothing else is on the command line."""
    if not args or args[0] != "check":
        return None
    paths = list(args[1:])
    if any(p.startswith("-") and p != "-" for p in paths):
        return None  # an option (or a path that looks like one): typer decides
    return paths


def _usage_error(exc: Exception) -> NoReturn:
    """Click's usage error (unknown option, bad value, ...) as one line on stderr, exit 2."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `gpulint`: the help is the message
        sys.stderr.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
        sys.exit(2)
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "gpulint"
    sys.stderr.write(f"gpulint: error: {message} (see `{command} --help`)\n")
    sys.exit(2)


def _dispatch(args: Sequence[str]) -> int:
    paths = _plain_check(args)
    if paths is not None:
        from gpulint.commands import run_check

        return run_check(paths)
    from gpulint.cli import app

    code = app(args=list(args), standalone_mode=False)
    return code if isinstance(code, int) else 0


def main(argv: Sequence[str] | None = None) -> None:
    """Run gpulint; never lets a traceback reach the user."""
    args = sys.argv[1:] if argv is None else argv
    try:
        code = _dispatch(args)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("gpulint: interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (``gpulint check . | head``): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except Exception as exc:  # the promise: a one-line message, exit 2, no traceback
        # Click's exceptions (typer vendors its own copy of click): a usage error has
        # exit_code 2 and a message of its own.
        if getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message"):
            _usage_error(exc)
        sys.stderr.write(f"gpulint: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(2)
    sys.exit(code)
