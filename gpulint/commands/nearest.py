"""Each file linted with the configuration closest to it, as ruff does.

``gpulint check`` finds the run's configuration from the working directory (or takes
``--config``). Without ``--config`` or ``--isolated``, each file is then linted with the
closest ``.gpulint.yaml``, ``.gpulint.yml`` or ``pyproject.toml`` with ``[tool.gpulint]``
above *it* (:func:`gpulint.config.file.find_config` from the file's folder, with its
ownership and symbolic-link checks), so that a run from the repository root (pre-commit, CI)
lints ``team/pod.yaml`` as a run from ``team/`` and the language server do. Levels are not
merged: the closest file's keys, and the built-in defaults for the keys it leaves out.

What decides how each file is linted comes from its closest file: ``select``,
``extend-select``, ``ignore``, ``severity``, ``rules`` and ``gpu-taints``,
``per-file-ignores``, ``per-object-ignores``, ``devices``, ``workloads``, ``plugins`` and
``rule-dirs``. What decides the run as a whole comes from the run's configuration only
(:data:`RUN_WIDE`): a nested file that sets one is told so on stderr, once.

Linear: the configuration of each folder is looked up once, and each distinct configuration
is read, resolved and turned into one :class:`~gpulint.lint.engine.Linter` once, before the
files are linted (worker processes are forked with every linter already built).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path as FsPath
from typing import TYPE_CHECKING

from gpulint.commands.common import Trust, fail_lines, trusted_rules

if TYPE_CHECKING:
    from gpulint.config.file import ConfigFile
    from gpulint.config.resolve import Effective, Overrides
    from gpulint.lint.engine import Linter
    from gpulint.rule import Rule
    from gpulint.settings import Settings
    from gpulint.util.discover import Target
    from gpulint.util.walk import Listings

#: The keys that decide the run as a whole: read from the run's configuration (the one found
#: from the working directory, or ``--config``), never from a nested one.
RUN_WIDE = (
    "fail-on",
    "fail-if-no-files",
    "exclude",
    "force-exclude",
    "render",
    "cluster",
    "platform",
    "node-pools",
    "baseline",
    "cache",
)


def folder_of(target: Target, stdin_filename: str | None = None) -> FsPath | None:
    """The folder whose configuration applies to a target: for standard input, the folder
    of ``--stdin-filename`` (as ruff's), else None (the run's configuration)."""
    if target.path is None:
        return FsPath(stdin_filename).parent if stdin_filename else None
    path = FsPath(target.path)
    return path if target.render is not None and path.is_dir() else path.parent


class Level:
    """One nested configuration: its rules, its resolved settings, and its linter."""

    __slots__ = ("effective", "linters", "rules")

    def __init__(self, rules: list[Rule], effective: Effective) -> None:
        self.rules = rules
        self.effective = effective
        #: Its linter in each project (gpulint.commands.projects): its rules, the project's facts.
        self.linters: dict[str, Linter] = {}


class Nearest:
    """The linter of each file: the run's, or the one of a closer configuration
    (``listings``: the run's, whose folders answer the climbs without the system)."""

    def __init__(
        self,
        root: Effective,
        trust: Trust,
        overrides: Overrides,
        stdin_filename: str | None = None,
        listings: Listings | None = None,
    ) -> None:
        from gpulint.config.resolve import Overrides

        self.listings = listings
        self.root = root
        self.stdin_filename = stdin_filename
        self.trust = trust
        # The command line's selection applies to every file; its cluster is the run's.
        self.overrides = Overrides(
            select=overrides.select,
            extend_select=overrides.extend_select,
            ignore=overrides.ignore,
            fail_on=overrides.fail_on,
        )
        self.root_path = root.file.path.resolve() if root.file is not None else None
        self._config_of: dict[FsPath, FsPath | None] = {}
        self.levels: dict[FsPath, Level] = {}
        self._loaded: dict[tuple[object, ...], tuple[list[Rule], bool]] = {}

    # -- discovery -----------------------------------------------------------------------
    def config_for(self, folder: FsPath) -> FsPath | None:
        """The closest configuration above ``folder`` (looked up once per folder)."""
        from gpulint.config.file import find_config

        key = folder.absolute()
        if key not in self._config_of:
            try:
                self._config_of[key] = find_config(key, self.listings)
            except OSError:
                self._config_of[key] = None
        return self._config_of[key]

    def discover(self, targets: Iterable[Target]) -> None:
        """Read and resolve every configuration the targets need (a bad one: exit 2)."""
        for target in targets:
            folder = folder_of(target, self.stdin_filename)
            if folder is not None:
                self._level(self.config_for(folder))

    def _level(self, config: FsPath | None) -> Level | None:
        if config is None or config == self.root_path:
            return None  # no configuration above the file: the run's (or the defaults)
        level = self.levels.get(config)
        if level is None:
            level = self.levels[config] = self._load(config)
        return level

    def _load(self, path: FsPath) -> Level:
        from gpulint.config.file import ConfigError, read_config, warn
        from gpulint.config.resolve import resolve
        from gpulint.config.validate import forget_codes
        from gpulint.rule import RuleLoadError

        try:
            file = read_config(path)
            rules, skipped = self._rules(file)
            if skipped:
                file = forget_codes(file, [r.code for r in rules])
            run_wide = [key for key in RUN_WIDE if key in file.data]
            if run_wide:
                warn(
                    f"{file.shown}: {', '.join(run_wide)} decide the whole run: taken from "
                    f"{self.root.file.shown if self.root.file else 'the built-in defaults'}, "
                    "the configuration of the run, not from this nested one"
                )
                file = without(file, run_wide)
            return Level(rules, resolve(file, rules, self.overrides, cwd=file.folder))
        except (ConfigError, RuleLoadError) as exc:
            fail_lines(str(exc))

    def _rules(self, file: ConfigFile) -> tuple[list[Rule], bool]:
        """The rules a configuration loads, loaded once for every file that names the same
        ``plugins`` and ``rule-dirs`` (most name none)."""
        from gpulint.config.file import project_root
        from gpulint.config.validate import rule_locations

        plugins, dirs = rule_locations(file)
        key = (tuple(plugins), tuple(dirs), project_root(file) if dirs else None)
        loaded = self._loaded.get(key)
        if loaded is None:
            loaded = self._loaded[key] = trusted_rules(file, self.trust)
        return loaded

    # -- linting -------------------------------------------------------------------------
    def active_codes(self) -> set[str]:
        """The codes that run on some file: what the run-wide pre-passes must gather for."""
        from gpulint.lint.engine import is_enabled

        return {
            rule.code
            for level in self.levels.values()
            for rule in level.rules
            if is_enabled(rule.code, level.effective.settings, rule.opt_in)
        }

    def linter_in(self, target: Target, project: str, linter: Linter, run: Settings) -> Linter:
        """The linter of ``target`` in its ``project``: the project's ``linter`` (the run's
        configuration with the project's facts, ``run``), or one of its closest
        configuration's with the same facts (made once per configuration and project)."""
        folder = folder_of(target, self.stdin_filename)
        if folder is None:
            return linter
        level = self._level(self.config_for(folder))
        if level is None:
            return linter
        built = level.linters.get(project)
        if built is None:
            built = level.linters[project] = self._build(level, run)
        return built

    @staticmethod
    def _build(level: Level, run: Settings) -> Linter:
        """A nested configuration's linter, with what its project gathered (``run``: the
        project's settings: cluster, evidence, DRA objects, ConfigMaps, CRD fields, serving
        runtimes, the learned device registry)."""
        from gpulint.lint.engine import Linter

        own = level.effective.settings.copy()
        own.fail_on = run.fail_on
        own.cluster = run.cluster
        own.evidence = run.evidence
        own.dra = run.dra
        own.config_maps = run.config_maps
        own.crds = run.crds
        own.runtimes = run.runtimes
        if own.registry is None:  # its own `devices:` keep its own registry
            own.registry = run.registry
        return Linter(level.rules, own)


def without(file: ConfigFile, keys: Iterable[str]) -> ConfigFile:
    """The file with ``keys`` left out (its lines still named for the rest)."""
    from gpulint.config.file import ConfigFile

    drop = set(keys)
    data = {k: v for k, v in file.data.items() if k not in drop}
    return ConfigFile(file.path, data, file.line_of, file.prefix)
