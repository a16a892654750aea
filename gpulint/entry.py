"""The console entry point: a fast path for ``gpulint check``, and no tracebacks.

A pre-commit hook runs ``gpulint check [ARGS] FILE...`` on every commit and pays the
start-up each time. Importing typer (and the click it vendors) and building its command line
is about half of gpulint's start-up, so ``check`` is parsed here, without typer, when every
option on the command line is one of :data:`CHECK_OPTIONS` written in a form click accepts
the same way; the check then runs straight through ``gpulint.commands.run_check`` with
exactly the arguments typer would have passed (``tests/test_entry.py`` compares the two
parses over a table of command lines). Anything else -- another command, ``--help``, an
option not in the table (so a new option works through typer before it has a row), a
missing, empty or malformed value, a value that looks like an option -- goes to the typer
application in ``gpulint/cli.py``, so every message stays typer's. Both paths call the same
function, so their output cannot differ; checks beyond a value's type and choices belong in
``run_check``, which both paths share. (Measured in bench/README.md.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

# The registry of output formats: names only, no reporter module is imported.
from gpulint.reporters import FORMATS


class _Reject(Exception):
    """A command line the fast parser leaves to typer."""


def _choice(*allowed: str) -> Callable[[str], str]:
    def convert(value: str) -> str:
        if value not in allowed:  # typer's choices are case-sensitive
            raise _Reject(value)
        return value

    convert.choices = allowed  # type: ignore[attr-defined]  # for the drift test
    return convert


def _text(value: str) -> str:
    return value


def _positive_int(value: str) -> int:
    # click also takes " 2", "+2" and "1_0" (Python's int()); those go to typer.
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise _Reject(value)
    return int(value)


#: How a row takes its value: a flag (no value), an on/off switch (``--x/--no-x``: the
#: ``--no-`` names give False), one value (the last one given wins, as in click) or a
#: repeatable option (every value, in order).
FLAG, SWITCH, ONE, MANY = "flag", "switch", "one", "many"

#: The options of ``gpulint check`` parsed without typer, one row each: the option's names
#: (as in gpulint/cli.py), ``run_check``'s keyword, how it takes values, the converter
#: (raises to leave the command line to typer) and the default typer passes when the option
#: is absent. A new ``check`` option needs a row here to be fast; until then any command
#: line using it goes through typer (tests/test_entry.py checks the table against typer's).
CHECK_OPTIONS: tuple[tuple[tuple[str, ...], str, str, Callable[[str], Any], Any], ...] = (
    (("--format", "-f"), "output_format", ONE, _choice(*FORMATS), "text"),
    (("--output", "-o"), "output", ONE, _text, None),
    (("--select",), "select", MANY, _text, None),
    (("--extend-select",), "extend_select", MANY, _text, None),
    (("--ignore",), "ignore", MANY, _text, None),
    (("--fail-on",), "fail_on", ONE, _choice("error", "warning", "info"), None),
    (("--stdin-filename",), "stdin_filename", ONE, _text, None),
    (("--color",), "color", ONE, _choice("auto", "always", "never"), "auto"),
    (("--config",), "config", ONE, _text, None),
    (("--isolated",), "isolated", FLAG, _text, False),
    (("--jobs", "-j"), "jobs", ONE, _positive_int, None),
    (("--allow-plugins",), "allow_plugins", FLAG, _text, False),
    (("--plugin",), "plugins", MANY, _text, None),
    (("--rule-dir",), "rule_dirs", MANY, _text, None),
    (("--fail-if-no-files", "--no-fail-if-no-files"), "fail_if_no_files", SWITCH, _text, None),
)
#: ``check`` options deliberately left to typer: help is typer's to print.
LEFT_TO_TYPER = ("--help", "-h")

_BY_NAME = {name: row for row in CHECK_OPTIONS for name in row[0]}


def _parse_check(args: Sequence[str]) -> tuple[list[str] | None, dict[str, Any]]:
    """``check``'s paths and ``run_check`` keywords, as click would parse them, or _Reject."""
    kwargs: dict[str, Any] = {row[1]: row[4] for row in CHECK_OPTIONS}
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
            raise _Reject(name)
        _, key, takes, convert, _ = row
        if takes in (FLAG, SWITCH):
            if equals:
                raise _Reject(arg)
            kwargs[key] = not (takes == SWITCH and name.startswith("--no-"))
            continue
        if equals:
            value = inline
        elif i < n:
            value = args[i]
            i += 1
        else:
            raise _Reject(arg)  # typer's "requires an argument"
        if not value or (value[:1] == "-" and value != "-"):
            raise _Reject(value)  # click would take it as the value; typer's choice
        if takes == MANY:
            kwargs[key] = [*(kwargs[key] or ()), convert(value)]
        else:
            kwargs[key] = convert(value)
    return paths or None, kwargs


def _fast_check(args: Sequence[str]) -> tuple[list[str] | None, dict[str, Any]] | None:
    """``run_check``'s arguments for a ``check`` command line, or None to use typer."""
    if not args or args[0] != "check":
        return None
    try:
        return _parse_check(args[1:])
    except _Reject:
        return None


def _usage_error(exc: Exception) -> NoReturn:
    """Click's usage error (unknown option, bad value, ...) as one line on stderr, exit 2."""
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `gpulint`: the help is the message
        sys.stderr.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
        sys.exit(2)
    message = " ".join(str(exc.format_message()).split())  # type: ignore[attr-defined]
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "gpulint"
    from gpulint.commands import error

    error(f"{message} (see `{command} --help`)")
    sys.exit(2)


def _dispatch(args: Sequence[str]) -> int:
    fast = _fast_check(args)
    if fast is not None:
        from gpulint.commands import run_check

        paths, kwargs = fast
        return run_check(paths, **kwargs)
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
        from gpulint.textsafe import escape  # the message may quote the linted files

        sys.stderr.write(f"gpulint: internal error: {type(exc).__name__}: {escape(str(exc))}\n")
        sys.exit(2)
    sys.exit(code)
