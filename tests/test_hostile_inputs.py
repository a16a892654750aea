"""Small hostile inputs end in a finding or a configuration error, never in a hang.

Each test runs a smaller instance of an input that used to hang or grow quadratically
(issue: merge-key bombs, stacked suppressions, many templates, paths, ignores and globs).
Timings are measured in bench/scaling.py, never asserted here: these tests pin the
behaviour -- the finding, the error and its line -- that the fixed code gives.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpulint.yamlload import load_text
from tests.conftest import gpulint_cmd

MERGE_BOMB = "a: &a {<<: [*a, *a, *a, *a, *a, *a, *a, *a], k: 1}\n"


def chain_bomb(levels: int, fanout: int = 8) -> str:
    """``a1`` merges ``a0`` eight times, ``a2`` merges ``a1`` eight times, ...: 8^levels reads."""
    lines = ["a0: &a0 {k: 1}"]
    for level in range(1, levels + 1):
        sources = ", ".join([f"*a{level - 1}"] * fanout)
        lines.append(f"a{level}: &a{level} {{<<: [{sources}], k{level}: {level}}}")
    return "\n".join(lines) + "\n"


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*gpulint_cmd(), *args], cwd=cwd, capture_output=True, text=True, check=False
    )


# -- merge keys count against the alias budget ----------------------------------------------


def test_self_merge_is_yml004_naming_the_anchor() -> None:
    result = load_text(MERGE_BOMB)
    assert result.documents == []
    [problem] = result.problems
    assert problem.code == "YML004"
    assert "anchor &a merges itself" in problem.message


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: &a {b: {<<: *a}}\n", id="merge-of-an-ancestor"),
        pytest.param("a: &a\n  <<: *a\n  k: 1\n", id="block-self-merge"),
        pytest.param(chain_bomb(32), id="chain-8^32"),
    ],
)
def test_merge_bombs_are_yml004(text: str) -> None:
    result = load_text(text)
    assert [p.code for p in result.problems] == ["YML004"]
    assert result.documents == []


def test_ordinary_merges_still_load() -> None:
    text = (
        "base: &base {cpu: 1, memory: 1Gi}\n"
        "gpu: &gpu {<<: *base, nvidia.com/gpu: 1}\n"
        "both: {<<: [*gpu, *base], memory: 2Gi}\n"
    )
    result = load_text(text)
    assert result.problems == []
    assert result.documents[0].data["both"] == {
        "memory": "2Gi",
        "cpu": 1,
        "nvidia.com/gpu": 1,
    }


def test_merge_bomb_in_a_manifest_is_a_finding_and_the_next_file_is_linted(
    tmp_path: Path,
) -> None:
    (tmp_path / "a-bomb.yaml").write_text(MERGE_BOMB)
    (tmp_path / "b-pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 0.5}}}\n"
    )
    proc = run(["check", "."], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "a-bomb.yaml:1:1: YML004" in proc.stdout
    assert "b-pod.yaml" in proc.stdout


def test_merge_bomb_in_the_configuration_is_a_config_error_with_its_line(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gpulint.yaml").write_text("ignore: [GPU021]\n" + MERGE_BOMB)
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    proc = run(["check", "pod.yaml"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("gpulint: error: .gpulint.yaml:1: anchor &a merges itself")
