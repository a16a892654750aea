"""A finding about a field a rendered object lacks, put on the values key its template reads
for that field.

GPU020's pod without ``tolerations`` is rendered from a template such as ``{{- with
.Values.worker.tolerations }} tolerations: ... {{- end }}``: the user adds the toleration to
``worker.tolerations`` in values.yaml, not to the template's ``spec:``. The template's block
for the object is read for ``.Values.<path>.<field>`` (a static scan of its text); when it
reads exactly one such path and the values file helm applies last that has it sets it
empty (or, for a list that lacks an item, to the very list rendered), the finding goes to
that values key, naming the template line that reads it. Otherwise it stays where the
template reading put it.
"""

from __future__ import annotations

import os
import re
import weakref
from typing import Any

from gpulint.loader.document import Document
from gpulint.model import Related, Span
from gpulint.render.mapping import Place, label_of, lookup
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
    Template, dict[tuple[Any, ...], tuple[tuple[str, ...], int] | None]
]
_READ = weakref.WeakKeyDictionary()


def _read(t: Template, obj: tuple[Any, ...], field: str) -> tuple[tuple[str, ...], int] | None:
    """The one values path ending in ``field`` the template's block for ``obj`` reads,
    and the line that reads it (found once per template, object and field: a template that
    renders many objects is not read again for each finding)."""
    cache = _READ.setdefault(t, {})
    key = (*obj, field)
    if key in cache:
        return cache[key]
    match = find(t, obj)
    if match.lines and match.depth == len(obj):
        first = match.lines[-1].number
        end = match.block[1]
        last = t.lines[end].number - 1 if end < len(t.lines) else len(t.raw)
    else:
        first, last = 1, len(t.raw)
    block = t.raw[first - 1 : last]
    reads = field_reads("\n".join(block), field)
    got = None
    if reads is not None and len(reads) == 1:
        (ref,) = reads
        dotted = ".".join(ref)
        line = next((first + i for i, raw in enumerate(block) if f".Values.{dotted}" in raw), first)
        got = (ref, line)
    cache[key] = got
    return got


def missing_place(
    t: Template,
    template: str,
    chart: str,
    files: list[tuple[str, tuple[str, ...], Document | None]],
    obj: tuple[Any, ...],
    field: str,
    written: Any,
) -> Place | None:
    """The values key the template's block for ``obj`` reads ``field`` from, when it reads
    exactly one and the values file helm applies last that has it sets it empty (the field
    is ``ABSENT``) or to what was rendered (``written``); ``files`` as helm applies them,
    last first, each with the prefix of the template's values."""
    read = _read(t, obj, field)
    if read is None:
        return None
    ref, line = read
    for file, prefix, doc in files:
        if doc is None:
            continue
        present, value = lookup(doc.data, (*prefix, *ref))
        if not present:
            continue
        if (value not in (None, [], {}, "")) if written is ABSENT else (value != written):
            return None  # not what was rendered: something else decides
        dotted = ".".join(ref)
        used = os.path.relpath(template, chart)
        note = (
            f" (used by {used}:{line} as .Values.{dotted}, which is empty here: the template "
            f"writes {field} only from it)"
            if written is ABSENT
            else f" (used by {used}:{line} as .Values.{dotted}, which writes these {field})"
        )
        related = Related(
            "template",
            label_of(template),
            Span(line, 1, line, 1),
            f"the template that reads .Values.{dotted}",
        )
        return Place(label_of(file), doc.key_span((*prefix, *ref)), note, (related,))
    return None
