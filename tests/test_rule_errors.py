"""A rule that raises is a GL900 finding for that object; everything else is still checked.

Every format is read by its real consumer: the JSON report schema, the official SARIF schema
and Microsoft's SARIF Multitool, the Jenkins JUnit schema with junitparser, and the Actions
runner's workflow-command syntax. The exit code is 2, serially and with worker processes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from junitparser import Error, JUnitXml

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.lint.runner import PARALLEL_MIN_FILES
from gpulint.model import RULE_ERROR_CODE, Severity
from gpulint.rule import Rule, Violation
from tests.conftest import ROOT, gpulint_subprocess
from tests.externals import (
    assert_schema_valid,
    gpulint,
    junit_schema,
    multitool_validate,
)
from tests.test_cli import GPU_POD, parse_text
from tests.test_github_format import parse_command

DOCS = '''"""A rule with a bug.

## What it does
Raises.
## Why it matters
It tests the engine.
## Example
Any pod.
## Use instead
Nothing.
## Options
None.
## References
None.
"""
'''

#: Raises on every pod spec, after reporting one finding on the pod spec's key.
BROKEN_RULE = (
    DOCS
    + """
from gpulint.rule import Violation

CODE = "BUG001"
NAME = "buggy-rule"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod, ctx):
    yield Violation(pod.path, "reported before the bug")
    raise KeyError("no such key")
"""
)

#: A rule that ends the process if it can.
EXITING_RULE = (
    DOCS
    + """
import sys

CODE = "BUG002"
NAME = "exiting-rule"
SEVERITY = "error"
SCOPE = "object"


def check(obj, ctx):
    sys.exit(0)
