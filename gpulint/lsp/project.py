"""The configuration that applies to a file, and the linter it makes.

A file is linted with the configuration ``gpulint check`` uses for it from any folder
(:mod:`gpulint.commands.nearest`): the first ``.gpulint.yaml``, ``.gpulint.yml`` or
``pyproject.toml`` with ``[tool.gpulint]`` found climbing from the file's folder to the
repository root
(:func:`gpulint.config.file.find_config`, with its ownership and symbolic-link checks). A
buffer with no file (``untitled:``) uses the configuration of the workspace folder.

Python rules a configuration names (``plugins``, ``*.py`` in ``rule-dirs``) run only when
the server was started with ``--allow-plugins`` (or GPULINT_ALLOW_PLUGINS=1), as for the
command line: opening a repository in an editor must not run its code.

A configuration that cannot be used (invalid YAML or TOML, an unknown key, a rule that does
not load) is a :class:`ConfigProblem` reported on the configuration file; the files under it
are linted with the built-in defaults meanwhile, so the editor keeps its diagnostics.
"""

from __future__ import annotations

import re
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, NamedTuple

from gpulint.commands.common import Trust, trusted_rules
from gpulint.config.file import CONFIG_NAMES, PYPROJECT, ConfigError, find_config, read_config

if TYPE_CHECKING:
    from gpulint.config.resolve import Effective
    from gpulint.lint.engine import Linter
    from gpulint.rule import Rule

#: The names of the files that can configure gpulint (a change to one reloads the settings).
CONFIG_FILE_NAMES = (*CONFIG_NAMES, PYPROJECT)

#: ``path:line: ...``: the line a configuration error names, when it names one.
_WHERE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): ")


class ConfigProblem(NamedTuple):
    """Why a configuration file cannot be used: its path, the 1-based line the first error
    names (1 when none), and the message (one line per error)."""

    path: FsPath
    line: int
    message: str


class Project:
    """The rules, settings and linter for the files one configuration (or none) applies to."""

    __slots__ = ("config", "effective", "facts", "linter", "problem", "rules")

    def __init__(
        self,
        config: FsPath | None,
        rules: list[Rule],
        effective: Effective,
        linter: Linter,
        problem: ConfigProblem | None = None,
    ) -> None:
        #: The configuration file (None: built-in defaults).
        self.config = config
        self.rules = rules
        self.effective = effective
        self.linter = linter
        self.problem = problem
        #: The linter of each project (gpulint.commands.projects) a file under this
        #: configuration belongs to: these rules, that project's facts (gathered once).
        self.facts: dict[str, Linter] = {}

    def linter_for(self, path: str | None) -> Linter:
        """The linter of the file at ``path``: this configuration's rules with the facts of
        the file's project, as ``gpulint check`` judges it (a buffer with no file: none)."""
        if path is None:
            return self.linter
        from gpulint.commands.facts import project_settings
        from gpulint.commands.projects import Projects
        from gpulint.lint.engine import Linter, is_enabled
        from gpulint.util.discover import Target

        found = Projects([path])
        root = found.of(Target(path, path))
        linter = self.facts.get(root)
        if linter is None:
            settings = self.effective.settings
            codes = {r.code for r in self.rules if is_enabled(r.code, settings, r.opt_in)}
            exclude = self.effective.exclude
            terraform: list[Target] = []
            files = found.files(root, exclude.matches if exclude else None, terraform)
            file = self.effective.file
            off = file is not None and file.data.get("cache") is False
            cache_in = root if found.is_root(root) and not off else None  # as check keeps one
            own = project_settings(settings, files, codes, cache_in, terraform=terraform)
            linter = self.facts[root] = Linter(self.rules, own)
        return linter

    def excludes(self, path: FsPath) -> bool:
        """Whether ``gpulint check PATH`` would skip this file: only with ``force-exclude``,
        as for a file named on the command line (the editor names the file it lints)."""
        effective = self.effective
        return bool(effective.force_exclude and effective.exclude.matches(str(path)))


def load_project(config: FsPath | None, trust: Trust) -> Project:
    """The project of ``config`` (None: the built-in defaults). Never raises for a bad
    configuration: the problem is kept, and the defaults are used."""
    from gpulint.config.resolve import resolve
    from gpulint.config.validate import forget_codes
    from gpulint.lint.engine import Linter
    from gpulint.rule import RuleLoadError

    if config is not None:
        try:
            file = read_config(config)
            rules, skipped = trusted_rules(file, trust)
            if skipped:
                file = forget_codes(file, [r.code for r in rules])
            effective = resolve(file, rules)
            return Project(config, rules, effective, Linter(rules, effective.settings))
        except (ConfigError, RuleLoadError) as exc:
            problem = _problem(config, str(exc))
        except Exception as exc:  # a plugin's import error: the server must go on
            problem = ConfigProblem(config, 1, f"{type(exc).__name__}: {exc}")
    else:
        problem = None
    rules, _ = trusted_rules(None, trust)
    effective = resolve(None, rules, cwd=config.parent if config is not None else None)
    return Project(None, rules, effective, Linter(rules, effective.settings), problem)


def _problem(config: FsPath, message: str) -> ConfigProblem:
    match = _WHERE.match(message)
    return ConfigProblem(config, int(match["line"]) if match else 1, message)


class Projects:
    """The projects of the files open in the editor, loaded once each and reloaded when a
    configuration file changes (:meth:`forget`)."""

    def __init__(self, trust: Trust, fallback: FsPath | None = None) -> None:
        import threading

        self.trust = trust
        #: Files are linted on worker threads, configurations listed on the event loop's.
        self._lock = threading.RLock()
        #: Where buffers with no file look for a configuration (the workspace folder).
        self.fallback = fallback
        self._by_config: dict[FsPath | None, Project] = {}
        self._config_of: dict[FsPath, FsPath | None] = {}

    def for_folder(self, folder: FsPath | None) -> Project:
        with self._lock:
            return self._for_folder(folder)

    def _for_folder(self, folder: FsPath | None) -> Project:
        folder = folder if folder is not None else self.fallback
        if folder is None:
            config = None
        elif folder in self._config_of:
            config = self._config_of[folder]
        else:
            try:
                config = find_config(folder) if folder.is_dir() else None
            except OSError:
                config = None
            self._config_of[folder] = config
        project = self._by_config.get(config)
        if project is None:
            project = self._by_config[config] = load_project(config, self.trust)
        return project

    def projects(self) -> list[Project]:
        with self._lock:
            return list(self._by_config.values())

    def forget_facts(self) -> None:
        """Gather every project's facts again (a file was saved)."""
        with self._lock:
            for project in self._by_config.values():
                project.facts.clear()

    def forget(self) -> None:
        """Find and read every configuration again (one was created, changed or deleted)."""
        from gpulint.config.file import forget_warnings

        with self._lock:
            self._by_config.clear()
            self._config_of.clear()
            forget_warnings()


def is_config_file(path: FsPath) -> bool:
    return path.name in CONFIG_FILE_NAMES
