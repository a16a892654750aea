"""The ``gpulint`` command line's vocabulary: typer options made from the rows of ``check``'s
options table (:data:`gpulint.commands.checkoptions.CHECK_OPTIONS`), the ones other
commands share with it, and commands that suggest only close option names
(:mod:`gpulint.cli.app` declares the commands with them)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from gpulint.commands.checkoptions import (
    BY_FIELD,
    FLAG,
    MANY,
    SWITCH,
    Option,
    positive_int,
    seconds,
)


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


def typer_option(row: Option) -> Any:
    """``Annotated[TYPE, typer.Option(...)]`` for a row of ``check``'s options table: the type
    from how the row takes values and its converter (choices: a ``Literal``, which typer
    offers and checks as it does an Enum's values), the rest from the row."""
    settings: dict[str, Any] = {"help": row.help, "show_default": row.show_default}
    if row.metavar is not None:
        settings["metavar"] = row.metavar
    kind: Any
    if row.takes in (FLAG, SWITCH):
        kind = bool if row.takes == FLAG else Optional[bool]  # noqa: UP045  # a runtime type
    else:
        choices = getattr(row.convert, "choices", None)
        if choices is not None:
            kind = Literal[choices]
        elif row.convert is positive_int:
            kind, settings["callback"] = str, _whole_number
        elif row.convert is seconds:
            kind = float
        else:
            kind = str
        if row.takes == MANY:
            kind = list[kind]
        if row.default is None:
            kind = Optional[kind]  # noqa: UP045
    # A switch is one declaration, "--x/--no-x", as click spells it.
    names = ("/".join(row.names),) if row.takes == SWITCH else row.names
    return Annotated[kind, typer.Option(*names, **settings)]


def _whole_number(value: str | None) -> int | None:
    """A whole number from 1, refused in words (typer's ``min=1`` says "is not a valid int
    range" of ``abc``)."""
    if value is None:
        return None
    try:
        number = int(value.strip().replace("_", ""), 10)
    except ValueError:
        number = 0
    if number < 1:
        raise typer.BadParameter(f"{value!r} is not a whole number of 1 or more")
    return number


class RulesFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


class ConfigFormat(str, Enum):
    text = "text"
    json = "json"


# Options other commands share with ``check``: its rows, so each is declared once. (mypy
# sees the values' types; typer the options.)
if TYPE_CHECKING:
    ConfigOption = str | None
    IsolatedOption = bool
    SelectOption = list[str] | None
    ExtendSelectOption = list[str] | None
    IgnoreOption = list[str] | None
    AllowPluginsOption = bool
    PluginOption = list[str] | None
    RuleDirOption = list[str] | None
    FailOnOption = str | None
    ClusterOption = list[str] | None
    FailIfNoFilesOption = bool | None
    PlatformOption = str | None
    StdinFilenameOption = str | None
    RenderOption = bool
    HelmOption = str | None
    KustomizeOption = str | None
    ValuesOption = list[str] | None
    SetOption = list[str] | None
    KubeVersionOption = str | None
    ReleaseNameOption = str | None
    NamespaceOption = str | None
    RenderTimeoutOption = float | None
else:
    ConfigOption = typer_option(BY_FIELD["config"])
    IsolatedOption = typer_option(BY_FIELD["isolated"])
    SelectOption = typer_option(BY_FIELD["select"])
    ExtendSelectOption = typer_option(BY_FIELD["extend_select"])
    IgnoreOption = typer_option(BY_FIELD["ignore"])
    AllowPluginsOption = typer_option(BY_FIELD["allow_plugins"])
    PluginOption = typer_option(BY_FIELD["plugins"])
    RuleDirOption = typer_option(BY_FIELD["rule_dirs"])
    FailOnOption = typer_option(BY_FIELD["fail_on"])
    ClusterOption = typer_option(BY_FIELD["cluster"])
    FailIfNoFilesOption = typer_option(BY_FIELD["fail_if_no_files"])
    PlatformOption = typer_option(BY_FIELD["platform"])
    StdinFilenameOption = typer_option(BY_FIELD["stdin_filename"])
    # --render and its options, shared by check and inspect
    RenderOption = typer_option(BY_FIELD["render"])
    HelmOption = typer_option(BY_FIELD["helm"])
    KustomizeOption = typer_option(BY_FIELD["kustomize"])
    ValuesOption = typer_option(BY_FIELD["values"])
    SetOption = typer_option(BY_FIELD["set_values"])
    KubeVersionOption = typer_option(BY_FIELD["kube_version"])
    ReleaseNameOption = typer_option(BY_FIELD["release_name"])
    NamespaceOption = typer_option(BY_FIELD["namespace"])
    RenderTimeoutOption = typer_option(BY_FIELD["render_timeout"])
