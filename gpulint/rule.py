"""What a rule is, and how rules are found.

One rule = one module (STYLE.md, yamllint/ruff): its docstring is the documentation, and it
declares::

    CODE = "GPU001"               # stable; users and other tools reference it
    NAME = "gpu-requests-without-limits"
    SEVERITY = "error"            # default; configuration may change it
    SCOPE = "pod"                 # "pod" (a PodSpec), "object" (a whole object) or
                                  # "input" (reported by the loader itself)
    OPTIONS = {...}               # JSON Schema "properties" for its options, with defaults

    def check(target, ctx) -> Iterator[Violation]: ...

The engine, not the rule, stamps the code, severity and position onto what ``check`` yields,
and applies suppressions; rules never read configuration files.

Rules are discovered through the ``gpulint.rules`` entry-point group -- the built-in catalog is
registered there too (flake8's model), so the plugin path runs on every invocation.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from gpulint.model import Path, Severity
from gpulint.registry import Registry

SCOPES = ("pod", "object", "input")
#: The fixed documentation sections (ruff's), each a ``## Heading`` in the docstring.
DOC_SECTIONS = ("What it does", "Why it matters", "Example", "Use instead", "Options", "References")


class RuleLoadError(Exception):
    """A rule module that cannot be used; the message names the module."""


@dataclass(frozen=True, slots=True)
class Violation:
    """What a rule reports: a path inside the document and a message.

    ``at`` chooses the key (``"key"``) or the value (``"value"``) at that path.
    """

    path: Path
    message: str
    at: str = "key"


@dataclass(frozen=True, slots=True)
class RuleContext:
    registry: Registry
    options: Mapping[str, Any] = field(default_factory=dict)


CheckFn = Callable[[Any, RuleContext], Iterable[Violation]]


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    severity: Severity
    scope: str
    options_schema: Mapping[str, Any]
    doc: str
    check: CheckFn | None
    module: str
    origin: str = "built-in"

    @property
    def summary(self) -> str:
        """The first paragraph of the "What it does" section."""
        text = self.section("What it does") or self.doc
        first = text.strip().split("\n\n", 1)[0]
        return " ".join(first.split())

    def section(self, title: str) -> str | None:
        marker = f"## {title}"
        start = self.doc.find(marker)
        if start < 0:
            return None
        start += len(marker)
        end = self.doc.find("\n## ", start)
        return self.doc[start : end if end >= 0 else None].strip()

    def default_options(self) -> dict[str, Any]:
        props = self.options_schema
        return {k: v["default"] for k, v in props.items() if "default" in v}


def rule_from_module(module: ModuleType, origin: str = "built-in") -> Rule:
    name = module.__name__
    try:
        code = module.CODE
        rule_name = module.NAME
        severity = Severity.parse(getattr(module, "SEVERITY", "error"))
        scope = getattr(module, "SCOPE", "pod")
    except (AttributeError, ValueError) as exc:
        raise RuleLoadError(f"rule module {name}: {exc}") from None
    if not isinstance(code, str) or not code or not code.isalnum() or not code.isupper():
        raise RuleLoadError(f"rule module {name}: CODE must be like 'ABC123', got {code!r}")
    if scope not in SCOPES:
        raise RuleLoadError(f"rule module {name}: SCOPE must be one of {SCOPES}, got {scope!r}")
    check = getattr(module, "check", None)
    if scope != "input" and not callable(check):
        raise RuleLoadError(f"rule module {name}: no check(target, ctx) function")
    options = getattr(module, "OPTIONS", {})
    if not isinstance(options, Mapping):
        raise RuleLoadError(f"rule module {name}: OPTIONS must be a mapping of JSON Schemas")
    doc = inspect.cleandoc(module.__doc__ or "")
    return Rule(code, rule_name, severity, scope, options, doc, check, name, origin)


@dataclass(frozen=True, slots=True)
class RuleSource:
    """Where a rule module comes from, before it is imported."""

    code: str
    module: str
    origin: str


#: The entry-point group rules (built-in and plugins) are registered in.
GROUP = "gpulint.rules"


def _entry_point_sources() -> list[RuleSource]:
    found = _scan_entry_points(GROUP)
    if found is None:
        found = _metadata_entry_points(GROUP)
    out = []
    for name, value, dist in found:
        origin = "built-in" if _normalize(dist) == "gpulint" else f"plugin {dist}"
        out.append(RuleSource(name, value.partition(":")[0].strip(), origin))
    return out


def _metadata_entry_points(group: str) -> list[tuple[str, str, str]]:
    """(name, value, distribution) of every entry point in ``group``, the standard way."""
    from importlib.metadata import entry_points

    names: dict[int, str] = {}  # Distribution.name parses METADATA on every access
    out = []
    for ep in entry_points(group=group):
        dist = ep.dist
        if dist is None:
            out.append((ep.name, ep.value, "?"))
            continue
        if id(dist) not in names:
            names[id(dist)] = dist.name
        out.append((ep.name, ep.value, names[id(dist)]))
    return out


def _normalize(name: str) -> str:
    """A distribution name as importlib.metadata compares them (PEP 503, underscores)."""
    import re

    return re.sub(r"[-_.]+", "_", name).lower()


def _scan_entry_points(group: str) -> list[tuple[str, str, str]] | None:
    """What ``importlib.metadata.entry_points(group=group)`` returns, without importing it.

    Importing importlib.metadata (and the email package it parses metadata with) costs more
    than the rest of rule discovery together, a fifth of a one-file run. This reads the same
    files the same way -- every ``*.dist-info``/``*.egg-info`` folder on ``sys.path``, first
    distribution of a name wins, the group's ``name = value`` lines of ``entry_points.txt``
    -- and returns None for what it does not handle (zipped or egg entries on ``sys.path``),
    which then goes the standard way.
    """
    import os
    import sys

    seen: set[str] = set()
    out: list[tuple[str, str, str]] = []
    header = f"[{group}]"
    for entry in sys.path:
        base = entry or "."
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


def _package_sources() -> list[RuleSource]:
    """Fallback when gpulint runs from a source tree without being installed."""
    import pkgutil

    package = importlib.import_module("gpulint.rules")
    return [
        RuleSource(info.name.split("_", 1)[0].upper(), f"gpulint.rules.{info.name}", "built-in")
        for info in pkgutil.iter_modules(package.__path__)
        if not info.name.startswith("_")
    ]


def discover() -> list[RuleSource]:
    sources = _entry_point_sources()
    if not any(s.origin == "built-in" for s in sources):
        sources = _package_sources() + sources
    return sorted(sources, key=lambda s: (s.origin != "built-in", s.code, s.module))


def load_rules(sources: Iterable[RuleSource] | None = None) -> list[Rule]:
    """Import every rule; a broken or duplicate one is a RuleLoadError naming its module."""
    rules: dict[str, Rule] = {}
    for source in discover() if sources is None else sources:
        try:
            module = importlib.import_module(source.module)
        except Exception as exc:  # any import-time failure of third-party code
            raise RuleLoadError(
                f"rule module {source.module} ({source.origin}) failed to import: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        rule = rule_from_module(module, source.origin)
        if rule.code != source.code:
            raise RuleLoadError(
                f"rule module {source.module} ({source.origin}) is registered as "
                f"{source.code} but declares CODE = {rule.code!r}"
            )
        if rule.code in rules:
            other = rules[rule.code]
            raise RuleLoadError(
                f"rule module {source.module} ({source.origin}) declares code {rule.code}, "
                f"already declared by {other.module} ({other.origin})"
            )
        rules[rule.code] = rule
    return sorted(rules.values(), key=lambda r: r.code)


def run_check(rule: Rule, target: Any, ctx: RuleContext) -> Iterator[Violation]:
    assert rule.check is not None
    yield from rule.check(target, ctx)
