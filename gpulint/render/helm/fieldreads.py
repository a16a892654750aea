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
from typing import Any, NamedTuple

from gpulint.loader.document import Document
from gpulint.model import Related, Span
from gpulint.render.helm.bindings import SELF as _SELF
from gpulint.render.helm.templatetext import Template, find
from gpulint.render.mapping import Place, label_of, lookup, read_text

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
_READ: weakref.WeakKeyDictionary[Template, dict[tuple[Any, ...], _Reads | None]]
_READ = weakref.WeakKeyDictionary()
#: ``include "name" .`` (or ``$``): a helper given the chart's own context, whose
#: ``.Values`` are the template's (the action may end ``-}}``).
_INCLUDE = re.compile(r"""include\s+"([^"]+)"\s+[.$](?=\s*(?:[|)}]|-\}\}))""")
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


class _Reads(NamedTuple):
    """How a template's block for an object reads a field: the ``.Values`` paths, the
    ``range`` variables whose entry's field it reads (``$module.tolerations``, ``index
    $module "tolerations"``), whether it reads it any other way (``.tolerations`` inside a
    ``with``), and for each read its line and the helper file holding it (None: the
    template's own)."""

    values: dict[tuple[str, ...], tuple[int, str | None]]
    entries: dict[str, tuple[int, str | None]]
    other: tuple[int, str | None] | None
    #: The object's own block was not found (a key template logic writes): the reads are
    #: the whole template's, and may be other objects'.
    whole: bool = False


_ENTRY = (
    r"""(?:\$([A-Za-z0-9_]+)((?:\.[A-Za-z0-9_-]+)*)\.{f}\b(?![.\w-])"""
    r"""|\b(?:index|get)\s+\$([A-Za-z0-9_]+)((?:\s+"[A-Za-z0-9_-]+")*)\s+"{f}")"""
)
_VALUES = (
    r"""(?:\.Values((?:\.[A-Za-z0-9_-]+)*)\.{f}\b(?![.\w-])"""
    r"""|\b(?:index|get)\s+\$?\.Values((?:\.[A-Za-z0-9_-]+)*)\s+"{f}")"""
)
_ANY = r"""(?:\.{f}\b(?![.\w-])|"{f}")"""


def _scan(
    t: Template,
    obj: tuple[Any, ...],
    field: str,
    template: str = "",
    library: dict[str, tuple[str, int, str]] | None = None,
) -> _Reads | None:
    """How the template's block for ``obj`` (and each helper it ``include``s with its own
    context) reads ``field``; None when no block is known. Found once per template, object
    and field: a template that renders many objects is not read again for each finding.
    ``library``: the helpers of a packaged subchart and of the library charts packaged in
    it (:func:`archive_helpers`), followed through the helpers they include with the same
    context (a library's loader rendering the whole pod from ``.Values``)."""
    cache = _READ.setdefault(t, {})
    key = (*obj, field)
    if key in cache:
        return cache[key]
    bounds = _object_lines(t, obj)
    first, last = bounds or (1, len(t.raw))
    block = t.raw[first - 1 : last]
    lines: list[tuple[str, int, str | None]] = [
        (raw, first + i, None) for i, raw in enumerate(block)
    ]
    included = [m.group(1) for m in _INCLUDE.finditer("\n".join(block))]
    defined = helpers(template) if template and included else {}
    if library and included:
        defined = {**library, **defined}
        included = _closure(included, library)
    for name in dict.fromkeys(included):
        if name in defined:
            path, start, body = defined[name]
            lines += [(raw, start + i, path) for i, raw in enumerate(body.split("\n"))]
    f = re.escape(field)
    values_re, entry_re, any_re = (re.compile(x.format(f=f)) for x in (_VALUES, _ENTRY, _ANY))
    values: dict[tuple[str, ...], tuple[int, str | None]] = {}
    entries: dict[str, tuple[int, str | None]] = {}
    other: tuple[int, str | None] | None = None
    for raw, number, helper in lines:
        raw = _INCLUDE.sub("include", raw)  # a helper's name is no read of a field
        known = 0
        for m in values_re.finditer(raw):
            path = (m.group(1) or m.group(2) or "").strip(".")
            values.setdefault((*path.split("."), field) if path else (field,), (number, helper))
            known += 1
        for m in entry_re.finditer(raw):
            # the variable, and the keys between it and the field (`$nodeset.podSpec`)
            quoted = re.findall(r'"([^"]+)"', m.group(4) or "")
            keys = m.group(2) or "".join("." + k for k in quoted)
            entries.setdefault((m.group(1) or m.group(3)) + keys, (number, helper))
            known += 1
        if len(any_re.findall(raw)) > known and other is None:
            other = (number, helper)
    got = (
        _Reads(values, entries, other, bounds is None)
        if bounds is not None or values or entries
        else None
    )
    cache[key] = got
    return got


