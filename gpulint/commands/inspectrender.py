"""``gpulint inspect --render``: where each object and GPU value of a rendered chart or
Kustomize root came from, found as a finding there is mapped back
(:meth:`gpulint.render.mapping.Rendered.place`), and whether that place is a fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from gpulint.model import Path

if TYPE_CHECKING:
    from gpulint.render.mapping import Rendered

#: Where a rendered object or value came from: (its object, document, YAML path, span) ->
#: its ``source``.
Placer = Callable[[Any, int, Path, Any], dict[str, Any]]


def gpu_path(container: Path, resources: dict[str, Any] | None, names: Iterable[str]) -> Path:
    """The path of the container's first GPU value that counts (requests over limits)."""
    for section in ("requests", "limits"):
        values = (resources or {}).get(section)
        if isinstance(values, dict):
            for name in names:
                if name in values:
                    return (*container, "resources", section, name)
    return (*container, "resources")


#: How the note of a place that is a fallback begins (gpulint.render.kustomize.build,
#: gpulint.render.helm.sources).
_FALLBACK = "shown at the "


def placer(rendered: Rendered) -> Placer:
    """Where a rendered place came from, as :meth:`Rendered.place` maps a finding there:
    ``fallback`` when no closer line than the chart's or root's own file can be named."""
    from gpulint.model import Finding, Severity

    fallback = rendered.fallback()

    def place(ref: Any, document: int, path: Path, span: Any) -> dict[str, Any]:
        probe = Finding("", "", Severity.INFO, rendered.label, span, "", ref, path, document)
        try:
            where = rendered.place(probe)
        except Exception:  # mapping is best effort, as for a finding
            return {"path": fallback, "line": 1, "column": 1, "fallback": True, "note": None}
        note = where.note.strip().removeprefix("(").removesuffix(")").strip() or None
        # A fallback says so ("shown at the chart: ...", "shown at the kustomization entry
        # ..."), or is the chart's or root's own file at its first line with nothing said.
        at_top = where.path == fallback and where.span.line == 1 and note is None
        return {
            "path": where.path,
            "line": where.span.line,
            "column": where.span.column,
            "fallback": at_top or (note is not None and note.startswith(_FALLBACK)),
            "note": note,
        }

    return place