"""
)

MANIFESTS = {
    "a-job.yaml": (ROOT / "examples" / "good-training-job.yaml").read_text(encoding="utf-8"),
    "b-inference.yaml": (ROOT / "examples" / "bad-inference.yaml").read_text(encoding="utf-8"),
    "c-pod.yaml": GPU_POD,
}


def _project(tmp_path: Path, copies: int = 1) -> Path:
    """A repository with a broken rule folder and manifests (``copies`` of each)."""
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "buggy.py").write_text(BROKEN_RULE, encoding="utf-8")
    (tmp_path / "policy" / "exiting.py").write_text(EXITING_RULE, encoding="utf-8")
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [policy]\n", encoding="utf-8")
    k8s = tmp_path / "k8s"
    k8s.mkdir()
    for i in range(copies):
        for name, text in MANIFESTS.items():
            (k8s / (f"{i:03d}-{name}" if copies > 1 else name)).write_text(text, "utf-8")
    return tmp_path


def _objects(findings: list[dict[str, Any]], rule: str) -> list[tuple[str, str]]:
    return [(f["path"], f["object"]["name"]) for f in findings if f["rule"] == rule]


def _json(project: Path, *args: str) -> tuple[dict[str, Any], str, int]:
    proc = gpulint("check", "--allow-plugins", "--format", "json", *args, "k8s", cwd=project)
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout), proc.stderr, proc.returncode


def test_every_other_rule_and_file_is_still_reported_and_the_exit_code_is_2(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    report, stderr, code = _json(project)
    assert code == 2
    Draft202012Validator(
        json.loads((ROOT / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    ).validate(report)
    findings = report["findings"]
    # Without the broken rules, the same files give these findings: all still there.
    clean, _, clean_code = _json(project, "--isolated")
    assert clean_code == 1
    assert {(f["rule"], f["path"], f["line"]) for f in clean["findings"]} <= {
        (f["rule"], f["path"], f["line"]) for f in findings
    }
    # One GL900 per rule and object it raised on (object rules run on every object, the
    # pod rule on every object with a pod spec), at the object, naming rule and exception.
    errors = [f for f in findings if f["rule"] == RULE_ERROR_CODE]
    objects = {(f["path"], f["object"]["name"]) for f in clean["findings"] if f["object"]}
    assert objects <= set(_objects(findings, RULE_ERROR_CODE))
    for f in errors:
        assert f["severity"] == "error" and f["name"] == "rule-error"
        assert f["message"].startswith(("rule BUG001 (", "rule BUG002 ("))
        assert "policy" in f["message"]  # its module, in the rule folder
        assert f["yaml_path"] == [] or f["yaml_path"][0] == "items"
    bug1 = [f["message"] for f in errors if "BUG001" in f["message"]]
    assert bug1 and all("raised KeyError: 'no such key'" in m for m in bug1)
    bug2 = [f["message"] for f in errors if "BUG002" in f["message"]]
    assert bug2 and all("raised SystemExit: 0" in m for m in bug2)
    # What the rule reported before it raised is kept.
    assert set(_objects(findings, "BUG001")) == set(
        _objects([f for f in errors if "BUG001" in f["message"]], RULE_ERROR_CODE)
    )
    pod = next(f for f in errors if f["path"] == "k8s/c-pod.yaml" and "BUG001" in f["message"])
    assert (pod["line"], pod["column"]) == (1, 1)  # the Pod starts the file
    summary = report["summary"]
    assert summary["exit_code"] == 2 and summary["tool_errors"] == len(errors)
    # JSON on stdout: each one is also a line on stderr.
    lines = stderr.splitlines()
    assert len(lines) == len(errors)
    assert all(line.startswith("gpulint: error: k8s/") for line in lines)


def test_workers_report_the_same_as_a_serial_run(tmp_path: Path) -> None:
    copies = -(-PARALLEL_MIN_FILES // len(MANIFESTS)) + 1
    project = _project(tmp_path, copies)
    # Forked workers: real processes.
    serial = gpulint_subprocess("check", "--allow-plugins", "-j", "1", "k8s", cwd=project)
    parallel = gpulint_subprocess("check", "--allow-plugins", "-j", "2", "k8s", cwd=project)
    assert serial.returncode == parallel.returncode == 2
    assert parallel.stdout == serial.stdout
    findings = parse_text(serial.stdout)
    assert len({f["path"] for f in findings}) == copies * len(MANIFESTS)
    assert sum(f["rule"] == RULE_ERROR_CODE for f in findings) > copies
    last = serial.stdout.splitlines()[-1]
    assert "All checks passed" not in serial.stdout
    assert last.endswith("tool errors: not everything was checked.")
    assert "Traceback" not in serial.stderr + parallel.stderr


def test_text_and_github_show_it_once_with_the_summary(tmp_path: Path) -> None:
    project = _project(tmp_path)
    text = gpulint("check", "--allow-plugins", "k8s/c-pod.yaml", cwd=project)
    assert text.returncode == 2
    assert text.stderr == ""  # the text report already shows it
    findings = parse_text(text.stdout)
    errors = [f for f in findings if f["rule"] == RULE_ERROR_CODE]
    assert [(e["line"], e["object"]) for e in errors] == [("1", "Pod/trainer")] * 2
    assert {"GPU020", "GPU001", "BUG001"} <= {f["rule"] for f in findings}
    assert text.stdout.splitlines()[-1] == (
        "Found 5 problems (3 errors, 1 warning, 1 info) in 1 file; "
        "2 tool errors: not everything was checked."
    )

    github = gpulint(
        "check", "--allow-plugins", "--format", "github", "k8s/c-pod.yaml", cwd=project
    )
    assert github.returncode == 2
    commands = [parse_command(line) for line in github.stdout.splitlines()]
    parsed = [c for c in commands if c is not None]
    assert len(parsed) == len(findings)
    gl900 = [(name, props, msg) for name, props, msg in parsed if props["title"] == "GL900"]
    assert len(gl900) == 2
    for name, props, message in gl900:
        assert name == "error" and props["file"] == "k8s/c-pod.yaml" and props["line"] == "1"
        assert message.startswith("rule BUG00") and message.endswith("[Pod/trainer]")
    assert commands[-1] is None and "tool errors" in github.stdout.splitlines()[-1]


def test_sarif_records_results_and_an_unsuccessful_invocation(tmp_path: Path) -> None:
    project = _project(tmp_path)
    # --output: the file is written even though a rule raised, and stdout shows the text.
    proc = gpulint(
        "check", "--allow-plugins", "--format", "sarif", "--output", "out.sarif", "k8s", cwd=project
    )
    assert proc.returncode == 2
    assert parse_text(proc.stdout)
    log = json.loads((project / "out.sarif").read_text(encoding="utf-8"))
    assert_schema_valid(log)
    results = multitool_validate([project / "out.sarif"], tmp_path)
    assert results == [], results
    (run,) = log["runs"]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    gl900 = [r for r in run["results"] if r["ruleId"] == RULE_ERROR_CODE]
    notes = invocation["toolExecutionNotifications"]
    assert len(notes) == len(gl900) > 0
    for note, result in zip(notes, gl900, strict=True):
        assert note["level"] == "error" == result["level"]
        assert note["message"] == result["message"]
        assert note["locations"] == result["locations"]
    rule_ids = [d["id"] for d in run["tool"]["driver"]["rules"]]
    assert all(rule_ids[r["ruleIndex"]] == r["ruleId"] for r in run["results"])
    assert {"GPU001", "GPU020", "BUG001"} <= {r["ruleId"] for r in run["results"]}


def test_junit_makes_it_an_error_case_of_the_object(tmp_path: Path) -> None:
    project = _project(tmp_path)
    proc = gpulint("check", "--allow-plugins", "--format", "junit", "k8s", cwd=project)
    assert proc.returncode == 2
    junit_schema().validate(proc.stdout)
    xml = JUnitXml.fromstring(proc.stdout)
    errors = [
        (suite.name, case.classname, case.result[0].message)
        for suite in xml
        for case in suite
        if case.name == "GL900 rule-error" and isinstance(case.result[0], Error)
    ]
    assert ("k8s/c-pod.yaml", "Pod/ml/trainer") in {(s, c) for s, c, _ in errors}
    assert all(m.startswith("rule BUG00") for _, _, m in errors)
    assert sum(suite.errors for suite in xml) == len(errors)
    # The rule that raised has no passing case on that object; the others still do.
    pod_cases = {
        case.name: case
        for suite in xml
        if suite.name == "k8s/c-pod.yaml"
        for case in suite
        if case.classname == "Pod/ml/trainer"
    }
    assert "BUG002 exiting-rule" not in pod_cases
    assert pod_cases["GPU010 unknown-gpu-resource-name"].is_passed


def test_reported_whatever_the_selection_and_the_suppressions(tmp_path: Path) -> None:
    project = _project(tmp_path)
    silenced = "# gpulint: disable-file\n" + GPU_POD
    (project / "k8s" / "c-pod.yaml").write_text(silenced, encoding="utf-8")
    # GL900 is not selected, and a bare disable-file covers every rule: still reported.
    report, _, code = _json(project, "--select", "BUG001")
    assert code == 2
    shown = [f for f in report["findings"] if f["path"] == "k8s/c-pod.yaml"]
    assert [(f["rule"], f["suppressed"]) for f in shown] == [
        (RULE_ERROR_CODE, False),  # at the object
        ("BUG001", True),  # at its pod spec
    ]
    # A rule switched off does not run, so it cannot raise.
    report, _, code = _json(project, "--ignore", "BUG")
    assert code == 1 and report["summary"]["tool_errors"] == 0


# -- the engine, without the command line ------------------------------------------------------


def _rule(code: str, check: Any, scope: str = "pod") -> Rule:
    return Rule(code, "in-test", Severity.WARNING, scope, {}, DOCS, check, f"tests.{code}", "test")


def test_the_linter_turns_an_exception_into_a_finding_once_per_object() -> None:
    calls: list[str] = []

    def broken(pod: Any, ctx: Any) -> Any:
        calls.append(pod.path)
        yield Violation(pod.path, "first")
        raise ZeroDivisionError("division by zero\nwith a second line")

    two_pods = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ft}
spec:
  pytorchReplicaSpecs:
    Master: {template: {spec: {containers: [{name: a, image: x}]}}}
    Worker: {template: {spec: {containers: [{name: b, image: x}]}}}
"""
    rules = [*load_rules(), _rule("TST001", broken)]
    findings = Linter(rules).lint_text("job.yaml", two_pods)
    assert len(calls) == 2  # it still ran on the second pod spec
    tst = [f for f in findings if f.rule == "TST001"]
    assert len(tst) == 2
    (error,) = [f for f in findings if f.rule == RULE_ERROR_CODE]
    assert error.severity is Severity.ERROR and error.span.line == 1
    assert error.object is not None and error.object.name == "ft"
    assert error.message == (
        "rule TST001 (tests.TST001, test) raised ZeroDivisionError: division by zero with a "
        "second line: it did not finish checking this object (a bug in the rule; report it "
        "to its author)"
    )