#: Helpers followed at most through a packaged chart's includes.
MAX_INCLUDED = 400


def _closure(names: list[str], library: dict[str, tuple[str, int, str]]) -> list[str]:
    """``names`` and every helper of ``library`` they include with their own context,
    transitively (each once, at most :data:`MAX_INCLUDED`)."""
    out = list(dict.fromkeys(names))
    seen = set(out)
    i = 0
    while i < len(out) and len(out) < MAX_INCLUDED:
        body = library.get(out[i])
        i += 1
        for m in _INCLUDE.finditer(body[2] if body else ""):
            if m.group(1) not in seen:
                seen.add(m.group(1))
                out.append(m.group(1))
    return out


def archive_helpers(archive: str, members: dict[str, str]) -> dict[str, tuple[str, int, str]]:
    """The ``define``s of every ``.tpl`` member of a packaged chart (its own templates and
    those of the library charts packaged in it), by name: the member (as
    ``<archive>/<member>``), the line its body starts at and the body."""
    out: dict[str, tuple[str, int, str]] = {}
    for member in sorted(members):
        if not member.endswith(".tpl"):
            continue
        text = members[member]
        for m in _DEFINE.finditer(text):
            body = text[m.end() : _end_of(text, m.end())]
            where = f"{archive}{os.sep}{member}"
            out.setdefault(m.group(1), (where, text.count("\n", 0, m.end()) + 1, body))
    return out


def _related(reader: str, line: int, what: str) -> Related:
    """The template (or helper) line that reads a value, as a related place; a member of a
    packaged chart, which no editor opens, is its archive, the member named."""
    archive, sep, member = reader.partition(".tgz" + os.sep)
    if sep:
        return Related(
            "template", label_of(archive + ".tgz"), Span(1, 1, 1, 1), f"{what} ({member}:{line})"
        )
    return Related("template", label_of(reader), Span(line, 1, line, 1), what)


_RANGE = re.compile(
    r"range\s+(?:\$[A-Za-z0-9_]+\s*,\s*)?\$([A-Za-z0-9_]+)\s*:=\s*\$?\.Values((?:\.[A-Za-z0-9_-]+)+)\s*-?\}\}"
)


def _range_of(t: Template, var: str) -> tuple[str, ...] | None:
    """The ``.Values`` path the template's one ``range`` binding ``$var`` goes over. The
    whole template's ranges are found once (kept with it and shared by its cuts), not once
    per finding."""
    found: dict[str, list[str]] | None = t.shared.get("ranges")
    if found is None:
        found = t.shared["ranges"] = {}
        for m in _RANGE.finditer("\n".join(t.whole)):
            found.setdefault(m.group(1), []).append(m.group(2))
    ranges = found.get(var, [])
    return tuple(ranges[0].strip(".").split(".")) if len(ranges) == 1 else None


def _bound_of(t: Template, var: str) -> tuple[str, ...] | None:
    """The ``.Values`` path the template binds ``$var`` to once (:mod:`.bindings`); the
    whole template's bindings are found once (kept with it and shared by its cuts)."""
    found: dict[str, tuple[str, ...]] | None = t.shared.get("bindings")
    if found is None:
        from gpulint.render.helm.bindings import value_bindings

        found = t.shared["bindings"] = value_bindings("\n".join(t.whole))
    return found.get(var)


