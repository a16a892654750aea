"""A finding about a field a rendered object lacks, put on the values key its template reads
for that field.

GPU020's pod without ``tolerations`` is rendered from a template such as ``{{- with
.Values.worker.tolerations }} tolerations: ... {{- end }}``: the user adds the toleration to
``worker.tolerations`` in values.yaml, not to the template's ``spec:``. The template's block
for the object is read for ``.Values.<path>.<field>`` (a static scan of its text, with the
``define`` of each helper it ``include``s with its own context, ``include "x.scheduling"
.``, from the chart's ``templates/*.tpl``); when it reads exactly one such path and the
values file helm applies last that has it sets it empty (or, for a list that lacks an
item, to the very list rendered), the finding goes to that values key, naming the template
(or helper) line that reads it. Otherwise it stays where the template reading put it.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Callable
from typing import Any

from gpulint.loader.document import Document
from gpulint.model import Related, Span
from gpulint.render.mapping import Place, label_of, lookup, read_text
from gpulint.render.textmap import Template, find

#: A rule's finding about a field an object lacks, or a list that lacks an item: by the key
#: the finding's path ends at (``""``: the object itself), the field. GPU020 and GPU023: the
#: pod spec has no ``tolerations`` (or they lack the one needed); GPU042: a container has
#: no ``volumeMounts``.
MISSING_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "GPU020": (("", "tolerations"), ("tolerations", "tolerations")),
    "GPU023": (("", "tolerations"), ("tolerations", "tolerations")),
    "GPU042": (("name", "volumeMounts"),),
}
#: What :func:`missing_field` gives for a field that is not there.
ABSENT = object()


_READS = r"\.Values((?:\.[A-Za-z0-9_-]+)*)\.{field}\b(?!\.)"


def field_reads(text: str, field: str) -> set[tuple[str, ...]] | None:
    """The values paths ending in ``field`` that a template's text reads, or None when it
    also reads a ``field`` of something else (``$model.tolerations``, ``.tolerations``
    inside a ``with``): then the field may come from there."""
    pattern = re.compile(_READS.format(field=re.escape(field)))
    found = list(pattern.finditer(text))
    anywhere = re.findall(rf"\.{re.escape(field)}\b(?![.-])", text)
    if len(anywhere) != len(found):
        return None
    return {(*m.group(1).strip(".").split("."), field) if m.group(1) else (field,) for m in found}


def missing_field(
    rule: str, data: Any, path: tuple[Any, ...]
) -> tuple[tuple[Any, ...], str, Any] | None:
    """The object path, the field and its rendered value (``ABSENT``) a ``rule``'s finding
    at ``path`` of the rendered document ``data`` is about, if it is about such a field."""
    for last, field in MISSING_FIELDS.get(rule, ()):
        if last and not (path and path[-1] == last):
            continue
        obj = path[:-1] if last else path
        present, value = lookup(data, obj)
        if not (present and isinstance(value, dict)):
            continue
        if field not in value:
            return obj, field, ABSENT
        if last == field and isinstance(value[field], list):
            return obj, field, value[field]
    return None


#: Per template (each read once: :class:`Template`), what each object's block reads.
_READ: weakref.WeakKeyDictionary[
    Template, dict[tuple[Any, ...], tuple[tuple[str, ...], int, str | None] | None]
]
_READ = weakref.WeakKeyDictionary()
#: ``include "name" .`` (or ``$``): a helper given the chart's own context, whose
#: ``.Values`` are the template's.
_INCLUDE = re.compile(r"""include\s+"([^"]+)"\s+[.$](?=\s*[|)}])""")
_DEFINE = re.compile(r"""\{\{-?\s*define\s+"([^"]+)"\s*-?\}\}""")
_BLOCK = re.compile(r"\{\{-?\s*(if|with|range|define|block|end)\b")


