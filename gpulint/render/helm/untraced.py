"""A finding left at a template line whose value is an action no values line was traced to.

A template line such as ``nvidia.com/gpu: {{ .gpus }}`` inside ``{{- range .Values.workers
}}`` writes the rendered value without holding it: the value comes from the values file,
through a ``range`` variable, a ``dict`` or a helper, and when values tracing
(:mod:`gpulint.render.helm.markers`) cannot prove which values line wrote it (a ``--set``
value, a boolean, a number the template converts), the finding stays at that template
line. It is the place that writes the value, not the place the value is written, so the
finding says so instead of pointing there as if the value were on that line.

A template of several documents whose finding's document is not known
(:mod:`gpulint.render.helm.documents`) is matched whole, and the finding says that too.
"""

from __future__ import annotations

from gpulint.model import Span
from gpulint.render.helm.templatetext import Match, Template
from gpulint.render.mapping import Place


def noted(found: Place, template: Template, on_key: bool, archived: bool) -> Place:
    """``found`` with a note when its line's value is a template action (``{{ ... }}``)
    and nothing else was said (no values line, no note): the value is not written there."""
    if found.note or found.related or on_key or archived:
        return found
    line = found.span.line
    if not 0 < line <= len(template.raw):
        return found
    raw = template.raw[line - 1]
    value = raw[found.span.column - 1 :] if found.span.column > 0 else raw
    if "{{" not in value:
        return found  # a literal: the template holds the value
    action = value.strip()
    shown = action if len(action) <= 60 else action[:57] + "..."
    return found._replace(
        note=(
            f" (shown at the template line that writes it, `{shown}`: the value comes from "
            "the values through it, and no values line was traced as the one that holds it)"
        )
    )


def unknown_part(found: Place, known: bool) -> Place:
    """``found`` with a note when it was matched in a whole template of several documents,
    not knowing which of them the object is: a values line that match reads is not proven
    to be the object's, so the template line is shown instead."""
    if known:
        return found
    if found.related:  # a values line the first match reads: shown at that template line
        found = Place(found.related[0].path, found.related[0].span)
    return found._replace(
        note=found.note
        + " (its template writes several documents, and which of them this object is is not"
        " known: shown at the first place in it that matches)"
    )


def partial(found: Place, match: Match, path: tuple[object, ...]) -> Place:
    """``found``, a template place for a key path the template writes only in part (the
    rest comes from a helper, a ``range`` or ``toYaml`` of a variable), saying it is the
    deepest key written there, not the place the reported value is written."""
    if found.note or match.depth >= len(path):
        return found
    if not match.lines:
        where = "the template's first line: no key of its path is written there as text"
    else:
        key = match.lines[-1].key
        where = (
            f"`{key}:`, the deepest key of its path the template writes"
            if key
            else "the deepest item of its path the template writes"
        )
    return found._replace(
        note=f" (shown at {where}; what it reports comes from template logic below it, and "
        "no values line was traced as the one that holds it)"
    )


def item_place(
    found: Place, t: Template, match: Match, path: tuple[object, ...], rendered: tuple[object, ...]
) -> Place:
    """``found``, at the key of the list whose item ``path`` ends at (a scalar: an
    argument, a command word), moved to that item's line: the template writes the items
    up to it as text (:func:`gpulint.render.helm.templatetext.find` says when it does not: then
    :func:`guessed_item` is used instead)."""
    last = path[-1] if path else None
    if not (isinstance(last, int) and rendered and not isinstance(rendered[0], (dict, list))):
        return found
    at = next((i for i, line in enumerate(t.lines) if line is match.lines[-1]), None)
    if found.note or at is None:
        return found
    start, end = t.block(at)
    items = t.children(start, end, None).items
    if last >= len(items):
        return found
    item = t.lines[items[last]]
    text = t.raw[item.number - 1]
    column = item.indent + 3 if text[item.indent : item.indent + 2] == "- " else 1
    return Place(found.path, Span(item.number, column, item.number, len(text) + 1))


def guessed_item(found: Place, t: Template, match: Match) -> Place:
    """A path through an item of a list whose items template logic writes (``{{- range
    .Values.sidecars }}`` before the container): which item of the template the object's
    is, is not known, so the finding is at the list's key, saying so."""
    lines = match.lines[: match.guessed]
    if not lines:
        return Place(found.path, Span(1, 1, 1, 1), _GUESSED.format(at="the template's first line"))
    line = lines[-1]
    raw = t.raw[line.number - 1]
    span = Span(
        line.number, line.key_column + 1, line.number, line.key_column + 1 + len(line.key or "")
    )
    return Place(found.path, span, _GUESSED.format(at=f"`{line.key or raw.strip()}:`"), ())


_GUESSED = (
    " (shown at {at}: template logic writes items of this list, so which of its items in the "
    "template this one is is not known, and no values line was traced as the one that holds "
    "what it reports)"
)
