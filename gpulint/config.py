"""Configuration: find it, validate it, and turn it (plus the command line) into Settings.

Where it is (ruff's rules): the first of ``.gpulint.yaml``, ``.gpulint.yml`` or a
``pyproject.toml`` with a ``[tool.gpulint]`` table, looking in the working directory and then
each folder above it, up to and including the repository root (the folder holding ``.git``).
``--config PATH`` names the file instead; ``--isolated`` ignores every file. Paths in the file
(``exclude``, ``per-file-ignores``, ``rule-dirs``) are relative to the file's folder.

What it says is checked against a JSON Schema generated from the loaded rules
(:func:`config_schema`): each rule's ``OPTIONS`` are the schema of ``rules.<CODE>``, so the
options and the schema cannot drift; ``schemas/config.schema.json`` is the same schema for
the built-in rules, for editors, and a test keeps it current. Any problem is a
:class:`ConfigError` whose lines name the file, the line, the key and the allowed values.

Precedence: built-in defaults < configuration file < command line. ``--select`` replaces the
file's ``select``; ``--extend-select`` and ``--ignore`` add to the file's lists.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path as FsPath
from typing import Any

from gpulint.data import schema_path
from gpulint.model import Path, Severity

CONFIG_NAMES = (".gpulint.yaml", ".gpulint.yml")
PYPROJECT = "pyproject.toml"
#: The single key that sets the ``taints`` option of every rule that has one.
GPU_TAINTS = "gpu-taints"
SEVERITIES = tuple(s.label for s in sorted(Severity, reverse=True))
COMMAND_LINE = "command line"
DEFAULT = "default"


class ConfigError(Exception):
    """A configuration problem: each line of the message is one ``file:line: key: why``."""


class ConfigFile:
    """A parsed configuration file: its ``gpulint`` data and where each key is written."""

    __slots__ = ("data", "line_of", "path", "prefix")

    def __init__(
        self, path: FsPath, data: dict[str, Any], line_of: Callable[[Path], int], prefix: str = ""
    ) -> None:
        self.path = path
        self.data = data
        self.line_of = line_of
        #: The prefix of every key's path in the file (``tool.gpulint`` for pyproject.toml).
        self.prefix = prefix

    @property
    def folder(self) -> FsPath:
        return self.path.parent

    @property
    def shown(self) -> str:
        return display_path(self.path)

    def where(self, path: Path) -> str:
        return f"{self.shown}:{self.line_of(path)}"

    def error(self, path: Path, message: str) -> str:
        from gpulint.schemacheck import dotted

        key = dotted(path)
        return f"{self.where(path)}: {key}: {message}" if key else f"{self.where(path)}: {message}"


def display_path(path: FsPath) -> str:
    """Relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


# -- finding and reading ----------------------------------------------------------------------
def _pyproject_has_table(path: FsPath) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return "tool.gpulint" in text or re.search(r"^\s*\[\s*tool\s*\]", text, re.M) is not None


def find_config(start: FsPath) -> FsPath | None:
    """The configuration file that applies in ``start``, or None."""
    folder = start.resolve()
    for candidate in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            path = candidate / name
            if path.is_file():
                return path
        pyproject = candidate / PYPROJECT
        if pyproject.is_file() and _pyproject_has_table(pyproject):
            data = _read_toml(pyproject)
            if isinstance(data.get("tool"), dict) and "gpulint" in data["tool"]:
                return pyproject
        if (candidate / ".git").exists():
            return None
    return None


def _read_toml(path: FsPath) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the same parser, before it joined the standard library
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]

    try:
        with path.open("rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{display_path(path)}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{display_path(path)}: invalid TOML: {exc}") from None
    return data


def _toml_line_finder(text: str) -> Callable[[Path], int]:
    """The line of a key under ``[tool.gpulint]``, by a simple search (tomllib keeps none)."""
    lines = text.splitlines()
    base = next((i for i, line in enumerate(lines) if "tool.gpulint" in line), 0)

    def line_of(path: Path) -> int:
        start = found = base
        for part in path:
            if isinstance(part, int):
                continue
            key = re.escape(str(part))
            pattern = re.compile(rf"""(?:^|[\s{{,.\[])(?:"{key}"|'{key}'|{key})\s*(?:=|\]|\.)""")
            for i in range(start, len(lines)):
                if pattern.search(lines[i]):
                    start = found = i
                    break
        return found + 1

    return line_of


