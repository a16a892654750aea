"""``--format junit``: JUnit XML for GitLab merge-request test reports, Jenkins and others.

The shape (valid against the Jenkins JUnit schema, ``junit-10.xsd``)::

    <testsuites name="gpulint" tests= failures= errors= time=>
      <testsuite name="k8s/app.yaml" file="k8s/app.yaml" tests= failures= errors= skipped= ...>
        <testcase classname="Deployment/serving/llama" name="GPU001 extended-resource-...">
          <failure type="error" message="25:13: nvidia.com/gpu is requested ...">...</failure>
        </testcase>

- One test suite per file that holds a Kubernetes object or a finding.
- One test case per object and rule: every rule that ran on the object is a case, so a
  clean object shows as passing cases (object-scope rules run on every object, pod-scope
  rules only on objects with a pod spec). The class name is ``Kind/namespace/name``
  (``Kind/name`` without a namespace).
- A case fails when the rule reported on the object, whatever the severity (the exit code
  still follows ``--fail-on``); the failure lists every finding of that rule on that object
  as ``path:line:col: CODE severity: message``. Findings outside any object (a YAML syntax
  error) are cases whose class name is the file path.
- A case whose findings are all suppressed is ``skipped``, with the justification.
- Tool errors (a path that does not exist) are ``error`` cases in a suite named ``gpulint``.
- A rule that raised on an object (GL900) is an ``error`` case of that object, named
  ``GL900 rule-error``, whose message names the rule; the rule that raised has no passing
  case for that object.

Names, messages and paths are printed as in the text format (:mod:`gpulint.util.textsafe`):
control characters and line separators in their visible form (``\\n``, ``\\x1b``), an
undecodable file-name byte as ``\\xff``, and the two characters XML 1.0 cannot hold either
way (U+FFFE, U+FFFF) as ``\\ufffe``/``\\uffff`` -- so the XML is valid whatever the input, and
each line of a failure's text is one finding.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpulint.model import RULE_ERROR_CODE, Finding, ObjectRef
from gpulint.report import Report
from gpulint.reporters import ReportContext
from gpulint.reporters.text import format_finding
from gpulint.util.textsafe import escape

#: The run must hand over every object linted, not only those with findings.
NEEDS_OBJECTS = True

#: What is left after :func:`escape` that XML 1.0 cannot carry: U+FFFE and U+FFFF.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

ObjectKey = tuple[str, int, ObjectRef | None]


def _xml_text(text: str) -> str:
    """One line that XML 1.0 can carry: escaped as in the text format, then U+FFFE/U+FFFF."""
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", escape(text))


def classname(ref: ObjectRef | None, path: str) -> str:
    if ref is None:
        return path
    name = ref.name or "?"
    middle = f"{ref.namespace}/" if ref.namespace else ""
    return f"{ref.kind or '?'}/{middle}{name}"


@dataclass(slots=True)
class _Case:
    key: ObjectKey
    rule: str
    findings: list[Finding] = field(default_factory=list)


@dataclass(slots=True)
class _Suite:
    path: str
    cases: dict[tuple[ObjectKey, str], _Case] = field(default_factory=dict)

    def case(self, key: ObjectKey, rule: str) -> _Case:
        found = self.cases.get((key, rule))
        if found is None:
            found = self.cases[(key, rule)] = _Case(key, rule)
        return found


def _suites(report: Report) -> dict[str, _Suite]:
    suites: dict[str, _Suite] = {}

    def suite(path: str) -> _Suite:
        if path not in suites:
            suites[path] = _Suite(path)
        return suites[path]

    for obj in report.objects:
        key: ObjectKey = (obj.path, obj.document, obj.object)
        for code in obj.rules:
            suite(obj.path).case(key, code)
    for f in report.findings:
        key = (f.path, f.document, f.object)
        suite(f.path).case(key, f.rule).findings.append(f)
    return suites


def _case_element(case: _Case, names: dict[str, str], path: str) -> tuple[ET.Element, str]:
    """The ``<testcase>`` and its outcome: "passed", "failed" or "skipped"."""
    label = names.get(case.rule) or (case.findings[0].name if case.findings else "")
    element = ET.Element(
        "testcase",
        {
            "classname": _xml_text(classname(case.key[2], path)),
            "name": _xml_text(f"{case.rule} {label}".strip()),
            "time": "0",
        },
    )
    active = [f for f in case.findings if f.suppression is None]
    if active and case.rule == RULE_ERROR_CODE:
        # A rule that raised: the check could not run, a JUnit error (not a failure).
        error = ET.SubElement(
            element,
            "error",
            {"type": case.rule, "message": _xml_text(active[0].message)},
        )
        error.text = _finding_lines(active)
        return element, "error"
    if active:
        worst = max(active, key=lambda f: f.severity)
        first = active[0]
        failure = ET.SubElement(
            element,
            "failure",
            {
                "type": worst.severity.label,
                "message": _xml_text(f"{first.line}:{first.column}: {first.message}"),
            },
        )
        failure.text = _finding_lines(active)
        return element, "failed"
    if case.findings:
        reasons = sorted(
            {
                f.suppression.justification or f.suppression.source
                for f in case.findings
                if f.suppression
            }
        )
        ET.SubElement(
            element, "skipped", {"message": _xml_text("suppressed: " + "; ".join(reasons))}
        )
        return element, "skipped"
    return element, "passed"


def _suite_element(
    name: str, cases: Iterable[tuple[ET.Element, str]], timestamp: str | None
) -> tuple[ET.Element, int, int, int]:
    cases = list(cases)
    failed = sum(1 for _, outcome in cases if outcome == "failed")
    errors = sum(1 for _, outcome in cases if outcome == "error")
    skipped = sum(1 for _, outcome in cases if outcome == "skipped")
    attrs = {
        "name": _xml_text(name),
        "tests": str(len(cases)),
        "failures": str(failed),
        "errors": str(errors),
        "skipped": str(skipped),
        "time": "0",
    }
    if timestamp:
        attrs["timestamp"] = timestamp
    if name != "gpulint":
        attrs["file"] = _xml_text(name)
    element = ET.Element("testsuite", attrs)
    element.extend(case for case, _ in cases)
    return element, len(cases), failed, errors


def render(report: Report, ctx: ReportContext) -> str:
    names = {r.code: r.name for r in ctx.rules}
    timestamp = ctx.start_time.strftime("%Y-%m-%dT%H:%M:%S") if ctx.start_time else None
    elapsed = 0.0
    if ctx.start_time is not None and ctx.end_time is not None:
        elapsed = max(0.0, (ctx.end_time - ctx.start_time).total_seconds())
    root = ET.Element("testsuites", {"name": "gpulint"})
    tests = failures = errors = 0
    for path, suite in _suites(report).items():
        cases = [_case_element(case, names, path) for case in suite.cases.values()]
        element, n, failed, errored = _suite_element(path, cases, timestamp)
        root.append(element)
        tests, failures, errors = tests + n, failures + failed, errors + errored
    if ctx.errors:
        error_cases = []
        for message in ctx.errors:
            path, _, reason = message.partition(": ")
            case = ET.Element("testcase", {"classname": "gpulint", "name": _xml_text(path)})
            ET.SubElement(case, "error", {"type": "error", "message": _xml_text(reason or path)})
            error_cases.append((case, "error"))
        element, n, failed, errored = _suite_element("gpulint", error_cases, timestamp)
        root.append(element)
        tests, failures, errors = tests + n, failures + failed, errors + errored
    root.set("tests", str(tests))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    root.set("time", f"{elapsed:.3f}")
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _finding_lines(findings: list[Finding]) -> str:
    """The findings as the text format prints them: each one's line and its help line."""
    return "\n".join(_xml_text(line) for f in findings for line in format_finding(f).split("\n"))
