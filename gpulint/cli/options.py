"""The ``gpulint`` command line's vocabulary: option types shared by its commands, the
choices of ``--format``, ``--fail-on`` and ``--color``, and commands that suggest only close
option names (:mod:`gpulint.cli.app` declares the commands with them)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from typer.core import TyperCommand, TyperGroup

from gpulint.reporters import FORMATS


class _CloseOptions:
    """Suggest only close option names for an unknown option.

    Click proposes whatever ``difflib`` scores 0.6 against the option strings, leading
    dashes included, so ``--bogus`` got "Possible options: --jobs". Names are compared
    without their dashes, at 0.75 (one transposition in `--jbos`, a letter left out of
    `--selct`), and when nothing is that close no option is suggested, as in ruff.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)  # type: ignore[misc,no-any-return]
        except Exception as exc:
            if type(exc).__name__ == "NoSuchOption":
                exc.possibilities = _close_options(  # type: ignore[attr-defined]
                    exc.option_name,  # type: ignore[attr-defined]
                    self.get_params(ctx),  # type: ignore[attr-defined]
                )
            raise


def _close_options(name: str, params: list[Any]) -> list[str]:
    import difflib

    names = {
        opt.lstrip("-"): opt
        for param in params
        for opt in (*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ()))
        if opt.startswith("--")
    }
    close = difflib.get_close_matches(name.lstrip("-"), list(names), n=3, cutoff=0.75)
    return [names[c] for c in close]


class Command(_CloseOptions, TyperCommand):
    pass


class Group(_CloseOptions, TyperGroup):
    pass


if TYPE_CHECKING:
    OutputFormat = str
else:
    #: ``check --format``: the reporter registry's names, in its order (typer offers and
    #: checks a Literal's values as it does an Enum's), so a new format is one registry row.
    OutputFormat = Literal[tuple(FORMATS)]


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
    typer.Option(
        help="Only these rule codes or prefixes, comma-separated, in any case (GPU0, gpu020, "
        "ALL); an empty value is an error."
    ),
]
ExtendSelectOption = Annotated[
    list[str] | None, typer.Option(help="Rule codes or prefixes to add to the selection.")
]
IgnoreOption = Annotated[list[str] | None, typer.Option(help="Rule codes or prefixes to skip.")]
AllowPluginsOption = Annotated[
    bool,
    typer.Option(
        "--allow-plugins",
        help="Run the Python rules (plugins, *.py in rule-dirs) the configuration file names; "
        "without it they are skipped with a warning. Also GPULINT_ALLOW_PLUGINS=1.",
    ),
]
PluginOption = Annotated[
    list[str] | None,
    typer.Option(
        "--plugin",
        metavar="MODULE",
        help="Also load this importable rule module (repeatable).",
        show_default=False,
    ),
]
RuleDirOption = Annotated[
    list[str] | None,
    typer.Option(
        "--rule-dir",
        metavar="DIR",
        help="Also load the rules (*.py, *.yaml) in this folder (repeatable).",
        show_default=False,
    ),
]
FailOnOption = Annotated[
    FailOn | None,
    typer.Option(
        help="Exit 1 when a finding at or above this severity is found [default: error].",
        show_default=False,
    ),
]

ClusterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--cluster",
        metavar="FILE",
        help="A node inventory (`kubectl get nodes -o yaml` or `-o json`) to judge GPU pods "
        "against, as kube-scheduler's filters do (repeatable; replaces `cluster:` in the "
        "configuration).",
        show_default=False,
    ),
]


FailIfNoFilesOption = Annotated[
    bool | None,
    typer.Option(
        "--fail-if-no-files/--no-fail-if-no-files",
        help="Exit 1 when no file was linted (the paths held no *.yaml or *.yml file, or all "
        "were excluded) [default: a warning only].",
        show_default=False,
    ),
]

PlatformOption = Annotated[
    str | None,
    typer.Option(
        "--platform",
        metavar="PLATFORM",
        help="The platform that runs the cluster: ack, gke, gke-autopilot, eks, aks, openshift "
        "or generic (what it does on its own: docs/cluster.md) [default: the configuration's "
        "`platform`].",
        show_default=False,
    ),
]


BaselineOption = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        metavar="FILE",
        help="Do not report the findings recorded in this baseline (written by "
        "--write-baseline); report its entries that match nothing any more as GL101 "
        "[default: the configuration's baseline].",
        show_default=False,
    ),
]
WriteBaselineOption = Annotated[
    str | None,
    typer.Option(
        "--write-baseline",
        metavar="FILE",
        help="Record this run's findings in FILE (a baseline for --baseline) and report none "
        "of them.",
        show_default=False,
    ),
]


# How charts and Kustomize overlays are rendered: `check` and `inspect` share them.
RenderOption = Annotated[
    bool,
    typer.Option(
        "--render",
        help="Render Helm charts (helm template) and build Kustomize overlays (kubectl "
        "kustomize), lint the output and report each finding at the template, values "
        "or patch line (runs those programs on the tree; docs/security.md).",
    ),
]
HelmOption = Annotated[
    str | None, typer.Option("--helm", help="The helm program [default: helm on PATH].")
]
KustomizeOption = Annotated[
    str | None,
    typer.Option(
        "--kustomize",
        help="The kubectl or kustomize program [default: kubectl, else kustomize, on PATH].",
    ),
]
ValuesOption = Annotated[
    list[str] | None,
    typer.Option("--values", help="A values file for every chart rendered (repeatable)."),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="A value for every chart rendered, KEY=VALUE (repeatable)."),
]
KubeVersionOption = Annotated[
    str | None, typer.Option("--kube-version", help="Kubernetes version charts see.")
]
ReleaseNameOption = Annotated[
    str | None,
    typer.Option("--release-name", help="Release name charts see [default: release-name]."),
]
NamespaceOption = Annotated[
    str | None, typer.Option("--namespace", help="Namespace charts are rendered into.")
]
RenderTimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--render-timeout",
        help="Seconds the whole run may spend rendering; charts and overlays left when "
        "they are spent are GL200 [default: 300].",
        show_default=False,
    ),
]