def _merged(t: Template, var: str) -> list[tuple[str, ...] | str] | None:
    """The maps ``$var`` is merged from, the one that wins first (:func:`.bindings.merges`);
    the whole template's merges are found once (kept with it and shared by its cuts)."""
    found: dict[str, list[tuple[str, ...] | str]] | None = t.shared.get("merges")
    if found is None:
        from gpulint.render.helm.bindings import merges

        found = t.shared["merges"] = merges("\n".join(t.whole))
    return found.get(var)


def _where(reader: str, chart: str, line: int, template: str) -> str:
    archive, sep, member = reader.partition(".tgz" + os.sep)
    if sep:  # a helper of a packaged chart (or of a library packaged in it)
        return f"{member}:{line} in {os.path.relpath(archive + '.tgz', chart)}"
    via = f", included by {os.path.relpath(template, chart)}" if reader != template else ""
    return f"{os.path.relpath(reader, chart)}:{line}{via}"


def missing_place(
    t: Template,
    template: str,
    chart: str,
    files: list[tuple[str, tuple[str, ...], Document | None]],
    obj: tuple[Any, ...],
    field: str,
    written: Any,
    entry: Callable[[tuple[str, ...]], Any] | None = None,
    library: dict[str, tuple[str, int, str]] | None = None,
) -> Place | str | None:
    """The values key the template's block for ``obj`` reads ``field`` from, when the values
    file helm applies last that has it sets it empty (the field is ``ABSENT``) or to what
    was rendered (``written``); ``files`` as helm applies them, last first, each with the
    prefix of the template's values. A read of a ``range`` variable's field
    (``$values.tolerations`` in ``range $name, $values := .Values.workerGroups``) is that
    of the entry ``entry`` says the object came from (:meth:`.markers.Tracer.entry`:
    the one the values rendered in it name). A fallback chain (``index $module
    "tolerations" | default .Values.tolerations``, ``coalesce``) is followed the way the
    template does: the entry's own key when it is set, else the global one; a missing
    field goes to the entry's own key (the global one would change every entry). A map
    merged from two (:func:`_merged`: an entry over its defaults, ``mergeOverwrite``) is
    such a chain too.

    A string instead of a place: why the finding stays at the template (a note for it);
    None: the block does not read the field (the template writes the object whole).
    ``library``: a packaged subchart's helpers (:func:`_scan`)."""
    reads = _scan(t, obj, field, template, library)
    if reads is None or not (reads.values or reads.entries or reads.other):
        return None
    if reads.whole and reads.entries and reads.values:
        # the block is the whole template's: its .Values reads may be another object's (a
        # Frontend's tolerations beside a range over the workers), never a chain of this one
        reads = reads._replace(values={})
    ordered = _ordered(reads, t, template) if not reads.entries else None
    if ordered is not None:
        reads = reads._replace(values=ordered)
    elif reads.other is not None or len(reads.values) > 1 or len(reads.entries) > 1:
        line, helper = reads.other or [*reads.values.values(), *reads.entries.values()][0]
        at = _where(helper or template, chart, line, template)
        return (
            f" (shown at the pod spec: the template reads {field} through template logic "
            f"({at}), and which values key this object's come from was not traced)"
        )
    chain: list[tuple[tuple[Any, ...], int, str | None]] = []
    bound: tuple[str, ...] | None = None
    if reads.entries:
        got_entry = _entry_chain(t, reads, field, entry, chart, template)
        if isinstance(got_entry, str):
            return got_entry
        chain, bound = got_entry
    for ref, (line, helper) in reads.values.items():
        chain.append((ref, line, helper))
    got = [(ref, line, helper, _value(files, ref)) for ref, line, helper in chain]
    dotted = [".Values." + ".".join(map(str, ref)) for ref, _, _, _ in got]
    if written is ABSENT:
        if any(v is not None and v[1] not in (None, [], {}, "") for *_, v in got):
            return (
                f" (shown at the pod spec: {' or '.join(dotted)} holds {field}, yet none were"
                " rendered here: template logic decides)"
            )
        ref, line, helper, value = got[0]
    else:
        used = next(
            (g for g in got if g[3] is not None and g[3][1] not in (None, [], {}, "")), None
        )
        used = used or next((g for g in got if g[3] is not None), None)
        if used is None or used[3] is None or used[3][1] != written:
            return None
        ref, line, helper, value = used
    reader = helper or template
    where = _where(reader, chart, line, template)
    related = _related(reader, line, f"the template that reads {dotted[0]}")
    me = ".Values." + ".".join(map(str, ref))
    if len(got) == 1:
        if value is None:
            place = _parent_place(files, ref, line, reader, chart, field, template)
            if place is not None:
                return place
            return (
                f" (shown at the pod spec: the template reads {field} only from {me} ({where}),"
                f" which no values file sets: add {field}: to values.yaml)"
            )
        rest = (
            f"which is empty here: the template writes {field} only from it"
            if written is ABSENT
            else f"which writes these {field}"
        )
        file, prefix, doc = value[0]
        return Place(
            label_of(file),
            doc.key_span((*prefix, *ref)),
            f" (used by {where} as {me}, {rest})",
            (related,),
        )
    own, glob = dotted[0], dotted[1]
    mine = "this object's own" if reads.entries else "the one it reads first"
    every = (
        "every entry without its own"
        if reads.entries and bound is None
        else "every object that reads it"
    )
    if written is ABSENT:
        if value is None:
            place = _parent_place(
                files, ref, line, reader, chart, field, template, chained=(glob, mine, every)
            )
            if place is not None:
                return place
            return (
                f" (shown at the pod spec: the template reads {field} from {own}, {mine}, "
                f"else {glob} ({where}); neither is set for it)"
            )
        file, prefix, doc = value[0]
        note = (
            f" (used by {where} as {own}, {mine}, else {glob}: both are empty here; "
            f"add {field} here, as {glob} applies to {every})"
        )
        return Place(label_of(file), doc.key_span((*prefix, *ref)), note, (related,))
    if value is None:
        return None
    file, prefix, doc = value[0]
    note = (
        f" (used by {where} as {own}, {mine}, which writes these {field})"
        if me == own
        else f" (used by {where} as {glob}, which writes these {field}: {own}, {mine}, is "
        f"{'empty' if got[0][3] is not None else 'not set'}; set it to change this object only)"
    )
    return Place(label_of(file), doc.key_span((*prefix, *ref)), note, (related,))


