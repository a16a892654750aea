"""Which ``--set`` flag (the configuration's ``render: set:`` or the command line's) set a
value, as helm reads them: applied after every values file, in order, the last winning; a
list set through an index replaced whole. The assignments are parsed once per run
(:func:`_set_index`) and each finding looks its path up, level by level."""

from __future__ import annotations

import functools
import re


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at every ``sep`` that is not escaped (``\\``) nor inside ``{...}``
    (helm's list syntax ``a={x,y}``); escapes are kept. One pass of a regular expression
    over runs of ordinary characters: a megabyte of ``render: set:`` is read in
    milliseconds."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for m in _split_pattern(sep).finditer(text):
        piece = m.group()
        if piece == "{":
            depth += 1
        elif piece == "}" and depth:
            depth -= 1
        if piece == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(piece)
    parts.append("".join(current))
    return parts


@functools.lru_cache(maxsize=4)
def _split_pattern(sep: str) -> re.Pattern[str]:
    """An escape (a backslash and the character after it), a brace, ``sep``, or a run of
    anything else (a backslash that ends the text is an ordinary character)."""
    s = re.escape(sep)
    return re.compile(rf"\\.|[{{}}]|{s}|[^\\{{}}{s}]+|\\", re.DOTALL)


def _indexes(part: str) -> tuple[str, list[int]]:
    """A key part's name and the ``[N]`` indexes that end it (``a[0][1]``: ``a``, [0, 1]),
    as the pattern ``^(.*?)((?:\\[\\d+\\])+)$`` reads them (a name holds no line break; one
    final line break is dropped after indexes), found from the end in one pass: the pattern
    took time quadratic in a part of many indexes."""
    body = part[:-1] if part.endswith("\n") else part
    end, found = len(body), []
    while end and body[end - 1] == "]":
        at = body.rfind("[", 0, end - 1)
        digits = body[at + 1 : end - 1]
        if at < 0 or not digits.isdecimal():
            break
        found.append(int(digits))
        end = at
    if not found or "\n" in body[:end]:
        return part, []
    return body[:end], found[::-1]


def _key_path(key: str) -> tuple[object, ...]:
    """helm's key syntax: ``a.b``, ``a\\.b`` (one key with a dot), ``a[0].b``."""
    out: list[object] = []
    for part in _split(key, "."):
        name, indexes = _indexes(part)
        if name:
            out.append(name.replace("\\", ""))
        out.extend(indexes)
    return tuple(out)


def set_keys(assignment: str) -> list[tuple[tuple[object, ...], str]]:
    """The keys one ``--set`` value assigns, each with its ``KEY=VALUE`` text: ``a=1,b.c=2``
    assigns ``a`` and ``b.c``."""
    out = []
    for part in _split(assignment, ","):
        key, eq, _ = part.partition("=")
        if eq and key:
            out.append((_key_path(key), part))
    return out


def set_by(
    assignments: tuple[str, ...], path: tuple[object, ...], configured: int = 0
) -> str | None:
    """Where the last ``--set`` that sets ``path`` or a key above it is (helm applies them in
    order, so the last wins): ``--set KEY=VALUE on the command line``, or in the
    configuration when it is one of the first ``configured``; None when none sets it. A
    list is never merged: ``--set a[0].b=x`` replaces the whole list ``a`` of the values
    files, so it owns all of it.

    The assignments are parsed once per run (:func:`_set_index`, kept by their text): each
    finding then costs a lookup per level of ``path``, not a parse of every ``--set``."""
    index = _set_index(assignments, configured)
    best: tuple[int, int, str] | None = None
    for length in range(1, len(path) + 1):
        try:
            hit = index.get(path[:length])
        except TypeError:  # an unhashable part: no key is equal to it
            break
        if hit is not None and (best is None or hit[:2] > best[:2]):
            best = hit
    return None if best is None else best[2]


@functools.lru_cache(maxsize=8)
def _set_index(
    assignments: tuple[str, ...], configured: int
) -> dict[tuple[object, ...], tuple[int, int, str]]:
    """The keys the ``--set`` values own (a list's whole key for an indexed key), each with
    the place of its last assignment (which helm applies last: it wins) and where it was
    written, as :func:`set_by` says it."""
    index: dict[tuple[object, ...], tuple[int, int, str]] = {}
    for at, assignment in enumerate(assignments):
        for order, (key, text) in enumerate(set_keys(assignment)):
            first = next((i for i, part in enumerate(key) if isinstance(part, int)), len(key))
            owned = key[:first] if first else key
            if not owned:
                continue
            if at < configured:
                where = f"{text} in the configuration's `render: set:`, passed as --set"
            else:
                where = f"--set {text} on the command line"
            index[owned] = (at, order, where)  # later ones replace earlier ones
    return index
