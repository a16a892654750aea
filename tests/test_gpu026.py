"""GPU026: removed API versions of built-in kinds, with a severity by how sure the rejection
is (a maintained release, or the cluster version the rule is told)."""

from __future__ import annotations

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import Finding, Severity
from gpulint.settings import Settings
from tests.conftest import said

HPA = """\
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata: {name: vllm}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: vllm}
  maxReplicas: 2
---
apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: PriorityLevelConfiguration
metadata: {name: inference}
spec: {type: Limited, limited: {nominalConcurrencyShares: 10}}
"""


RULES = load_rules()


def lint(text: str, version: str | None = None) -> list[Finding]:
    options = {"GPU026": {"kubernetes_version": version}} if version else {}
    linter = Linter(RULES, Settings(select=("GPU026",), options=options))
    return [f for f in linter.lint_bytes("objects.yaml", text.encode()) if f.rule == "GPU026"]


def test_without_a_version_a_removal_every_maintained_release_made_warns() -> None:
    hpa, flow = lint(HPA)
    assert (hpa.line, hpa.severity) == (1, Severity.WARNING)
    assert "write apiVersion: autoscaling/v2" in said(hpa)
    assert "kubernetes_version" in said(hpa)
    # Removed in 1.32: a maintained cluster may still serve it.
    assert (flow.line, flow.severity) == (8, Severity.INFO)


@pytest.mark.parametrize(
    ("version", "severities"),
    [
        ("1.25", []),  # both still served
        ("1.26", [Severity.ERROR]),  # the autoscaler is rejected, the flow schema is not
        ("v1.33.2", [Severity.ERROR, Severity.ERROR]),
    ],
)
def test_a_configured_version_makes_it_certain(version: str, severities: list[Severity]) -> None:
    assert [f.severity for f in lint(HPA, version)] == severities


def test_a_kind_the_version_never_had_and_custom_groups_are_not_judged() -> None:
    text = (
        "apiVersion: autoscaling/v2beta2\nkind: Scale\nmetadata: {name: a}\n---\n"
        "apiVersion: example.com/v1beta1\nkind: Ingress\nmetadata: {name: b}\n"
    )
    assert lint(text) == []