def read_config(path: FsPath) -> ConfigFile:
    """Parse a configuration file (YAML, or a pyproject.toml with ``[tool.gpulint]``)."""
    shown = display_path(path)
    if not path.is_file():
        raise ConfigError(f"{shown}: no such configuration file")
    if path.suffix == ".toml":
        data = _read_toml(path)
        tool = data.get("tool", {})
        if path.name == PYPROJECT or "tool" in data:
            if not isinstance(tool, dict) or "gpulint" not in tool:
                raise ConfigError(f"{shown}: has no [tool.gpulint] table")
            data = tool["gpulint"]
        text = path.read_text(encoding="utf-8")
        if not isinstance(data, dict):
            raise ConfigError(f"{shown}:1: tool.gpulint must be a table")
        return ConfigFile(path, data, _toml_line_finder(text), "tool.gpulint")
    return _read_yaml(path, shown)


def _read_yaml(path: FsPath, shown: str) -> ConfigFile:
    from gpulint.yamlload import SourceError, load_one_document

    try:
        doc = load_one_document(path)
    except SourceError as exc:
        raise ConfigError(
            "\n".join(
                f"{shown}:{line}: {message}" if line else f"{shown}: {message}"
                for line, message in exc.problems
            )
        ) from None
    if doc is None:
        return ConfigFile(path, {}, lambda p: 1)
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{shown}:{doc.start.line}: the configuration must be a mapping")
    return ConfigFile(path, doc.data, lambda p: doc.key_span(p).line)


def load_config(
    explicit: str | None = None, isolated: bool = False, cwd: FsPath | None = None
) -> ConfigFile | None:
    """The configuration for this run: ``--config``, else the discovered file, else None."""
    if explicit is not None:
        return read_config(FsPath(explicit))
    if isolated:
        return None
    found = find_config(cwd or FsPath.cwd())
    return read_config(found) if found is not None else None


