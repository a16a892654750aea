"""``--format gitlab``: GitLab's Code Quality report, checked against the report format GitLab
documents (tests/schemas/gitlab-code-quality.schema.json, written from its documentation;
GitLab publishes no machine-readable schema for it), with fingerprints unique in a report
and the same on every run and on every machine, and the docs/ci.md job run as written.
"""

from __future__ import annotations

import json
import re
import shutil
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from tests.conftest import ROOT
from tests.externals import gpulint
from tests.test_docs_recipes import _bash

SCHEMA = json.loads(
    (ROOT / "tests" / "schemas" / "gitlab-code-quality.schema.json").read_text(encoding="utf-8")
)
TREES = ("examples", "tests/fixtures/rules")


@cache
def _validator() -> Draft202012Validator:
    """The schema's validator, the schema itself checked once (the property test in
    test_output_safety.py validates a report per example)."""
    Draft202012Validator.check_schema(SCHEMA)
    return Draft202012Validator(SCHEMA)


def _valid(report: Any) -> None:
    errors = list(_validator().iter_errors(report))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:20])
    fingerprints = [issue["fingerprint"] for issue in report]
    assert len(set(fingerprints)) == len(fingerprints)


def test_the_report_follows_the_documented_format_with_unique_fingerprints() -> None:
    report = json.loads(gpulint("check", "--format", "gitlab", *TREES, cwd=ROOT).stdout)
    _valid(report)
    found = json.loads(gpulint("check", "--format", "json", *TREES, cwd=ROOT).stdout)
    shown = [f for f in found["findings"] if not f["suppressed"]]
    assert len(report) == len(shown) > 100  # one issue per finding, suppressed ones left out
    severities = {"error": "critical", "warning": "major", "info": "info"}
    for issue, f in zip(report, shown, strict=True):
        assert issue["check_name"] == f["rule"]
        assert issue["severity"] == severities[f["severity"]]
        assert issue["location"] == {
            "path": f["path"],
            "lines": {"begin": f["line"], "end": f["end_line"]},
        }
        assert f["message"].rstrip(".") in issue["description"]


def test_a_finding_that_shares_a_sarif_fingerprint_gets_its_own() -> None:
    """Stale comments outside any object share a SARIF fingerprint (its ``:N`` suffix tells
    them apart there): each still gets a fingerprint of its own."""
    report = json.loads(
        gpulint("check", "--format", "gitlab", "tests/fixtures/rules/GL100", cwd=ROOT).stdout
    )
    _valid(report)
    sarif = json.loads(
        gpulint("check", "--format", "sarif", "tests/fixtures/rules/GL100", cwd=ROOT).stdout
    )
    partial = [r["partialFingerprints"]["gpulint/v1"] for r in sarif["runs"][0]["results"]
               if not r.get("suppressions")]  # fmt: skip
    assert any(p.endswith(":2") for p in partial)  # the case exists in the fixtures
    assert len(report) == len(partial)  # each one an issue, none merged away


def test_fingerprints_are_the_same_on_every_run_and_machine(tmp_path: Path) -> None:
    """Another checkout (another absolute path), lines added above every document: the same
    fingerprints."""
    first = json.loads(gpulint("check", "--format", "gitlab", "examples", cwd=ROOT).stdout)
    again = json.loads(gpulint("check", "--format", "gitlab", "examples", cwd=ROOT).stdout)
    assert first and again == first  # findings to compare, not two empty reports
    copy = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "examples", copy / "examples")
    for path in (copy / "examples").rglob("*.yaml"):
        if path.name == "Chart.yaml":
            continue  # GL201 is at a chart's first line, wherever its text starts
        raw = path.read_bytes()
        path.write_bytes(b"# moved down\n\n" + raw)
    moved = json.loads(gpulint("check", "--format", "gitlab", "examples", cwd=copy).stdout)
    assert [i["fingerprint"] for i in moved] == [i["fingerprint"] for i in first]
    assert [i["location"]["lines"]["begin"] for i in moved] == [
        i["location"]["lines"]["begin"] + (0 if i["location"]["path"].endswith("Chart.yaml") else 2)
        for i in first
    ]


def test_the_gitlab_code_quality_job_writes_the_report_it_declares(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S)]
    (job,) = [
        job
        for doc in blocks
        if isinstance(doc, dict)
        for job in doc.values()
        if isinstance(job, dict) and "codequality" in job.get("artifacts", {}).get("reports", {})
    ]
    report = job["artifacts"]["reports"]["codequality"]
    assert job["artifacts"]["when"] == "always"
    (install, lint) = job["script"]
    assert install.startswith("pip install ")
    shutil.copytree(ROOT / "examples", tmp_path / "k8s")
    proc = _bash(lint, tmp_path)
    assert proc.returncode == 1  # the job fails on errors, and the report is still written
    issues = json.loads((tmp_path / report).read_text(encoding="utf-8"))
    _valid(issues)
    assert {i["location"]["path"].split("/")[0] for i in issues} == {"k8s"}
