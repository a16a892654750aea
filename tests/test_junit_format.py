"""``--format junit`` checked by real consumers: the Jenkins JUnit schema (junit-10.xsd, via
xmlschema) and junitparser, the JUnit reader used by CI report tooling.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from gpulint.lint.finder import load_rules
from gpulint.model import Finding, ObjectRef, Severity, Span, Suppression
from gpulint.report import Report
from gpulint.reporters import ReportContext, junit
from tests.conftest import CORPUS, ROOT, needs_corpus
from tests.externals import gpulint, junit_schema

BROKEN_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: broken
spec:
  containers:
  - name: a
    image: [unclosed
"""


def _junit(*args: str, cwd: Path = ROOT) -> tuple[str, int]:
    proc = gpulint("check", "--format", "junit", *args, cwd=cwd)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return proc.stdout, proc.returncode


def _validate(xml: str) -> JUnitXml:
    junit_schema().validate(xml)
    parsed = JUnitXml.fromstring(xml)
    # The counts the suites declare are the counts of their cases.
    total = {"tests": 0, "failures": 0, "errors": 0}
    for suite in parsed:
        cases = list(suite)
        outcomes = [type(c.result[0]) if c.result else None for c in cases]
        assert suite.tests == len(cases)
        assert suite.failures == outcomes.count(Failure)
        assert suite.errors == outcomes.count(Error)
        assert suite.skipped == outcomes.count(Skipped)
        total["tests"] += suite.tests
        total["failures"] += suite.failures
        total["errors"] += suite.errors
    root_attrs = {k: int(parsed._elem.get(k)) for k in total}
    assert root_attrs == total
    return parsed


@pytest.mark.parametrize(
    ("args", "cwd"),
    [
        (("examples",), ROOT),
        (("tests/fixtures/rules",), ROOT),
        pytest.param((".",), CORPUS, marks=needs_corpus),
        (("examples", "no/such.yaml"), ROOT),
    ],
    ids=["examples", "fixtures", "corpus", "missing-path"],
)
def test_valid_against_the_jenkins_junit_schema(args: tuple[str, ...], cwd: Path) -> None:
    xml, _ = _junit(*args, cwd=cwd)
    _validate(xml)


def _findings(*args: str) -> list[dict[str, Any]]:
    out = json.loads(gpulint("check", "--format", "json", *args, cwd=ROOT).stdout)
    findings: list[dict[str, Any]] = out["findings"]
    return findings


def _object_class(obj: dict[str, Any] | None, path: str) -> str:
    if obj is None:
        return path
    ns = f"{obj['namespace']}/" if obj["namespace"] else ""
    return f"{obj['kind']}/{ns}{obj['name'] if obj['name'] is not None else '?'}"


def _label(obj: dict[str, Any]) -> str:
    """An object as the text report names it: ``Kind/name``, ``?`` for a missing name."""
    return f"{obj['kind']}/{obj['name'] if obj['name'] is not None else '?'}"


def test_one_case_per_object_and_rule_failing_where_the_rule_reported() -> None:
    xml, code = _junit("examples")
    assert code == 1
    parsed = _validate(xml)
    expected: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in _findings("examples"):
        key = (f["path"], _object_class(f["object"], f["path"]), f["rule"])
        expected[key].append(f)

    failed = {}
    for suite in parsed:
        for case in suite:
            rule = case.name.split(" ", 1)[0]
            if case.result:
                failed[(suite.name, case.classname, rule)] = case
    assert set(failed) == set(expected)
    for key, case in failed.items():
        (failure,) = case.result
        assert isinstance(failure, Failure)
        # The failure lists the findings as the text format prints them, each with its help.
        assert failure.text.splitlines() == [
            line
            for f in expected[key]
            for line in (
                f"{f['path']}:{f['line']}:{f['column']}: {f['rule']} {f['severity']}: "
                f"{f['message']}" + (f" [{_label(f['object'])}]" if f["object"] else ""),
                *([f"  help: {f['help']}"] if f["help"] else []),
            )
        ]
        first = expected[key][0]
        assert failure.message == f"{first['line']}:{first['column']}: {first['message']}"
        # the worst severity of the case's findings (a rule may report one object twice,
        # at different severities: GPU062's rejected name and its assumed claim)
        order = ["info", "warning", "error"]
        worst = max((f["severity"] for f in expected[key]), key=order.index)
        assert failure.type == worst


