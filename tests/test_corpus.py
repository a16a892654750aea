"""Every real-world manifest of the corpus (``GPULINT_CORPUS``) is linted without a crash.

The corpus (MANIFEST.tsv, INVALID.tsv) records facts about each file; where a fact decides a
finding it is checked here, so the rules stay honest on YAML written by other people.
"""

from __future__ import annotations

import csv
import json
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.markdown import markdown_file
from gpulint.model import Finding
from gpulint.util.discover import YAML_SUFFIXES
from tests.conftest import CORPUS, ROOT, gpulint_cmd, needs_corpus, said

pytestmark = needs_corpus

FILES = sorted(
    p
    for p in (CORPUS.rglob("*") if CORPUS else ())
    if p.is_file() and p.name.endswith(YAML_SUFFIXES)
)
INVALID = {p for p in FILES if CORPUS and "_invalid" in p.relative_to(CORPUS).parts}


def table(name: str) -> list[dict[str, str]]:
    assert CORPUS is not None
    with (CORPUS / name).open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.fixture(scope="module")
def findings() -> dict[Path, list[Finding]]:
    """One in-process linter over every file, all rules on."""
    linter = Linter(load_rules())
    return {path: linter.lint_bytes(str(path), path.read_bytes()) for path in FILES}


def test_the_corpus_is_there() -> None:
    assert len(FILES) == len(table("MANIFEST.tsv")) + len(table("INVALID.tsv"))
    assert len(INVALID) == len(table("INVALID.tsv")) > 0


def test_every_finding_is_well_formed(findings: dict[Path, list[Finding]]) -> None:
    codes = {r.code for r in load_rules()}
    for path, found in findings.items():
        lines = path.read_bytes().count(b"\n") + 1
        for f in found:
            assert f.rule in codes
            assert 1 <= f.span.line <= f.span.end_line <= lines + 1, (path, f)
            assert f.span.column >= 1 and f.span.end_column >= 1
            if f.span.end_line == f.span.line:
                assert f.span.end_column >= f.span.column, (path, f)
            if f.rule.startswith("GPU"):
                assert f.object is not None and f.object.kind, (path, f)
            assert f.message.strip() == f.message and f.message


#: Invalid files that a placeholder keeps from parsing (a documentation sample's
#: `{username}/torchserve-gpu:latest`): templates, one GL205 notice each.
TEMPLATES = {"_invalid/kserve__kserve/docs__samples__v1beta1__custom__torchserve__gpu.yaml"}


def test_invalid_files_are_syntax_errors(findings: dict[Path, list[Finding]]) -> None:
    for path in INVALID:
        template = path.relative_to(Path(CORPUS or "")).as_posix() in TEMPLATES
        assert [f.rule for f in findings[path]] == ["GL205" if template else "YML001"], path


def test_valid_files_have_no_syntax_errors(findings: dict[Path, list[Finding]]) -> None:
    for path in set(FILES) - INVALID:
        assert not [f for f in findings[path] if f.rule in ("YML001", "YML005")], path


def test_corpus_facts(findings: dict[Path, list[Finding]]) -> None:
    by_flag: dict[str, list[Path]] = defaultdict(list)
    for row in table("MANIFEST.tsv"):
        for flag in row["flags"].split(","):
            by_flag[flag].append(Path(CORPUS or "") / row["file"])

    def rules(path: Path) -> set[str]:
        return {f.rule for f in findings[path]}

    # Two `resources:` blocks in one container and other repeated keys.
    assert by_flag["DUPLICATE_KEYS"]
    for path in by_flag["DUPLICATE_KEYS"]:
        assert "YML002" in rules(path), path
    # `nvidia.com/gpu: 0` is a CPU pod: no GPU toleration needed.
    assert by_flag["GPU_VALUE_ZERO"]
    for path in by_flag["GPU_VALUE_ZERO"]:
        assert "GPU020" not in rules(path), path
    # No corpus file is binary or mis-encoded.
    assert not any("YML005" in rules(path) for path in FILES)
    # The in-tree GPU resource of Kubernetes 1.6-1.10 is reported with its replacement.
    legacy = [p for p in FILES if b"alpha.kubernetes.io/nvidia-gpu" in p.read_bytes()]
    assert legacy
    for path in legacy:
        messages = [said(f) for f in findings[path] if f.rule == "GPU010"]
        assert messages and all("nvidia.com/gpu" in m for m in messages), path


def test_dra_pods_that_tolerate_the_gpu_taint_are_not_cpu_pods(
    findings: dict[Path, list[Finding]],
) -> None:
    dra = [p for p in FILES if b"resourceClaims:" in p.read_bytes()]
    assert dra
    for path in dra:
        pods = [
            f for f in findings[path] if f.rule == "GPU021" and f.object and f.object.kind == "Pod"
        ]
        assert not pods, path


def test_the_cli_over_the_whole_corpus() -> None:
    proc = subprocess.run(
        [*gpulint_cmd(), "check", "--format", "json", str(CORPUS)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1)
    assert "Traceback" not in proc.stderr
    assert proc.stderr == ""
    report = json.loads(proc.stdout)
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator(schema).validate(report)
    # The corpus's Markdown (its README) is walked too: the manifests of its fenced blocks.
    markdown = [p for p in CORPUS.rglob("*") if p.is_file() and markdown_file(p.name)]
    assert report["summary"]["files"] == len(FILES) + len(markdown)
    assert report["summary"]["exit_code"] == proc.returncode
