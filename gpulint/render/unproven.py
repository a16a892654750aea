"""A finding left at a template line whose value is an action no values line was traced to.

A template line such as ``nvidia.com/gpu: {{ .gpus }}`` inside ``{{- range .Values.workers
}}`` writes the rendered value without holding it: the value comes from the values file,
through a ``range`` variable, a ``dict`` or a helper, and when values tracing
(:mod:`gpulint.render.valuemarks`) cannot prove which values line wrote it (a ``--set``
value, a boolean, a number the template converts), the finding stays at that template
line. It is the place that writes the value, not the place the value is written, so the
finding says so instead of pointing there as if the value were on that line.

A template of several documents whose finding's document is not known
(:mod:`gpulint.render.sections`) is matched whole, and the finding says that too.
"""

from __future__ import annotations

from gpulint.render.mapping import Place
from gpulint.render.textmap import Template


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
