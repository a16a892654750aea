"""The values line a template line's ``.Values.x`` takes its value from.

Values files are searched as helm applies them, the last first: ``--values`` files, then a
parent chart's ``values.yaml`` under the subchart's name, then the chart's own. A value a
``--set`` flag wrote stays at the template line and names the flag. The values line is
used only when the value written there is the scalar rendered (never confidently wrong).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol

from gpulint.model import Related, Span
from gpulint.render.mapping import Place, label_of, lookup

if TYPE_CHECKING:
    from gpulint.loader.document import Document
    from gpulint.render import ChartOptions
    from gpulint.render.helm.documents import Resolved


class ChartValues(Protocol):
    """What placing a value needs of a rendered chart (``chart.HelmRendered``): its folder,
    options and values files. Written here so that this module and ``failcalls`` are
    typed without importing the chart module, which imports them."""

    folder: str
    options: ChartOptions

    def values_doc(self, path: str) -> Document | None: ...

    def values_files(self, resolved: Resolved) -> list[tuple[str, tuple[str, ...]]]: ...


def values_place(
    chart: ChartValues,
    resolved: Resolved,
    ref: tuple[str, ...],
    rest: tuple[object, ...],
    shown: str,
    template_line: int,
    template_span: Span,
    key: bool,
    rendered: tuple[object, ...] = (),
) -> Place | None:
    """The values line that sets ``.Values.<ref>`` (then ``rest`` below it, for a block a
    ``toYaml`` inserted) for a template line that uses it, as helm applies the values files
    (a ``--set`` value stays at the template line, naming the flag); None when no file sets
    it, or when the value set there is not the one rendered (``rendered``: a scalar the
    template printed through a pipe or a guess of which item it is)."""
    from gpulint.render.helm.setflags import set_by

    path = (*ref, *rest)
    dotted = ".".join(str(p) for p in ref)
    used = os.path.relpath(resolved.path, chart.folder)
    template_place = Span(template_line, 1, template_line, 1)
    if resolved.archive is not None:  # a member's line: say it, point at the archive
        used = f"{used} (member {resolved.real}, line {template_line})"
        template_place = Span(1, 1, 1, 1)
    else:
        used = f"{used}:{template_line}"
    full = (*resolved.chain[0][1], *path)
    assignment = set_by(chart.options.set, full, chart.options.configured_set)
    if assignment is not None:  # helm applies --set after every values file
        note = (
            f" (set by {assignment}, which helm applies after every values file: "
            f"no file holds the value; shown at {used}, the template line that uses "
            f".Values.{dotted})"
        )
        return Place(shown, template_span, note)
    for file, prefix in chart.values_files(resolved):
        doc = chart.values_doc(file)
        if doc is None:
            continue
        full = (*prefix, *path)
        present, _ = lookup(doc.data, full)
        if not present:
            continue
        span = doc.key_span(full) if key else doc.value_span(full)
        values_label = label_of(file)
        note = f" (used by {used} as .Values.{dotted})"
        related = Related(
            "template",
            shown,
            template_place,
            f"the template that uses .Values.{dotted}",
        )
        return Place(values_label, span, note, (related,))
    return None


def _text(value: object) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _same(written: object, rendered: object) -> bool:
    """Is ``rendered`` the scalar written (as helm prints it)? A mapping or list is not
    compared (a block ``toYaml`` inserted)."""
    if isinstance(written, (dict, list)) or isinstance(rendered, (dict, list)):
        return True
    return _text(written) == _text(rendered)
