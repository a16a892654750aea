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
    from gpulint.config import ConfigFile, Effective
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
    sarif = "sarif"
    github = "github"
    junit = "junit"


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


class ColorMode(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


class RulesFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


class ConfigFormat(str, Enum):
    text = "text"
    json = "json"


# Options shared by the commands that read the configuration.
ConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config",
        help="Use this configuration file (.gpulint.yaml or pyproject.toml) instead of "
        "searching from the working directory upward.",
        show_default=False,
    ),
]
IsolatedOption = Annotated[
    bool, typer.Option("--isolated", help="Ignore every configuration file.")
]
SelectOption = Annotated[
    list[str] | None,
    typer.Option(help="Only these rule codes or prefixes (comma-separated, e.g. GPU0)."),
]
ExtendSelectOption = Annotated[
    list[str] | None, typer.Option(help="Rule codes or prefixes to add to the selection.")
]
IgnoreOption = Annotated[list[str] | None, typer.Option(help="Rule codes or prefixes to skip.")]
FailOnOption = Annotated[
    FailOn | None,
    typer.Option(
        help="Exit 1 when a finding at or above this severity is found [default: error].",
        show_default=False,
    ),
]


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


def _fail_lines(message: str) -> NoReturn:
    for line in message.splitlines():
        sys.stderr.write(f"gpulint: error: {line}\n")
    raise typer.Exit(2)


def _load_rules(config: ConfigFile | None = None) -> list[Rule]:
    """Entry-point rules, plus the configuration's ``plugins`` and ``rule-dirs``."""
    from gpulint.config import ConfigError, rule_locations
    from gpulint.rule import RuleLoadError, load_rules

    try:
        plugins, dirs = rule_locations(config) if config is not None else ([], [])
        return load_rules(plugins=plugins, rule_dirs=dirs)
    except (RuleLoadError, ConfigError) as exc:
        _fail_lines(str(exc))


def _read_config(path: str | None, isolated: bool) -> ConfigFile | None:
    from gpulint.config import ConfigError, load_config

    try:
        return load_config(path, isolated)
    except ConfigError as exc:
        _fail_lines(str(exc))


def _configure(
    path: str | None,
    isolated: bool,
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    fail_on: FailOn | None = None,
) -> tuple[list[Rule], Effective]:
    """Rules and effective configuration: defaults < configuration file < command line."""
    from gpulint.config import ConfigError, Overrides, resolve

    config = _read_config(path, isolated)
    rules = _load_rules(config)
    known = [r.code for r in rules]
    selected, extended, ignored = _codes(select), _codes(extend_select), _codes(ignore)
    _check_selectors(selected, known, "--select")
    _check_selectors(extended, known, "--extend-select")
    _check_selectors(ignored, known, "--ignore")
    overrides = Overrides(
        select=selected or None,
        extend_select=extended,
        ignore=ignored,
        fail_on=fail_on.value if fail_on is not None else None,
    )
    try:
        return rules, resolve(config, rules, overrides)
    except ConfigError as exc:
        _fail_lines(str(exc))


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
    output: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the --format report to this file; the terminal still shows text.",
            show_default=False,
        ),
    ] = None,
    select: SelectOption = None,
    extend_select: ExtendSelectOption = None,
    ignore: IgnoreOption = None,
    fail_on: FailOnOption = None,
    stdin_filename: Annotated[
        str | None, typer.Option(help="The path to report for input read from stdin.")
    ] = None,
    color: Annotated[ColorMode, typer.Option(help="Colour the text output.")] = ColorMode.auto,
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
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
    from datetime import datetime, timezone

    from gpulint.discover import STDIN, targets
    from gpulint.engine import Linter
    from gpulint.reporters import ReportContext, needs_objects, renderer
    from gpulint.runner import available_cores, run

    started = datetime.now(timezone.utc)
    if output == "-":  # `-o -` is standard output, the same as no --output
        output = None
    rules, effective = _configure(config, isolated, select, extend_select, ignore, fail_on)
    settings = effective.settings
    linter = Linter(rules, settings)
    exclude = effective.exclude.matches if effective.exclude else None
    stdin_label = stdin_filename or "<stdin>"
    found, missing = targets(paths or ["."], stdin_label, exclude, effective.force_exclude)
    errors = [f"{path}: no such file or directory" for path in missing]
    for error in errors:
        sys.stderr.write(f"gpulint: error: {error}\n")
    report = run(
        linter,
        found,
        jobs=jobs or available_cores(),
        collect_objects=needs_objects(output_format.value),
    )
    exit_code = 2 if missing else (1 if report.failed(settings.fail_on) else 0)
    ctx = ReportContext(
        rules,
        settings.fail_on,
        exit_code,
        color=_use_color(color),
        argv=sys.argv,
        stdin_label=stdin_label if STDIN in (paths or []) else None,
        start_time=started,
        end_time=datetime.now(timezone.utc),
        errors=errors,
    )
    if output is None:
        sys.stdout.write(renderer(output_format.value)(report, ctx))
    else:
        ctx.color = False
        content = renderer(output_format.value)(report, ctx)
        ctx.color = _use_color(color)
        sys.stdout.write(renderer("text")(report, ctx))
        sys.stdout.flush()
        try:
            _write_file(output, content)
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or type(exc).__name__}")
    sys.stdout.flush()
    raise typer.Exit(exit_code)


