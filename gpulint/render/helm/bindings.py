"""Template variables that name one fixed ``.Values`` path.

A template often binds a part of its values to a variable once and reads through it:
``{{- $module := index .Values "modules" "text2vec-transformers" -}}`` then ``{{ if index
$module "enabled" }}`` and ``index $module "tolerations" | default .Values.tolerations``.
A variable assigned exactly once in the template, to a ``.Values`` path written with
literal keys only (``.Values.a.b``, ``$.Values.a.b``, ``index .Values "a" "b"``, or
``index $other "c"`` of another such variable), names that path; any other variable (a
``range`` variable, one assigned twice, one built from a variable key) names none.

A variable merged from two maps (``$nodeset = mergeOverwrite (dict) (deepCopy
($.Values.nodesetDefaults | default dict)) (deepCopy $nodeset)``) names both, in the order
sprig merges them (:func:`merges`).
"""

from __future__ import annotations

import re

_ASSIGN = re.compile(r"\{\{-?\s*\$([A-Za-z0-9_]+)\s*(:?=)\s*(.*?)\s*-?\}\}", re.DOTALL)
_ANY_ASSIGN = re.compile(r"\$([A-Za-z0-9_]+)\s*:?=(?!=)")
_DOTTED = re.compile(r"^\$?\.Values((?:\.[A-Za-z0-9_-]+)*)$")
_INDEX = re.compile(r'^index\s+(\$?\.Values|\$[A-Za-z0-9_]+)((?:\s+"[^"\\]*")+)$')
_KEY = re.compile(r'"([^"\\]*)"')


def value_bindings(text: str) -> dict[str, tuple[str, ...]]:
    """The variables of a template's text that each name one ``.Values`` path, with it."""
    counts: dict[str, int] = {}
    for m in _ANY_ASSIGN.finditer(text):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    out: dict[str, tuple[str, ...]] = {}
    for m in _ASSIGN.finditer(text):
        var, op, expr = m.group(1), m.group(2), m.group(3).strip()
        if op != ":=" or counts.get(var) != 1:
            continue
        path = _path(expr, out)
        if path is not None:
            out[var] = path
    return out


def _path(expr: str, known: dict[str, tuple[str, ...]]) -> tuple[str, ...] | None:
    dotted = _DOTTED.match(expr)
    if dotted:
        return tuple(p for p in dotted.group(1).split(".") if p)
    index = _INDEX.match(expr)
    if index is None:
        return None
    base, keys = index.group(1), tuple(_KEY.findall(index.group(2)))
    if base.endswith(".Values"):
        return keys
    head = known.get(base[1:])
    return None if head is None else (*head, *keys)


#: ``$v = mergeOverwrite (dict) (deepCopy (.Values.defaults | default dict)) $v`` and the
#: like: a variable made (or remade) by merging maps.
_MERGE = re.compile(
    r"\{\{-?\s*\$([A-Za-z0-9_]+)\s*:?=\s*(mergeOverwrite|mustMergeOverwrite|merge|mustMerge)"
    r"\s+(.*?)\s*-?\}\}",
    re.DOTALL,
)
_EMPTY_DICT = re.compile(r"^\(?\s*dict\s*\)?$")
_WRAPS = re.compile(r"^(?:deepCopy|mustDeepCopy)\s+(.*)$", re.DOTALL)
_OR_EMPTY = re.compile(r"^(.*?)\s*\|\s*default\s+\(?\s*dict\s*\)?$", re.DOTALL)
SELF = "$"


def _merge_args(text: str) -> list[str] | None:
    """The top-level arguments of a function call's text: each a bare word or a
    parenthesized group (its parentheses removed); None when they do not balance."""
    args: list[str] = []
    depth, start = 0, None
    for i, ch in enumerate(text + " "):
        if ch == "(":
            if depth == 0:
                start = i + 1
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0 and start is not None:
                args.append(text[start:i].strip())
                start = None
        elif depth == 0 and not ch.isspace() and start is None:
            start = i
        elif depth == 0 and ch.isspace() and start is not None:
            args.append(text[start:i].strip())
            start = None
    return args if depth == 0 else None


def merges(text: str) -> dict[str, list[tuple[str, ...] | str]]:
    """The variables of a template's text made once by merging two maps, with the maps, the
    one that wins first: ``mergeOverwrite``'s last argument, ``merge``'s first (sprig's
    rule: an empty value gives way to the next map's). Each is a ``.Values`` path or ``$``
    (SELF) for the variable itself, a ``range`` entry merged over defaults, which must win;
    ``dict``, ``deepCopy`` and ``| default dict`` are read through. A variable merged twice,
    or from anything else, is left out."""
    found: dict[str, list[list[tuple[str, ...] | str] | None]] = {}
    for m in _MERGE.finditer(text):
        found.setdefault(m.group(1), []).append(_merge_sources(m.group(1), *m.group(2, 3)))
    return {var: got[0] for var, got in found.items() if len(got) == 1 and got[0] is not None}


def _merge_sources(var: str, how: str, text: str) -> list[tuple[str, ...] | str] | None:
    args = _merge_args(text)
    if args is None:
        return None
    sources: list[tuple[str, ...] | str] = []
    for arg in args:
        inner = arg
        while True:
            wrapped = _WRAPS.match(inner) or _OR_EMPTY.match(inner)
            if wrapped is None:
                break
            inner = wrapped.group(1).strip().strip("()").strip()
        if _EMPTY_DICT.match(inner):
            continue
        if inner == f"${var}":
            sources.append(SELF)
            continue
        dotted = re.match(r"^\$?\.Values((?:\.[A-Za-z0-9_-]+)+)$", inner)
        if dotted is None:
            return None
        sources.append(tuple(dotted.group(1).strip(".").split(".")))
    ordered = sources[::-1] if "Overwrite" in how else sources
    # two maps, the entry's own first when it is one of them (entry over its defaults)
    if len(ordered) != 2 or ordered[1] == SELF:
        return None
    return ordered
