"""``gpulint check``'s work, without the command-line parser: configure, lint, fix, report.

``gpulint/cli/entry.py`` (a plain ``gpulint check FILE...``) and ``gpulint/cli/app.py`` (the typer
application) both call :func:`run_check`; configuring a run is :mod:`gpulint.commands.common`'s,
writing reports and fixed files :mod:`gpulint.commands.outfiles`'s.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from gpulint.commands.common import Trust, check_stdin_filename, configure, error, fail, use_color
from gpulint.commands.outfiles import unwritable, write_fixed, written
from gpulint.lint.prepass import (
    EVIDENCE_RULES,
    VALUE_RULES,
    assumption,
    cluster_objects,
    cluster_picture,
    config_maps,
    device_classes,
    device_plugins,
)

if TYPE_CHECKING:
    from gpulint.config.resolve import Effective
    from gpulint.fix.loop import FileFix
    from gpulint.lint.fixtarget import Fixing
    from gpulint.model import Finding
    from gpulint.render import RenderOptions
    from gpulint.render.trees import Trees
    from gpulint.report import Report
    from gpulint.suppress.baseline import RunBaseline


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
    from gpulint.config.file import warn  # escapes: the paths may be a pull request's names

    shown = ", ".join(paths[:MAX_NAMED_PATHS])
    if len(paths) > MAX_NAMED_PATHS:
        shown += f" and {len(paths) - MAX_NAMED_PATHS} more"
    warn(
        f"no files linted: {shown} held no *.yaml or *.yml file to lint (or every one was excluded)"
    )


def warn_fix(note: str) -> None:
    """A fix not applied, and why, on stderr (escaped: the note names the tree's paths)."""
    from gpulint.util.textsafe import escape

    sys.stderr.write(f"gpulint: warning: {escape(note)}\n")


def escape_diff(diff: str) -> str:
    """A diff with no control character but tab and line breaks (the text is a stranger's),
    and no line a GitHub workflow command: a context line is the file's line behind one
    space, and the runner trims that space (:func:`gpulint.util.textsafe.plain`)."""
    from gpulint.util.textsafe import escape, plain

    return plain(
        "".join(
            escape(line.rstrip("\r\n")) + line[len(line.rstrip("\r\n")) :]
            for line in diff.splitlines(keepends=True)
        )
    )


def _diff_summary(report: Report, fixes: int, unsafe: bool, errors: list[str]) -> int:
    """``--diff``'s ending: one line on stderr, exit 1 when something would be fixed."""
    more = report.unsafe_fixable if not unsafe else 0
    line = f"Would fix {fixes} problem{'s' * (fixes != 1)}" if fixes else "No fixes to apply"
    if more:
        line += f" ({more} more with --unsafe-fixes)"
    sys.stderr.write(line + ".\n")
    if errors:
        return 2
    return 1 if fixes else 0


def render_options(
    effective: Effective,
    render: bool,
    helm: str | None,
    kustomize: str | None,
    values: list[str] | None,
    set_values: list[str] | None,
    kube_version: str | None,
    release_name: str | None,
    namespace: str | None,
    render_timeout: float | None = None,
) -> tuple[RenderOptions, Trees]:
    """How ``check`` renders charts and Kustomize roots: the command line over the
    configuration's ``render:`` (which can set how a chart is rendered, never whether or
    with what program, nor for how long: that is the user's choice for the run, README
    "Security"). The run's render budget (``--render-timeout``, default
    ``RENDER_BUDGET_SECONDS``) starts now."""
    import math
    import time

    from gpulint.render import RENDER_BUDGET_SECONDS, ChartOptions, RenderOptions, option_problem
    from gpulint.render.trees import Trees

    budget = RENDER_BUDGET_SECONDS if render_timeout is None else render_timeout
    if not (budget > 0 and math.isfinite(budget)):
        fail(f"--render-timeout {budget:g}: give a number of seconds above 0")
    for option, value in (
        ("release-name", release_name),
        ("namespace", namespace),
        ("kube-version", kube_version),
    ):
        problem = option_problem(option, value) if value is not None else None
        if problem is not None:
            fail(f"--{problem}")
    for file in values or ():
        if not os.path.isfile(file):
            fail(f"--values: {file}: no such file")
    base = effective.render if effective.render is not None else RenderOptions()
    chart = ChartOptions(
        values=base.chart.values + tuple(values or ()),
        set=base.chart.set + tuple(set_values or ()),
        kube_version=kube_version or base.chart.kube_version,
        release_name=release_name or base.chart.release_name,
        namespace=namespace or base.chart.namespace,
        configured_set=len(base.chart.set),
    )
    deadline = time.monotonic() + budget
    options = RenderOptions(render, helm, kustomize, chart, base.charts, deadline)
    return options, Trees(render)


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
    allow_plugins: bool = False,
    plugins: list[str] | None = None,
    rule_dirs: list[str] | None = None,
    fail_if_no_files: bool | None = None,
    render: bool = False,
    helm: str | None = None,
    kustomize: str | None = None,
    values: list[str] | None = None,
    set_values: list[str] | None = None,
    kube_version: str | None = None,
    release_name: str | None = None,
    namespace: str | None = None,
    render_timeout: float | None = None,
    show_rendered: bool = False,
    cluster: list[str] | None = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    diff: bool = False,
    platform: str | None = None,
    baseline: str | None = None,
    write_baseline: str | None = None,
    exit_zero: bool = False,
    quiet: bool = False,
    statistics: bool = False,
) -> int:
    """``gpulint check``: lint, print the report, and return the exit code.

    The report goes to standard output, or with ``--output FILE`` to that file while the
    text report goes to standard output. A streaming format (text, github) is written file
    by file as the files are linted and no finding is kept; the others are rendered from
    the findings at the end.

    Nothing passes silently: a run that lints no file warns on stderr, naming the paths
    that held nothing (exit 1 with ``--fail-if-no-files``); a rule that raises is a GL900
    finding, also written to stderr, and exit 2.

    ``--fix`` writes each file's fixes back (:func:`write_fixed`) and reports what is left;
    ``--diff`` prints the diff instead of the report and writes nothing (exit 1 when there
    is something to fix); ``--unsafe-fixes`` adds the unsafe fixes to either. Fixing
    standard input writes the fixed text to standard output and the report to stderr.
    ``--baseline FILE`` (else the configuration's ``baseline:``) suppresses the findings the
    file records and reports its stale entries (GL101); ``--write-baseline FILE`` records
    this run's findings there instead, and reports none of them (:mod:`gpulint.suppress.baseline`).
    """
    import time

    from gpulint.lint.engine import Linter
    from gpulint.lint.runner import available_cores, run
    from gpulint.model import TOOL_ERROR_CODES
    from gpulint.reporters import ReportContext, needs_objects, renderer, streamer
    from gpulint.util.discover import STDIN, targets

    started = time.time()
    if output == "":  # checked before linting, not after it as an unwritable file
        fail("--output needs a file name (`-` is standard output)")
    if output == "-":  # `-o -` is standard output, the same as no --output
        output = None
    if output is not None:
        cannot = unwritable(output)  # before linting, not after minutes of it
        if cannot is not None:
            fail(cannot)
    check_stdin_filename(paths, stdin_filename)
    if diff and (output is not None or output_format != "text"):
        # Checked before linting: the diff is the output, and a report asked for would
        # otherwise be silently missing.
        fail("--diff prints the fixes as a diff and no report: drop --format and --output")
    trust = Trust(allow_plugins, plugins or (), rule_dirs or ())
    rules, effective = configure(
        config,
        isolated,
        select,
        extend_select,
        ignore,
        fail_on,
        trust=trust,
        fail_if_no_files=fail_if_no_files,
        cluster=cluster or (),
        platform=platform,
    )
    settings = effective.settings
    exclude = effective.exclude.matches if effective.exclude else None
    stdin_label = stdin_filename or "<stdin>"
    given = paths or ["."]
    rendering = render_options(
        effective,
        render,
        helm,
        kustomize,
        values,
        set_values,
        kube_version,
        release_name,
        namespace,
        render_timeout,
    )
    # The pre-passes (gpulint.lint.prepass) share one walk of their own (the lint's walk
    # streams): the files to lint, listed once.
    listed = list(targets(given, stdin_label, exclude, effective.force_exclude)[0])
    # Each file is linted with the closest configuration above it (gpulint.commands.nearest),
    # unless --config names one for every file or --isolated ignores them all.
    nearest = None
    if config is None and not isolated:
        from gpulint.commands.nearest import Nearest

        nearest = Nearest(effective, trust, effective.overrides, stdin_filename)
        nearest.discover(listed)
        if not nearest.levels:
            nearest = None
    nested = nearest.active_codes() if nearest is not None else set()
    # The files' node-pool objects first, when a cluster is described: without one, the
    # output stays what it always was.
    if settings.cluster is not None:
        settings.cluster = cluster_objects(settings.cluster, listed)
    # The repository's own device plugins say which names they advertise, what a replica
    # allows, the unit of aliyun.com/gpu-mem (gpulint.cluster.deviceplugins).
    settings.registry = device_plugins(settings, listed) or settings.registry
    # DeviceClasses are cluster-wide: a claim in one file may name a class another defines.
    settings.device_classes = device_classes(listed)
    linter = Linter(rules, settings)
    # A container's $(VAR) may read a ConfigMap another file defines.
    if (linter.active.keys() | nested) & VALUE_RULES:
        settings.config_maps = config_maps(listed)
        linter.values.run = settings.config_maps
    if settings.cluster is None and (linter.active.keys() | nested) & EVIDENCE_RULES:
        settings.evidence = cluster_picture(settings, listed)
        if settings.evidence:
            linter = Linter(rules, settings)
    if nearest is not None:
        nearest.build(linter, settings)
    found, missing = targets(
        given, stdin_label, exclude, effective.force_exclude, trees=rendering[1]
    )
    stdin_used = stdin_label if STDIN in (paths or []) else None
    if write_baseline == "":
        fail("--write-baseline needs a file name")
    accepted: RunBaseline | None = None
    if baseline is not None or write_baseline is not None or effective.baseline is not None:
        # Imported only for a run with a baseline: a plain check (a pre-commit hook's) has
        # none, and the module is on no other path (docs/architecture.md).
        from gpulint.suppress.baseline import BaselineError, RunBaseline

        try:
            accepted = RunBaseline(baseline, write_baseline, effective.baseline, stdin_used)
        except BaselineError as exc:
            fail(str(exc))
        found = accepted.watch(found)
    errors = [f"{path}: no such file or directory" for path in missing]
    for message in errors:
        error(message)

    ctx = ReportContext(
        rules,
        settings.fail_on,
        0,  # set once the run is over
        color=use_color(color),
        argv=sys.argv,
        stdin_label=stdin_label if STDIN in (paths or []) else None,
        started=started,
        errors=errors,
        show_rendered=show_rendered,
        assumption=assumption(settings),
    )
    ctx.quiet, ctx.statistics = quiet, statistics
    # Standard output gets the chosen format, or the text report when the chosen format
    # goes to --output. A streaming format is written as each file is done; a report file
    # is written at the end (so a path that cannot be written costs no lost report).
    stdout_format = output_format if output is None else "text"
    factory = streamer(stdout_format)
    stream = factory(ctx) if factory is not None else None
    fixing: Fixing | None = None
    if fix or diff:
        from gpulint.fix.loop import SAFE, UNSAFE

        fixing = (UNSAFE if unsafe_fixes else SAFE, diff)
    ctx.fixing = (fixing[0] if not diff else None) if fixing else None
    if unsafe_fixes and fixing is None:
        ctx.fixing = "show-unsafe"
    # Fixed standard input goes to standard output: the report goes to stderr, as ruff's.
    out = sys.stderr if fixing is not None and not diff and STDIN in (paths or []) else sys.stdout
    would_fix = [0]

    def write_fix(fixed: FileFix) -> None:
        for note in fixed.notes:
            warn_fix(note)
        if diff:
            if fixed.diff:
                would_fix[0] += fixed.fixed
                sys.stdout.write(escape_diff(fixed.diff))
            return
        if fixed.path is None:
            sys.stdout.flush()
            sys.stdout.buffer.write(fixed.data or b"")
            sys.stdout.flush()
            return
        if fixed.data is not None:
            problem = write_fixed(fixed.path, fixed.data)
            if problem is not None:
                errors.append(problem)
                error(problem)

    def write_findings(findings: list[Finding]) -> None:
        if diff:
            return
        if stream is not None:
            out.write(stream.file(findings))
            return
        # A rule that raised (GL900) is a tool error: when standard output is a document
        # (json, sarif, junit) rather than lines a person reads, it is on stderr as well.
        for f in findings:
            if f.rule in TOOL_ERROR_CODES:
                where = f"{f.path}:{f.line}:{f.column}"
                obj = f" [{f.object.label()}]" if f.object is not None else ""
                error(f"{where}: {f.message}{obj}")

    report = run(
        linter,
        found,
        jobs=jobs or available_cores(),
        collect_objects=needs_objects(output_format),
        on_file=write_findings,
        keep_findings=stream is None or output is not None,
        rendering=rendering,
        fixing=fixing,
        on_fix=write_fix,
        prepare=accepted.prepare if accepted is not None else None,
        linter_for=nearest.linter_for if nearest is not None else None,
    )
    unwritten_baseline = None
    if accepted is not None:
        if write_baseline is not None:
            unwritten_baseline = written(write_baseline, accepted.text)
        stale = accepted.stale(linter.active)
        if stale:
            report.extend(stale)
            write_findings(stale)
        if unwritten_baseline is None:
            sys.stderr.write(accepted.note())
    if diff:
        return _diff_summary(report, would_fix[0], unsafe_fixes, errors)
    if report.files == 0:
        no_files_warning([p for p in given if p not in missing])
    if missing or report.rule_errors or len(errors) > len(missing):  # + fixes not written
        ctx.exit_code = 2
    elif not exit_zero and (
        report.failed(settings.fail_on) or (report.files == 0 and effective.fail_if_no_files)
    ):
        ctx.exit_code = 1
    else:
        ctx.exit_code = 0
    ctx.ended = time.time()
    if unwritten_baseline is not None:
        errors.append(unwritten_baseline)
        ctx.exit_code = 2
        error(unwritten_baseline)
    # The report file is written before the summary, so that a file that cannot be written
    # is an error the summary counts (an exit 2 never ends in "All checks passed").
    unwritten = None
    if output is not None:
        terminal_color, ctx.color = ctx.color, False
        unwritten = written(output, lambda: renderer(output_format)(report, ctx))
        if unwritten is not None:
            errors.append(unwritten)
            ctx.exit_code = 2
        ctx.color = terminal_color
    out.write(stream.end(report) if stream else renderer(stdout_format)(report, ctx))
    out.flush()
    if unwritten is not None:
        fail(unwritten)
    return ctx.exit_code
