"""What the messages tell the user to write instead, where the fixtures only pin code and line."""

from __future__ import annotations

import pytest

from gpulint.engine import Linter
from gpulint.model import Finding
from gpulint.registry import builtin_registry
from gpulint.rule import load_rules

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists}
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits:
        NAME: VALUE
"""


@pytest.fixture(scope="module")
def linter() -> Linter:
    return Linter(load_rules())


def findings(linter: Linter, name: str, value: str = "1") -> list[Finding]:
    text = POD.replace("NAME", name).replace("VALUE", value)
    return linter.lint_bytes("pod.yaml", text.encode())


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        ("nvidia.com/gpus", "did you mean nvidia.com/gpu?"),
        ("nvidia.com/GPU", "resource names are case-sensitive: write nvidia.com/gpu"),
        ("aliyun.com/gpu-memory", "did you mean aliyun.com/gpu-mem?"),
        ("alpha.kubernetes.io/nvidia-gpu", "use nvidia.com/gpu"),
        ("nvidia.com/mig-1g.10gb+me", "write nvidia.com/mig-1g.10gb.me"),
        # An unknown profile lists the real ones with as many compute slices, smallest first.
        ("nvidia.com/mig-3g.30gb", "the 3g profiles are 3g.20gb, 3g.40gb, 3g.47gb"),
        ("nvidia.com/mig-7g.100gb", "the 7g profiles are 7g.40gb, 7g.79gb, 7g.80gb"),
    ],
)
def test_gpu010_suggests_the_real_name(linter: Linter, name: str, advice: str) -> None:
    (finding,) = findings(linter, name)
    assert finding.rule == "GPU010"
    assert advice in finding.message


def test_gpu010_without_a_close_name(linter: Linter) -> None:
    (finding,) = findings(linter, "example.com/quantum-gpu")
    assert "check the device plugin's documentation" in finding.message


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        # The domain itself looks misspelt: the suggestion may cross to the real one.
        ("nvidai.com/gpu", "did you mean nvidia.com/gpu?"),
        ("habana.com/gaudi", "did you mean habana.ai/gaudi?"),
        ("nvidia/gpu", "did you mean nvidia.com/gpu?"),
        ("amd.co/mgpu", "did you mean amd.com/gpu?"),
        # A misspelt domain whose local part matches no name: that vendor's names.
        ("intel.com/gpu", "the gpu.intel.com device plugins advertise gpu.intel.com/i915, "),
    ],
)
def test_gpu010_crosses_domains_only_for_a_misspelt_domain(
    linter: Linter, name: str, advice: str
) -> None:
    (finding,) = findings(linter, name)
    assert advice in finding.message
    assert "birentech" not in finding.message


def test_gpu010_suggestions_stay_within_a_known_vendor_domain() -> None:
    # One-edit typos of every local part under a real domain never suggest another vendor's
    # name (before, `amd.com/gpux`-like typos could land on whichever name difflib liked).
    registry = builtin_registry()
    for real in registry.resources:
        domain, _, local = real.rpartition("/")
        for typo in (f"{domain}/{local}x", f"{domain}/{local[1:]}", f"{domain}/x{local}"):
            if typo in registry.resources:
                continue
            suggestion = registry.suggest(typo)
            assert suggestion is None or suggestion.rpartition("/")[0] == domain, (
                typo,
                suggestion,
            )


def test_gpu012_points_to_the_compute_share_and_the_pod_label(linter: Linter) -> None:
    (finding,) = findings(linter, "aliyun.com/gpu-count", "25")
    assert finding.rule == "GPU012"
    assert "aliyun.com/gpu-core.percentage" in finding.message
    assert "pod label" in finding.message


@pytest.mark.parametrize(
    ("value", "quoted"),
    [("one", "'one'"), ('"2 "', "'2 '"), ("1K", "'1K'"), ("-1", "-1 is negative")],
)
def test_gpu005_quotes_the_value(linter: Linter, value: str, quoted: str) -> None:
    (finding,) = findings(linter, "nvidia.com/gpu", value)
    assert finding.rule == "GPU005"
    assert quoted in finding.message


def test_api_server_wording_is_quoted(linter: Linter) -> None:
    (fraction,) = findings(linter, "nvidia.com/gpu", "0.5")
    assert '"must be an integer"' in fraction.message
    (negative,) = findings(linter, "nvidia.com/gpu", "-1")
    assert '"must be greater than or equal to 0"' in negative.message
