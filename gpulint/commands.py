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


def check_selectors(selected: list[str], known: list[str], option: str) -> None:
    for code in selected:
        if code != "ALL" and not any(k.startswith(code) for k in known):
            fail(f"{option}: {code!r} matches no rule (see `gpulint rules`)")


def configure(
    path: str | None,
    isolated: bool,
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    fail_on: str | None = None,
    fail_if_no_files: bool | None = None,
) -> tuple[list[Rule], Effective]:
    """Rules and effective configuration: defaults < configuration file < command line."""
    from gpulint.config import ConfigError, Overrides, resolve

    config = read_config(path, isolated)
    rules = load_rules(config)
    known = [r.code for r in rules]
    selected, extended, ignored = codes(select), codes(extend_select), codes(ignore)
    check_selectors(selected, known, "--select")
    check_selectors(extended, known, "--extend-select")
    check_selectors(ignored, known, "--ignore")
    overrides = Overrides(
        select=selected or None,
        extend_select=extended,
        ignore=ignored,
        fail_on=fail_on,
        fail_if_no_files=fail_if_no_files,
    )
    try:
        return rules, resolve(config, rules, overrides)
    except ConfigError as exc:
        fail_lines(str(exc))


#: The paths a "nothing to lint" warning names at most (pre-commit may pass thousands).
MAX_NAMED_PATHS = 5


def no_files_warning(paths: list[str]) -> None:
    """One line on stderr when a run linted no file: which paths held nothing to lint.

    Paths that do not exist are errors of their own and are not repeated here. A file counts
    as linted when it was read (or found unreadable, YML005), whether or not it held a
    Kubernetes object; files left out by ``exclude`` (``force-exclude`` for files named on
    the command line) do not.
    """
    if not paths:
        return
    shown = ", ".join(paths[:MAX_NAMED_PATHS])
    if len(paths) > MAX_NAMED_PATHS:
        shown += f" and {len(paths) - MAX_NAMED_PATHS} more"
    sys.stderr.write(
        f"gpulint: warning: no files linted: {shown} held no *.yaml or *.yml file to lint "
        "(or every one was excluded)\n"
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
    fail_if_no_files: bool | None = None,
) -> int:
    """``gpulint check``: lint, print the report, and return the exit code.

    The report goes to standard output, or with ``--output FILE`` to that file while the
    text report goes to standard output. A streaming format (text, github) is written file
    by file as the files are linted and no finding is kept; the others are rendered from
    the findings at the end.

    Nothing passes silently: a run that lints no file warns on stderr, naming the paths
    that held nothing (exit 1 with ``--fail-if-no-files``); a rule that raises is a GL900
    finding, also written to stderr, and exit 2.
    """
    import time

    from gpulint.discover import STDIN, targets
    from gpulint.engine import RULE_ERROR_CODE, Linter
    from gpulint.reporters import ReportContext, needs_objects, renderer, streamer
    from gpulint.runner import available_cores, run

    started = time.time()
    if output == "-":  # `-o -` is standard output, the same as no --output
        output = None
    rules, effective = configure(
        config, isolated, select, extend_select, ignore, fail_on, fail_if_no_files
    )
    settings = effective.settings
    linter = Linter(rules, settings)
    exclude = effective.exclude.matches if effective.exclude else None
    stdin_label = stdin_filename or "<stdin>"
    given = paths or ["."]
    found, missing = targets(given, stdin_label, exclude, effective.force_exclude)
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
        if stream is not None:
            sys.stdout.write(stream.file(findings))
            return
        # A rule that raised (GL900) is a tool error: when standard output is a document
        # (json, sarif, junit) rather than lines a person reads, it is on stderr as well.
        for f in findings:
            if f.rule == RULE_ERROR_CODE:
                where = f"{f.path}:{f.line}:{f.column}"
                obj = f" [{f.object.label()}]" if f.object is not None else ""
                sys.stderr.write(f"gpulint: error: {where}: {f.message}{obj}\n")

    report = run(
        linter,
        found,
        jobs=jobs or available_cores(),
        collect_objects=needs_objects(output_format),
        on_file=write_findings,
        keep_findings=stream is None or output is not None,
    )
    if report.files == 0:
        no_files_warning([p for p in given if p not in missing])
    if missing or report.rule_errors:
        ctx.exit_code = 2
    elif report.failed(settings.fail_on) or (report.files == 0 and effective.fail_if_no_files):
        ctx.exit_code = 1
    else:
        ctx.exit_code = 0
    ctx.ended = time.time()
    # The report file is written before the summary, so that a file that cannot be written
    # is an error the summary counts (an exit 2 never ends in "All checks passed").
    unwritten = None
    if output is not None:
        color, ctx.color = ctx.color, False
        try:
            write_file(output, renderer(output_format)(report, ctx))
        except OSError as exc:
            unwritten = f"cannot write {output}: {exc.strerror or type(exc).__name__}"
            errors.append(unwritten)
            ctx.exit_code = 2
        ctx.color = color
    sys.stdout.write(stream.end(report) if stream else renderer(stdout_format)(report, ctx))
    sys.stdout.flush()
    if unwritten is not None:
        fail(unwritten)
    return ctx.exit_code
