"""Template variables that name one fixed ``.Values`` path.

A template often binds a part of its values to a variable once and reads through it:
``{{- $module := index .Values "modules" "text2vec-transformers" -}}`` then ``{{ if index
$module "enabled" }}`` and ``index $module "tolerations" | default .Values.tolerations``.
A variable assigned exactly once in the template, to a ``.Values`` path written with
literal keys only (``.Values.a.b``, ``$.Values.a.b``, ``index .Values "a" "b"``, or
``index $other "c"`` of another such variable), names that path; any other variable (a
``range`` variable, one assigned twice, one built from a variable key) names none.
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