# -- the schema -------------------------------------------------------------------------------
def _load_schema(name: str) -> dict[str, Any]:
    with open(schema_path(name), encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _import_defs(schema: Mapping[str, Any], root: str, prefix: str) -> dict[str, Any]:
    """``root`` and every definition it refers to, renamed ``prefix + name``."""
    defs = schema["$defs"]
    out: dict[str, Any] = {}
    todo = [root]

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            result = {}
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                    name, _, rest = value[len("#/$defs/") :].partition("/")
                    todo.append(name)
                    result[key] = f"#/$defs/{prefix}{name}" + (f"/{rest}" if rest else "")
                else:
                    result[key] = rename(value)
            return result
        if isinstance(node, list):
            return [rename(v) for v in node]
        return node

    while todo:
        name = todo.pop()
        if prefix + name not in out:
            out[prefix + name] = rename(copy.deepcopy(defs[name]))
    return out


def _selectors(description: str) -> dict[str, Any]:
    return {
        "type": "array",
        "description": description,
        "items": {
            "type": "string",
            "pattern": "^([A-Z][A-Z0-9]*|ALL)$",
            "description": "a rule code (GPU001), a prefix of codes (GPU0, GPU) or ALL",
        },
    }


def _options_schema(code: str, options: Mapping[str, Any]) -> dict[str, Any]:
    names = ", ".join(sorted(options)) or "none"
    return {
        "type": "object",
        "description": f"Options of {code} (options: {names}).",
        "additionalProperties": False,
        "properties": {k: copy.deepcopy(dict(v)) for k, v in options.items()},
    }


def config_schema(rules: Sequence[Any]) -> dict[str, Any]:
    """The JSON Schema of a configuration file for these rules (``gpulint.rule.Rule``)."""
    from gpulint.taints import TAINTS_OPTION

    codes = sorted(r.code for r in rules)
    devices = _load_schema("devices.schema.json")
    workloads = _load_schema("workloads.schema.json")
    defs = {
        **_import_defs(devices, "resource", "registry-"),
        **_import_defs(workloads, "workload", "workloads-"),
    }
    # A configuration entry needs only a name: the registry supplies the other defaults.
    device = defs.pop("registry-resource")
    device["required"] = ["name"]
    device["description"] = (
        "An extended resource to add to (or replace in) the device registry; "
        "`family` defaults to 'custom', `hardware` to the family, `unit` to 'devices'."
    )
    defs["device"] = device
    taints = {k: v for k, v in TAINTS_OPTION.items() if k != "default"}
    taints["description"] = (
        "The taints on the cluster's GPU nodes, for every rule with a `taints` option "
        "(GPU020, GPU021); `[]` turns them off (GKE). `rules.<CODE>.taints` wins over it."
    )
    properties: dict[str, Any] = {
        "select": _selectors("Only these rules (codes, prefixes or ALL). Default: ALL."),
        "extend-select": _selectors("Rules to enable on top of `select`."),
        "ignore": _selectors("Rules to turn off (codes or prefixes)."),
        "fail-on": {
            "enum": list(SEVERITIES),
            "description": "Exit 1 when a finding at or above this severity is found.",
        },
        "severity": {
            "type": "object",
            "description": "The severity of a rule, by code.",
            "additionalProperties": False,
            "properties": {c: {"enum": list(SEVERITIES)} for c in codes},
        },
        "rules": {
            "type": "object",
            "description": "Options of a rule, by code.",
            "additionalProperties": False,
            "properties": {r.code: _options_schema(r.code, r.options_schema) for r in rules},
        },
        GPU_TAINTS: taints,
        "exclude": {
            "type": "array",
            "description": "Globs of files and folders not to lint when walking folders "
            "(relative to this file; .gitignore-style).",
            "items": {"type": "string", "minLength": 1},
        },
        "force-exclude": {
            "type": "boolean",
            "description": "Apply `exclude` to files named on the command line too "
            "(pre-commit passes file names).",
        },
        "per-file-ignores": {
            "type": "object",
            "description": "Rules to ignore in files matching a glob (relative to this file).",
            "additionalProperties": _selectors("Rule codes or prefixes ignored in these files."),
        },
        "per-object-ignores": {
            "type": "array",
            "description": "Objects whose findings are suppressed, by kind/namespace/name "
            "glob, for vendored manifests that cannot carry annotations.",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["reason"],
                "properties": {
                    "kind": {"type": "string", "minLength": 1, "description": "Kind glob."},
                    "namespace": {"type": "string", "description": "Namespace glob."},
                    "name": {"type": "string", "minLength": 1, "description": "Name glob."},
                    "path": {"type": "string", "minLength": 1, "description": "File glob."},
                    "rules": _selectors("Rules to suppress (default: every rule)."),
                    "reason": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Why: reported as the suppression's justification.",
                    },
                },
            },
        },
        "devices": {
            "type": "array",
            "description": "Extra device registry entries, merged over the built-in registry.",
            "items": {"$ref": "#/$defs/device"},
        },
        "workloads": {
            "type": "array",
            "description": "Extra kinds and where their pod specs are "
            "(the shape of rules/workloads.json rows).",
            "items": {"$ref": "#/$defs/workloads-workload"},
        },
        "plugins": {
            "type": "array",
            "description": "Importable rule modules to load (rules installed with a "
            "`gpulint.rules` entry point load without this).",
            "items": {
                "type": "string",
                "pattern": r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$",
                "description": "a dotted module name",
            },
        },
        "rule-dirs": {
            "type": "array",
            "description": "Folders (relative to this file) of rule modules (*.py) and "
            "declarative rules (*.yaml).",
            "items": {"type": "string", "minLength": 1},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://gpulint.dev/schemas/config.schema.json",
        "title": "gpulint configuration",
        "description": "`.gpulint.yaml`, or the `[tool.gpulint]` table of pyproject.toml. "
        "Generated from the rules' OPTIONS by `gpulint config --schema`.",
        "type": "object",
        "additionalProperties": False,
        "properties": properties,
        "$defs": dict(sorted(defs.items())),
    }


#: Keys read before rules are loaded (they say which rules exist).
LOADING_KEYS = ("plugins", "rule-dirs")


def _problems(config: ConfigFile, schema: Mapping[str, Any], data: Any) -> list[str]:
    from gpulint.schemacheck import check

    problems = check(schema, data, config.line_of)
    return [config.error(p.path, p.message) for p in problems]


def rule_locations(config: ConfigFile) -> tuple[list[str], list[FsPath]]:
    """The ``plugins`` and ``rule-dirs`` of a file, checked, with folders resolved."""
    data = {k: config.data[k] for k in LOADING_KEYS if k in config.data}
    if not data:
        return [], []
    schema = config_schema([])
    partial = {**schema, "properties": {k: schema["properties"][k] for k in LOADING_KEYS}}
    errors = _problems(config, partial, data)
    dirs: list[FsPath] = []
    for i, text in enumerate(data.get("rule-dirs", []) if not errors else []):
        folder = (config.folder / text).resolve()
        if not folder.is_dir():
            errors.append(config.error(("rule-dirs", i), f"{text!r} is not a folder"))
        dirs.append(folder)
    if errors:
        raise ConfigError("\n".join(errors))
    return list(data.get("plugins", [])), dirs