def _entry_chain(
    t: Template,
    reads: _Reads,
    field: str,
    entry: Callable[[tuple[str, ...]], Any] | None,
    chart: str,
    template: str,
) -> tuple[list[tuple[tuple[Any, ...], int, str | None]], tuple[str, ...] | None] | str:
    """The values keys a read of a variable's field (``$group.tolerations``) stands for, in
    the order the template tries them, and the fixed path the variable is bound to (None
    for a ``range`` entry); or why which keys was not traced (a note)."""
    ((read, (line, helper)),) = reads.entries.items()
    var, _, inner = read.partition(".")
    keys = tuple(inner.split(".")) if inner else ()
    under = _range_of(t, var)
    key = entry(under) if under is not None and entry is not None else None
    bound = _bound_of(t, var) if under is None else None
    merged = _merged(t, var)
    chain: list[tuple[tuple[Any, ...], int, str | None]] = []
    if merged is not None and _SELF not in merged and under is None:
        # `$cfg := mergeOverwrite (deepCopy .Values.defaults) .Values.worker`: a chain
        bound = merged[0] if isinstance(merged[0], tuple) else None
        for source in merged:
            chain.append(((*source, *keys, field), line, helper))
    elif bound is not None:  # `$module := index .Values "modules" "x"`: one fixed path
        chain.append(((*bound, *keys, field), line, helper))
    elif under is None or key is None:
        at = _where(helper or template, chart, line, template)
        over = f" of .Values.{'.'.join(under)}" if under else ""
        return (
            f" (shown at the pod spec: the template reads {field} from ${var}, an entry"
            f"{over} ({at}), and which entry this object is was not traced)"
        )
    elif merged is not None:
        # the entry merged over defaults: its own key first, then theirs
        for source in merged:
            path = (*under, key) if source == _SELF else source
            chain.append(((*path, *keys, field), line, helper))
    else:
        chain.append(((*under, key, *keys, field), line, helper))
    return chain, bound


