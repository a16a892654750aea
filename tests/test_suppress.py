"""Suppressions: comments, annotations, configuration ignores, and stale ones (GL100).

Each manifest below carries its expectations as ``# expect:`` comments (see conftest): the
unsuppressed findings must be exactly those; the suppressed ones are checked separately.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpulint.lint.finder import load_rules
from gpulint.model import Finding
from gpulint.settings import Settings
from gpulint.suppress.findings import comment_directives
from tests.conftest import expectations, gpulint_in_process, lint as shared_lint, said


@pytest.fixture(scope="module")
def rules() -> list[Any]:
    return load_rules()


#: Every rule, the opt-in GPU003 too: the manifests below suppress its findings.
EVERY = Settings(select=frozenset({"ALL"}))


def lint(text: str, rules: list[Any], settings: Settings | None = None) -> list[Finding]:
    return shared_lint(text, rules=rules, settings=settings or EVERY)


def check_expectations(text: str, found: list[Finding]) -> None:
    want = {(line, code) for line, code, _ in expectations(text)}
    got = {(f.line, f.rule) for f in found if f.suppression is None}
    assert got == want, [f"{f.line}:{f.column} {f.rule} {said(f)}" for f in found]


def suppressed(found: list[Finding]) -> list[tuple[int, str, str, str, str | None]]:
    return [
        (f.line, f.rule, f.suppression.kind, f.suppression.source, f.suppression.justification)
        for f in found
        if f.suppression is not None
    ]


LINE_COMMENTS = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: jupyter
    image: jupyter/tensorflow-notebook:2024-05-27
    resources:
      requests:
        nvidia.com/gpu: 1  # gpulint: disable=GPU003 -- the request documents intent
      limits:
        nvidia.com/gpu: 1
        # gpulint: disable-next-line=GPU004,GPU002 -- MPS share, see ADR-7  # expect: GL100

        # (stacked comments and blank lines are skipped)
        nvidia.com/gpu-share: 0.5  # expect: GPU010
"""


def test_line_and_next_line_comments(rules: list[Any]) -> None:
    found = lint(LINE_COMMENTS, rules)
    check_expectations(LINE_COMMENTS, found)
    assert suppressed(found) == [
        (13, "GPU003", "inSource", "comment", "the request documents intent"),
        (19, "GPU004", "inSource", "comment", "MPS share, see ADR-7"),
    ]


def test_stale_codes_are_named(rules: list[Any]) -> None:
    # GPU002 is named in the disable-next-line comment but does not fire on line 19.
    stale = [f for f in lint(LINE_COMMENTS, rules) if f.rule == "GL100"]
    assert [(f.line, f.column, said(f)) for f in stale] == [
        (16, 9, "unused suppression: no GPU002 finding on line 19; remove the code")
    ]
    directives = comment_directives(LINE_COMMENTS)
    assert [(d.action, d.codes, d.target) for d in directives] == [
        ("disable", ("GPU003",), 13),
        ("disable-next-line", ("GPU004", "GPU002"), 19),
    ]


FILE_AND_ANNOTATIONS = """\
# gpulint: disable-file=GPU003 -- requests are written out for the capacity dashboard
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama-server
  annotations:
    gpulint.io/ignore: "GPU012"  # expect: GL100
    gpulint.io/ignore-reason: "gpu-count is set by the cGPU webhook"
spec:
  template:
    metadata:
      annotations:
        gpulint.io/ignore: GPU020
        gpulint.io/ignore-reason: GKE adds the toleration
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.5.4
        resources:
          requests:
            nvidia.com/gpu: 1
          limits:
            nvidia.com/gpu: 1
---
apiVersion: batch/v1
kind: Job
metadata:
  name: bert
spec:
  template:
    spec:  # expect: GPU020
      restartPolicy: Never
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests:
            nvidia.com/gpu: 2
          limits:
            nvidia.com/gpu: 2
"""


def test_file_comment_and_annotations(rules: list[Any]) -> None:
    found = lint(FILE_AND_ANNOTATIONS, rules)
    check_expectations(FILE_AND_ANNOTATIONS, found)
    why = "requests are written out for the capacity dashboard"
    assert sorted(suppressed(found)) == [
        (15, "GPU020", "inSource", "annotation", "GKE adds the toleration"),
        (21, "GPU003", "inSource", "comment", why),
        (38, "GPU003", "inSource", "comment", why),
    ]


