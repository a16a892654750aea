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
from gpulint.lint.prepass import assumption
from gpulint.model import TOOL_ERROR_CODES
from gpulint.util.discover import STDIN
from gpulint.util.walk import Listings

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import TextIO

    from gpulint.commands.checkoptions import CheckOptions
    from gpulint.commands.facts import RunFacts
    from gpulint.commands.nearest import Nearest
    from gpulint.config.resolve import Effective
    from gpulint.fix.loop import FileFix, Fixing
    from gpulint.lint.engine import Linter
    from gpulint.model import Finding
    from gpulint.render import RenderOptions
    from gpulint.render.trees import Trees
    from gpulint.report import Report
    from gpulint.reporters import ReportContext, Stream
    from gpulint.rule import Rule
    from gpulint.suppress.baseline import RunBaseline
    from gpulint.util.discover import Target


def render_options(
    effective: Effective, options: CheckOptions, listings: Listings | None = None
) -> tuple[RenderOptions, Trees]:
    """How ``check`` renders charts and Kustomize roots: the command line over the
    configuration's ``render:`` (which can set how a chart is rendered, never whether or
    with what program, nor for how long: that is the user's choice for the run, README
    "Security"). The run's render budget (``--render-timeout``, default
    ``RENDER_BUDGET_SECONDS``) starts now. ``listings``: the run's, which the chart and
    Kustomize scans share with its other walks."""
    import math
    import time

    from gpulint.render import RENDER_BUDGET_SECONDS, ChartOptions, RenderOptions, option_problem
    from gpulint.render.trees import Trees

    budget = RENDER_BUDGET_SECONDS if options.render_timeout is None else options.render_timeout
    if not (budget > 0 and math.isfinite(budget)):
        fail(f"--render-timeout {budget:g}: give a number of seconds above 0")
    for option, value in (
        ("release-name", options.release_name),
        ("namespace", options.namespace),
        ("kube-version", options.kube_version),
    ):
        problem = option_problem(option, value) if value is not None else None
        if problem is not None:
            fail(f"--{problem}")
    for file in options.values or ():
        if not os.path.isfile(file):
            fail(f"--values: {file}: no such file")
    base = effective.render if effective.render is not None else RenderOptions()
    chart = ChartOptions(
        values=base.chart.values + tuple(options.values or ()),
        set=base.chart.set + tuple(options.set_values or ()),
        kube_version=options.kube_version or base.chart.kube_version,
        release_name=options.release_name or base.chart.release_name,
        namespace=options.namespace or base.chart.namespace,
        configured_set=len(base.chart.set),
    )
    deadline = time.monotonic() + budget
    render = options.render
    how = RenderOptions(
        render,
        options.helm,
        options.kustomize,
        chart,
        base.charts,
        deadline,
        leaves_plain=render and options.rendered_only,
    )
    return how, Trees(render, listings)


