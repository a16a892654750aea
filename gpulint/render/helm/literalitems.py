"""A list item the template writes as text, found among items template logic writes.

Frigate's chart writes its container's ``env`` as two literal items inside ``{{- if
.Values.gpu.nvidia.enabled }}`` and then one item per key of ``.Values.env`` (``{{- range
$key, $value := .Values.env }}``): which template item a rendered ``env[1]`` is cannot be
told by its index (:func:`gpulint.render.helm.templatetext.find` marks it guessed). It can
by its text: the rendered item ``{name: NVIDIA_VISIBLE_DEVICES, value: all}`` is the one
item of the list's block that the template writes as plain text and that reads the same.

That is trusted only when nothing else could have written the same item (never
confidently wrong): the rendered list holds it once, the template's block holds one
literal item equal to it, every other action in the block is an ``if``/``end``, a
``range``/``with``/``toYaml`` of a ``.Values`` path (or a variable of such a ``range``), or
the whole value of a key (``value: {{ .Values.whisper.asrModel | quote }}``, a release or
chart name): one scalar, never an item,
no ``--set`` flag writes under such a path, and no values file holds any scalar of the
item there (a key or a value). Otherwise the caller keeps its fallback, saying so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gpulint.model import Span
from gpulint.render.helm.templatetext import Match, Template
from gpulint.render.mapping import lookup

#: One action of a template line.
_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
#: What an action may be besides writing items from values: a test, an end, a comment.
_HARMLESS = re.compile(r"^(?:if|else|else if|end|/\*.*\*/)\b", re.DOTALL)
#: A ``range``/``with`` over values, or ``toYaml`` of them: the items it may write.
_WRITES = re.compile(
    r"^(?:range\s+(?:\$\w+\s*,\s*)?\$\w+\s*:=\s*|with\s+|toYaml\s+)\$?\.Values((?:\.[\w-]+)+)"
    r"(?:\s*\|\s*nindent\s+\d+)?$"
)
#: A scalar read into a key's value of an item written as text (``value: {{
#: .Values.whisper.asrModel | quote }}``): it writes one value, never an item.
_FILTERS = r"(?:\s*\|\s*(?:quote|squote|toString|int|default\s+(?:\"[^\"]*\"|[\w.]+)))*"
_SCALAR = re.compile(r"^\$?\.Values((?:\.[\w-]+)+)" + _FILTERS + "$")
_BUILTIN = re.compile(r"^\$?\.(?:Release|Chart)\.\w+" + _FILTERS + "$")
#: The text before such an action: a key (of an item, or the item's first key).
_KEY_BEFORE = re.compile(r"^\s*(?:-\s+)?[\w.-]+:\s*\"?$")
#: A variable or the dot of the ``range`` it is in, as an item's text (``{{ $key }}``).
_VARIABLE = re.compile(r"^(?:\$\w+|\.)(?:\s*\|\s*quote)?$")
#: Scalars of the values looked through, at most (a bound on the work, not the values).
MAX_SCALARS = 20_000


def literal_item(
    t: Template,
    match: Match,
    path: tuple[Any, ...],
    data: Any,
    sets: tuple[str, ...],
    values: Callable[[tuple[str, ...]], Iterable[Any]],
) -> Span | None:
    """The template span of the value at ``path`` (of the rendered document ``data``) when
    the list item it is in is written as text (the module's conditions); None otherwise.
    ``values(path)`` gives what each values file holds at a ``.Values`` path."""
    if match.guessed <= 0:
        return None
    k = _item_index(path, match.guessed)
    if k is None:
        return None
    listed, item = _at(data, path[:k]), _at(data, path[: k + 1])
    if not isinstance(listed, list) or sum(1 for x in listed if x == item) != 1:
        return None
    key_line = match.lines[match.guessed - 1]
    at = next((i for i, line in enumerate(t.lines) if line is key_line), None)
    if at is None:
        return None
    start, end = t.block(at)
    first = key_line.number
    last = t.lines[end - 1].number if end > start + 1 else first
    writes = _writers(t.raw[first : last + 1])
    if writes is None or any(_set_under(s, p) for s in sets for p in writes):
        return None
    texts = set(_scalars(item))
    if any(texts & set(_scalars(v)) for p in writes for v in values(p)):
        return None
    hits = [i for i in t.children(start, end, None).items if _literal(t, i) == item]
    if len(hits) != 1:
        return None
    return _span(t, hits[0], path[k + 1 :])


def _item_index(path: tuple[Any, ...], keys: int) -> int | None:
    """Where in ``path`` the guessed item's index is: the first index after ``keys`` keys."""
    seen = 0
    for i, part in enumerate(path):
        if isinstance(part, str):
            seen += 1
        elif seen == keys:
            return i
    return None


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    present, value = lookup(data, path)
    return value if present else None


def _writers(raw: Sequence[str]) -> list[tuple[str, ...]] | None:
    """The ``.Values`` paths the block's actions may write items from; None when an action
    may write something else (a helper, ``tpl``, a variable of no known ``range``)."""
    paths: list[tuple[str, ...]] = []
    for text in raw:
        actions = list(_ACTION.finditer(text))
        for m in actions:
            action = m.group(1)
            written = _WRITES.match(action)
            if written:
                paths.append(tuple(written.group(1).strip(".").split(".")))
                continue
            if _HARMLESS.match(action) or (paths and _VARIABLE.match(action)):
                continue
            alone = len(actions) == 1 and text[m.end() :].strip() in ("", '"')
            if not (alone and _KEY_BEFORE.match(text[: m.start()])):
                return None
            scalar = _SCALAR.match(action)
            if scalar:  # its values are looked through too: none may hold the item's text
                paths.append(tuple(scalar.group(1).strip(".").split(".")))
            elif not _BUILTIN.match(action):
                return None
    return paths


def _set_under(assignment: str, path: tuple[str, ...]) -> bool:
    """Does a ``--set`` assignment write at or under ``path`` (or above it)?"""
    key = re.split(r"(?<!\\)=", assignment, maxsplit=1)[0]
    parts = tuple(p for p in re.split(r"(?<!\\)\.", re.sub(r"\[\d+\]", "", key)) if p)
    n = min(len(parts), len(path))
    return parts[:n] == path[:n]


def _scalars(value: Any) -> list[str]:
    """The scalars (keys and values, as text) of a values node, breadth first, bounded."""
    out: list[str] = []
    todo = [value]
    while todo and len(out) < MAX_SCALARS:
        node = todo.pop()
        if isinstance(node, dict):
            out.extend(str(k) for k in node)
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
        elif node is not None:
            out.append(str(node))
    return out


def _literal(t: Template, at: int) -> Any:
    """The item at line index ``at`` as data, when all its lines are plain text."""
    start, end = t.block(at)
    first, last = t.lines[start].number, t.lines[end - 1].number
    raw = t.raw[first - 1 : last]
    if any("{{" in line for line in raw):
        return None
    from gpulint.loader.stream import load_text

    indent = t.lines[start].indent
    text = "\n".join(line[indent:] if len(line) > indent else line.strip() for line in raw)
    try:
        docs = load_text(text).documents
    except Exception:  # not YAML on its own: not this item
        return None
    data = docs[0].data if len(docs) == 1 else None
    return data[0] if isinstance(data, list) and len(data) == 1 else None


def _span(t: Template, at: int, rest: tuple[Any, ...]) -> Span:
    """The span of ``rest`` (a key of the item, ``value``) in the item at ``at``, else of
    the item's first line after its dash."""
    start, end = t.block(at)
    if len(rest) == 1 and isinstance(rest[0], str):
        for line in t.lines[start:end]:
            if line.key == rest[0]:
                raw = t.raw[line.number - 1]
                value = line.value.strip()
                col = raw.rfind(value) if value else line.key_column
                return Span(line.number, col + 1, line.number, col + 1 + len(value or rest[0]))
    line = t.lines[start]
    raw = t.raw[line.number - 1]
    return Span(line.number, line.indent + 3, line.number, len(raw) + 1)