def helpers(template: str) -> dict[str, tuple[str, int, str]]:
    """The ``define``s of the chart a template is in (its ``templates/*.tpl``, one level):
    by name, the file, the line the body starts at and the body (up to its ``end``)."""
    folder = os.path.dirname(template)
    while os.path.basename(folder) not in ("templates", "") and folder != os.path.dirname(folder):
        folder = os.path.dirname(folder)
    out: dict[str, tuple[str, int, str]] = {}
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".tpl"))
    except OSError:
        return out
    for name in names:
        path = os.path.join(folder, name)
        text = read_text(path) or ""
        for m in _DEFINE.finditer(text):
            body = text[m.end() : _end_of(text, m.end())]
            out.setdefault(m.group(1), (path, text.count("\n", 0, m.end()) + 1, body))
    return out


def _end_of(text: str, at: int) -> int:
    """Where the block opened before ``at`` ends: its ``{{ end }}`` (or the text's end)."""
    depth = 1
    for m in _BLOCK.finditer(text, at):
        depth += -1 if m.group(1) == "end" else 1
        if depth == 0:
            return m.start()
    return len(text)


def _object_lines(t: Template, obj: tuple[Any, ...]) -> tuple[int, int] | None:
    """The first and last line (1-based) of the template's block for the object at ``obj``,
    when the template writes its whole path."""
    match = find(t, obj)
    if not (match.lines and match.depth == len(obj)):
        return None
    end = match.block[1]
    return match.lines[-1].number, t.lines[end].number - 1 if end < len(t.lines) else len(t.raw)


def _read(
    t: Template, obj: tuple[Any, ...], field: str, template: str = ""
) -> tuple[tuple[str, ...], int, str | None] | None:
    """The one values path ending in ``field`` the template's block for ``obj`` reads (or
    a helper it includes with its own context reads), the line that reads it and the
    helper's file (None: the template's own line); found once per template, object and
    field: a template that renders many objects is not read again for each finding."""
    cache = _READ.setdefault(t, {})
    key = (*obj, field)
    if key in cache:
        return cache[key]
    first, last = _object_lines(t, obj) or (1, len(t.raw))
    block = t.raw[first - 1 : last]
    text = "\n".join(block)
    included = [m.group(1) for m in _INCLUDE.finditer(text)]
    defined = helpers(template) if template and included else {}
    bodies = [defined[n] for n in included if n in defined]
    if bodies:  # the helpers' reads are the block's; their names are no read of a field
        text = _INCLUDE.sub("include", text) + "".join("\n" + b for _, _, b in bodies)
    reads = field_reads(text, field)
    got: tuple[tuple[str, ...], int, str | None] | None = None
    if reads is not None and len(reads) == 1:
        (ref,) = reads
        dotted = f".Values.{'.'.join(ref)}"
        line = next((first + i for i, raw in enumerate(block) if dotted in raw), None)
        if line is not None or not bodies:
            got = (ref, line or first, None)
        for path, start, body in bodies if line is None else ():
            at = next((i for i, raw in enumerate(body.split("\n")) if dotted in raw), None)
            if at is not None:
                got = (ref, start + at, path)
                break
    cache[key] = got
    return got


_RANGE = re.compile(
    r"range\s+(?:\$[A-Za-z0-9_]+\s*,\s*)?\$([A-Za-z0-9_]+)\s*:=\s*\$?\.Values((?:\.[A-Za-z0-9_-]+)+)\s*-?\}\}"
)