def run_check(paths: list[str] | None, options: CheckOptions) -> int:
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

    The stages, in order, each a function of the run's state (:class:`Run`, which holds
    the options): validate the options, configure, the pre-passes, the targets (and the
    baseline), the report's context, lint and report, and the ending (exit code, the
    report file).
    """
    import time

    run = Run(paths, options, time.time())
    _validate(run)
    _configure(run)
    _prepasses(run)
    _targets(run)
    _report_context(run)
    return _finish(run, _lint(run))


class Run:
    """One ``gpulint check``'s state, filled in stage by stage by :func:`run_check`."""

    __slots__ = (
        "accepted",
        "ctx",
        "effective",
        "errors",
        "exclude",
        "facts",
        "fixing",
        "found",
        "given",
        "linter",
        "linter_for",
        "listings",
        "missing",
        "nearest",
        "options",
        "out",
        "output",
        "paths",
        "rendering",
        "rules",
        "started",
        "stdin_label",
        "stream",
        "trust",
        "would_fix",
    )

    def __init__(self, paths: list[str] | None, options: CheckOptions, started: float) -> None:
        self.paths, self.options, self.started = paths, options, started
        #: Where the --format report goes: a file, or None for standard output.
        self.output = options.output
        self.given = paths or ["."]
        #: Every folder the run lists, listed once: its walks and climbs share them.
        self.listings = Listings()
        self.stdin_label = options.stdin_filename or "<stdin>"
        #: The run's errors (a missing path, a fix or report not written): exit 2.
        self.errors: list[str] = []
        self.accepted: RunBaseline | None = None
        #: Each file's closest configuration, when some file has another than the run's.
        self.nearest: Nearest | None = None
        self.fixing: Fixing | None = None
        self.would_fix = 0
        # Set by the stages: configure, prepasses, targets, report context.
        self.rules: list[Rule]
        self.effective: Effective
        self.trust: Trust
        self.exclude: Callable[[str], bool] | None
        self.rendering: tuple[RenderOptions, Trees]
        self.linter: Linter
        self.linter_for: Callable[[Target], Linter]
        self.facts: RunFacts
        self.found: Iterable[Target]
        self.missing: list[str]
        self.ctx: ReportContext
        self.stream: Stream | None
        self.out: TextIO

    def uses_stdin(self) -> bool:
        return STDIN in (self.paths or [])

    def write_fix(self, fixed: FileFix) -> None:
        """What fixing a file changed: written back, or printed as a diff (``--diff``)."""
        for note in fixed.notes:
            warn_fix(note)
        if self.options.diff:
            if fixed.diff:
                self.would_fix += fixed.fixed
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
                self.errors.append(problem)
                error(problem)

    def write_findings(self, findings: list[Finding]) -> None:
        """A file's findings, as soon as it is done: streamed, and rule errors on stderr."""
        if self.options.diff:
            return
        if self.stream is not None:
            self.out.write(self.stream.file(findings))
            return
        # A rule that raised (GL900) is a tool error: when standard output is a document
        # (json, sarif, junit) rather than lines a person reads, it is on stderr as well.
        for f in findings:
            if f.rule in TOOL_ERROR_CODES:
                where = f"{f.path}:{f.line}:{f.column}"
                obj = f" [{f.object.label()}]" if f.object is not None else ""
                error(f"{where}: {f.message}{obj}")


def _validate(run: Run) -> None:
    """What the command line alone can be refused for, before any work."""
    options = run.options
    if run.output == "":  # checked before linting, not after it as an unwritable file
        fail("--output needs a file name (`-` is standard output)")
    if run.output == "-":  # `-o -` is standard output, the same as no --output
        run.output = None
    if run.output is not None:
        cannot = unwritable(run.output)  # before linting, not after minutes of it
        if cannot is not None:
            fail(cannot)
    check_stdin_filename(run.paths, options.stdin_filename)
    if options.diff and (run.output is not None or options.output_format != "text"):
        # Checked before linting: the diff is the output, and a report asked for would
        # otherwise be silently missing.
        fail("--diff prints the fixes as a diff and no report: drop --format and --output")


def _configure(run: Run) -> None:
    """The rules and the effective configuration: the command line over the files."""
    options = run.options
    trust = run.trust = Trust(options.allow_plugins, options.plugins or (), options.rule_dirs or ())
    run.rules, run.effective = configure(
        options.config,
        options.isolated,
        options.select,
        options.extend_select,
        options.ignore,
        options.fail_on,
        trust=trust,
        fail_if_no_files=options.fail_if_no_files,
        cluster=options.cluster or (),
        platform=options.platform,
        baseline=options.baseline,
    )
    effective = run.effective
    run.exclude = effective.exclude.matches if effective.exclude else None
    run.rendering = render_options(effective, options, run.listings)