def test_object_annotation_covers_the_whole_object_and_is_reported_when_stale(
    rules: list[Any],
) -> None:
    # The object-level GPU012 annotation suppresses nothing: GL100 at its value.
    stale = [f for f in lint(FILE_AND_ANNOTATIONS, rules) if f.rule == "GL100"]
    assert [(f.line, f.column, f.object and f.object.name) for f in stale] == [
        (7, 24, "llama-server")
    ]
    assert said(stale[0]) == (
        "unused suppression: no GPU012 finding in this object; remove the code"
    )


def test_annotation_all_and_object_scope(rules: list[Any]) -> None:
    text = FILE_AND_ANNOTATIONS.replace('"GPU012"', "all")
    found = lint(text, rules)
    # `all` on the Deployment silences its GPU003; the Job (another object) is untouched.
    assert {(f.line, f.rule) for f in found if f.suppression is None} == {(31, "GPU020")}
    kinds = {(f.line, f.suppression.source) for f in found if f.suppression is not None}
    assert (21, "comment") in kinds  # the comment comes first; the annotation is used too
    assert not [f for f in found if f.rule == "GL100"]


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("gpulint.io/ignore-reson", " (did you mean gpulint.io/ignore-reason?)"),
        ("gpulint.io/Ignore", " (did you mean gpulint.io/ignore?)"),
        ("gpulint.io/skip", ""),
    ],
)
def test_an_unknown_gpulint_annotation_key_is_gl100_at_the_key(
    rules: list[Any], key: str, hint: str
) -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
        f"    {key}: GPU020\n"
    )
    (finding,) = lint(text, rules)
    assert (finding.rule, finding.line, finding.column) == ("GL100", 6, 5)
    assert said(finding) == (
        f"unknown gpulint annotation {key}: it does nothing{hint}; gpulint reads "
        "gpulint.io/ignore and gpulint.io/ignore-reason"
    )


def test_reasons_are_optional(rules: list[Any]) -> None:
    text = LINE_COMMENTS.replace(" -- the request documents intent", "")
    found = lint(text, rules)
    assert (13, "GPU003", "inSource", "comment", None) in suppressed(found)


def test_comment_like_text_in_scalars_is_not_a_directive() -> None:
    text = """\
metadata:
  annotations:
    note: "see # gpulint: disable=GPU001"
    other: 'x # gpulint: disable=GPU002'
    plain: a#gpulint
script: |
  # gpulint: disable=GPU004
  echo hi
folded: >
  text
  # gpulint: disable=GPU005
flow: [a, "# gpulint: disable=GPU010"]  # gpulint: disable=GPU011
quoted: "multi
  line # gpulint: disable=GPU012"
"""
    directives = comment_directives(text)
    assert [(d.line, d.codes) for d in directives] == [(12, ("GPU011",))]


def test_directives_after_a_syntax_error_still_count() -> None:
    text = "a: [1, 2\nb: 3  # gpulint: disable=YML001\n"
    directives = comment_directives(text)
    assert [(d.line, d.codes) for d in directives] == [(2, ("YML001",))]


def test_directive_parsing() -> None:
    text = (
        "a: 1  # gpulint: disable\n"
        "b: 2  # gpulint: disable = gpu001 , GPU002 --  why not  # expect: X\n"
        "c: 3  # gpulint: disable=GPU001 GPU002\n"
        "d: 4  # gpulint: enable=GPU001\n"
        "e: 5  # noqa  # gpulint: disable-file -- generated\n"
        "# gpulint: disable-next-line=GPU001\n"
    )
    got = [(d.action, d.codes, d.reason, d.target, d.error) for d in comment_directives(text)]
    assert got[0] == ("disable", None, None, 1, None)
    assert got[1] == ("disable", ("GPU001", "GPU002"), "why not", 2, None)
    assert got[2][4] is not None and "separate codes with commas" in got[2][4]
    assert got[3][4] is not None and "unknown gpulint directive 'enable'" in got[3][4]
    assert got[4] == ("disable-file", None, "generated", None, None)
    assert got[5] == ("disable-next-line", ("GPU001",), None, None, None)