def test_an_exception_that_cannot_be_printed_is_still_reported() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    def broken(obj: Any, ctx: Any) -> Any:
        raise Unprintable
        yield

    findings = Linter([_rule("TST002", broken, "object")]).lint_text("p.yaml", GPU_POD)
    (error,) = findings
    assert error.rule == RULE_ERROR_CODE
    assert "raised Unprintable: (its message cannot be shown)" in error.message


MALFORMED = {
    "a message that is not text": "Violation(pod.path, 5)",
    "a bytes message": 'Violation(pod.path, b"no GPU")',
    "an unknown at": 'Violation(pod.path, "m", at="line")',
    "an unknown severity": 'Violation(pod.path, "m", severity="fatal")',
}


def test_a_malformed_violation_is_a_rule_error_in_every_format(tmp_path: Path) -> None:
    # Yielding something the engine cannot report is the rule's bug too: a GL900 finding on
    # the object, never an internal error that loses the whole report.
    (tmp_path / "policy").mkdir()
    for i, violation in enumerate(MALFORMED.values()):
        code = f"BAD{i:03d}"
        body = f"""
from gpulint.rule import Violation

CODE = "{code}"
NAME = "malformed-{i}"
SEVERITY = "warning"
SCOPE = "pod"


def check(pod, ctx):
    yield {violation}
"""
        (tmp_path / "policy" / f"bad{i}.py").write_text(DOCS + body, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    for fmt in ("text", "json", "sarif", "github", "junit"):
        proc = gpulint("check", "--rule-dir", "policy", "--format", fmt, "pod.yaml", cwd=tmp_path)
        assert proc.returncode == 2, (fmt, proc.stderr)
        assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, fmt
    report = json.loads(
        gpulint("check", "--rule-dir", "policy", "-f", "json", "pod.yaml", cwd=tmp_path).stdout
    )
    errors = [f["message"] for f in report["findings"] if f["rule"] == RULE_ERROR_CODE]
    assert [m.split(" (", 1)[0] for m in errors] == [f"rule BAD{i:03d}" for i in range(4)]
    assert "raised TypeError: Violation.message must be a str, not int" in errors[0]
    assert "raised TypeError: Violation.message must be a str, not bytes" in errors[1]
    assert "raised ValueError: Violation.at must be 'key' or 'value', not 'line'" in errors[2]
    assert "raised ValueError: unknown severity 'fatal'" in errors[3]
    assert report["summary"]["tool_errors"] == 4


def test_a_violation_may_name_its_severity_as_the_module_does() -> None:
    def named(pod: Any, ctx: Any) -> Any:
        yield Violation(pod.path, "named", severity="info")

    (finding,) = Linter([_rule("TST003", named)]).lint_text("p.yaml", GPU_POD)
    assert finding.rule == "TST003" and finding.severity is Severity.INFO


def test_the_rule_is_documented() -> None:
    proc = gpulint("rule", "GL900")
    assert proc.returncode == 0
    assert "cannot be turned off" in proc.stdout
