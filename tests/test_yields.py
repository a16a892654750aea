"""One cause, one finding: a rule that yields (``YIELDS_TO``) drops a finding only where the
cause is reported at the same place, so a second, independent cause in the pod stays visible.

Two plugin rules on a pod with two containers: CAUSE reports each container's misspelt
resource entry; CONSEQ reports what follows from every entry (at the entry's path, or, as one
finding naming several causes, with ``Violation.places``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.k8s.workloads import PodSpec
from gpulint.lint.engine import Linter
from gpulint.model import Severity
from gpulint.rule import Rule, RuleContext, Violation

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: two}
spec:
  tolerations: [{key: spot, operator: Exists}]
  containers:
  - name: a
    image: busybox
    resources: {limits: {nvidia.com/gpus: 1}}
  - name: b
    image: busybox
    resources: {limits: {nvidia.com/gpu: 9}}
"""


def _entry(pod: PodSpec, i: int, name: str) -> tuple[Any, ...]:
    return (*pod.path, "containers", i, "resources", "limits", name)


def _cause(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    yield Violation(_entry(pod, 0, "nvidia.com/gpus"), "misspelt")


def _per_entry(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    yield Violation(_entry(pod, 0, "nvidia.com/gpus"), "no node offers it")
    yield Violation(_entry(pod, 1, "nvidia.com/gpu"), "more than a node has")


def _whole(places: list[tuple[Any, ...]]) -> Any:
    def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
        yield Violation(pod.path, "no node fits", places=tuple(places))

    return check


def _rule(code: str, check: Any, yields_to: tuple[str, ...] = ()) -> Rule:
    return Rule(code, code.lower(), Severity.ERROR, "pod", {}, "doc", check, "t", "test", yields_to)


def _lint(consequence: Any) -> list[tuple[str, str]]:
    rules = [_rule("ACME001", _cause), _rule("ACME002", consequence, ("ACME001",))]
    return sorted((f.rule, f.message) for f in Linter(rules).lint_text("pod.yaml", POD))


def test_a_consequence_at_the_cause_yields_and_one_elsewhere_stays() -> None:
    assert _lint(_per_entry) == [
        ("ACME001", "misspelt"),
        ("ACME002", "more than a node has"),
    ]


def test_a_finding_of_several_causes_yields_only_when_each_is_reported() -> None:
    first = ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpus")
    second = ("spec", "containers", 1, "resources", "limits", "nvidia.com/gpu")
    assert _lint(_whole([first])) == [("ACME001", "misspelt")]
    assert _lint(_whole([first, second])) == [
        ("ACME001", "misspelt"),
        ("ACME002", "no node fits"),
    ]
    # A place is covered by a cause reported inside it (the container's entry)...
    assert _lint(_whole([("spec", "containers", 0)])) == [("ACME001", "misspelt")]
    # ... but not when the place is the whole pod, nor by () (a cause outside the pod).
    assert len(_lint(_whole([("spec",)]))) == 2
    assert len(_lint(_whole([()]))) == 2


def test_without_the_cause_rule_the_consequence_reports_alone() -> None:
    rules = [_rule("ACME002", _per_entry, ("ACME001",))]
    found = Linter(rules).lint_text("pod.yaml", POD)
    assert len(found) == 2


def test_an_error_is_not_traded_for_a_warning() -> None:
    def warn(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
        yield Violation(_entry(pod, 0, "nvidia.com/gpus"), "maybe", severity="warning")

    rules = [_rule("ACME001", warn), _rule("ACME002", _per_entry, ("ACME001",))]
    assert len(Linter(rules).lint_text("pod.yaml", POD)) == 3
