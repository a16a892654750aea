"""What the commands share, without the command-line parser: errors, trust, configuring.

``gpulint/cli/app.py`` declares the commands with typer; this module (and
``gpulint/commands/check.py``, ``check``'s own work) holds their work and never imports
typer, so ``gpulint/cli/entry.py`` can run a plain ``gpulint check FILE...`` (what a
pre-commit hook runs on every commit) without paying typer's import time. Errors are
raised as :class:`gpulint.errors.GpulintError` (``fail``, ``fail_lines``) and reported
once, by the command line (:func:`report`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from gpulint.errors import CommandError, GpulintError

if TYPE_CHECKING:
    from gpulint.config.file import ConfigFile
    from gpulint.config.resolve import Effective
    from gpulint.rule import Rule


def error(message: str) -> None:
    """``gpulint: error: <message>`` on stderr, as one line whatever the message holds.

    Messages name paths, keys and values from the linted tree; they are escaped
    (:func:`gpulint.util.textsafe.escape`) so that none can forge a line or reach the terminal
    as a control sequence.
    """
    from gpulint.util.textsafe import escape

    sys.stderr.write(f"gpulint: error: {escape(message)}\n")


def fail(message: str) -> NoReturn:
    """Stop the command: ``message`` is printed as one line (:func:`report`), exit 2."""
    raise CommandError(message, one_line=True)


def fail_lines(message: str) -> NoReturn:
    """A message of several lines (a configuration error and its context): each one escaped."""
    raise CommandError(message)


def report(exc: GpulintError) -> int:
    """An error as ``gpulint: error:`` lines on stderr; its exit code. The command line
    (:mod:`gpulint.cli.entry`) calls this once for whatever a command raised."""
    for line in exc.lines():
        error(line)
    return exc.exit_code


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


class Trust:
    """What the user trusts for this run, from the command line.

    Python rules (``plugins`` and the ``*.py`` of ``rule-dirs``) in a configuration file are
    imported only with ``allow_plugins`` (``--allow-plugins``) or GPULINT_ALLOW_PLUGINS=1: a
    pull request can change the configuration. Modules and folders named on the command line
    (``--plugin``, ``--rule-dir``) are the user's own choice and always load. Installed
    ``gpulint.rules`` entry points always load: installing a package is a choice too.

    (A plain class, not a NamedTuple: this module is on every check's start-up, see
    docs/architecture.md.)
    """

    __slots__ = ("allow_plugins", "plugins", "rule_dirs")

    def __init__(
        self,
        allow_plugins: bool = False,
        plugins: Sequence[str] = (),
        rule_dirs: Sequence[str] = (),
    ) -> None:
        self.allow_plugins = allow_plugins
        self.plugins = plugins
        self.rule_dirs = rule_dirs


def env_allows_plugins() -> bool:
    return os.environ.get(ALLOW_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _load(config: ConfigFile | None, trust: Trust | None) -> tuple[list[Rule], bool]:
    """The rules, and whether Python rules the configuration names were skipped."""
    import re

    from gpulint.config.file import ConfigError
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

    from gpulint.config.file import project_root, warn
    from gpulint.config.validate import rule_locations
    from gpulint.lint.finder import RuleDir, load_rules as load, rule_files

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
    from gpulint.config.file import ConfigError, load_config

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
    from gpulint.config.validate import selector

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
    baseline: str | None = None,
) -> tuple[list[Rule], Effective]:
    """Rules and effective configuration: defaults < configuration file < command line."""
    from gpulint.config.file import ConfigError
    from gpulint.config.resolve import Overrides, resolve
    from gpulint.config.validate import forget_codes

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
        plugins=trust.plugins if trust is not None else (),
        rule_dirs=trust.rule_dirs if trust is not None else (),
        baseline=baseline,
    )
    if platform is not None:
        from gpulint.cluster.platforms import UnknownPlatform, platform as profile

        try:
            profile(platform)
        except UnknownPlatform as exc:
            fail(f"--platform: {exc}")
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
