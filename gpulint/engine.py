"""Workloads -> findings: run the selected rules and stamp code, severity and position."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from gpulint.dra import ClaimIndex, may_hold_dra
from gpulint.model import Finding, LintedObject, ObjectRef, Path, Severity
from gpulint.registry import Registry, builtin_registry
from gpulint.rule import Rule, RuleContext, Violation
from gpulint.suppress import (
    UNUSED_CODE,
    FileSuppressions,
    ObjectIgnore,
    PathIgnore,
    Suppressor,
    Unused,
)
from gpulint.workloads import K8sObject, WorkloadTable, builtin_table, objects
from gpulint.yamlload import Document, DocumentStream, Problem, decode


class RuleError(Exception):
    """A rule raised while checking: exit 2 with the rule and the object named."""


class Settings:
    """Everything that decides what a run reports (already validated)."""

    __slots__ = (
        "extend_select",
        "fail_on",
        "ignore",
        "options",
        "per_file_ignores",
        "per_object_ignores",
        "registry",
        "select",
        "severities",
        "workloads",
    )

    def __init__(
        self,
        select: frozenset[str] | None = None,  # None: every rule
        ignore: frozenset[str] = frozenset(),
        extend_select: frozenset[str] = frozenset(),
        severities: Mapping[str, Severity] = MappingProxyType({}),
        options: Mapping[str, Mapping[str, Any]] = MappingProxyType({}),
        fail_on: Severity = Severity.ERROR,
        registry: Registry | None = None,
        workloads: WorkloadTable | None = None,
        per_file_ignores: tuple[PathIgnore, ...] = (),
        per_object_ignores: tuple[ObjectIgnore, ...] = (),
    ) -> None:
        self.select = select
        self.ignore = ignore
        self.extend_select = extend_select
        self.severities = severities
        self.options = options
        self.fail_on = fail_on
        self.registry = registry
        self.workloads = workloads
        self.per_file_ignores = per_file_ignores
        self.per_object_ignores = per_object_ignores


def _matches(code: str, selectors: Iterable[str]) -> bool:
    """ruff-style selection: ``GPU`` matches every GPU rule, ``GPU0`` GPU001..GPU099, ..."""
    return any(code.startswith(sel) for sel in selectors) or "ALL" in selectors


def is_enabled(code: str, settings: Settings) -> bool:
    selected = settings.select is None or _matches(code, settings.select)
    selected = selected or _matches(code, settings.extend_select)
    return selected and not _matches(code, settings.ignore)


class _Active:
    __slots__ = ("configured", "ctx", "rule", "severity")

    def __init__(
        self, rule: Rule, severity: Severity, ctx: RuleContext, configured: bool = False
    ) -> None:
        self.rule = rule
        self.severity = severity
        self.ctx = ctx
        #: The severity was set by the user: it wins over a rule's per-violation severity.
        self.configured = configured


class Linter:
    """Lints sources with a fixed set of rules and settings."""

    def __init__(self, rules: Iterable[Rule], settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.registry = self.settings.registry or builtin_registry()
        self.workloads = self.settings.workloads or builtin_table()
        self.active: dict[str, _Active] = {}
        rules = list(rules)
        for rule in rules:
            if not is_enabled(rule.code, self.settings):
                continue
            options = {**rule.default_options(), **self.settings.options.get(rule.code, {})}
            severity = self.settings.severities.get(rule.code, rule.severity)
            configured = rule.code in self.settings.severities
            self.active[rule.code] = _Active(
                rule, severity, RuleContext(self.registry, options, self.workloads), configured
            )
        self.pod_rules = [a for a in self.active.values() if a.rule.scope == "pod"]
        self.object_rules = [a for a in self.active.values() if a.rule.scope == "object"]
        self.suppressor = Suppressor(
            self.workloads,
            known=[r.code for r in rules],
            enabled=self.active,
            per_file=self.settings.per_file_ignores,
            per_object=self.settings.per_object_ignores,
        )

    # -- entry points --------------------------------------------------------------------------
    def lint_bytes(
        self, label: str, raw: bytes, seen: list[LintedObject] | None = None
    ) -> list[Finding]:
        text, problem = decode(raw)
        if text is None:
            assert problem is not None
            return self.problem(label, problem)
        return self.lint_text(label, text, seen)

    def lint_text(
        self, label: str, text: str, seen: list[LintedObject] | None = None
    ) -> list[Finding]:
        """Findings in ``text``; objects linted are appended to ``seen`` when it is given.

        Document by document: each is composed, linted, handed to suppression and dropped
        before the next, so a big file holds one document's nodes, data and positions at a
        time (peak memory was 33 times a 50 MB file's size). What crosses documents is kept
        small: the DRA claims of the file (a ``ClaimIndex`` of names and device classes,
        read in a first pass only when the text can hold a DRA object) and, for
        suppression, each directive's owner and the annotations.
        """
        loaded = DocumentStream(text)
        # Cross-document lookups (DRA claims) see the documents of the same file.
        stream = ClaimIndex(DocumentStream(text) if may_hold_dra(text) else ())
        file = self.suppressor.for_file(label, text)
        findings: list[Finding] = []
        for doc in loaded:
            found = self._problem_findings(label, doc.problems, doc)
            found.extend(self.lint_document(label, doc, stream, seen))
            file.add_document(doc)
            findings.extend(file.apply(found))
            del doc, found
        findings.extend(file.apply(self._problem_findings(label, loaded.problems, None)))
        findings.extend(self._stale(label, file))
        findings.sort(key=Finding.sort_key)
        return findings

    def problem(self, label: str, problem: Problem) -> list[Finding]:
        """A finding for a problem found outside the YAML (unreadable file, ...)."""
        return self._suppress(label, None, [], self._problem_findings(label, [problem], None))

    def lint_document(
        self,
        label: str,
        doc: Document,
        stream: ClaimIndex | None = None,
        seen: list[LintedObject] | None = None,
    ) -> list[Finding]:
        findings: list[Finding] = []
        if not self.pod_rules and not self.object_rules:
            return findings
        for obj in objects(doc, stream if stream is not None else ClaimIndex([doc])):
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
    def _suppress(
        self, label: str, text: str | None, docs: list[Document], findings: list[Finding]
    ) -> list[Finding]:
        """Mark suppressed findings, and report stale suppressions as GL100."""
        file = self.suppressor.for_file(label, text, docs)
        if not file:
            return findings
        return [*file.apply(findings), *self._stale(label, file)]

    def _stale(self, label: str, file: FileSuppressions) -> list[Finding]:
        """GL100 findings for the file's stale suppressions (after every ``apply``)."""
        unused = file.unused()
        if not unused:
            return []
        active = self.active[UNUSED_CODE]
        stale = [self._unused_finding(active, label, u) for u in unused]
        return file.apply_to_unused(stale)

    def _unused_finding(self, active: _Active, label: str, u: Unused) -> Finding:
        return Finding(
            rule=active.rule.code,
            name=active.rule.name,
            severity=active.severity,
            path=label,
            span=u.span,
            message=u.message,
            object=u.object,
            doc_path=u.doc_path,
            document=u.document,
        )

    def _run(
        self, active: _Active, target: Any, obj: K8sObject, label: str, doc: Document
    ) -> list[Finding]:
        rule = active.rule
        assert rule.check is not None
        try:
            return [
                self._finding(active, violation, obj.ref, label, doc)
                for violation in rule.check(target, active.ctx)
            ]
        except Exception as exc:  # a rule's bug (often a plugin's) is a tool error naming it
            where = f"{label}, {obj.ref.label()}"
            raise RuleError(
                f"rule {rule.code} ({rule.module}, {rule.origin}) failed on {where}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _finding(
        self, active: _Active, v: Violation, ref: ObjectRef | None, label: str, doc: Document
    ) -> Finding:
        span = doc.value_span(v.path) if v.at == "value" else doc.key_span(v.path)
        severity = active.severity
        if v.severity is not None and not active.configured:
            severity = v.severity
        return Finding(
            rule=active.rule.code,
            name=active.rule.name,
            severity=severity,
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