def _ranged(
    t: Template, obj: tuple[Any, ...], field: str, entry: Callable[[tuple[str, ...]], Any]
) -> tuple[tuple[str, ...], int, str | None] | None:
    """``(.Values path, line, None)`` of the field the object's block reads from a ``range``
    variable's entry, when every read of ``field`` in the block is ``$var.field`` and
    ``$var`` is bound by the template's one ``range`` over ``.Values.X``."""
    lines = _object_lines(t, obj)
    if lines is None:
        return None
    first, last = lines
    block = "\n".join(t.raw[first - 1 : last])
    reads = re.findall(rf"(\$[A-Za-z0-9_]+)?\.{re.escape(field)}\b(?![.-])", block)
    if len(set(reads)) != 1 or not reads[0]:
        return None  # none, several, or a plain `.tolerations` too
    var = reads[0][1:]
    ranges = [m for m in _RANGE.finditer("\n".join(t.whole)) if m.group(1) == var]
    if len(ranges) != 1:
        return None
    under = tuple(ranges[0].group(2).strip(".").split("."))
    key = entry(under)
    if key is None:
        return None
    at = next(i for i, raw in enumerate(t.raw[first - 1 : last]) if f"${var}.{field}" in raw)
    return (*under, key, field), first + at, None


def missing_place(
    t: Template,
    template: str,
    chart: str,
    files: list[tuple[str, tuple[str, ...], Document | None]],
    obj: tuple[Any, ...],
    field: str,
    written: Any,
    entry: Callable[[tuple[str, ...]], Any] | None = None,
) -> Place | None:
    """The values key the template's block for ``obj`` reads ``field`` from, when it reads
    exactly one and the values file helm applies last that has it sets it empty (the field
    is ``ABSENT``) or to what was rendered (``written``); ``files`` as helm applies them,
    last first, each with the prefix of the template's values. A read of a ``range``
    variable's field (``$values.tolerations`` in ``range $name, $values :=
    .Values.workerGroups``) is that of the entry ``entry`` says the object came from
    (:meth:`.valuemarks.Tracer.entry`: the one the values rendered in it name)."""
    read = _read(t, obj, field, template)
    if read is None and entry is not None:
        read = _ranged(t, obj, field, entry)
    if read is None:
        return None
    ref, line, helper = read
    reader = helper or template
    for file, prefix, doc in files:
        if doc is None:
            continue
        present, value = lookup(doc.data, (*prefix, *ref))
        if not present:
            continue
        if (value not in (None, [], {}, "")) if written is ABSENT else (value != written):
            return None  # not what was rendered: something else decides
        dotted = ".".join(map(str, ref))
        used = os.path.relpath(reader, chart)
        via = f", included by {os.path.relpath(template, chart)}" if helper else ""
        note = (
            f" (used by {used}:{line}{via} as .Values.{dotted}, which is empty here: the "
            f"template writes {field} only from it)"
            if written is ABSENT
            else f" (used by {used}:{line}{via} as .Values.{dotted}, which writes these {field})"
        )
        related = Related(
            "template",
            label_of(reader),
            Span(line, 1, line, 1),
            f"the template that reads .Values.{dotted}",
        )
        return Place(label_of(file), doc.key_span((*prefix, *ref)), note, (related,))
    return _parent_place(files, ref, line, reader, chart, field) if written is ABSENT else None


def _parent_place(
    files: list[tuple[str, tuple[str, ...], Document | None]],
    ref: tuple[Any, ...],
    line: int,
    reader: str,
    chart: str,
    field: str,
) -> Place | None:
    """A field no values file sets, at the mapping it goes under (``decode:`` for
    ``.Values.decode.tolerations``) in the values file helm applies last that has it: the
    key the user adds it to."""
    if len(ref) < 2:
        return None
    for file, prefix, doc in files:
        present, value = lookup(doc.data, (*prefix, *ref[:-1])) if doc else (False, None)
        if doc is None or not (present and isinstance(value, dict)):
            continue
        dotted, parent = ".".join(map(str, ref)), ".".join(map(str, ref[:-1]))
        note = (
            f" (used by {os.path.relpath(reader, chart)}:{line} as .Values.{dotted}, which no "
            f"values file sets: the template writes {field} only from it; add it under "
            f"{parent} here)"
        )
        related = Related(
            "template",
            label_of(reader),
            Span(line, 1, line, 1),
            f"the template that reads .Values.{dotted}",
        )
        return Place(label_of(file), doc.key_span((*prefix, *ref[:-1])), note, (related,))
    return None
