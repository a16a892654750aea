"""What the commands do, without the command-line parser.

``gpulint/cli.py`` declares the commands with typer; this module holds their work and never
imports typer, so ``gpulint/entry.py`` can run a plain ``gpulint check FILE...`` (what a
pre-commit hook runs on every commit) without paying typer's import time. Errors leave with
``sys.exit(2)`` after a one-line message, which typer lets through unchanged.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from gpulint.config import ConfigFile, Effective
    from gpulint.model import Finding
    from gpulint.rule import Rule


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"gpulint: error: {message}\n")
    sys.exit(2)


def fail_lines(message: str) -> NoReturn:
    for line in message.splitlines():
        sys.stderr.write(f"gpulint: error: {line}\n")
    sys.exit(2)


def codes(values: list[str] | None) -> list[str]:
    """``["GPU001,GPU002", "gpu3"]`` -> ``["GPU001", "GPU002", "GPU3"]``."""
    out: list[str] = []
    for value in values or ():
        out.extend(part.strip().upper() for part in value.split(",") if part.strip())
    return out


def use_color(mode: str) -> bool:
    """``auto``: only on a terminal, unless NO_COLOR or FORCE_COLOR say otherwise."""
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def load_rules(config: ConfigFile | None = None) -> list[Rule]:
    """Entry-point rules, plus the configuration's ``plugins`` and ``rule-dirs``."""
    from gpulint.config import ConfigError, rule_locations
    from gpulint.rule import RuleLoadError
    from gpulint.rule import load_rules as load

    try:
        plugins, dirs = rule_locations(config) if config is not None else ([], [])
        return load(plugins=plugins, rule_dirs=dirs)
    except (RuleLoadError, ConfigError) as exc:
        fail_lines(str(exc))


def read_config(path: str | None, isolated: bool) -> ConfigFile | None:
    from gpulint.config import ConfigError, load_config

    try:
        return load_config(path, isolated)
    except ConfigError as exc:
        fail_lines(str(exc))


def selectors(values: list[str] | None, known: list[str], option: str) -> list[str]:
    """The codes of a selector option, each checked by ``config.selector`` (the function
    the configuration file's selectors go through too); exit 2 naming every bad one.

    ``--select GPU0,gpu1 --select YML`` -> ``["GPU0", "GPU1", "YML"]``; an empty value or an
    empty item (``--select ''``, ``--select GPU0,``) is an error, not "select nothing".
    """
    from gpulint.config import selector

    out: list[str] = []
    errors: list[str] = []
    for value in values or ():
        for part in value.split(","):
            code, error = selector(part, known)
            if error is not None:
                errors.append(f"{option}: {error}")
            out.append(code)
    if errors:
        fail_lines("\n".join(errors))
    return out


def configure(
    path: str | None,
    isolated: bool,
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    fail_on: str | None = None,
) -> tuple[list[Rule], Effective]:
    """Rules and effective configuration: defaults < configuration file < command line."""
    from gpulint.config import ConfigError, Overrides, resolve

    config = read_config(path, isolated)
    rules = load_rules(config)
    known = [r.code for r in rules]
    selected = selectors(select, known, "--select")
    extended = selectors(extend_select, known, "--extend-select")
    ignored = selectors(ignore, known, "--ignore")
    overrides = Overrides(
        select=selected if select else None,
        extend_select=extended,
        ignore=ignored,
        fail_on=fail_on,
    )
    try:
        return rules, resolve(config, rules, overrides)
    except ConfigError as exc:
        fail_lines(str(exc))


def check_stdin_filename(paths: list[str] | None, stdin_filename: str | None) -> None:
    """``--stdin-filename`` names what ``-`` reads: without ``-`` it would name nothing."""
    if stdin_filename is not None and "-" not in (paths or ()):
        fail(
            "--stdin-filename names the input read from stdin, but '-' is not among the "
            f"paths; add '-' to lint stdin as {stdin_filename}"
        )


def write_file(path: str, content: str) -> None:
    """Write the report, creating missing parent folders (as ruff's --output-file does)."""
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(content)


def run_check(
    paths: list[str] | None,
    *,
    output_format: str = "text",
    output: str | None = None,
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    fail_on: str | None = None,
    stdin_filename: str | None = None,
    color: str = "auto",
    config: str | None = None,
    isolated: bool = False,
    jobs: int | None = None,
) -> int:
    """``gpulint check``: lint, print the report, and return the exit code.

    The report goes to standard output, or with ``--output FILE`` to that file while the
    text report goes to standard output. A streaming format (text, github) is written file
    by file as the files are linted and no finding is kept; the others are rendered from
    the findings at the end.
    """
    import time

    from gpulint.discover import STDIN, targets
    from gpulint.engine import Linter
    from gpulint.reporters import ReportContext, needs_objects, renderer, streamer
    from gpulint.runner import available_cores, run

    started = time.time()
    if output == "-":  # `-o -` is standard output, the same as no --output
        output = None
    check_stdin_filename(paths, stdin_filename)
    rules, effective = configure(config, isolated, select, extend_select, ignore, fail_on)
    settings = effective.settings
    linter = Linter(rules, settings)
    exclude = effective.exclude.matches if effective.exclude else None
    stdin_label = stdin_filename or "<stdin>"
    found, missing = targets(paths or ["."], stdin_label, exclude, effective.force_exclude)
    errors = [f"{path}: no such file or directory" for path in missing]
    for error in errors:
        sys.stderr.write(f"gpulint: error: {error}\n")

    ctx = ReportContext(
        rules,
        settings.fail_on,
        0,  # set once the run is over
        color=use_color(color),
        argv=sys.argv,
        stdin_label=stdin_label if STDIN in (paths or []) else None,
        started=started,
        errors=errors,
    )
    # Standard output gets the chosen format, or the text report when the chosen format
    # goes to --output. A streaming format is written as each file is done; a report file
    # is written at the end (so a path that cannot be written costs no lost report).
    stdout_format = output_format if output is None else "text"
    factory = streamer(stdout_format)
    stream = factory(ctx) if factory is not None else None

    def write_findings(findings: list[Finding]) -> None:
        assert stream is not None
        sys.stdout.write(stream.file(findings))

    report = run(
        linter,
        found,
        jobs=jobs or available_cores(),
        collect_objects=needs_objects(output_format),
        on_file=write_findings if stream is not None else None,
        keep_findings=stream is None or output is not None,
    )
    ctx.exit_code = 2 if missing else (1 if report.failed(settings.fail_on) else 0)
    ctx.ended = time.time()
    sys.stdout.write(stream.end(report) if stream else renderer(stdout_format)(report, ctx))
    sys.stdout.flush()
    if output is not None:
        ctx.color = False
        try:
            write_file(output, renderer(output_format)(report, ctx))
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or type(exc).__name__}")
    return ctx.exit_code
