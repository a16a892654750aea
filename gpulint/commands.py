"""What the commands do, without the command-line parser.

``gpulint/cli.py`` declares the commands with typer; this module holds their work and never
imports typer, so ``gpulint/entry.py`` can run a plain ``gpulint check FILE...`` (what a
pre-commit hook runs on every commit) without paying typer's import time. Errors leave with
``sys.exit(2)`` after a one-line message, which typer lets through unchanged.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple, NoReturn

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from gpulint.cluster.model import Cluster
    from gpulint.config import Effective
    from gpulint.configfile import ConfigFile
    from gpulint.discover import Target
    from gpulint.fixer import FileFix
    from gpulint.model import Finding
    from gpulint.render import RenderOptions
    from gpulint.render.trees import Trees
    from gpulint.report import Report
    from gpulint.rule import Rule
    from gpulint.settings import Settings


def error(message: str) -> None:
    """``gpulint: error: <message>`` on stderr, as one line whatever the message holds.

    Messages name paths, keys and values from the linted tree; they are escaped
    (:func:`gpulint.textsafe.escape`) so that none can forge a line or reach the terminal
    as a control sequence.
    """
    from gpulint.textsafe import escape

    sys.stderr.write(f"gpulint: error: {escape(message)}\n")


def fail(message: str) -> NoReturn:
    error(message)
    sys.exit(2)


def fail_lines(message: str) -> NoReturn:
    """A message of several lines (a configuration error and its context): each one escaped."""
    # Split on "\n" only: str.splitlines would also split on separators inside a quoted
    # key or value, and print a piece of it as a line of its own.
    lines = message.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    for line in lines:
        error(line)
    sys.exit(2)


def use_color(mode: str) -> bool:
    """``auto``: only on a terminal, unless NO_COLOR or FORCE_COLOR say otherwise."""
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


#: Set to 1 to run the Python rules configuration files name, on a trusted machine or CI job.
ALLOW_ENV = "GPULINT_ALLOW_PLUGINS"


class Trust(NamedTuple):
    """What the user trusts for this run, from the command line.

    Python rules (``plugins`` and the ``*.py`` of ``rule-dirs``) in a configuration file are
    imported only with ``allow_plugins`` (``--allow-plugins``) or GPULINT_ALLOW_PLUGINS=1: a
    pull request can change the configuration. Modules and folders named on the command line
    (``--plugin``, ``--rule-dir``) are the user's own choice and always load. Installed
    ``gpulint.rules`` entry points always load: installing a package is a choice too.
    """

    allow_plugins: bool = False
    plugins: Sequence[str] = ()
    rule_dirs: Sequence[str] = ()


def env_allows_plugins() -> bool:
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _load(config: ConfigFile | None, trust: Trust | None) -> tuple[list[Rule], bool]:
    """The rules, and whether Python rules the configuration names were skipped."""
    import re

    from gpulint.configfile import ConfigError
    from gpulint.rule import RuleLoadError

    trust = trust or Trust()
    for name in trust.plugins:
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", name, re.ASCII):
            fail(f"--plugin: {name!r} is not a dotted module name")
    for text in trust.rule_dirs:
        if not os.path.isdir(text):
            fail(f"--rule-dir: {text!r} is not a folder")
    try:
        return trusted_rules(config, trust)
    except (RuleLoadError, ConfigError) as exc:
        fail_lines(str(exc))


def trusted_rules(config: ConfigFile | None, trust: Trust) -> tuple[list[Rule], bool]:
    """The rules ``trust`` allows, and whether Python rules the configuration names were
    skipped (with a warning on stderr). Raises ``RuleLoadError`` or ``ConfigError``: the
    command line turns them into exit 2, ``gpulint lsp`` into a diagnostic."""
    from pathlib import Path

    from gpulint.configcheck import rule_locations
    from gpulint.configfile import project_root, warn
    from gpulint.plugins import RuleDir, rule_files
    from gpulint.plugins import load_rules as load

    allowed = trust.allow_plugins or env_allows_plugins()
    folders: dict[Path, RuleDir] = {}
    for text in trust.rule_dirs:
        folder = Path(text).resolve()
        folders.setdefault(folder, RuleDir(folder))
    plugins, dirs = rule_locations(config) if config is not None else ([], [])
    skipped_plugins = [] if allowed else [p for p in plugins if p not in trust.plugins]
    skipped_files = 0
    if dirs:
        root = project_root(config) if config is not None else None
        for folder in dirs:
            if folder in folders:  # also named on the command line: trusted
                continue
            folders[folder] = RuleDir(folder, python=allowed, root=root)
            if not allowed:
                skipped_files += sum(1 for f in rule_files(folder) if f.suffix == ".py")
    if config is not None and (skipped_plugins or skipped_files):
        what = [f"plugins: {', '.join(skipped_plugins)}"] if skipped_plugins else []
        if skipped_files:
            what.append(f"{skipped_files} Python file{'s' * (skipped_files > 1)} in rule-dirs")
        warn(
            f"{config.shown}: skipped the Python rules it names ({'; '.join(what)}); "
            f"run them with --allow-plugins or {ALLOW_ENV}=1 if you trust this repository"
        )
    modules = list(dict.fromkeys([*trust.plugins, *(plugins if allowed else [])]))
    rules = load(plugins=modules, rule_dirs=list(folders.values()))
    return rules, bool(skipped_plugins or skipped_files)


def load_rules(config: ConfigFile | None = None, trust: Trust | None = None) -> list[Rule]:
    """Entry-point rules, plus ``--plugin``/``--rule-dir`` and the configuration's
    ``plugins`` and ``rule-dirs`` (their Python only when trusted, see :class:`Trust`)."""
    return _load(config, trust)[0]


def read_config(path: str | None, isolated: bool) -> ConfigFile | None:
    from gpulint.configfile import ConfigError, load_config

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
    from gpulint.configcheck import selector

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
    trust: Trust | None = None,
    fail_if_no_files: bool | None = None,
    cluster: Sequence[str] = (),
    platform: str | None = None,
) -> tuple[list[Rule], Effective]:
    """Rules and effective configuration: defaults < configuration file < command line."""
    from gpulint.config import Overrides, resolve
    from gpulint.configcheck import forget_codes
    from gpulint.configfile import ConfigError

    config = read_config(path, isolated)
    rules, skipped = _load(config, trust)
    known = [r.code for r in rules]
    if skipped and config is not None:
        # The skipped rules' codes (in `severity`, `rules`, selectors) are unknown now; what
        # the file says about them is set aside rather than failing every untrusted run.
        config = forget_codes(config, known)
    selected = selectors(select, known, "--select")
    extended = selectors(extend_select, known, "--extend-select")
    ignored = selectors(ignore, known, "--ignore")
    overrides = Overrides(
        select=selected if select else None,
        extend_select=extended,
        ignore=ignored,
        fail_on=fail_on,
        fail_if_no_files=fail_if_no_files,
        cluster=cluster,
        platform=platform,
    )
    if platform is not None:
        from gpulint.cluster.platforms import UnknownPlatform
        from gpulint.cluster.platforms import platform as profile

        try:
            profile(platform)
        except UnknownPlatform as exc:
            fail(f"--platform: {exc}")
    try:
        return rules, resolve(config, rules, overrides)
    except ConfigError as exc:
        fail_lines(str(exc))


class UnsafeOutput(OSError):
    """``--output`` names a path gpulint refuses to write through (a symbolic link, ...)."""


def _symlink_on_the_way(path: str) -> str | None:
    """The first symbolic link among the parts of ``path`` a pull request could plant.

    That is the file itself and, for a relative path (or an absolute one inside the working
    directory), every folder between the working directory and it: ``--output
    reports/gpulint.sarif`` must not write through a ``reports`` link committed in the tree.
    The folders above the working directory (``/tmp`` is a link on macOS) are the user's.
    """
    if os.path.islink(path):
        return path
    if os.path.isabs(path):
        cwd = os.getcwd().rstrip(os.sep)
        if not path.startswith(cwd + os.sep):
            return None
        base, rest = cwd, path[len(cwd) + 1 :]
    else:
        base, rest = "", path
    parts = [p for p in rest.split(os.sep) if p]
    for i in range(1, len(parts)):
        folder = os.path.join(base, *parts[:i])
        if os.path.islink(folder):
            return folder
    return None


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
    from gpulint.configfile import warn  # escapes: the paths may be a pull request's names

    shown = ", ".join(paths[:MAX_NAMED_PATHS])
    if len(paths) > MAX_NAMED_PATHS:
        shown += f" and {len(paths) - MAX_NAMED_PATHS} more"
    warn(
        f"no files linted: {shown} held no *.yaml or *.yml file to lint (or every one was excluded)"
    )


def check_stdin_filename(paths: list[str] | None, stdin_filename: str | None) -> None:
    """``--stdin-filename`` names what ``-`` reads: without ``-`` it would name nothing."""
    if stdin_filename is not None and "-" not in (paths or ()):
        fail(
            "--stdin-filename names the input read from stdin, but '-' is not among the "
            f"paths; add '-' to lint stdin as {stdin_filename}"
        )


def _written(path: str, content: Callable[[], str]) -> str | None:
    """Write ``content()`` to ``path`` (:func:`write_file`); None, or why it was not."""
    try:
        write_file(path, content())
    except UnsafeOutput as exc:
        return f"refusing to write {path}: {exc}"
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or type(exc).__name__}"
    return None


def write_file(path: str, content: str | bytes) -> None:
    """Write the report atomically, creating missing parent folders (as ruff's --output-file).

    The report goes to a new temporary file in the same folder (``mkstemp``: created with
    ``O_EXCL``, so nothing planted at its name is followed), which then replaces ``path`` in
    one ``os.replace``: a run that fails half-way leaves the previous report as it was,
    never a truncated one, and a reader never sees half a report. The rename would replace
    a link named ``path`` rather than follow it, but a symbolic link is refused before that
    (:class:`UnsafeOutput`): a ``gpulint.sarif`` link committed in a pull request must
    neither redirect the report outside the tree nor be silently replaced. A FIFO or a
    character device (``/dev/null``, a named pipe) is written in place.
    """
    import errno
    import stat
    import tempfile

    link = _symlink_on_the_way(path)
    if link is not None:
        what = "it" if link == path else link
        hint = "; `--output -` is standard output" if path.startswith("/dev/") else ""
        raise UnsafeOutput(
            f"{what} is a symbolic link (a report is never written through one{hint})"
        )
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise UnsafeOutput("it is not a regular file, a FIFO or a character device")
        with open(os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)), "wb") as stream:
            stream.write(data)
        return
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".gpulint-", suffix=".tmp", dir=parent or os.curdir)
    try:
        with open(fd, "wb") as stream:
            stream.write(data)
        # mkstemp makes the file 0600: give it the permissions of the report it replaces,
        # or those open() gives a new file.
        os.chmod(temp, stat.S_IMODE(mode) if mode is not None else _new_file_mode())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_fixed(path: str, data: bytes) -> str | None:
    """Write a fixed file in place, atomically (:func:`write_file`); the problem, if any.

    The linted tree may be a stranger's pull request: a file is never written through a
    symbolic link (the file itself, or a folder between the working directory, or the
    repository the file is in, and it), so a fix cannot reach outside the tree, and a file
    that is no longer a regular file is left.
    """
    import stat

    link = _symlink_on_the_way(path) or _linked_folder_in_repository(path)
    if link is not None:
        what = "it" if link == path else link
        return f"refusing to write the fixes of {path}: {what} is a symbolic link"
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return f"not fixed: {path} is not a regular file"
        write_file(path, data)
    except UnsafeOutput as exc:
        return f"refusing to write the fixes of {path}: {exc}"
    except OSError as exc:
        return f"cannot write the fixes of {path}: {exc.strerror or type(exc).__name__}"
    return None


def _linked_folder_in_repository(path: str) -> str | None:
    """A symbolic link among the folders between ``path`` and the repository it is in (the
    nearest folder above it holding ``.git``), for a path outside the working directory,
    which :func:`_symlink_on_the_way` leaves to the user."""
    folder = os.path.dirname(os.path.abspath(path))
    chain = []
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            break
        chain.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None  # not in a repository: the folders are the user's
        folder = parent
    return next((f for f in reversed(chain) if os.path.islink(f)), None)


def warn_fix(note: str) -> None:
    """A fix not applied, and why, on stderr (escaped: the note names the tree's paths)."""
    from gpulint.textsafe import escape

    sys.stderr.write(f"gpulint: warning: {escape(note)}\n")


def escape_diff(diff: str) -> str:
    """A diff with no control character but tab and line breaks (the text is a stranger's)."""
    from gpulint.textsafe import escape

    return "".join(
        escape(line.rstrip("\r\n")) + line[len(line.rstrip("\r\n")) :]
        for line in diff.splitlines(keepends=True)
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


def _new_file_mode() -> int:
    """0o666 less the umask: the mode ``open(path, "w")`` creates a file with."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


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
) -> tuple[RenderOptions, Trees]:
    """How ``check`` renders charts and Kustomize roots: the command line over the
    configuration's ``render:`` (which can set how a chart is rendered, never whether or
    with what program: that is the user's choice for the run, README "Security")."""
    from gpulint.render import ChartOptions, RenderOptions
    from gpulint.render.trees import Trees

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
    )
    options = RenderOptions(render, helm, kustomize, chart, base.charts)
    return options, Trees(render)


def cluster_objects(cluster: Cluster | None, found: Iterable[Target]) -> Cluster | None:
    """``cluster`` with the node-pool objects of the files to lint (Karpenter NodePools,
    Kueue ResourceFlavors), read in a pre-pass so that every worker sees the same cluster
    (gpulint.cluster.objects). Standard input is not pre-read; unreadable files add
    nothing (the lint reports them)."""
    from gpulint.cluster.objects import merged, scan
    from gpulint.runner import read_target

    def files() -> Iterator[tuple[str, bytes]]:
        for target in found:
            if target.path is None:
                continue
            raw, _ = read_target(target)
            if raw is not None:
                yield target.label, raw

    return merged(cluster, scan(files()))


def assumption(settings: Settings) -> str | None:
    """What GPU020, GPU021 and GPU040 assume of the cluster when none is described (None:
    one is), for the text report to say once."""
    cluster = settings.cluster
    if cluster is not None and (cluster.nodes or cluster.gpu_taints is not None):
        return None
    from gpulint.taints import DEFAULT_TAINTS, Taint

    rows = settings.options.get("GPU020", {}).get("taints", DEFAULT_TAINTS)
    taints = ", ".join(str(Taint.from_option(r)) for r in rows) or "none"
    most = settings.options.get("GPU040", {}).get("max_per_node", 8)
    return (
        f"assumed GPU taint {taints} and {most} GPUs per node; describe your cluster with "
        "--cluster, node-pools or platform (docs/cluster.md)"
    )


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
    show_rendered: bool = False,
    cluster: list[str] | None = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    diff: bool = False,
    platform: str | None = None,
    baseline: str | None = None,
    write_baseline: str | None = None,
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
    this run's findings there instead, and reports none of them (:mod:`gpulint.baseline`).
    """
    import time

    from gpulint.baseline import BaselineError, RunBaseline
    from gpulint.discover import STDIN, targets
    from gpulint.engine import Linter
    from gpulint.model import TOOL_ERROR_CODES
    from gpulint.reporters import ReportContext, needs_objects, renderer, streamer
    from gpulint.runner import available_cores, run

    started = time.time()
    if output == "":  # checked before linting, not after it as an unwritable file
        fail("--output needs a file name (`-` is standard output)")
    if output == "-":  # `-o -` is standard output, the same as no --output
        output = None
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
    )
    # The files' node-pool objects first, in a walk of their own (the lint's walk streams),
    # when a cluster is described: without one, the output stays what it always was.
    if settings.cluster is not None:
        settings.cluster = cluster_objects(
            settings.cluster, targets(given, stdin_label, exclude, effective.force_exclude)[0]
        )
    linter = Linter(rules, settings)
    found, missing = targets(
        given, stdin_label, exclude, effective.force_exclude, trees=rendering[1]
    )
    stdin_used = stdin_label if STDIN in (paths or []) else None
    if write_baseline == "":
        fail("--write-baseline needs a file name")
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
    # Standard output gets the chosen format, or the text report when the chosen format
    # goes to --output. A streaming format is written as each file is done; a report file
    # is written at the end (so a path that cannot be written costs no lost report).
    stdout_format = output_format if output is None else "text"
    factory = streamer(stdout_format)
    stream = factory(ctx) if factory is not None else None
    from gpulint.fixer import SAFE, UNSAFE

    fixing = (UNSAFE if unsafe_fixes else SAFE, diff) if fix or diff else None
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
        prepare=accepted.prepare,
    )
    unwritten_baseline = None
    if write_baseline is not None:
        unwritten_baseline = _written(write_baseline, accepted.text)
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
    elif report.failed(settings.fail_on) or (report.files == 0 and effective.fail_if_no_files):
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
        unwritten = _written(output, lambda: renderer(output_format)(report, ctx))
        if unwritten is not None:
            errors.append(unwritten)
            ctx.exit_code = 2
        ctx.color = terminal_color
    out.write(stream.end(report) if stream else renderer(stdout_format)(report, ctx))
    out.flush()
    if unwritten is not None:
        fail(unwritten)
    return ctx.exit_code