def test_gl100_can_be_silenced_only_by_naming_it(rules: list[Any]) -> None:
    text = "# gpulint: disable-file\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
    found = lint(text, rules)
    assert [(f.rule, f.suppression) for f in found] == [("GL100", None)]
    assert (
        said(found[0])
        == "unused suppression: there is no finding in this file to suppress; remove it"
    )
    named = text + "# gpulint: disable-file=GL100 -- kept for the next chart upgrade\n"
    found = lint(named, rules)
    assert [(f.rule, f.suppression is not None) for f in found] == [("GL100", True)]


def test_codes_of_disabled_rules_are_not_stale(rules: list[Any]) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x  # gpulint: disable=GPU021\n"
    assert [f.rule for f in lint(text, rules)] == ["GL100"]
    settings = Settings(ignore=frozenset({"GPU021"}))
    assert lint(text, rules, settings) == []


# -- through the command line -----------------------------------------------------------------
def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return gpulint_in_process(*args, cwd=cwd)


def test_suppressed_findings_do_not_fail_the_run_but_appear_in_json(tmp_path: Path) -> None:
    manifest = FILE_AND_ANNOTATIONS.split("---\n")[0]
    (tmp_path / "serving.yaml").write_text(manifest.replace('"GPU012"', "GPU003"))
    proc = run(["check", "-f", "json", "--extend-select", "GPU003", "serving.yaml"], tmp_path)
    assert proc.returncode == 0, proc.stdout
    doc = json.loads(proc.stdout)
    assert doc["summary"]["findings"] == 0
    assert doc["summary"]["suppressed"] == 2
    by_rule = {f["rule"]: f for f in doc["findings"]}
    assert by_rule["GPU020"]["suppressed"] is True
    assert by_rule["GPU020"]["suppression"] == {
        "kind": "inSource",
        "source": "annotation",
        "justification": "GKE adds the toleration",
    }
    text = run(["check", "--extend-select", "GPU003", "serving.yaml"], tmp_path)
    assert text.returncode == 0
    assert text.stdout == "All checks passed: no findings in 1 file, 2 suppressed.\n"


VENDORED = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin
  namespace: kube-system
spec:
  template:
    spec:
      tolerations:
      - operator: Exists
      containers:
      - name: plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.15.0
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: gpu-operator
  namespace: gpu-operator
spec:
  template:
    spec:
      tolerations:
      - operator: Exists
      containers:
      - name: operator
        image: nvcr.io/nvidia/gpu-operator:v24.3.0
"""


def test_per_object_and_per_file_ignores(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "operator.yaml").write_text(VENDORED)
    (tmp_path / "apps").mkdir()
    own = VENDORED.split("---\n")[1].replace("gpu-operator", "report")
    (tmp_path / "apps" / "report.yaml").write_text(own)
    (tmp_path / ".gpulint.yaml").write_text(
        "per-object-ignores:\n"
        "- kind: Deployment\n"
        "  namespace: gpu-*\n"
        "  name: gpu-op*\n"
        "  rules: [GPU021]\n"
        "  reason: vendored NVIDIA GPU Operator chart; upstream runs it on GPU nodes\n"
        "per-file-ignores:\n"
        "  'apps/*.yaml': [GPU02]\n"
    )
    proc = run(["check", "-f", "json", "."], tmp_path)
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    got = sorted(
        (f["path"], f["rule"], f["suppression"]["kind"], f["suppression"]["justification"])
        for f in doc["findings"]
    )
    assert got == [
        (
            "apps/report.yaml",
            "GPU021",
            "external",
            "per-file-ignores 'apps/*.yaml' (.gpulint.yaml:8)",
        ),
        (
            "vendor/operator.yaml",
            "GPU021",
            "external",
            "vendored NVIDIA GPU Operator chart; upstream runs it on GPU nodes",
        ),
    ]
    # The DaemonSet is a node agent: exempt from GPU021 without any ignore.
    isolated = json.loads(run(["check", "-f", "json", "--isolated", "."], tmp_path).stdout)
    assert sorted(f["path"] for f in isolated["findings"]) == [
        "apps/report.yaml",
        "vendor/operator.yaml",
    ]