@app.command("inspect")
def inspect_cmd(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Files or directories to inspect; '-' reads stdin.", show_default=False
        ),
    ] = None,
    output_format: Annotated[
        ConfigFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ConfigFormat.text,
    stdin_filename: Annotated[
        str | None, typer.Option(help="The path to report for input read from stdin.")
    ] = None,
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
) -> None:
    """List the workloads found, their pod specs and each pod's effective GPU request."""
    from gpulint.discover import targets
    from gpulint.inspector import Inspector, render_json, render_text

    _, effective = _configure(config, isolated)
    settings = effective.settings
    found, missing = targets(paths or ["."], stdin_filename or "<stdin>")
    for path in missing:
        sys.stderr.write(f"gpulint: error: {path}: no such file or directory\n")
    report = Inspector(settings.workloads, settings.registry).inspect_targets(found)
    render = render_json if output_format is ConfigFormat.json else render_text
    sys.stdout.write(render(report))
    sys.stdout.flush()
    raise typer.Exit(2 if missing else 0)


def _write_file(path: str, content: str) -> None:
    """Write the report, creating missing parent folders (as ruff's --output-file does)."""
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(content)


@app.command("rules")
def list_rules(
    output_format: Annotated[
        RulesFormat,
        typer.Option(
            "--format",
            "-f",
            help="text: one line per rule; markdown: the documentation page (docs/rules.md); "
            "json: everything, for tools.",
        ),
    ] = RulesFormat.text,
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
) -> None:
    """List every rule: code, name, default severity and what it checks."""
    from gpulint import catalog

    rules = _load_rules(_read_config(config, isolated))
    render = {
        RulesFormat.text: catalog.render_text,
        RulesFormat.markdown: catalog.render_markdown,
        RulesFormat.json: catalog.render_json,
    }[output_format]
    sys.stdout.write(render(rules))


@app.command("rule")
def show_rule(
    code: Annotated[str, typer.Argument(help="A rule code (GPU001) or name.")],
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
) -> None:
    """Print a rule's documentation."""
    rules = _load_rules(_read_config(config, isolated))
    wanted = code.strip()
    for rule in rules:
        if wanted.upper() == rule.code or wanted == rule.name:
            head = f"# {rule.code}: {rule.name}\n\nDefault severity: {rule.severity.label}\n\n"
            sys.stdout.write(head + rule.doc + "\n")
            return
    _fail(f"unknown rule {code!r} (see `gpulint rules`)")


@app.command("config")
def show_config(
    config: ConfigOption = None,
    isolated: IsolatedOption = False,
    select: SelectOption = None,
    extend_select: ExtendSelectOption = None,
    ignore: IgnoreOption = None,
    fail_on: FailOnOption = None,
    output_format: Annotated[
        ConfigFormat, typer.Option("--format", "-f", help="Output format.")
    ] = ConfigFormat.text,
    schema: Annotated[
        bool,
        typer.Option(
            "--schema",
            help="Print the JSON Schema of the configuration for the loaded rules instead.",
        ),
    ] = False,
) -> None:
    """Print the effective configuration and where each value came from."""
    import json

    from gpulint.config import config_schema, describe

    rules, effective = _configure(config, isolated, select, extend_select, ignore, fail_on)
    if schema:
        sys.stdout.write(json.dumps(config_schema(rules), indent=2, ensure_ascii=False) + "\n")
        return
    sys.stdout.write(describe(effective, rules, json_output=output_format is ConfigFormat.json))


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


def main() -> None:
    """Console entry point: never lets a traceback reach the user."""
    try:
        code = app(standalone_mode=False)
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
        # Click's exceptions (typer may vendor its own copy of click): a usage error has
        # exit_code 2 and a message of its own.
        if getattr(exc, "exit_code", None) == 2 and hasattr(exc, "format_message"):
            _usage_error(exc)
        if type(exc).__name__ == "RuleError":  # gpulint.engine.RuleError, not imported here
            sys.stderr.write(f"gpulint: error: {exc}\n")
            sys.exit(2)
        sys.stderr.write(f"gpulint: internal error: {type(exc).__name__}: {exc}\n")
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