def _prepasses(run: Run) -> None:
    """The facts of each file's project (:mod:`gpulint.commands.facts`), and the linters."""
    from gpulint.commands.facts import RunFacts
    from gpulint.commands.projects import Projects
    from gpulint.lint.engine import is_enabled
    from gpulint.util.discover import targets

    settings = run.effective.settings
    found = targets(
        run.given,
        run.stdin_label,
        run.exclude,
        run.effective.force_exclude,
        listings=run.listings,
    )
    listed = list(found[0])
    # Each file is linted with the closest configuration above it (gpulint.commands.nearest),
    # unless --config names one for every file or --isolated ignores them all.
    options = run.options
    if options.config is None and not options.isolated:
        from gpulint.commands.nearest import Nearest

        nearest = Nearest(
            run.effective,
            run.trust,
            run.effective.overrides,
            options.stdin_filename,
            run.listings,
        )
        nearest.discover(listed)
        run.nearest = nearest if nearest.levels else None
    nested = run.nearest.active_codes() if run.nearest is not None else set()
    codes = {r.code for r in run.rules if is_enabled(r.code, settings, r.opt_in)} | nested
    # A file's facts come from its project, whatever else the run was given.
    projects = Projects(
        run.given, options.stdin_filename, declared=not options.isolated, listings=run.listings
    )
    file = run.effective.file
    # --diff changes nothing in the tree: no facts cache is kept either.
    cache = not options.no_cache and not (file is not None and file.data.get("cache") is False)
    cache = cache and not options.diff
    from gpulint.lint.runner import available_cores

    jobs = options.jobs or available_cores()
    # A file's findings are kept too in a plain run: not one that fixes or records objects.
    from gpulint.reporters import needs_objects

    plain = not (options.fix or options.diff or needs_objects(options.output_format))
    facts = RunFacts(
        run.rules, settings, projects, run.exclude, codes, run.nearest, cache, jobs, plain
    )
    run.linter = facts.prepare(listed)
    run.linter_for = facts.linter_for
    run.facts = facts


def _targets(run: Run) -> None:
    """The targets to lint (charts and overlays among them), seen through the baseline."""
    from gpulint.util.discover import targets

    options, effective = run.options, run.effective
    run.found, run.missing = targets(
        run.given,
        run.stdin_label,
        run.exclude,
        effective.force_exclude,
        trees=run.rendering[1],
        listings=run.listings,
    )
    if options.rendered_only:
        if not options.render:
            fail("--rendered-only needs --render")
        # Plain manifests are the plain run's (pre-commit's gpulint hook): one report each.
        run.found = (t for t in run.found if t.render is not None)
    stdin_used = run.stdin_label if run.uses_stdin() else None
    if options.write_baseline == "":
        fail("--write-baseline needs a file name")
    if (
        options.baseline is not None
        or options.write_baseline is not None
        or effective.baseline is not None
    ):
        # Imported only for a run with a baseline: a plain check (a pre-commit hook's) has
        # none, and the module is on no other path (docs/architecture.md).
        from gpulint.suppress.baseline import BaselineError, RunBaseline

        try:
            run.accepted = RunBaseline(
                options.baseline, options.write_baseline, effective.baseline, stdin_used
            )
        except BaselineError as exc:
            fail(str(exc))
        run.found = run.accepted.watch(run.found)
    run.errors.extend(f"{path}: no such file or directory" for path in run.missing)
    for message in run.errors:
        error(message)


def _report_context(run: Run) -> None:
    """What the reporters are told, the streaming reporter, fixing, and where output goes."""
    from gpulint.reporters import ReportContext, streamer

    options, settings = run.options, run.effective.settings
    ctx = ReportContext(
        run.rules,
        settings.fail_on,
        0,  # set once the run is over
        color=use_color(options.color),
        argv=sys.argv,
        stdin_label=run.stdin_label if run.uses_stdin() else None,
        started=run.started,
        errors=run.errors,
        show_rendered=options.show_rendered,
        assumption=assumption(settings),
    )
    ctx.quiet, ctx.statistics = options.quiet, options.statistics
    # Standard output gets the chosen format, or the text report when the chosen format
    # goes to --output. A streaming format is written as each file is done; a report file
    # is written at the end (so a path that cannot be written costs no lost report).
    factory = streamer(options.output_format if run.output is None else "text")
    run.stream = factory(ctx) if factory is not None else None
    diff = options.diff
    if options.fix or diff:
        from gpulint.fix.loop import SAFE, UNSAFE

        run.fixing = (UNSAFE if options.unsafe_fixes else SAFE, diff)
    ctx.fixing = (run.fixing[0] if not diff else None) if run.fixing else None
    if options.unsafe_fixes and run.fixing is None:
        ctx.fixing = "show-unsafe"
    # Fixed standard input goes to standard output: the report goes to stderr, as ruff's.
    fixing_stdin = run.fixing is not None and not diff and run.uses_stdin()
    run.out = sys.stderr if fixing_stdin else sys.stdout
    run.ctx = ctx


