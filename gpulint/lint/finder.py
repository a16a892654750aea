"""How rules are found and imported (flake8's ``finder``): built-in rules, plugins, rule folders.

The built-in rules are the modules of :mod:`gpulint.rules` (the repository's ``rules/``),
found by their file names -- ``<code>_<name>.py``, ``gpu020_missing_gpu_toleration.py`` is
GPU020 -- so adding one is adding its file: no registration, no reinstall. Third-party rules
register in the ``gpulint.rules`` entry-point group, one entry per code prefix as flake8's
plugins do (``IMG = "acme_rules"``): the value is a rule module, or a package whose
``<code>_<name>.py`` modules are its rules, and every code it brings starts with the
entry's name. Only installed distributions count (never the working directory,
:func:`install_paths`). The
configuration or the command line can add more: ``plugins`` (importable rule modules) and
``rule-dirs`` (folders of rule modules, imported by file path under a private package name,
and of declarative YAML rules, see ``gpulint.lint.declarative``). Python from a configuration
file is imported only when the user opts in (README "Security"; the decision is
``gpulint.commands.common.load_rules``'s). Every rule that does not ship with gpulint has its
``OPTIONS`` checked against the JSON Schema metaschema when it loads.

What a rule is (``Rule``, ``RuleContext``, ``Violation``) is ``gpulint.rule``, which rule
authors import; this module sits above it and above ``gpulint.lint.declarative``.
"""

import importlib
import sys
from collections.abc import Iterable
from pathlib import Path as FsPath
from types import ModuleType
from typing import NamedTuple

from gpulint.rule import Rule, RuleLoadError, rule_from_module


class RuleSource(NamedTuple):
    """Where a rule comes from, before it is imported.

    ``code``: the code its file name says (a built-in rule, a plugin package's module) or
    the code prefix its entry point is registered under (every code it brings must start
    with it); None when it is known only after import (``plugins`` in the configuration).
    ``path`` is set for a file in a rule folder (a module or a declarative rule).
    """

    code: str | None
    module: str
    origin: str
    path: str | None = None


#: The entry-point group rules (built-in and plugins) are registered in.
GROUP = "gpulint.rules"


#: The package the built-in rules are the modules of.
BUILTIN = "gpulint.rules"

#: A rule module's file name: its code in lower case, ``_``, a name (``gpu020_missing_...``).
_RULE_FILE = r"([a-z]+[0-9]+)_[a-z0-9_]+\.py"


def package_sources(package: str, folders: Iterable[str], origin: str) -> list[RuleSource]:
    """The rule modules of a package, by file name (``gpu020_x.py`` -> GPU020), sorted."""
    import os
    import re

    out = []
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in sorted(names):
            match = re.fullmatch(_RULE_FILE, name)
            if match:
                out.append(RuleSource(match[1].upper(), f"{package}.{name[:-3]}", origin))
    return out


def builtin_sources() -> list[RuleSource]:
    """The built-in rules: the modules of :mod:`gpulint.rules`."""
    package = importlib.import_module(BUILTIN)
    return package_sources(BUILTIN, package.__path__, "built-in")


def _entry_point_sources() -> list[RuleSource]:
    found = _scan_entry_points(GROUP)
    if found is None:
        found = _metadata_entry_points(GROUP)
    out = []
    for name, value, dist in found:
        if _normalize(dist) == "gpulint":  # an older gpulint's per-rule entries: not plugins
            continue
        out.append(RuleSource(name, value.partition(":")[0].strip(), f"plugin {dist}"))
    return out


def _metadata_entry_points(group: str) -> list[tuple[str, str, str]]:
    """(name, value, distribution) of every entry point in ``group``, the standard way, from
    the installation folders only (:func:`install_paths`)."""
    from importlib.metadata import distributions

    seen: set[str] = set()
    out: list[tuple[str, str, str]] = []
    for dist in distributions(path=install_paths()):
        name = dist.name  # parses METADATA: once per distribution
        if name is None or _normalize(name) in seen:
            continue
        seen.add(_normalize(name))
        out.extend((ep.name, ep.value, name) for ep in dist.entry_points if ep.group == group)
    return out


def install_paths() -> list[str]:
    """The ``sys.path`` entries searched for installed distributions: every one except
    ``''`` and the working directory.

    ``python -m gpulint`` (and ``-c``) puts the working directory first on ``sys.path``; in
    a checkout of a pull request, a ``*.dist-info/entry_points.txt`` planted there would
    register its own "rules" and have them imported. Only what is installed is a plugin.
    """
    import os

    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:  # the working directory was removed
        cwd = None
    return [entry for entry in sys.path if entry and os.path.realpath(entry) != cwd]


