"""The configuration of a run: defaults < configuration file < command line.

:func:`resolve` validates the file (:func:`gpulint.config.validate.validate_config`) and builds
the run's :class:`~gpulint.settings.Settings`, remembering where each value came from
(:class:`Entry`), which :func:`gpulint.commands.config.describe` shows for ``gpulint config``.
The file is found and read by :mod:`gpulint.config.file`.

Precedence: built-in defaults < configuration file < command line. ``--select`` replaces the
file's ``select``; ``--extend-select`` and ``--ignore`` add to the file's lists.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from gpulint.config.file import GPU_TAINTS, ConfigFile
from gpulint.config.keys import COMMAND_LINE, DEFAULT, KEYS, Entry, Key, upper_selectors
from gpulint.config.validate import validate_config
from gpulint.model import Path, Severity
from gpulint.settings import Settings

__all__ = ["COMMAND_LINE", "DEFAULT", "Effective", "Entry", "Overrides", "resolve"]

if TYPE_CHECKING:
    from gpulint.render import RenderOptions
    from gpulint.rule import Rule
    from gpulint.util.globs import PathMatcher


class Overrides:
    """What the command line says (None or empty: not given): one attribute per key with a
    flag (:attr:`gpulint.config.keys.Key.flag`), named as the key."""

    __slots__ = (
        "baseline",
        "cluster",
        "extend_select",
        "fail_if_no_files",
        "fail_on",
        "ignore",
        "platform",
        "plugins",
        "rule_dirs",
        "select",
    )

    def __init__(
        self,
        select: list[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        fail_on: str | None = None,
        fail_if_no_files: bool | None = None,
        cluster: Sequence[str] = (),
        platform: str | None = None,
        plugins: Sequence[str] = (),
        rule_dirs: Sequence[str] = (),
        baseline: str | None = None,
    ) -> None:
        self.platform = platform
        self.select = select
        self.extend_select = extend_select
        self.ignore = ignore
        self.fail_on = fail_on
        self.fail_if_no_files = fail_if_no_files
        #: ``--cluster`` files (relative to the working directory); they replace ``cluster:``.
        self.cluster = cluster
        #: ``--plugin`` modules and ``--rule-dir`` folders: loaded besides the file's (the
        #: rules are loaded before the configuration is resolved; here for the provenance).
        self.plugins = plugins
        self.rule_dirs = rule_dirs
        #: ``--baseline``: used instead of the file's ``baseline:`` (by the check's
        #: baseline, :class:`gpulint.suppress.baseline.RunBaseline`).
        self.baseline = baseline


class Effective:
    """The configuration of a run, ready to use."""

    __slots__ = (
        "baseline",
        "entries",
        "exclude",
        "fail_if_no_files",
        "file",
        "force_exclude",
        "overrides",
        "render",
        "root",
        "settings",
    )

    def __init__(
        self,
        settings: Settings,
        file: ConfigFile | None,
        root: FsPath,
        exclude: PathMatcher,
        force_exclude: bool,
        entries: dict[str, Entry],
        fail_if_no_files: bool = False,
        render: RenderOptions | None = None,
        baseline: FsPath | None = None,
    ) -> None:
        self.settings = settings
        #: How charts are rendered (``render:``); whether to render is the command line's.
        self.render = render
        self.file = file
        self.root = root
        self.exclude = exclude
        self.force_exclude = force_exclude
        self.entries = entries
        #: Exit 1 when no file was linted (``fail-if-no-files``, ``--fail-if-no-files``).
        self.fail_if_no_files = fail_if_no_files
        #: The configuration's ``baseline:`` file (resolved, inside its repository).
        self.baseline = baseline
        #: What the command line said (a nested configuration is resolved with it too).
        self.overrides = Overrides()


# -- resolving --------------------------------------------------------------------------------
def resolve(
    config: ConfigFile | None,
    rules: Sequence[Rule],
    overrides: Overrides | None = None,
    cwd: FsPath | None = None,
) -> Effective:
    """Validate ``config`` for ``rules`` and build the run's Settings (ConfigError if bad):
    each key's value and where it came from (:func:`_entries`, from
    :data:`gpulint.config.keys.KEYS`), then the objects they make
    (:func:`gpulint.config.build.build`)."""
    from gpulint.config.build import build
    from gpulint.util.globs import PathMatcher, compile_all

    cli = overrides or Overrides()
    validate_config(config, rules)
    root = config.folder if config is not None else (cwd or FsPath.cwd())
    entries, severities, options = _entries(config, rules, cli)
    settings, render, baseline = build(config, root, entries, severities, options)
    effective = Effective(
        settings=settings,
        file=config,
        root=root,
        exclude=PathMatcher(str(root), compile_all(entries["exclude"].value)),
        force_exclude=bool(entries["force-exclude"].value),
        entries=entries,
        fail_if_no_files=bool(entries["fail-if-no-files"].value),
        render=render,
        baseline=baseline,
    )
    effective.overrides = cli
    return effective


def _entries(
    config: ConfigFile | None, rules: Sequence[Rule], cli: Overrides
) -> tuple[dict[str, Entry], dict[str, Severity], dict[str, dict[str, Any]]]:
    """Every key's value and its origin, in :data:`~gpulint.config.keys.KEYS`' order:
    the command line's flag over the file over the default (a list flag adds to the file's
    list); and each rule's severity and options."""
    data: dict[str, Any] = config.data if config is not None else {}
    entries: dict[str, Entry] = {}
    severities: dict[str, Severity] = {}
    options: dict[str, dict[str, Any]] = {}
    for key in KEYS:
        if key.name == "severity":
            severities, options = _rule_entries(config, rules, entries)
        elif key.setting != "options":  # rules.<CODE> and gpu-taints: per rule, above
            entries[key.name] = _entry(key, config, data, cli)
    return entries, severities, options