# -- resolving --------------------------------------------------------------------------------
class Overrides:
    """What the command line says (None or empty: not given)."""

    __slots__ = ("extend_select", "fail_on", "ignore", "select")

    def __init__(
        self,
        select: list[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        fail_on: str | None = None,
    ) -> None:
        self.select = select
        self.extend_select = extend_select
        self.ignore = ignore
        self.fail_on = fail_on


class Entry:
    """One effective value and where it came from."""

    __slots__ = ("origin", "value")

    def __init__(self, value: Any, origin: str) -> None:
        self.value = value
        self.origin = origin

    def __repr__(self) -> str:
        return f"Entry({self.value!r}, {self.origin!r})"


class Effective:
    """The configuration of a run, ready to use."""

    __slots__ = ("entries", "exclude", "file", "force_exclude", "root", "settings")

    def __init__(
        self,
        settings: Any,  # gpulint.engine.Settings
        file: ConfigFile | None,
        root: FsPath,
        exclude: Any,  # gpulint.globs.PathMatcher
        force_exclude: bool,
        entries: dict[str, Entry],
    ) -> None:
        self.settings = settings
        self.file = file
        self.root = root
        self.exclude = exclude
        self.force_exclude = force_exclude
        self.entries = entries


def _check_selectors(
    config: ConfigFile | None, path: Path, values: Iterable[str], known: Sequence[str]
) -> list[str]:
    errors = []
    for i, code in enumerate(values):
        if code != "ALL" and not any(k.startswith(code) for k in known):
            message = (
                f"{code!r} matches no rule; allowed values: {', '.join(known)}, a prefix of "
                "them, or ALL"
            )
            if config is None:
                errors.append(f"{dotted_cli(path)}: {message}")
            else:
                errors.append(config.error((*path, i), message))
    return errors


def _check_globs(config: ConfigFile, data: Mapping[str, Any]) -> list[str]:
    """Every glob of the file that is not valid (an unclosed ``[``, a reversed range), with
    its line: a pattern that cannot mean what it says is an error, not a silent no-match."""
    from gpulint.globs import validate

    places: list[tuple[Path, Any]] = [
        (("exclude", i), pattern) for i, pattern in enumerate(data.get("exclude", ()))
    ]
    places += [
        (("per-file-ignores", pattern), pattern) for pattern in data.get("per-file-ignores", {})
    ]
    for i, row in enumerate(data.get("per-object-ignores", ())):
        places += [
            (("per-object-ignores", i, key), row[key])
            for key in ("kind", "namespace", "name", "path")
            if key in row
        ]
    errors = []
    for path, pattern in places:
        if not isinstance(pattern, str):
            continue
        problem = validate(pattern)
        if problem is not None:
            errors.append(config.error(path, f"{pattern!r} is not a valid glob: {problem}"))
    return errors


def dotted_cli(path: Path) -> str:
    return "--" + str(path[0])


def resolve(
    config: ConfigFile | None,
    rules: Sequence[Any],
    overrides: Overrides | None = None,
    cwd: FsPath | None = None,
) -> Effective:
    """Validate ``config`` for ``rules`` and build the run's Settings (ConfigError if bad)."""
    from gpulint.engine import Settings
    from gpulint.globs import PathMatcher, compile_all
    from gpulint.suppress import ObjectIgnore, PathIgnore

    cli = overrides or Overrides()
    data: dict[str, Any] = config.data if config is not None else {}
    if config is not None and data:
        errors = _problems(config, config_schema(rules), data)
        if errors:
            raise ConfigError("\n".join(errors))
    known = [r.code for r in rules]
    errors = []
    for key in ("select", "extend-select", "ignore"):
        errors += _check_selectors(config, (key,), data.get(key, ()), known)
    for pattern, codes in data.get("per-file-ignores", {}).items():
        errors += _check_selectors(config, ("per-file-ignores", pattern), codes, known)
    for i, entry in enumerate(data.get("per-object-ignores", ())):
        errors += _check_selectors(
            config, ("per-object-ignores", i, "rules"), entry.get("rules", ()), known
        )
    if config is not None:
        errors += _check_globs(config, data)
    if errors:
        raise ConfigError("\n".join(errors))

    root = config.folder if config is not None else (cwd or FsPath.cwd())
    entries: dict[str, Entry] = {}

    def origin(key: Path) -> str:
        assert config is not None
        return config.where(key)

    def value(key: str, default: Any) -> Entry:
        if key in data:
            return Entry(data[key], origin((key,)))
        return Entry(default, DEFAULT)

    # Rule selection.
    if cli.select is not None:
        entries["select"] = Entry(cli.select, f"{COMMAND_LINE} (--select)")
    else:
        entries["select"] = value("select", ["ALL"])
    for key, extra, flag in (
        ("extend-select", cli.extend_select, "--extend-select"),
        ("ignore", cli.ignore, "--ignore"),
    ):
        entry = value(key, [])
        if extra:
            base = entry.origin if entry.value else ""
            joined = f"{base} + " if base and base != DEFAULT else ""
            entry = Entry([*entry.value, *extra], f"{joined}{COMMAND_LINE} ({flag})")
        entries[key] = entry
    if cli.fail_on is not None:
        entries["fail-on"] = Entry(cli.fail_on, f"{COMMAND_LINE} (--fail-on)")
    else:
        entries["fail-on"] = value("fail-on", Severity.ERROR.label)

    # Severities and options, per rule.
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

    # Files.
    exclude = value("exclude", [])
    entries["exclude"] = exclude
    entries["force-exclude"] = value("force-exclude", False)
    per_file: list[PathIgnore] = []
    entries["per-file-ignores"] = value("per-file-ignores", {})
    for pattern, codes in data.get("per-file-ignores", {}).items():
        matcher = PathMatcher(str(root), compile_all([pattern]))
        where = origin(("per-file-ignores", pattern))
        per_file.append(PathIgnore(pattern, matcher, tuple(codes), where))
    per_object: list[ObjectIgnore] = []
    entries["per-object-ignores"] = value("per-object-ignores", [])
    for i, row in enumerate(data.get("per-object-ignores", ())):
        paths = PathMatcher(str(root), compile_all([row["path"]])) if "path" in row else None
        per_object.append(
            ObjectIgnore(
                reason=row["reason"],
                kind=row.get("kind", "*"),
                namespace=row.get("namespace", "*"),
                name=row.get("name", "*"),
                rules=tuple(row.get("rules", ())),
                paths=paths,
                origin=origin(("per-object-ignores", i)),
            )
        )

    # Data merged over the built-in tables.
    registry = None
    entries["devices"] = value("devices", [])
    if data.get("devices"):
        from gpulint.registry import builtin_registry

        registry = builtin_registry().merged(data["devices"])
    table = None
    entries["workloads"] = value("workloads", [])
    if data.get("workloads"):
        from gpulint.workloads import WorkloadKind, builtin_table

        rows = [
            WorkloadKind.from_json(row, origin(("workloads", i)))
            for i, row in enumerate(data["workloads"])
        ]
        table = builtin_table().extended(rows)
    entries["plugins"] = value("plugins", [])
    entries["rule-dirs"] = value("rule-dirs", [])

    select = entries["select"].value
    settings = Settings(
        select=None if select == ["ALL"] else frozenset(select),
        extend_select=frozenset(entries["extend-select"].value),
        ignore=frozenset(entries["ignore"].value),
        severities=severities,
        options=options,
        fail_on=Severity.parse(entries["fail-on"].value),
        registry=registry,
        workloads=table,
        per_file_ignores=tuple(per_file),
        per_object_ignores=tuple(per_object),
    )
    return Effective(
        settings=settings,
        file=config,
        root=root,
        exclude=PathMatcher(str(root), compile_all(exclude.value)),
        force_exclude=bool(entries["force-exclude"].value),
        entries=entries,
    )


# -- showing ------------------------------------------------------------------------------------
def describe(effective: Effective, rules: Sequence[Any], json_output: bool = False) -> str:
    """The effective configuration, one value per line with where it came from."""
    from gpulint.engine import is_enabled

    file = effective.file
    enabled = [r.code for r in rules if is_enabled(r.code, effective.settings)]
    if json_output:
        doc = {
            "file": str(file.path) if file is not None else None,
            "root": str(effective.root),
            "settings": {
                key: {"value": e.value, "origin": e.origin} for key, e in effective.entries.items()
            },
            "enabled": enabled,
        }
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    head = (
        f"# configuration file: {file.shown}"
        if file is not None
        else ("# configuration file: none (built-in defaults)")
    )
    rows = [
        (f"{key} = {json.dumps(e.value, ensure_ascii=False)}", e.origin)
        for key, e in effective.entries.items()
    ]
    width = min(max(len(text) for text, _ in rows), 72)
    lines = [head]
    lines += [f"{text:<{width}}  # {origin}" for text, origin in rows]
    lines.append(f"# enabled rules: {', '.join(enabled) or 'none'}")
    return "\n".join(lines) + "\n"