def _lint(run: Run) -> Report:
    """Lint every target, writing each file's findings and fixes as it is done."""
    from gpulint.lint.runner import available_cores, run as lint_all
    from gpulint.reporters import needs_objects

    accepted = run.accepted
    report = lint_all(
        run.linter,
        run.found,
        jobs=run.options.jobs or available_cores(),
        collect_objects=needs_objects(run.options.output_format),
        on_file=run.write_findings,
        keep_findings=run.stream is None or run.output is not None,
        rendering=run.rendering,
        fixing=run.fixing,
        on_fix=run.write_fix,
        prepare=accepted.prepare if accepted is not None else None,
        linter_for=run.linter_for,
        keep=run.facts.keep,
    )
    run.facts.save()
    return report


def _finish(run: Run, report: Report) -> int:
    """The baseline written, the exit code, the report file and the report: the exit code."""
    import time

    from gpulint.reporters import renderer

    options, effective, ctx, errors = run.options, run.effective, run.ctx, run.errors
    unwritten_baseline = _settle_baseline(run, report)
    if options.diff:
        return diff_summary(report, run.would_fix, options.unsafe_fixes, errors)
    if report.files == 0 and not options.rendered_only:
        no_files_warning([p for p in run.given if p not in run.missing])
    if run.missing or report.rule_errors or len(errors) > len(run.missing):  # + fixes not written
        ctx.exit_code = 2
    elif not options.exit_zero and (
        report.failed(effective.settings.fail_on)
        or (report.files == 0 and effective.fail_if_no_files)
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
    output = run.output
    if output is not None:
        terminal_color, ctx.color = ctx.color, False
        unwritten = written(output, lambda: renderer(options.output_format)(report, ctx))
        if unwritten is not None:
            errors.append(unwritten)
            ctx.exit_code = 2
        ctx.color = terminal_color
    stdout_format = options.output_format if output is None else "text"
    run.out.write(run.stream.end(report) if run.stream else renderer(stdout_format)(report, ctx))
    run.out.flush()
    if unwritten is not None:
        fail(unwritten)
    return ctx.exit_code


def _settle_baseline(run: Run, report: Report) -> str | None:
    """``--write-baseline`` written, the baseline's stale entries reported (GL101), its note
    on stderr; why the baseline file could not be written, if it could not."""
    accepted = run.accepted
    if accepted is None:
        return None
    unwritten = None
    if run.options.write_baseline is not None:
        unwritten = written(run.options.write_baseline, accepted.text)
    stale = accepted.stale(run.linter.active)
    if stale:
        report.extend(stale)
        run.write_findings(stale)
    if unwritten is None:
        sys.stderr.write(accepted.note())
    return unwritten


# -- what check says besides its report: warnings on stderr, a fix's diff, --diff's summary
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
        f"no files linted: {shown} held no *.yaml, *.yml or Markdown file to lint "
        "(or every one was excluded)"
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


def diff_summary(report: Report, fixes: int, unsafe: bool, errors: list[str]) -> int:
    """``--diff``'s ending: one line on stderr, exit 1 when something would be fixed."""
    more = report.unsafe_fixable if not unsafe else 0
    line = f"Would fix {fixes} problem{'s' * (fixes != 1)}" if fixes else "No fixes to apply"
    if more:
        line += f" ({more} more with --unsafe-fixes)"
    sys.stderr.write(line + ".\n")
    if errors:
        return 2
    return 1 if fixes else 0