def _entry(key: Key, config: ConfigFile | None, data: Mapping[str, Any], cli: Overrides) -> Entry:
    """One key's value: the file's (or the default), then the command line's flag."""
    if key.name in data:
        assert config is not None
        entry = Entry(data[key.name], config.where((key.name,)))
    else:
        entry = Entry(copy.copy(key.default), DEFAULT)
    if key.selector_list:
        entry = Entry(upper_selectors(entry.value), entry.origin)
    if key.flag is None:
        return entry
    given = getattr(cli, key.name.replace("-", "_"))
    if given is None or (isinstance(given, (list, tuple)) and not given):
        return entry
    flag = key.flag if given is not False else "--no-" + key.flag[2:]
    if key.combine == "extend":
        base = entry.origin if entry.value else ""
        joined = f"{base} + " if base and base != DEFAULT else ""
        return Entry([*entry.value, *given], f"{joined}{COMMAND_LINE} ({flag})")
    return Entry(list(given) if isinstance(given, tuple) else given, f"{COMMAND_LINE} ({flag})")


def _rule_entries(
    config: ConfigFile | None, rules: Sequence[Rule], entries: dict[str, Entry]
) -> tuple[dict[str, Severity], dict[str, dict[str, Any]]]:
    """Each rule's severity and options (``gpu-taints`` gives every ``taints`` option its
    value unless the rule's own says one), their entries added to ``entries``."""
    data: dict[str, Any] = config.data if config is not None else {}

    def origin(key: Path) -> str:
        assert config is not None
        return config.where(key)

    severities: dict[str, Severity] = {}
    configured = data.get("severity", {})
    options: dict[str, dict[str, Any]] = {}
    rule_options = data.get("rules", {})
    taints = data.get(GPU_TAINTS)
    for rule in sorted(rules, key=lambda r: r.code):
        if rule.code in configured:
            level = configured[rule.code]
            severities[rule.code] = Severity.parse(level)
            entries[f"severity.{rule.code}"] = Entry(level, origin(("severity", rule.code)))
        else:
            entries[f"severity.{rule.code}"] = Entry(rule.severity.label, DEFAULT)
        chosen: dict[str, Any] = {}
        for name, spec in rule.options_schema.items():
            key = f"rules.{rule.code}.{name}"
            mine = rule_options.get(rule.code, {})
            if name in mine:
                chosen[name] = mine[name]
                entries[key] = Entry(mine[name], origin(("rules", rule.code, name)))
            elif name == "taints" and taints is not None:
                chosen[name] = taints
                entries[key] = Entry(taints, f"{origin((GPU_TAINTS,))} ({GPU_TAINTS})")
            else:
                entries[key] = Entry(spec.get("default"), DEFAULT)
        if chosen:
            options[rule.code] = chosen
    return severities, options