def _ordered(
    reads: _Reads, t: Template, template: str
) -> dict[tuple[str, ...], tuple[int, str | None]] | None:
    """Two ``.Values`` paths read on one line as a fallback chain (``.Values.worker.X |
    default .Values.X``, ``default .Values.X .Values.worker.X``, ``coalesce A B``), in the
    order the template tries them; None when that is not what the block does."""
    if reads.other is not None or len(reads.values) != 2:
        return None
    (a, at_a), (b, at_b) = reads.values.items()
    if at_a != at_b:
        return None
    line, helper = at_a
    source = t.raw if helper is None else (read_text(helper) or "").splitlines()
    raw = source[line - 1] if 0 < line <= len(source) else ""
    if raw.count("{{") != 1:
        return None
    spots = sorted((raw.find("." + ".".join(ref)), ref) for ref in (a, b))
    if any(at < 0 for at, _ in spots):
        return None
    first, second = spots[0][1], spots[1][1]
    if re.search(r"\bcoalesce\b", raw) or re.search(r"\|\s*default\b", raw):
        pass
    elif re.search(r"\bdefault\s", raw):
        first, second = second, first
    else:
        return None
    return {first: reads.values[first], second: reads.values[second]}


def _value(
    files: list[tuple[str, tuple[str, ...], Document | None]], ref: tuple[Any, ...]
) -> tuple[tuple[str, tuple[str, ...], Document], Any] | None:
    """The values file helm applies last that sets ``ref`` (with its prefix), and the value."""
    for file, prefix, doc in files:
        if doc is None:
            continue
        present, value = lookup(doc.data, (*prefix, *ref))
        if present:
            return (file, prefix, doc), value
    return None


def _parent_place(
    files: list[tuple[str, tuple[str, ...], Document | None]],
    ref: tuple[Any, ...],
    line: int,
    reader: str,
    chart: str,
    field: str,
    template: str = "",
    chained: tuple[str, str, str] | None = None,
) -> Place | None:
    """A field no values file sets, at the mapping it goes under (``decode:`` for
    ``.Values.decode.tolerations``) in the values file helm applies last that has it: the
    key the user adds it to. A subchart's own top-level key (``.Values.tolerations`` of a
    subchart whose values are packaged, or that no values file sets) goes under the
    subchart's key in a parent's values file (``tei:``, its alias)."""
    for file, prefix, doc in files:
        under = (*prefix, *ref[:-1])
        if not under or not ref:
            continue
        present, value = lookup(doc.data, under) if doc else (False, None)
        if doc is None or not (present and isinstance(value, dict)):
            continue
        dotted, parent = ".".join(map(str, ref)), ".".join(map(str, under))
        where = _where(reader, chart, line, template or reader)
        note = (
            f" (used by {where} as .Values.{dotted}, which no values file sets: the template "
            f"writes {field} only from it; add it under {parent} here)"
            if not chained and len(ref) > 1
            else f" (used by {where} as .Values.{dotted} of the subchart, which no values file"
            f" outside it sets: the template writes {field} only from it; add it under {parent}"
            " here)"
            if not chained
            else f" (used by {where} as .Values.{dotted}, {chained[1]}, which no values "
            f"file sets, else {chained[0]}, which is empty here: add it under {parent} here, as "
            f"{chained[0]} applies to {chained[2]})"
        )
        related = _related(reader, line, f"the template that reads .Values.{dotted}")
        return Place(label_of(file), doc.key_span((*prefix, *ref[:-1])), note, (related,))
    return None
