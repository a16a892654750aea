"""A key helm's output holds twice (YML002), at the template line that writes the repeat.

The loader reports a repeated key at its later copy and names the first by its line in the
rendered output, a line of no file. In the template, the copies are the lines writing that
key among the children of the same parent keys (:func:`templatetext.copies`). When the template
writes as many copies as the output holds, the finding goes to the copy at the rendered
one's position and names the first copy's template line. When it writes fewer (the repeat
comes from a ``range``, an ``include``d helper or a ``toYaml`` of values), no line of the
template is the repeat. When the last copy comes from the one ``range $k, $v := .Values.x``
in the parent's block and the values file helm applies last that sets ``x.<key>`` holds the
rendered value, the finding goes to that values key, naming the range's line. Otherwise it
is shown at the key's first copy the template writes, saying this is not where the repeat
is written.
"""

from __future__ import annotations

import bisect
import re

from gpulint.loader.document import Document
from gpulint.model import Finding, Related, Span
from gpulint.render.helm import templatetext
from gpulint.render.mapping import Place, label_of, lookup

_FIRST = re.compile(r" \(first at line \d+\)")
#: A ``range`` over a values map that writes its keys: ``range $key, $val := .Values.env``.
_RANGE = re.compile(
    r"\{\{-?\s*range\s+\$\w+\s*,\s*\$\w+\s*:=\s*\.Values((?:\.[A-Za-z0-9_-]+)+)\s*-?\}\}"
)


def duplicate_place(
    rendered: str,
    starts: list[int],
    finding: Finding,
    template: templatetext.Template,
    shown: str,
    files: list[tuple[str, tuple[str, ...], Document | None]],
    doc: Document | None,
) -> Place | None:
    """The place of a YML002 in ``rendered`` (``starts``: the lines of helm's ``# Source:``
    headers, 1-based), or None when the key's parent is not written in the template or the
    finding is not on a later copy (the usual matching decides)."""
    path, line, message = finding.doc_path, finding.line, finding.message
    at = bisect.bisect_right(starts, line) - 1
    if at < 0:
        return None
    first = starts[at]
    last = starts[at + 1] - 1 if at + 1 < len(starts) else None
    if not path or not isinstance(path[-1], str):
        return None
    parent, key = path[:-1], path[-1]
    out = templatetext.Template("\n".join(rendered.splitlines()[first - 1 : last]))
    in_output = templatetext.copies(out, parent, key)
    written = templatetext.copies(template, parent, key)
    if not in_output or not written:
        return None
    copy_at = next((i for i, c in enumerate(in_output) if c.number + first - 1 == line), 0)
    if copy_at == 0:  # not a later copy
        return None
    if len(written) == len(in_output):
        text = _FIRST.sub(f" (first at line {written[0].number})", message, count=1)
        return Place(shown, _key_span(template, written[copy_at]), "", (), text)
    copy = written[0]
    if copy_at == len(in_output) - 1 and doc is not None:  # the last copy: its value is kept
        found = _ranged(template, parent, key, lookup(doc.data, path)[1], files, shown)
        if found is not None:
            text = _FIRST.sub(f" (first at {shown}:{copy.number})", message, count=1)
            return found._replace(message=text)
    note = (
        f" (shown at the copy {shown} writes, line {copy.number}: the output holds "
        f"{len(in_output)} copies and the template writes {len(written)}, so a `range`, an "
        "`include`d helper or a `toYaml` of values writes the other; it is not at this line)"
    )
    return Place(shown, _key_span(template, copy), note, (), _FIRST.sub("", message, count=1))


def _ranged(
    template: templatetext.Template,
    parent: tuple[object, ...],
    key: str,
    rendered: object,
    files: list[tuple[str, tuple[str, ...], Document | None]],
    shown: str,
) -> Place | None:
    """The values key a ``range $k, $v := .Values.x`` in the parent's block wrote the
    repeat from: ``x.<key>`` in the values file helm applies last that sets it, only when
    the block has that one ``range`` and the value there equals the rendered one."""
    match = templatetext.find(template, parent)
    start, end = match.block
    lines = template.lines
    if parent and isinstance(parent[-1], int):  # an item's block starts at its own line
        first = lines[start].number if start < len(lines) else 1
    else:  # from the parent key's line
        first = lines[start - 1].number if parent and start > 0 else 1
    last = lines[end].number - 1 if end < len(lines) else len(template.raw)
    ranges = [(i + 1, m) for i in range(first - 1, last) if (m := _RANGE.search(template.raw[i]))]
    if len(ranges) != 1:
        return None
    at, m = ranges[0]
    ref = tuple(m.group(1).strip(".").split("."))
    for file, prefix, values in files:
        full = (*prefix, *ref, key)
        present, value = lookup(values.data, full) if values is not None else (False, None)
        if values is None or not present:
            continue
        if not _same(value, rendered):
            return None  # the file helm applies last says another value: no proof
        dotted = ".".join(ref)
        related = Related("template", shown, Span(at, 1, at, 1), f"the range over .Values.{dotted}")
        note = f" (written by {shown}:{at}, its range over .Values.{dotted})"
        return Place(label_of(file), values.key_span(full), note, (related,))
    return None


def _same(value: object, rendered: object) -> bool:
    if value == rendered:
        return True
    plain = isinstance(value, (int, float, str)) and not isinstance(value, bool)
    return plain and isinstance(rendered, str) and str(value) == rendered


def _key_span(template: templatetext.Template, line: templatetext.Line) -> Span:
    raw = template.raw[line.number - 1]
    start = line.key_column
    text = raw[start:].split(":", 1)[0].rstrip()
    return Span(line.number, start + 1, line.number, start + 1 + len(text))