def test_clean_objects_show_as_passing_cases_of_every_rule_that_ran() -> None:
    xml, code = _junit("examples/good-training-job.yaml")
    assert code == 0
    (suite,) = _validate(xml)
    assert suite.name == "examples/good-training-job.yaml"
    assert suite.failures == suite.errors == suite.skipped == 0
    # Every rule of the default selection (opt-in ones do not run).
    pod_rules = sorted(
        r.code for r in load_rules() if r.scope in ("pod", "object") and not r.opt_in
    )
    by_object: dict[str, list[str]] = defaultdict(list)
    for case in suite:
        assert case.is_passed
        by_object[case.classname].append(case.name.split(" ", 1)[0])
    assert set(by_object) == {"Job/research/bert-finetune", "Deployment/research/model-gateway"}
    for codes in by_object.values():
        assert codes == pod_rules


def test_findings_outside_any_object_are_cases_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text(BROKEN_YAML, encoding="utf-8")
    xml, code = _junit("broken.yaml", cwd=tmp_path)
    assert code == 1
    (suite,) = _validate(xml)
    (case,) = list(suite)
    assert (case.classname, case.name) == ("broken.yaml", "YML001 yaml-syntax-error")
    assert isinstance(case.result[0], Failure)


def test_missing_paths_are_errors_of_a_gpulint_suite() -> None:
    xml, code = _junit("examples", "no/such.yaml")
    assert code == 2
    suites = {s.name: s for s in _validate(xml)}
    (case,) = list(suites["gpulint"])
    (error,) = case.result
    assert isinstance(error, Error)
    assert (case.name, error.message) == ("no/such.yaml", "no such file or directory")


def test_suppressed_findings_are_skipped_cases_with_the_reason() -> None:
    ref = ObjectRef("apps/v1", "Deployment", None, "llama")
    findings = [
        Finding(
            "GPU001",
            "extended-resource-requests-without-limits",
            Severity.ERROR,
            "k8s/app.yaml",
            Span(25, 13, 25, 27),
            "nvidia.com/gpu is requested without a limit",
            ref,
            suppression=Suppression("inSource", "comment", "reserved by the operator"),
        ),
        Finding(
            "GPU004",
            "fractional-extended-resource",
            Severity.WARNING,
            "k8s/app.yaml",
            Span(30, 29, 30, 32),
            "not whole \x01 \x1b[31m",  # characters XML 1.0 cannot carry
            ref,
        ),
    ]
    ctx = ReportContext(load_rules(), Severity.ERROR, 0)
    (suite,) = _validate(junit.render(Report(findings, files=1), ctx))
    cases = {c.name.split(" ", 1)[0]: c for c in suite}
    (skipped,) = cases["GPU001"].result
    assert isinstance(skipped, Skipped)
    assert skipped.message == "suppressed: reserved by the operator"
    (failure,) = cases["GPU004"].result
    assert failure.type == "warning"
    assert failure.message == "30:29: not whole \\x01 \\x1b[31m"


def test_an_error_case_lists_one_finding_a_line() -> None:
    # Two rules that raised on one object are one GL900 case: each finding is a line of its
    # text, as in a failure's (the lines were once joined by a visible "\n").
    ref = ObjectRef("v1", "Pod", "ml", "trainer")
    findings = [
        Finding(
            "GL900",
            "rule-error",
            Severity.ERROR,
            "k8s/pod.yaml",
            Span(1, 1, 1, 1),
            f"rule {code} raised ValueError: \x1b[31m",
            ref,
        )
        for code in ("BUG001", "BUG002")
    ]
    ctx = ReportContext(load_rules(), Severity.ERROR, 2)
    (suite,) = _validate(junit.render(Report(findings, files=1), ctx))
    (case,) = suite
    (error,) = case.result
    assert isinstance(error, Error)
    assert error.text.split("\n") == [
        f"k8s/pod.yaml:1:1: GL900 error: rule {code} raised ValueError: \\x1b[31m [Pod/trainer]"
        for code in ("BUG001", "BUG002")
    ]


def test_a_chart_values_file_is_one_case_per_rule_under_the_files_name() -> None:
    """A chart's values file read as written holds no object: its checks and findings are
    one case per rule, named after the file (not a nameless object's `?/?` beside it)."""
    xml, _ = _junit("--isolated", "--no-cache", "examples/bad-jupyterhub-config.yaml")
    cases = [case for suite in _validate(xml) for case in suite]
    assert cases[0].classname == "examples/bad-jupyterhub-config.yaml"
    assert cases[0].name == "GPU034 jupyterhub-spawner-setting"
    assert isinstance(cases[0].result[0], Failure)
    # the other rules that read a chart's values file (the GPU Operator's keys) pass here
    assert all(c.classname == "examples/bad-jupyterhub-config.yaml" for c in cases)
    assert all(not c.result for c in cases[1:])
