"""GPU018: accelerator names outside pod specs, with GPU010's verdicts and a severity by
what the place does with the name."""

from __future__ import annotations

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import Finding, Severity
from gpulint.settings import Settings
from tests.conftest import said


@pytest.fixture(scope="module")
def linter() -> Linter:
    return Linter(load_rules(), Settings(select=("GPU018",)))


def lint(linter: Linter, text: str) -> list[Finding]:
    return [f for f in linter.lint_bytes("objects.yaml", text.encode()) if f.rule == "GPU018"]


PROFILE = """\
apiVersion: dashboard.opendatahub.io/v1
kind: AcceleratorProfile
metadata: {name: p, namespace: redhat-ods-applications}
spec: {displayName: P, enabled: true, identifier: NAME}
"""


@pytest.mark.parametrize(
    ("name", "severity", "advice"),
    [
        # The names of the issue: a model in the name, a misspelt Intel domain.
        ("habana.ai/gaudi2", Severity.ERROR, "did you mean habana.ai/gaudi?"),
        ("intel.com/flex", Severity.ERROR, "the gpu.intel.com device plugins advertise"),
        ("intel.com/max", Severity.ERROR, "the gpu.intel.com device plugins advertise"),
        ("gpu", Severity.ERROR, "gpu is not a resource any GPU device plugin advertises"),
        ("alpha.kubernetes.io/nvidia-gpu", Severity.ERROR, "use nvidia.com/gpu"),
        # A known vendor's domain, no slip: the registry may be behind (info).
        ("nvidia.com/a100", Severity.INFO, "devices: [{name: nvidia.com/a100}]"),
    ],
)
def test_a_profile_identifier_is_judged_as_gpu010_judges_a_container(
    linter: Linter, name: str, severity: Severity, advice: str
) -> None:
    (finding,) = lint(linter, PROFILE.replace("NAME", name))
    assert finding.severity == severity
    assert advice in said(finding)


@pytest.mark.parametrize(
    "name", ["nvidia.com/gpu", "habana.ai/gaudi", "fpga.example.com/arria10", "cpu", "'{{ x }}'"]
)
def test_real_names_and_unknown_vendors_are_no_finding(linter: Linter, name: str) -> None:
    assert lint(linter, PROFILE.replace("NAME", name)) == []


def test_a_place_that_only_does_nothing_warns(linter: Linter) -> None:
    text = """\
apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {requests.nvidia.com/gpus: 4}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: o}
spec:
  capacity: {nvidia.com/gpus: 4}
---
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata:
  name: r
  annotations: {opendatahub.io/recommended-accelerators: '["nvidia.com/gpus"]'}
"""
    found = lint(linter, text)
    assert [f.severity for f in found] == [Severity.WARNING] * 3


def test_a_place_that_keeps_pods_from_running_is_an_error(linter: Linter) -> None:
    text = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpus]
    flavors:
    - name: f
      resources: [{name: nvidia.com/gpus, nominalQuota: 8}]
---
apiVersion: v1
kind: LimitRange
metadata: {name: l}
spec:
  limits:
  - type: Container
    min: {nvidia.com/gpus: 0}
"""
    found = lint(linter, text)
    # The flavor's resource repeats the covered name: one finding, where it is covered.
    assert [(f.line, f.severity) for f in found] == [(6, Severity.ERROR), (17, Severity.ERROR)]
    assert "the LimitRange's min becomes its default" in said(found[1])


def test_a_quota_key_is_renamed_with_its_prefix(linter: Linter) -> None:
    text = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard:\n"
    (finding,) = lint(linter, text + "    limits.nvidia.com/gpus: 4\n")
    assert finding.fix is not None
    assert finding.fix.message == "rename limits.nvidia.com/gpus to limits.nvidia.com/gpu"
    # Not onto a key the quota already has.
    both = text + "    requests.nvidia.com/gpus: 4\n    requests.nvidia.com/gpu: 4\n"
    (finding,) = lint(linter, both)
    assert finding.fix is None
