"""The options of ``gpulint check``, declared once: :data:`CHECK_OPTIONS`, :class:`CheckOptions`.

One row per option says everything the three readers of the command line need: its names,
the :class:`CheckOptions` field it sets, how it takes values, the converter (choices, a
number), the default, the metavar and help text ``--help`` shows, and the configuration key
it overrides or adds to. From the table come

* the fast start-up parser of a plain ``gpulint check`` (:mod:`gpulint.cli.entry`), which
  runs without importing typer;
* the parameters of typer's ``check`` command (:func:`gpulint.cli.app.check`), so that
  ``--help`` and every message of a command line the fast parser leaves alone stay typer's;
* the test that every ``config`` key is a key of the configuration schema
  (``tests/test_entry.py``).

A new option is one row here and one annotated slot of :class:`CheckOptions`. Nothing here
imports typer or click: the commands never do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# The registry of output formats: names only, no reporter module is imported.
from gpulint.reporters import FORMATS


class Rejected(ValueError):
    """A value the fast parser leaves to typer (which converts it, or says why not)."""


def choice(*allowed: str) -> Callable[[str], str]:
    """A converter that takes one of ``allowed`` (case-sensitive, as typer's choices)."""

    def convert(value: str) -> str:
        if value not in allowed:
            raise Rejected(value)
        return value

    convert.choices = allowed  # type: ignore[attr-defined]  # typer's choices, the drift test
    return convert


def text(value: str) -> str:
    """Any value, as given."""
    return value


def positive_int(value: str) -> int:
    """A whole number from 1 (typer: ``int`` with ``min=1``)."""
    # click also takes " 2", "+2" and "1_0" (Python's int()); those go to typer.
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise Rejected(value)
    return int(value)


def seconds(value: str) -> float:
    """A plain decimal number (typer: ``float``)."""
    # "300", "2.5"; anything else ("1e3", " 5", "inf") goes to typer, which converts it as
    # click does.
    whole, _, fraction = value.partition(".")
    if not (value.isascii() and whole.isdigit() and (not fraction or fraction.isdigit())):
        raise Rejected(value)
    return float(value)


#: How an option takes its value: a flag (no value), an on/off switch (``--x/--no-x``: the
#: ``--no-`` names give False), one value (the last one given wins, as in click) or a
#: repeatable option (every value, in order).
FLAG, SWITCH, ONE, MANY = "flag", "switch", "one", "many"


class Option:
    """One row of :data:`CHECK_OPTIONS`."""

    __slots__ = (
        "config",
        "convert",
        "default",
        "field",
        "help",
        "metavar",
        "names",
        "show_default",
        "takes",
    )

    def __init__(
        self,
        names: tuple[str, ...],
        field: str,
        takes: str,
        help: str,
        *,
        convert: Callable[[str], Any] = text,
        default: Any = None,
        metavar: str | None = None,
        show_default: bool = True,
        config: str | None = None,
    ) -> None:
        #: Every spelling, the long one first (a SWITCH: its ``--no-`` name too).
        self.names = names
        #: The :class:`CheckOptions` attribute (and the typer parameter's name).
        self.field = field
        #: FLAG, SWITCH, ONE or MANY.
        self.takes = takes
        #: ``--help``'s text for the option.
        self.help = help
        #: str -> value, raising :class:`Rejected` for what typer must convert or refuse.
        self.convert = convert
        #: The value when the option is absent (a MANY option: None, not an empty list).
        self.default = default
        #: ``--help``'s name for the value (None: typer's, from the type).
        self.metavar = metavar
        #: Whether typer adds ``[default: ...]`` to the help (a text may say it itself).
        self.show_default = show_default
        #: The configuration key the option overrides or adds to (dotted inside a table).
        self.config = config


_SELECT_HELP = (
    "Only these rule codes or prefixes, comma-separated, in any case (GPU0, gpu020, "
    "ALL); an empty value is an error."
)

#: The options of ``gpulint check``, in ``--help``'s order.
CHECK_OPTIONS: tuple[Option, ...] = (
    Option(
        ("--format", "-f"),
        "output_format",
        ONE,
        "Output format.",
        convert=choice(*FORMATS),
        default="text",
    ),
    Option(
        ("--output", "-o"),
        "output",
        ONE,
        "Write the --format report to this file; the terminal still shows text.",
        metavar="FILE",
        show_default=False,
    ),
    Option(("--select",), "select", MANY, _SELECT_HELP, config="select"),
    Option(
        ("--extend-select",),
        "extend_select",
        MANY,
        "Rule codes or prefixes to add to the selection.",
        config="extend-select",
    ),
    Option(("--ignore",), "ignore", MANY, "Rule codes or prefixes to skip.", config="ignore"),
    Option(
        ("--fail-on",),
        "fail_on",
        ONE,
        "Exit 1 when a finding at or above this severity is found [default: error].",
        convert=choice("error", "warning", "info"),
        show_default=False,
        config="fail-on",
    ),
    Option(
        ("--stdin-filename",),
        "stdin_filename",
        ONE,
        "The path to report for input read from stdin.",
    ),
    Option(
        ("--color",),
        "color",
        ONE,
        "Colour the text output.",
        convert=choice("auto", "always", "never"),
        default="auto",
    ),
    Option(
        ("--config",),
        "config",
        ONE,
        "Use this configuration file (.gpulint.yaml or pyproject.toml) instead of "
        "searching from the working directory upward.",
        show_default=False,
    ),
    Option(("--isolated",), "isolated", FLAG, "Ignore every configuration file.", default=False),
    Option(
        ("--jobs", "-j"),
        "jobs",
        ONE,
        "Lint in up to N processes (default: the available cores; 1: serial).",
        convert=positive_int,
        show_default=False,
    ),
    Option(
        ("--allow-plugins",),
        "allow_plugins",
        FLAG,
        "Run the Python rules (plugins, *.py in rule-dirs) the configuration file names; "
        "without it they are skipped with a warning. Also GPULINT_ALLOW_PLUGINS=1.",
        default=False,
    ),
    Option(
        ("--plugin",),
        "plugins",
        MANY,
        "Also load this importable rule module (repeatable).",
        metavar="MODULE",
        show_default=False,
        config="plugins",
    ),
    Option(
        ("--rule-dir",),
        "rule_dirs",
        MANY,
        "Also load the rules (*.py, *.yaml) in this folder (repeatable).",
        metavar="DIR",
        show_default=False,
        config="rule-dirs",
    ),
    Option(
        ("--fail-if-no-files", "--no-fail-if-no-files"),
        "fail_if_no_files",
        SWITCH,
        "Exit 1 when no file was linted (the paths held no *.yaml, *.yml or Markdown file, or all "
        "were excluded) [default: a warning only].",
        show_default=False,
        config="fail-if-no-files",
    ),
    Option(
        ("--render",),
        "render",
        FLAG,
        "Render Helm charts (helm template) and build Kustomize overlays (kubectl "
        "kustomize), lint the output and report each finding at the template, values "
        "or patch line (runs those programs on the tree; docs/security.md).",
        default=False,
    ),
    Option(
        ("--rendered-only",),
        "rendered_only",
        FLAG,
        "With --render: lint only the charts and overlays the paths belong to, and leave "
        "plain manifests, and what a chart's templates write as plain text, to a run without "
        "--render (pre-commit's gpulint-render hook beside gpulint).",
        default=False,
    ),
    Option(("--helm",), "helm", ONE, "The helm program [default: helm on PATH]."),
    Option(
        ("--kustomize",),
        "kustomize",
        ONE,
        "The kubectl or kustomize program [default: kubectl, else kustomize, on PATH].",
    ),
    Option(
        ("--values",),
        "values",
        MANY,
        "A values file for every chart rendered (repeatable).",
        config="render.values",
    ),
    Option(
        ("--set",),
        "set_values",
        MANY,
        "A value for every chart rendered, KEY=VALUE (repeatable).",
        config="render.set",
    ),
    Option(
        ("--kube-version",),
        "kube_version",
        ONE,
        "Kubernetes version charts see.",
        config="render.kube-version",
    ),
    Option(
        ("--release-name",),
        "release_name",
        ONE,
        "Release name charts see [default: release-name].",
        config="render.release-name",
    ),
    Option(
        ("--namespace",),
        "namespace",
        ONE,
        "Namespace charts are rendered into.",
        config="render.namespace",
    ),
    Option(
        ("--render-timeout",),
        "render_timeout",
        ONE,
        "Seconds the whole run may spend rendering; charts and overlays left when "
        "they are spent are GL200 [default: 300].",
        convert=seconds,
        show_default=False,
    ),
    Option(
        ("--show-rendered",),
        "show_rendered",
        FLAG,
        "Also show where each finding is in the rendered output.",
        default=False,
    ),
    Option(
        ("--cluster",),
        "cluster",
        MANY,
        "A node inventory (`kubectl get nodes -o yaml` or `-o json`) to judge GPU pods "
        "against, as kube-scheduler's filters do (repeatable; replaces `cluster:` in the "
        "configuration).",
        metavar="FILE",
        show_default=False,
        config="cluster",
    ),
    Option(
        ("--fix",),
        "fix",
        FLAG,
        "Apply the safe fixes in place and report what is left.",
        default=False,
    ),
    Option(
        ("--unsafe-fixes",),
        "unsafe_fixes",
        FLAG,
        "With --fix or --diff, also apply the fixes that change behaviour.",
        default=False,
    ),
    Option(
        ("--diff",),
        "diff",
        FLAG,
        "Print the fixes as a unified diff and change nothing (exit 1 when there "
        "is something to fix).",
        default=False,
    ),
    Option(
        ("--platform",),
        "platform",
        ONE,
        "The platform that runs the cluster: ack, gke, gke-autopilot, eks, aks, openshift "
        "or generic (what it does on its own: docs/cluster.md) [default: the configuration's "
        "`platform`].",
        metavar="PLATFORM",
        show_default=False,
        config="platform",
    ),
    Option(
        ("--baseline",),
        "baseline",
        ONE,
        "Do not report the findings recorded in this baseline (written by "
        "--write-baseline); report its entries that match nothing any more as GL101 "
        "[default: the configuration's baseline].",
        metavar="FILE",
        show_default=False,
        config="baseline",
    ),
    Option(
        ("--write-baseline",),
        "write_baseline",
        ONE,
        "Record this run's findings in FILE (a baseline for --baseline) and report none of them.",
        metavar="FILE",
        show_default=False,
    ),
    Option(
        ("--no-cache",),
        "no_cache",
        FLAG,
        "Keep no cache of what each file says about the cluster (the project's "
        ".gpulint_cache folder).",
        default=False,
    ),
    Option(
        ("--exit-zero",),
        "exit_zero",
        FLAG,
        "Exit 0 even when findings reach --fail-on (2 still means a tool error).",
        default=False,
    ),
    Option(
        ("--quiet", "-q"),
        "quiet",
        FLAG,
        "Text formats: print the findings and nothing else.",
        default=False,
    ),
    Option(
        ("--statistics",),
        "statistics",
        FLAG,
        "Text formats: a count per rule, most first, instead of the findings.",
        default=False,
    ),
)

#: ``check`` options deliberately left to typer: help is typer's to print.
LEFT_TO_TYPER = ("--help", "-h")

#: Each option by field.
BY_FIELD = {row.field: row for row in CHECK_OPTIONS}


class CheckOptions:
    """What one ``gpulint check`` command line asks for: a field per :data:`CHECK_OPTIONS`
    row, the row's default where the command line says nothing. A plain class with slots:
    built on every pre-commit run, it costs nothing to import (no dataclass machinery)."""

    __slots__ = tuple(BY_FIELD)

    output_format: str
    output: str | None
    select: list[str] | None
    extend_select: list[str] | None
    ignore: list[str] | None
    fail_on: str | None
    stdin_filename: str | None
    color: str
    config: str | None
    isolated: bool
    jobs: int | None
    allow_plugins: bool
    plugins: list[str] | None
    rule_dirs: list[str] | None
    fail_if_no_files: bool | None
    render: bool
    rendered_only: bool
    helm: str | None
    kustomize: str | None
    values: list[str] | None
    set_values: list[str] | None
    kube_version: str | None
    release_name: str | None
    namespace: str | None
    render_timeout: float | None
    show_rendered: bool
    cluster: list[str] | None
    fix: bool
    unsafe_fixes: bool
    diff: bool
    platform: str | None
    baseline: str | None
    write_baseline: str | None
    no_cache: bool
    exit_zero: bool
    quiet: bool
    statistics: bool

    def __init__(self, **values: Any) -> None:
        unknown = values.keys() - BY_FIELD.keys()
        if unknown:
            raise TypeError(f"not options of gpulint check: {', '.join(sorted(unknown))}")
        for row in CHECK_OPTIONS:
            setattr(self, row.field, values.get(row.field, row.default))

    def given(self) -> dict[str, Any]:
        """Every field that differs from its default (what ``__repr__`` shows)."""
        out = {}
        for row in CHECK_OPTIONS:
            value = getattr(self, row.field)
            if value != row.default:
                out[row.field] = value
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CheckOptions):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in BY_FIELD)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        given = ", ".join(f"{key}={value!r}" for key, value in self.given().items())
        return f"CheckOptions({given})"
