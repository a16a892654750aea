"""A key helm's output holds twice (YML002), at the template line that writes the repeat.

The loader reports a repeated key at its later copy and names the first by its line in the
rendered output, a line of no file. In the template, the copies are the lines writing that
key among the children of the same parent keys (:func:`textmap.copies`). When the template
writes as many copies as the output holds, the finding goes to the copy at the rendered
one's position and names the first copy's template line. When it writes fewer (the repeat
comes from a ``range``, an ``include``d helper or a ``toYaml`` of values), no line of the
template is the repeat: the finding is shown at the key's first copy the template writes,
and says that this is not where the repeat is written.
"""

from __future__ import annotations

import bisect
import re

from gpulint.model import Finding, Span
from gpulint.render import textmap
from gpulint.render.mapping import Place

_FIRST = re.compile(r" \(first at line \d+\)")


def duplicate_place(
    rendered: str,
    starts: list[int],
    finding: Finding,
    template: textmap.Template,
    shown: str,
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
    out = textmap.Template("\n".join(rendered.splitlines()[first - 1 : last]))
    in_output = textmap.copies(out, parent, key)
    written = textmap.copies(template, parent, key)
    if not in_output or not written:
        return None
    copy_at = next((i for i, c in enumerate(in_output) if c.number + first - 1 == line), 0)
    if copy_at == 0:  # not a later copy
        return None
    if len(written) == len(in_output):
        text = _FIRST.sub(f" (first at line {written[0].number})", message, count=1)
        return Place(shown, _key_span(template, written[copy_at]), "", (), text)
    copy = written[0]
    note = (
        f" (shown at the copy {shown} writes, line {copy.number}: the output holds "
        f"{len(in_output)} copies and the template writes {len(written)}, so a `range`, an "
        "`include`d helper or a `toYaml` of values writes the other; it is not at this line)"
    )
    return Place(shown, _key_span(template, copy), note, (), _FIRST.sub("", message, count=1))


def _key_span(template: textmap.Template, line: textmap.Line) -> Span:
    raw = template.raw[line.number - 1]
    start = line.key_column
    text = raw[start:].split(":", 1)[0].rstrip()
    return Span(line.number, start + 1, line.number, start + 1 + len(text))
