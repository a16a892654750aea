"""Which part of a template of several ``---`` documents a rendered document came from
(gpulint/render/helm/documents.py): the finding is matched in that part only, and when it is not
known which part it is, the finding says so rather than point into another document."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from gpulint.render.helm.conditions import truth
from gpulint.render.helm.documents import Part, Sections
from gpulint.render.helm.failcalls import guard_keys
from gpulint.render.helm.templatetext import actions

T = "c/templates/t.yaml"


class _Member(NamedTuple):  # what Sections.cut reads of a resolved template
    real: str
    part: Part | None
    archive: str | None
    member_text: str | None
    chain: tuple[tuple[str, tuple[str, ...]], ...] = (("c", ()),)


RANGE_THEN_TWO = """\
{{- range .Values.groups }}
---
kind: Deployment
metadata: {name: {{ .name }}}
{{- end }}
---
kind: Deployment
metadata: {name: single}
---
kind: Service
metadata: {name: svc}
"""
OPTIONAL_TWO = """\
{{- if .Values.a }}
kind: Deployment
{{- end }}
---
{{- if .Values.b }}
kind: {{ .Values.kind }}
{{- end }}
"""
INCLUDE_THEN_SERVICE = """\
{{ include "lib.deployment" . }}
---
kind: Service
metadata: {name: svc}
"""
TWO_KINDS = "kind: Service\n---\nkind: Deployment\n"

CASES = [
    # (template, the document's kind, its ordinal and how many of that kind helm printed,
    #  (first, last) line of the part it is matched in (None: the whole template), known)
    (RANGE_THEN_TWO, "Deployment", 0, 3, (3, 5), True),
    (RANGE_THEN_TWO, "Deployment", 1, 3, (3, 5), True),
    (RANGE_THEN_TWO, "Deployment", 2, 3, (7, 8), True),  # the last: the single one
    (RANGE_THEN_TWO, "Service", 0, 1, (10, 11), True),  # helm prints it first; kind decides
    (RANGE_THEN_TWO, "Deployment", 0, 1, (7, 8), True),  # no group: the single one
    (OPTIONAL_TWO, "Deployment", 0, 1, None, False),  # the first, or the templated kind
    (OPTIONAL_TWO, "Service", 0, 1, (5, 7), True),  # only the second may be a Service
    (OPTIONAL_TWO, "Deployment", 1, 2, (5, 7), True),
    (INCLUDE_THEN_SERVICE, "Deployment", 0, 1, (1, 1), True),
    (INCLUDE_THEN_SERVICE, "Service", 0, 1, (3, 4), True),  # the literal one must be there
    (INCLUDE_THEN_SERVICE, "Service", 1, 2, (3, 4), True),  # the include wrote the first
    (TWO_KINDS, "Deployment", 0, 1, (3, 3), True),
]


@pytest.mark.parametrize(("text", "kind", "ordinal", "count", "lines", "known"), CASES)
def test_the_part_a_document_came_from(
    text: str, kind: str, ordinal: int, count: int, lines: tuple[int, int] | None, known: bool
) -> None:
    cut = Sections([], []).cut(_Member(T, Part(T, kind, ordinal, count), "a.tgz", text))
    assert cut.known == known
    kept = [i + 1 for i, line in enumerate(cut.template.raw) if line.strip()]
    if lines is None:  # the whole template
        assert kept == [i + 1 for i, line in enumerate(text.split("\n")) if line.strip()]
    else:
        content = [n for n in kept if not text.split("\n")[n - 1].startswith("---")]
        assert (min(content), max(content)) == lines


def test_a_template_of_one_document_is_whole_and_known() -> None:
    cut = Sections([], []).cut(_Member(T, Part(T, "Pod", 0, 1), "a.tgz", "kind: Pod\n"))
    assert cut.known and cut.template.raw[0] == "kind: Pod"


def test_every_document_of_a_long_range_is_placed() -> None:
    # 20,000 Deployments of one range and one more: each placed, the last in its own part
    sections = Sections([], [])
    cuts = [
        sections.cut(_Member(T, Part(T, "Deployment", i, 20001), "a.tgz", RANGE_THEN_TWO))
        for i in (0, 19999, 20000)
    ]
    assert all(c.known for c in cuts)


TRUTHS = [
    # (condition, values, a path --set sets, held)
    (".Values.a.enabled", {"a": {"enabled": True}}, None, True),
    ("and .Values.a.enabled (not .Values.stack)", {"a": {"enabled": True}}, None, True),
    (
        "and .Values.a.enabled (not .Values.stack)",
        {"a": {"enabled": True}, "stack": 1},
        None,
        False,
    ),
    ('eq .Values.mode "gpu"', {"mode": "gpu"}, None, True),
    ('ne .Values.mode "gpu"', {"mode": "cpu"}, None, True),
    ("or .Values.a .Values.b", {"b": [1]}, None, True),
    ("empty .Values.list", {"list": []}, None, True),
    ("eq .Values.n 2", {"n": 2}, None, True),
    ("$.Values.a", {}, None, False),  # a missing key is nil
    # not known: a function, a pipeline, a variable, a value --set sets
    ('include "x" .', {}, None, None),
    (".Values.a | default true", {}, None, None),
    ("$x", {}, None, None),
    (".Values.a.enabled", {"a": {"enabled": False}}, ("a", "enabled"), None),
    ("eq .Values.a nil", {"a": 1}, None, None),
]


@pytest.mark.parametrize(("condition", "values", "set_path", "held"), TRUTHS)
def test_whether_an_if_held(
    condition: str, values: dict[str, object], set_path: tuple[str, ...] | None, held: bool | None
) -> None:
    assert truth(condition, values, lambda path: path == set_path) is held


def test_actions_no_brace_closes_are_read_in_one_pass() -> None:
    # a template from the linted tree with half a million `{{` and no `}}`: a lazy regular
    # expression rescans the rest of the text from each of them (hours for this one)
    text = "kind: Pod\n---\nkind: Service\n" + "{{" * 500_000
    cut = Sections([], []).cut(_Member(T, Part(T, "Pod", 0, 1), "a.tgz", text))
    assert cut.known
    assert guard_keys(text, 3) == []
    assert list(actions(text)) == []
    assert [a.body for a in actions("a {{- if .x -}} b {{ end }}{{")] == ["if .x", "end"]
