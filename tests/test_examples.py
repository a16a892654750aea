"""The bundled examples: the good ones lint clean, the bad ones show every rule at work.

Bad examples carry the same ``# expect: CODE`` comments as the rule fixtures, so a reader of
an example sees what gpulint reports on which line.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from tests.conftest import ROOT, expectation_list, gpulint_cmd, gpulint_in_process, said

EXAMPLES = ROOT / "examples"
MANIFESTS = sorted(
    p for p in EXAMPLES.iterdir() if p.suffix in (".yaml", ".yml") and not p.name.startswith(".")
)
GOOD = [p for p in MANIFESTS if p.name.startswith("good-")]
BAD = [p for p in MANIFESTS if p.name.startswith("bad-")]


def test_examples_are_named_good_or_bad() -> None:
    assert sorted(GOOD + BAD) == MANIFESTS
    assert GOOD and BAD


@pytest.mark.parametrize("path", GOOD, ids=[p.name for p in GOOD])
def test_good_examples_are_clean(path: Path, linter: Linter) -> None:
    raw = path.read_bytes()
    assert not expectation_list(raw.decode("utf-8", "replace"))
    assert [(f.line, f.rule, f.message) for f in linter.lint_bytes(str(path), raw)] == []


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_examples_report_what_they_say(path: Path, linter: Linter) -> None:
    raw = path.read_bytes()
    expected = expectation_list(raw.decode("utf-8", "replace"))
    assert expected, "a bad example says what it expects"
    findings = linter.lint_bytes(str(path), raw)
    got = Counter((f.line, f.rule) for f in findings)
    assert got == Counter((line, code) for line, code, _ in expected)
    for line, code, col in expected:
        if col is not None:
            assert any((f.line, f.rule, f.column) == (line, code, col) for f in findings)


#: The bundled chart: GPU082 reads a chart's values against its templates' text.
CHART = EXAMPLES / "bad-helm-chart"
CHART_FILES = sorted(p for p in CHART.rglob("*") if p.suffix in (".yaml", ".yml"))


def test_bad_chart_reports_what_it_says() -> None:
    want = Counter(
        (p.relative_to(ROOT).as_posix(), line, code)
        for p in CHART_FILES
        for line, code, _ in expectation_list(p.read_text(encoding="utf-8"))
    )
    assert want
    proc = gpulint_in_process(
        "check", "-f", "json", "--no-cache", CHART.relative_to(ROOT).as_posix(), cwd=ROOT
    )
    got = Counter((f["path"], f["line"], f["rule"]) for f in json.loads(proc.stdout)["findings"])
    assert got == want


def test_the_bad_examples_cover_every_rule() -> None:
    shown = {
        code
        for path in [*BAD, *CHART_FILES]
        for _, code, _ in expectation_list(path.read_bytes().decode("utf-8", "replace"))
    }
    # The catalog of GPU and YAML rules (later rule families bring their own examples). The
    # rules that judge pods against a described cluster say nothing on `gpulint check
    # examples/`: GPU050's walk-through has its nodes (README "Will it schedule?"), and
    # GPU051-GPU059's examples are the fixtures with a `# cluster:` line and docs/cluster.md.
    # Opt-in rules (GPU003) are not in the default selection the examples are linted with.
    needs_cluster = {"GPU050": ROOT / "docs" / "cluster-tutorial" / "nodes.yaml"}
    assert all(path.exists() for path in needs_cluster.values())
    cluster_rules = {*needs_cluster, *(f"GPU05{i}" for i in range(1, 10))}
    assert shown >= {
        r.code
        for r in load_rules()
        if r.code.startswith(("GPU", "YML")) and r.code not in cluster_rules and not r.opt_in
    }


def test_the_seed_cgpu_example_points_to_the_compute_share() -> None:
    path = EXAMPLES / "bad-inference.yaml"
    (line,) = [
        n
        for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "aliyun.com/gpu-count: 25  # 25% of GPU compute" in text
    ]
    found = [
        f for f in Linter(load_rules()).lint_bytes(str(path), path.read_bytes()) if f.line == line
    ]
    assert [f.rule for f in found] == ["GPU012"]
    assert "aliyun.com/gpu-core.percentage" in said(found[0])


def test_make_demo_shows_real_findings() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "gpulint check examples/" in makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    proc = subprocess.run(
        [*gpulint_cmd(), "check", "examples/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert len(lines) > len(BAD)
    assert lines[-2].startswith("note: assumed GPU taint nvidia.com/gpu=present:NoSchedule")
    assert all(line.startswith(("examples/bad-", "  help: ")) for line in lines[:-2])
    assert lines[-1].startswith("Found ")
