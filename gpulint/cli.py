"""The ``gpulint`` command line.

Exit codes: 0 when nothing at or above ``--fail-on`` is found, 1 when something is, 2 for
usage or tool errors (a one-line message on stderr, never a traceback).
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from gpulint import __version__

if TYPE_CHECKING:
    from gpulint.rule import Rule

app = typer.Typer(
    name="gpulint",
    help="Lint Kubernetes manifests for GPU scheduling mistakes.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


class ColorMode(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


class UsageError(Exception):
    """A problem with what the user asked for: exit 2 with the message."""


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"gpulint: error: {message}\n")
    raise typer.Exit(2)


def _codes(values: list[str] | None) -> list[str]:
    out: list[str] = []
    for value in values or ():
        out.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return out


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"gpulint {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Lint Kubernetes manifests for GPU scheduling mistakes."""


def _use_color(mode: ColorMode) -> bool:
    if mode is ColorMode.always:
        return True
    if mode is ColorMode.never or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _load_rules() -> list[Rule]:
    from gpulint.rule import RuleLoadError, load_rules

    try:
        return load_rules()
    except RuleLoadError as exc:
        _fail(str(exc))


def _check_selectors(codes: list[str], known: list[str], option: str) -> None:
    for code in codes:
        if code != "ALL" and not any(k.startswith(code) for k in known):
            _fail(f"{option}: {code!r} matches no rule (see `gpulint rules`)")


@app.command()
def check(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files or directories to lint (directories: *.yaml, *.yml); '-' reads stdin.",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="Output format.")
    ] = OutputFormat.text,
    select: Annotated[
        list[str] | None,
        typer.Option(help="Only these rule codes or prefixes (comma-separated, e.g. GPU0)."),
    ] = None,
    extend_select: Annotated[
        list[str] | None, typer.Option(help="Rule codes or prefixes to add to the selection.")
    ] = None,
    ignore: Annotated[
        list[str] | None, typer.Option(help="Rule codes or prefixes to skip.")
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option(help="Exit 1 when a finding at or above this severity is found.")
    ] = FailOn.error,
    stdin_filename: Annotated[
        str | None, typer.Option(help="The path to report for input read from stdin.")
    ] = None,
    color: Annotated[ColorMode, typer.Option(help="Colour the text output.")] = ColorMode.auto,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Lint in up to N processes (default: the available cores; 1: serial).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Lint manifests and report GPU scheduling mistakes."""
    from gpulint.discover import targets
    from gpulint.engine import Linter, Settings
    from gpulint.model import Severity
    from gpulint.reporters import ReportContext, renderer
    from gpulint.runner import available_cores, run

    rules = _load_rules()
    known = [r.code for r in rules]
    selected, extended, ignored = _codes(select), _codes(extend_select), _codes(ignore)
    _check_selectors(selected, known, "--select")
    _check_selectors(extended, known, "--extend-select")
    _check_selectors(ignored, known, "--ignore")
    settings = Settings(
        select=frozenset(selected) if selected else None,
        extend_select=frozenset(extended),
        ignore=frozenset(ignored),
        fail_on=Severity.parse(fail_on.value),
    )
    linter = Linter(rules, settings)
    found, missing = targets(paths or ["."], stdin_filename or "<stdin>")
    for path in missing:
        sys.stderr.write(f"gpulint: error: {path}: no such file or directory\n")
    report = run(linter, found, jobs=jobs or available_cores())
    exit_code = 2 if missing else (1 if report.failed(settings.fail_on) else 0)
    ctx = ReportContext(rules, settings.fail_on, exit_code, _use_color(color), sys.argv)
    sys.stdout.write(renderer(output_format.value)(report, ctx))
    sys.stdout.flush()
    raise typer.Exit(exit_code)


@app.command("rules")
def list_rules() -> None:
    """List every rule: code, name, default severity and what it checks."""
    rules = _load_rules()
    width = max(len(r.name) for r in rules)
    for rule in rules:
        sys.stdout.write(
            f"{rule.code}  {rule.name:<{width}}  {rule.severity.label:<7}  {rule.summary}\n"
        )


@app.command("rule")
def show_rule(
    code: Annotated[str, typer.Argument(help="A rule code (GPU001) or name.")],
) -> None:
    """Print a rule's documentation."""
    rules = _load_rules()
    wanted = code.strip()
    for rule in rules:
        if wanted.upper() == rule.code or wanted == rule.name:
            head = f"# {rule.code}: {rule.name}\n\nDefault severity: {rule.severity.label}\n\n"
            sys.stdout.write(head + rule.doc + "\n")
            return
    _fail(f"unknown rule {code!r} (see `gpulint rules`)")


def main() -> None:
    """Console entry point: never lets a traceback reach the user."""
    try:
        app(standalone_mode=True)
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
        sys.stderr.write(f"gpulint: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(2)
