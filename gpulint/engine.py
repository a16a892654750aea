"""Workloads -> findings: run the selected rules and stamp code, severity and position."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpulint.model import Finding, LintedObject, ObjectRef, Path, Severity
from gpulint.registry import Registry, builtin_registry
from gpulint.rule import Rule, RuleContext, Violation
from gpulint.workloads import K8sObject, WorkloadTable, builtin_table, objects
from gpulint.yamlload import Document, Problem, decode, load_text


@dataclass(slots=True)
class Settings:
    """Everything that decides what a run reports (already validated)."""

    select: frozenset[str] | None = None  # None: every rule
    ignore: frozenset[str] = frozenset()
    extend_select: frozenset[str] = frozenset()
    severities: Mapping[str, Severity] = field(default_factory=dict)
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    fail_on: Severity = Severity.ERROR
    registry: Registry | None = None
    workloads: WorkloadTable | None = None


def _matches(code: str, selectors: Iterable[str]) -> bool:
    """ruff-style selection: ``GPU`` matches every GPU rule, ``GPU0`` GPU001..GPU099, ..."""
    return any(code.startswith(sel) for sel in selectors) or "ALL" in selectors


def is_enabled(code: str, settings: Settings) -> bool:
    selected = settings.select is None or _matches(code, settings.select)
    selected = selected or _matches(code, settings.extend_select)
    return selected and not _matches(code, settings.ignore)


@dataclass(slots=True)
class _Active:
    rule: Rule
    severity: Severity
    ctx: RuleContext


class Linter:
    """Lints sources with a fixed set of rules and settings."""

    def __init__(self, rules: Iterable[Rule], settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.registry = self.settings.registry or builtin_registry()
        self.workloads = self.settings.workloads or builtin_table()
        self.active: dict[str, _Active] = {}
        for rule in rules:
            if not is_enabled(rule.code, self.settings):
                continue
            options = {**rule.default_options(), **self.settings.options.get(rule.code, {})}
            severity = self.settings.severities.get(rule.code, rule.severity)
            self.active[rule.code] = _Active(rule, severity, RuleContext(self.registry, options))
        self.pod_rules = [a for a in self.active.values() if a.rule.scope == "pod"]
        self.object_rules = [a for a in self.active.values() if a.rule.scope == "object"]

    # -- entry points --------------------------------------------------------------------------
    def lint_bytes(
        self, label: str, raw: bytes, seen: list[LintedObject] | None = None
    ) -> list[Finding]:
        text, problem = decode(raw)
        if text is None:
            assert problem is not None
            return self._problem_findings(label, [problem], None)
        return self.lint_text(label, text, seen)

    def lint_text(
        self, label: str, text: str, seen: list[LintedObject] | None = None
    ) -> list[Finding]:
        """Findings in ``text``; objects linted are appended to ``seen`` when it is given."""
        result = load_text(text)
        findings: list[Finding] = []
        for doc in result.documents:
            findings.extend(self._problem_findings(label, doc.problems, doc))
            findings.extend(self.lint_document(label, doc, seen))
        findings.extend(self._problem_findings(label, result.problems, None))
        findings.sort(key=Finding.sort_key)
        return findings

    def problem(self, label: str, problem: Problem) -> list[Finding]:
        """A finding for a problem found outside the YAML (unreadable file, ...)."""
        return self._problem_findings(label, [problem], None)

    def lint_document(
        self, label: str, doc: Document, seen: list[LintedObject] | None = None
    ) -> list[Finding]:
        findings: list[Finding] = []
        if not self.pod_rules and not self.object_rules:
            return findings
        for obj in objects(doc):
            for active in self.object_rules:
                findings.extend(self._run(active, obj, obj, label, doc))
            pods = self.workloads.pod_specs(obj) if self.pod_rules else []
            for pod in pods:
                for active in self.pod_rules:
                    findings.extend(self._run(active, pod, obj, label, doc))
            if seen is not None:
                ran = self.object_rules + (self.pod_rules if pods else [])
                codes = tuple(sorted(a.rule.code for a in ran))
                seen.append(LintedObject(label, doc.index, obj.ref, codes))
        return findings

    # -- helpers -----------------------------------------------------------------------------
    def _run(
        self, active: _Active, target: Any, obj: K8sObject, label: str, doc: Document
    ) -> list[Finding]:
        rule = active.rule
        assert rule.check is not None
        out = []
        for violation in rule.check(target, active.ctx):
            out.append(self._finding(active, violation, obj.ref, label, doc))
        return out

    def _finding(
        self, active: _Active, v: Violation, ref: ObjectRef | None, label: str, doc: Document
    ) -> Finding:
        span = doc.value_span(v.path) if v.at == "value" else doc.key_span(v.path)
        return Finding(
            rule=active.rule.code,
            name=active.rule.name,
            severity=active.severity,
            path=label,
            span=span,
            message=v.message,
            object=ref,
            doc_path=v.path,
            document=doc.index,
        )

    def _problem_findings(
        self, label: str, problems: Iterable[Problem], doc: Document | None
    ) -> list[Finding]:
        out = []
        for problem in problems:
            active = self.active.get(problem.code)
            if active is None:
                continue
            out.append(
                Finding(
                    rule=problem.code,
                    name=active.rule.name,
                    severity=active.severity,
                    path=label,
                    span=problem.span,
                    message=problem.message,
                    object=_owner(doc, problem.doc_path) if doc is not None else None,
                    doc_path=problem.doc_path,
                    document=doc.index if doc is not None else 0,
                )
            )
        return out


def _owner(doc: Document, path: Path) -> ObjectRef | None:
    """The Kubernetes object that contains ``path``, if any."""
    best = None
    for obj in objects(doc):
        if path[: len(obj.path)] == obj.path:
            best = obj.ref
    return best