def _normalize(name: str) -> str:
    """A distribution name as importlib.metadata compares them (PEP 503, underscores)."""
    import re

    return re.sub(r"[-_.]+", "_", name).lower()


def _scan_entry_points(group: str) -> list[tuple[str, str, str]] | None:
    """What ``importlib.metadata.entry_points(group=group)`` returns, without importing it.

    Importing importlib.metadata (and the email package it parses metadata with) costs more
    than the rest of rule discovery together, a fifth of a one-file run. This reads the same
    files the same way -- every ``*.dist-info``/``*.egg-info`` folder in :func:`install_paths`
    (``sys.path`` without the working directory), first
    distribution of a name wins, the group's ``name = value`` lines of ``entry_points.txt``
    -- and returns None for what it does not handle (zipped or egg entries on ``sys.path``),
    which then goes the standard way.
    """
    import os

    seen: set[str] = set()
    out: list[tuple[str, str, str]] = []
    header = f"[{group}]"
    for base in install_paths():
        if base.endswith(".egg") or os.path.isfile(base):
            return None
        try:
            children = os.listdir(base)
        except OSError:
            continue
        for child in children:
            stem, ext = os.path.splitext(child)
            if ext.lower() not in (".dist-info", ".egg-info"):
                continue
            key = _normalize(stem.partition("-")[0])
            if key in seen:
                continue
            seen.add(key)
            folder = os.path.join(base, child)
            try:
                with open(os.path.join(folder, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            if header not in text:
                continue
            pairs = _section(text, group)
            if pairs:
                dist = _dist_name(folder, stem.partition("-")[0])
                out.extend((name, value, dist) for name, value in pairs)
    return out


def _section(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` pairs of one section of an INI-style entry_points.txt."""
    pairs: list[tuple[str, str]] = []
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            continue
        if current == group:
            name, _, value = line.partition("=")
            pairs.append((name.strip(), value.strip()))
    return pairs


def _dist_name(folder: str, fallback: str) -> str:
    """The ``Name:`` of a distribution's metadata (METADATA, or PKG-INFO for egg-info)."""
    import os

    for meta in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(folder, meta), encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Name:"):
                        return line[5:].strip()
                    if not line.strip():
                        break
        except OSError:
            continue
    return fallback


def discover() -> list[RuleSource]:
    """Every rule: the built-in ones, then the plugins of the entry-point group."""
    plugins = sorted(_entry_point_sources(), key=lambda s: (s.code, s.module))
    return [*builtin_sources(), *plugins]


def module_sources(plugins: Iterable[str]) -> list[RuleSource]:
    """``plugins`` from the configuration: importable rule modules."""
    return [RuleSource(None, name, f"plugin module {name}") for name in plugins]


class RuleDir(NamedTuple):
    """A folder of rules.

    ``python``: whether its rule modules may be imported (a folder a configuration file
    names needs the user's opt-in, see ``gpulint.commands.common.load_rules``); its declarative
    rules always load. ``root``: when set, every rule file must resolve inside it (a rule
    folder of a repository cannot link to files outside the repository).
    """

    path: FsPath
    python: bool = True
    root: FsPath | None = None


RULE_SUFFIXES = (".py", ".yaml", ".yml")


def rule_files(folder: FsPath) -> list[FsPath]:
    """The rule files of a folder, sorted: ``*.py``, ``*.yaml``, ``*.yml``, except names
    starting with ``.`` or ``_`` (helpers that rule modules import)."""
    return [
        path
        for path in sorted(folder.iterdir())
        if not path.name.startswith((".", "_")) and path.suffix in RULE_SUFFIXES and path.is_file()
    ]


def folder_sources(folders: Iterable[FsPath | RuleDir]) -> list[RuleSource]:
    """Rule modules (``*.py``) and declarative rules (``*.yaml``, ``*.yml``) in folders."""
    out = []
    for item in folders:
        import hashlib  # only for rule folders: keeps it off the start-up path

        where = item if isinstance(item, RuleDir) else RuleDir(item)
        folder = where.path
        digest = hashlib.sha1(str(folder).encode()).hexdigest()[:10]
        package = f"_gpulint_local_{digest}"
        origin = f"rule-dir {folder}"
        for path in rule_files(folder):
            if where.root is not None:
                real = path.resolve()
                if not real.is_relative_to(where.root):
                    raise RuleLoadError(
                        f"rule file {path} ({origin}) resolves to {real}, outside the "
                        f"repository {where.root}"
                    )
            if path.suffix == ".py":
                if where.python:
                    out.append(RuleSource(None, f"{package}.{path.stem}", origin, str(path)))
            else:
                out.append(RuleSource(None, str(path), origin, str(path)))
    return out


def _import_file(source: RuleSource) -> ModuleType:
    """Import a rule folder's module under a private package named after the folder, so
    modules in one folder can import each other (``from . import helpers``)."""
    assert source.path is not None
    package, _, _ = source.module.rpartition(".")
    if package not in sys.modules:
        parent = ModuleType(package)
        parent.__path__ = [str(FsPath(source.path).parent)]
        sys.modules[package] = parent
    import importlib.util  # only for rule folders: keeps it off the start-up path

    spec = importlib.util.spec_from_file_location(source.module, source.path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {source.path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[source.module] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[source.module]
        raise
    return module


def _describe_source(source: RuleSource) -> str:
    return f"{source.path or source.module} ({source.origin})"


def check_options(rule: Rule, where: str) -> None:
    """A third-party rule's OPTIONS must be JSON Schemas whose defaults they accept."""
    from gpulint.loader.schemacheck import schema_error

    schema = {"type": "object", "properties": dict(rule.options_schema)}
    problem = schema_error(schema)
    if problem is not None:
        raise RuleLoadError(f"rule {rule.code} from {where}: invalid OPTIONS schema: {problem}")
    from jsonschema import Draft202012Validator

    for name, spec in rule.options_schema.items():
        if "default" not in spec:
            continue
        errors = list(Draft202012Validator(spec).iter_errors(spec["default"]))
        if errors:
            raise RuleLoadError(
                f"rule {rule.code} from {where}: the default of option {name!r} does not "
                f"match its schema: {errors[0].message}"
            )


def _import(source: RuleSource) -> ModuleType:
    where = _describe_source(source)
    try:
        if source.path is not None:
            return _import_file(source)
        return importlib.import_module(source.module)
    except Exception as exc:  # any import-time failure of third-party code
        raise RuleLoadError(
            f"rule module {where} failed to import: {type(exc).__name__}: {exc}"
        ) from None


def _load(source: RuleSource) -> list[Rule]:
    """The rules of one source: one, or a plugin package's rule modules."""
    if source.path is not None and source.path.endswith((".yaml", ".yml")):
        from gpulint.lint.declarative import load_declarative

        return [load_declarative(FsPath(source.path), source.origin)]
    module = _import(source)
    if source.path is None and source.origin.startswith("plugin ") and hasattr(module, "__path__"):
        # A plugin package registered under a code prefix: its rule modules, by file name.
        inner = package_sources(source.module, module.__path__, source.origin)
        if not inner:
            raise RuleLoadError(f"rule package {_describe_source(source)} holds no rule module")
        prefix = source.code
        return [_rule(s._replace(code=prefix), _import(s), by_name=s.code) for s in inner]
    return [_rule(source, module)]


def _rule(source: RuleSource, module: ModuleType, by_name: str | None = None) -> Rule:
    where = _describe_source(source)
    rule = rule_from_module(module, source.origin, source.path)
    if source.origin == "built-in" or by_name is not None:
        expected = by_name if by_name is not None else source.code
        if rule.code != expected:
            raise RuleLoadError(
                f"rule module {where} is named for {expected} but declares CODE = {rule.code!r}"
            )
    if source.code is not None and not rule.code.startswith(source.code):
        raise RuleLoadError(
            f"rule module {where} is registered under the code prefix {source.code} but "
            f"declares CODE = {rule.code!r}"
        )
    if source.origin != "built-in":
        check_options(rule, where)
    return rule


def load_rules(
    sources: Iterable[RuleSource] | None = None,
    plugins: Iterable[str] = (),
    rule_dirs: Iterable[FsPath | RuleDir] = (),
) -> list[Rule]:
    """Import every rule; a broken or duplicate one is a RuleLoadError naming its module.

    ``sources`` defaults to :func:`discover`'s; ``plugins`` and ``rule_dirs`` come from the
    command line or the configuration (``gpulint.commands.common.load_rules`` decides which may be
    imported) and load after them.
    """
    rules: dict[str, Rule] = {}
    everything = [
        *(discover() if sources is None else sources),
        *module_sources(plugins),
        *folder_sources(rule_dirs),
    ]
    for source in everything:
        for rule in _load(source):
            if rule.code in rules:
                other = rules[rule.code]
                raise RuleLoadError(
                    f"rule {_describe_source(source)} declares code {rule.code}, already "
                    f"declared by {other.module} ({other.origin})"
                )
            rules[rule.code] = rule
    return sorted(rules.values(), key=lambda r: r.code)
