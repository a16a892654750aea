"""A GPU chart's pod placement values that no template of the chart reads (GPU082).

A chart made with ``helm create`` offers ``resources``, ``nodeSelector``, ``tolerations``
and ``affinity`` in its ``values.yaml``; a chart whose templates were then written by hand
often hard-codes the pod's GPU limit and toleration and never reads them. A user who sets
``tolerations`` for the GPU pool's taint there gets a pod without it, and the chart's own
``resources.limits`` (``nvidia.com/gpu: 1``) is not what the pod holds.

Read as text, not rendered: every Go-template action (``{{ ... }}``) of the chart's
``templates/`` (read once, :mod:`gpulint.render.helm.aswritten`) and of its ``values.yaml``
(for values a template passes through ``tpl``) is scanned once for the names it mentions.
A placement key whose name no action mentions, none of whose enclosing keys an action takes
whole (``toYaml .Values.server``, ``range``, ``with``), is read by nothing. The check is not
made when it cannot be sure: a chart that takes ``.Values`` whole (``toYaml .Values``,
``include "x" .Values``), one with dependencies (a library chart's templates read the
parent's values), a library chart, a chart whose templates are more than the bounds of
:mod:`gpulint.render.helm.aswritten`, a chart with no template (its values may be meant for
another chart), or a chart with no accelerator in its templates or values (not a GPU chart:
gpulint leaves its values alone).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from gpulint import codes
from gpulint.loader.document import Document, Problem
from gpulint.model import Path
from gpulint.render.helm.templatetext import actions

CODE = codes.UNREAD_CHART_VALUE

#: The values keys judged: a pod's placement and what it holds.
PLACEMENT = ("resources", "nodeSelector", "tolerations", "affinity", "runtimeClassName")
#: Bytes of its values file read at most.
MAX_VALUES_BYTES = 4 << 20

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
#: ``.Values`` taken whole: not followed by ``.field``.
_WHOLE_VALUES = re.compile(r"\.Values(?![A-Za-z0-9_.])")
#: A Chart.yaml's ``dependencies:`` with anything but ``[]`` (one line, no backtracking
#: across lines: a hostile file of blank lines costs one pass).
_DEPENDENCIES = re.compile(rb"(?m)^dependencies[ \t]*:(?![ \t]*\[[ \t]*\])")
_LIBRARY = re.compile(rb"(?m)^type[ \t]*:[ \t]*[\"']?library\b")
#: Resource names written with a vendor domain (``nvidia.com/gpu``) in the text: bounded
#: repeats, so a long run of name characters costs a bounded look at each position.
_RESOURCE = re.compile(r"[a-z0-9][a-z0-9.-]{0,252}/[A-Za-z0-9._-]{1,63}")


#: A field an action takes whole: ``.name`` not followed by another field.
_TAKEN_WHOLE = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)(?![A-Za-z0-9_.-])")


class Actions:
    """What a chart's template actions mention: their words, and the fields they take
    whole (``toYaml .Values.server``: ``server``), each found in one pass of the text."""

    __slots__ = ("text", "whole", "words")

    def __init__(self, texts: list[str]) -> None:
        self.text = "\n".join(texts)
        self.words = frozenset(_WORD.findall(self.text))
        self.whole = frozenset(_TAKEN_WHOLE.findall(self.text))


def _judged(chart: str, chart_yaml: bytes | None) -> bool:
    """Is the chart one whose values only its own templates read (no dependencies, not
    a library)? ``chart_yaml``: its Chart.yaml (:func:`aswritten.chart_file`)."""
    if chart_yaml is None:
        return False
    if os.path.exists(os.path.join(chart, "requirements.yaml")):
        return False
    if os.path.isdir(os.path.join(chart, "charts")):
        return False
    return not (_DEPENDENCIES.search(chart_yaml) or _LIBRARY.search(chart_yaml))


def _keys(data: Any) -> Iterator[tuple[Path, Any]]:
    """Every mapping key of the values with its value, outermost first, without
    recursion; the value of a placement key is not entered (its keys are the pod's)."""
    stack: list[tuple[Path, Any]] = [((), data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            items = list(node.items())
            for key, value in reversed(items):
                if not isinstance(key, str):
                    continue
                here = (*path, key)
                yield here, value
                if key not in PLACEMENT:
                    stack.append((here, value))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                stack.append(((*path, i), node[i]))


def _empty(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, (dict, list)) and not value)


def unread_values(
    chart: str,
    values: tuple[str, Document] | None,
    is_accelerator: Callable[[str], bool],
    templates: list[tuple[str, str]] | None,
    chart_yaml: bytes | None,
) -> list[Problem]:
    """GPU082's problems for the chart in folder ``chart`` whose ``values.yaml`` is
    ``values`` (its text, and its document as the caller parsed it once) and whose
    templates are ``templates`` (each file's path and text, read once: None when more
    than the bounds allow) and whose Chart.yaml is ``chart_yaml``: each placement key no
    template reads."""
    if values is None or not isinstance(values[1].data, dict) or not _judged(chart, chart_yaml):
        return []
    values_text, doc = values
    if not templates:  # too many to read, or none: values for another chart, maybe
        return []
    texts = [text for _, text in templates]
    bodies = [a.body for text in (*texts, values_text) for a in actions(text)]
    read = Actions(bodies)
    if _WHOLE_VALUES.search(read.text):
        return []
    whole = "\n".join(texts)
    if not any(is_accelerator(m) for m in _RESOURCE.findall(whole + "\n" + values_text)):
        return []
    problems: list[Problem] = []
    for path, value in _keys(doc.data):
        name = path[-1]
        if name not in PLACEMENT or name in read.words:
            continue
        if path[0] == "global":
            continue
        outer = [k for k in path[:-1] if isinstance(k, str)]
        if any(k in read.whole for k in outer):
            continue
        problems.append(_problem(doc, path, value))
    problems.sort(key=lambda p: (p.span.line, p.span.column))
    return problems


def _problem(values: Document, path: Path, value: Any) -> Problem:
    shown = ".".join(str(k) for k in path)
    if _empty(value):
        message = (
            f"values key {shown} is read by no template of this chart: a value set here "
            "(for a GPU pool, say) never reaches the pods"
        )
        return Problem(CODE, values.key_span(path), message, path, severity="info")
    message = (
        f"values key {shown} is read by no template of this chart: the pods do not get "
        "what it sets; read it in the template or remove it"
    )
    return Problem(CODE, values.key_span(path), message, path)
