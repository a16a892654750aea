"""Workloads -> findings: run the selected rules and stamp code, severity and position."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpulint import codes
from gpulint.k8s.chartvalues import VALUES_REF, named
from gpulint.k8s.devices import builtin_registry
from gpulint.k8s.dra import NO_CLAIMS, ClaimIndex
from gpulint.k8s.manifest import DocumentView, Manifest
from gpulint.k8s.workloads import K8sObject, builtin_table
from gpulint.lint.foreign import (
    dropped_accelerator,
    dropped_in_kustomization,
    dropped_message,
    kubernetes_text,
    kustomize_file,
    not_for_foreign,
    tool_config,
)
from gpulint.lint.tidy import tell_aliases_apart, without_consequences
from gpulint.lint.unchecked import CODE as UNCHECKED_CODE, findings as unchecked
from gpulint.loader.decoding import decode
from gpulint.loader.document import Document, Loads, Problem
from gpulint.loader.markdown import Block, manifest_blocks, markdown_file
from gpulint.model import (
    RULE_ERROR_CODE,
    Finding,
    Fix,
    LintedObject,
    ObjectRef,
    Path,
    Related,
    Repair,
    Severity,
    Span,
    selects,
    split_help,
)
from gpulint.rule import CurrentFile, Rule, RuleContext, Violation
from gpulint.settings import Settings
from gpulint.suppress.findings import UNUSED_CODE, FileSuppressions, Suppressor, Unused
from gpulint.util.discover import Part

if TYPE_CHECKING:
    from gpulint.fix.loop import Shape
    from gpulint.fix.places import Owned
    from gpulint.fix.text import Source

RULE_ERROR_NAME = "rule-error"
#: The info that a Kustomize patch's whole-object checks are left to its rendered overlay.
PART_CODE = codes.PATCH_NOT_RENDERED
#: The longest exception message a GL900 finding quotes (characters).
MAX_DETAIL = 500
#: A Markdown example that is a fragment of an object: every rule runs, what the whole-object
#: ones find is held back (the ``by_name`` way of a file named as a patch).
_FRAGMENT = Part("", 0, by_name=True)
#: What a Markdown example is not told: its YAML's syntax (an example elides), a key written
#: twice (an example's "or:" alternative), that it is a template, or GL203's note on the
#: checks held back from a fragment.
_NOT_IN_EXAMPLES = frozenset(
    {codes.SYNTAX_ERROR, codes.DUPLICATE_KEY, codes.TEMPLATE_NOT_RENDERED, PART_CODE}
)


def _in_block(finding: Finding, label: str, block: Block, documents: int, whole: bool) -> Finding:
    """``finding`` of a Markdown file's ``block`` moved to the block's place in the file,
    after ``documents`` documents of the blocks before it; ``warning`` at most (``info``
    for a whole-object rule's), and without a fix (its edits are the block's)."""
    line, indent = block.line, block.indent

    def moved(span: Span) -> Span:
        return Span(
            span.line + line, span.column + indent, span.end_line + line, span.end_column + indent
        )

    related = tuple(
        r._replace(span=moved(r.span)) if r.path == label else r for r in finding.related
    )
    return finding._replace(
        span=moved(finding.span),
        severity=min(finding.severity, Severity.INFO if whole else Severity.WARNING),
        document=finding.document + documents,
        fix=None,
        related=related,
    )


def is_enabled(code: str, settings: Settings, opt_in: bool = False) -> bool:
    """ruff-style selection: ``GPU`` selects every GPU rule, ``GPU0`` GPU001..GPU099, ...

    With no ``select`` (the default selection) every rule runs but the opt-in ones
    (``Rule.opt_in``); a ``select`` that names an opt-in rule, a prefix of it or ``ALL``
    runs it, and so does ``extend-select``."""
    selected = not opt_in if settings.select is None else selects(code, settings.select)
    selected = selected or selects(code, settings.extend_select)
    return selected and not selects(code, settings.ignore)


#: A rule and the context it runs with on the file being linted.
_Ruled = tuple["_Active", RuleContext]


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

    def finding(
        self,
        label: str,
        span: Span,
        message: str,
        obj: ObjectRef | None,
        doc_path: Path,
        document: int,
        severity: Severity | None = None,
        fix: Fix | None = None,
        related: tuple[Related, ...] = (),
        help: str | None = None,
    ) -> Finding:
        """A finding of this rule, at its configured severity unless ``severity`` says; with
        no ``help``, what the message says to do after its first ``; `` is the help."""
        if help is None:
            message, help = split_help(message)
        return Finding(
            rule=self.rule.code,
            name=self.rule.name,
            severity=self.severity if severity is None else severity,
            path=label,
            span=span,
            message=message,
            object=obj,
            doc_path=doc_path,
            document=document,
            fix=fix,
            related=related,
            help=help,
        )


class Linter:
    """Lints sources with a fixed set of rules and settings."""

    def __init__(self, rules: Iterable[Rule], settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.registry = self.settings.registry or builtin_registry()
        self.workloads = self.settings.workloads or builtin_table()
        self.active: dict[str, _Active] = {}
        #: The file being linted, which every rule's context shares (set per file).
        self._file = CurrentFile()
        #: The ConfigMaps rules read variables from: the file's (``lint_text``), the run's.
        self.values = self.settings.env_values()
        rules = list(rules)
        for rule in rules:
            if not is_enabled(rule.code, self.settings, rule.opt_in):
                continue
            options = {**rule.default_options(), **self.settings.options.get(rule.code, {})}
            severity = self.settings.severities.get(rule.code, rule.severity)
            configured = rule.code in self.settings.severities
            self.active[rule.code] = _Active(
                rule,
                severity,
                RuleContext(
                    self.registry,
                    options,
                    self.workloads,
                    self.settings.cluster,
                    evidence=self.settings.evidence,
                    configured=frozenset(self.settings.options.get(rule.code, {})),
                    values=self.values,
                    crds=self.settings.crds,
                    runtimes=self.settings.runtimes,
                    file=self._file,
                ),
                configured,
            )
        #: The active rules that also judge what a chart's templates write as plain text
        #: (``Rule.as_written``): the codes a text linted ``as_written`` can report.
        self.as_written_codes = frozenset(c for c, a in self.active.items() if a.rule.as_written)
        #: What rules ask to hear when a file starts (declarative rules: the file's pattern
        #: budget, gpulint.util.schemacost.PatternWork), each once.
        self._file_hooks = list(
            {
                id(hook): hook
                for a in self.active.values()
                if (hook := getattr(a.rule.check, "begin_file", None)) is not None
            }.values()
        )
        # A rule that raises is reported whatever the selection: the run is incomplete.
        self.rule_error_name = next(
            (r.name for r in rules if r.code == RULE_ERROR_CODE), RULE_ERROR_NAME
        )
        #: The text being linted, for the edits of the fixes rules offer (``_fix``), its line
        #: index, made when the first fix or finding inside a value asks for it (once a text:
        #: each such finding walking the whole text again was quadratic), and whether it is
        #: no Kubernetes text.
        self._text = ""
        self._source: Source | None = None
        self._foreign = False
        #: The document the last fix was planned in, and the paths its plans found to be
        #: its own text: the fixes of one pod check the same paths (``gpulint.fix.edits.plan``).
        self._owned: tuple[Document, Owned] | None = None
        self.pod_rules = [a for a in self.active.values() if a.rule.scope == "pod"]
        self.object_rules = [a for a in self.active.values() if a.rule.scope == "object"]
        #: Pod rules that yield to more specific ones (``Rule.yields_to``), by code.
        self.yielding = {
            a.rule.code: frozenset(a.rule.yields_to) for a in self.pod_rules if a.rule.yields_to
        }
        #: The rules with their contexts for the file being linted (its DRA claims), made
        #: once per file, not per document: (claims, object rules, pod rules).
        self._contexts: tuple[ClaimIndex | None, list[_Ruled], list[_Ruled]] | None = None
        #: The claim index of files without DRA objects: the project's DRA objects alone.
        self._project_claims = ClaimIndex((), "", self.settings.dra)
        #: What a kustomization makes of the file being linted (:meth:`lint_shaped`'s ``part``):
        #: on the objects it covers, whole-object rules do not run.
        self._part: Part | None = None
        #: The file is a copy of what a chart's templates write as plain text (``lint_bytes``).
        self._as_written = False
        #: The codes of the rules that judge a whole object (made once, when first asked).
        self._whole: frozenset[str] | None = None
        self.kept: Any = None  # its files' findings kept by their project's cache (lint/kept.py)
        self.loads = Loads()  # files parsed once, by the facts stage (gpulint.loader.handoff)
        #: The rules skipped so, in the file being linted, and where first (GL203's place).
        self._skipped: set[str] = set()
        self._skipped_at: tuple[Span, ObjectRef | None, Path, int] | None = None
        # Suppression reads each document's objects and pod specs from its view.
        self.suppressor = Suppressor(
            known=[r.code for r in rules],
            enabled=self.active,
            per_file=self.settings.per_file_ignores,
            per_object=self.settings.per_object_ignores,
        )

    # -- entry points --------------------------------------------------------------------------
    def lint_bytes(
        self,
        label: str,
        raw: bytes,
        seen: list[LintedObject] | None = None,
        *,
        part: Part | None = None,
        as_written: bool = False,
    ) -> list[Finding]:
        """Findings in ``raw``; ``as_written``: it is a copy of a chart template's lines
        that helm renders as written, which only the ``Rule.as_written`` rules judge."""
        text, problem = decode(raw)
        if text is None:
            assert problem is not None
            if markdown_file(label):
                return []  # documentation that is not text (a NUL byte, Latin-1): left alone
            return self.problem(label, problem)
        loaded = self.loads.take(label, raw)
        if as_written:
            return self._lint_yaml(label, text, seen, part=part, loaded=loaded, as_written=True)[0]
        return self.lint_shaped(label, text, seen, part=part, loaded=loaded)[0]

    def lint_text(
        self, label: str, text: str, seen: list[LintedObject] | None = None
    ) -> list[Finding]:
        """Findings in ``text``; objects linted are appended to ``seen`` when it is given."""
        return self.lint_shaped(label, text, seen)[0]

    def lint_shaped(
        self,
        label: str,
        text: str,
        seen: list[LintedObject] | None = None,
        *,
        kubernetes: bool | None = None,
        part: Part | None = None,
        loaded: bytes | None = None,
    ) -> tuple[list[Finding], Shape]:
        """Findings in ``text`` and its :data:`~gpulint.fix.loop.Shape` (documents and YAML
        problems: a fix keeps both), returned, never kept; ``part``: ``Target.part``.

        Document by document: each is composed, linted, handed to suppression and dropped
        before the next, so a big file holds one document's nodes, data and positions at a
        time (peak memory was 33 times a 50 MB file's size). What crosses documents is kept
        small: the DRA claims of the file (a ``ClaimIndex`` of names and device classes,
        read in a first pass only when the text can hold a DRA object) and, for
        suppression, each directive's owner and the annotations. Each document's objects
        and pod specs are found once, in its :class:`~gpulint.k8s.manifest.DocumentView`,
        which rules and suppression share.
        """
        if markdown_file(label):
            return self._lint_markdown(label, text, seen)
        return self._lint_yaml(label, text, seen, kubernetes=kubernetes, part=part, loaded=loaded)

    def _lint_markdown(
        self, label: str, text: str, seen: list[LintedObject] | None
    ) -> tuple[list[Finding], Shape]:
        """A Markdown file's findings: those of its fenced manifests (``manifest_blocks``),
        each linted as a text of its own and moved to its place in the file.

        An example is what readers copy, not what the repository applies: what it writes
        wrong is a ``warning`` at most, what the whole-object rules find (from what it leaves
        out as much as from what it writes) ``info``, its YAML problems, repeated keys and
        templates are not reported (an example elides with ``...`` and writes
        alternatives), and on a block that may be a fragment of an object (``Block.whole``)
        what the whole-object rules find is held back, as on a file named as a patch,
        without GL203's note.
        """
        findings: list[Finding] = []
        documents = 0
        whole = self._whole_codes()
        for block in manifest_blocks(text, label):
            linted: list[LintedObject] | None = [] if seen is not None else None
            part = None if block.whole else _FRAGMENT
            found, (count, _) = self._lint_yaml(label, block.text, linted, part=part)
            findings.extend(
                _in_block(f, label, block, documents, f.rule in whole)
                for f in found
                if f.rule not in _NOT_IN_EXAMPLES
            )
            if seen is not None and linted:
                seen.extend(o._replace(document=o.document + documents) for o in linted)
            documents += count
        findings.sort(key=Finding.sort_key)
        return findings, (documents, [])

    def _lint_yaml(
        self,
        label: str,
        text: str,
        seen: list[LintedObject] | None = None,
        *,
        kubernetes: bool | None = None,
        part: Part | None = None,
        loaded: bytes | None = None,
        as_written: bool = False,
    ) -> tuple[list[Finding], Shape]:
        if tool_config(label):  # another tool's configuration: not a manifest
            return self._tool_conflict(label, text), (0, [])
        self._foreign = not (kubernetes_text(text) if kubernetes is None else kubernetes)
        manifest = Manifest(label, text, self.workloads, loaded=loaded)
        self.values.begin_file(label, text)
        for hook in self._file_hooks:
            hook(len(text))
        self._text, self._source, self._owned, self._part = text, None, None, part
        self._as_written = as_written
        self._skipped, self._skipped_at = set(), None
        file = self.suppressor.for_file(label, text)
        findings: list[Finding] = []
        # A rule that raised (GL900) is never suppressed, and since the failed rule did not
        # finish, whether a suppression is stale cannot be known: no GL100 in that file.
        failed: list[Finding] = []
        documents = 0
        problems: list[str] = []
        for view in manifest.views():
            documents += 1
            problems.extend(p.code for p in view.doc.problems)
            found = self._problem_findings(label, view.doc.problems, view)
            found.extend(self.lint_view(label, view, seen))
            if (gl204 := self.active.get(UNCHECKED_CODE)) is not None:  # GPU content not placed
                found.extend(
                    gl204.finding(label, span, message, view.owner(path), path, view.index)
                    for span, path, message in unchecked(view, gl204.ctx.registry, self._part)
                )
            file.add_document(view)
            failed.extend(f for f in found if f.rule == RULE_ERROR_CODE)
            findings.extend(file.apply([f for f in found if f.rule != RULE_ERROR_CODE]))
            del view, found
        findings.extend(file.apply(self._problem_findings(label, manifest.problems, None)))
        problems.extend(p.code for p in manifest.problems)
        if self._skipped_at is not None:
            file.skipped = frozenset(self._skipped)
            findings.extend(file.apply(self._part_finding(label)))
        if not failed:
            findings.extend(self._stale(label, file))
        findings.extend(failed)
        findings.sort(key=Finding.sort_key)
        return findings, (documents, sorted(problems))

    def _tool_conflict(self, label: str, text: str) -> list[Finding]:
        """Another tool's file gets Git's merge conflict markers left in it, which its tool's
        YAML parser refuses as any does (one scan of the text); a Kustomize file also gets a
        duplicate key whose first value names an accelerator (Kustomize keeps the last)."""
        from gpulint.loader.conflicts import find_conflict

        conflict = find_conflict(text)
        if conflict is not None:
            return self.problem(
                label, Problem(codes.SYNTAX_ERROR, conflict.span(), conflict.message())
            )
        if not kustomize_file(label) or codes.DUPLICATE_KEY not in self.active:
            return []
        self._foreign = False  # the problem carries its own message and severity
        found: list[Finding] = []
        for problem in dropped_in_kustomization(text, self.registry):
            found.extend(self.problem(label, problem))
        return found

    def problem(self, label: str, problem: Problem) -> list[Finding]:
        """A finding for a problem found outside the YAML (unreadable file, ...)."""
        findings = self._problem_findings(label, [problem], None)
        file = self.suppressor.for_file(label, None)  # per-file-ignores only
        if not file:
            return findings
        return [*file.apply(findings), *self._stale(label, file)]

    def file_ignores(self, label: str, findings: list[Finding]) -> list[Finding]:
        """``findings`` with the ``per-file-ignores`` of ``label`` applied (a rendered finding
        mapped back to a template, values file or patch: the file it now names)."""
        file = self.suppressor.for_file(label, None)
        return file.apply(findings) if file else findings

    def lint_view(
        self, label: str, view: DocumentView, seen: list[LintedObject] | None = None
    ) -> list[Finding]:
        """Findings of the rules in one document's view."""
        findings: list[Finding] = []
        if not self.pod_rules and not self.object_rules:
            return findings
        doc = view.doc
        # Each rule's context with the file's DRA claims (the view's, shared by the file's
        # documents, with the project's: gpulint.k8s.dra), handed to it, not kept on the
        # objects. Made once per file, and once per linter for files without DRA objects
        # (dra.NO_CLAIMS): 30 rules' contexts for each document cost more than some rules.
        # The file's label is not in them but in the CurrentFile they share.
        self._file.label = label
        contexts = self._contexts
        if contexts is None or contexts[0] is not view.claims:
            claims = self._project_claims if view.claims is NO_CLAIMS else view.claims
            claims.run = self.settings.dra
            contexts = self._contexts = (
                view.claims,
                [(a, a.ctx._replace(claims=claims)) for a in self.object_rules],
                [(a, a.ctx._replace(claims=claims)) for a in self.pod_rules],
            )
        _, all_object_rules, all_pod_rules = contexts
        part = self._part
        # A file only named as a patch may be whole: every rule runs, and what the
        # whole-object ones find is held back (GL203 says so) rather than not looked for.
        by_name = part is not None and part.by_name
        for position, obj in enumerate(view.objects):
            failed: set[str] = set()  # rules that raised on this object
            object_rules, pod_rules = all_object_rules, all_pod_rules
            pods = view.pod_specs(position) if pod_rules else []
            start = len(findings)
            if part is not None and not by_name and part.covers(obj.ref.kind, obj.ref.name):
                placed = part.placement_only(obj.ref.kind, obj.ref.name)
                object_rules, pod_rules = self._part_rules(obj, doc, bool(pods), placed)
            if self._as_written:
                # What a template writes as plain text: the rules that judge what is written.
                object_rules = [r for r in object_rules if r[0].rule.as_written]
                pod_rules = [r for r in pod_rules if r[0].rule.as_written]
            if obj.ref is VALUES_REF:
                # A chart's values, no object: only the rules that read them.
                object_rules = [r for r in object_rules if r[0].rule.reads_chart_values]
            if part is not None and part.labels:
                # a kustomization labels its templates: the labels applied are not these
                object_rules = [r for r in object_rules if not r[0].rule.labels_as_written]
                pod_rules = [r for r in pod_rules if not r[0].rule.labels_as_written]
            if object_rules:
                # An object rule that needs the pod specs (a declarative `when: {gpu: ...}`)
                # reuses these; they are lent only while its rules run (see K8sObject.pods).
                obj.pods = pods if pod_rules else None
                try:
                    for active, ctx in object_rules:
                        findings.extend(self._run(active, ctx, obj, obj, label, doc, failed))
                finally:
                    obj.pods = None
            for pod in pods:
                on_pod: list[Finding] = []
                # The places of the causes each finding names (None: its path): gpulint.lint.tidy.
                places: list[tuple[Path, ...] | None] | None = [] if self.yielding else None
                for active, ctx in pod_rules:
                    on_pod.extend(self._run(active, ctx, pod, obj, label, doc, failed, places))
                if places is not None and len(on_pod) > 1:
                    on_pod = without_consequences(on_pod, places, self.yielding, pod.path)
                findings.extend(on_pod)
            if by_name:
                findings[start:] = self._held_back(findings[start:], obj, doc)
            if seen is not None:
                # A rule that raised did not check the object: it is not a passing check.
                ran = object_rules + (pod_rules if pods else [])
                codes = tuple(sorted(a.rule.code for a, _ in ran if a.rule.code not in failed))
                seen.append(LintedObject(label, doc.index, named(obj), codes))
        if len(findings) > 1:
            tell_aliases_apart(doc, findings)
        return findings

    # -- helpers -----------------------------------------------------------------------------
    def _part_rules(
        self, obj: K8sObject, doc: Document, pods: bool, placed: bool = False
    ) -> tuple[list[_Ruled], list[_Ruled]]:
        """The rules that run on an object that is only part of what is applied (a
        Kustomize patch, or the base object a patch completes): not the whole-object ones,
        but for those whose verdict does not depend on where the pods run when the patches
        change only that (``placed``)."""
        assert self._contexts is not None
        _, object_rules, pod_rules = self._contexts

        def skips(rule: Rule) -> bool:
            return rule.whole_object and not (placed and rule.placement_free)

        ruled = object_rules + (pod_rules if pods else [])
        skipped = {a.rule.code for a, _ in ruled if skips(a.rule)}
        if skipped:
            self._skipped |= skipped
            if self._skipped_at is None:
                self._skipped_at = (doc.value_span(obj.path), obj.ref, obj.path, doc.index)
        return (
            [(a, c._replace(part=True)) for a, c in object_rules if not skips(a.rule)],
            [(a, c._replace(part=True)) for a, c in pod_rules if not skips(a.rule)],
        )

    def _held_back(self, found: list[Finding], obj: K8sObject, doc: Document) -> list[Finding]:
        """``found`` on an object of a file named as a patch, without what the whole-object
        rules found (kept for GL203's note)."""
        held = {f.rule for f in found if f.rule in self._whole_codes()}
        if not held:
            return found
        self._skipped |= held
        if self._skipped_at is None:
            self._skipped_at = (doc.value_span(obj.path), obj.ref, obj.path, doc.index)
        return [f for f in found if f.rule not in held]

    def _whole_codes(self) -> frozenset[str]:
        """The codes of the active rules that judge a whole object (made once)."""
        if self._whole is None:
            rules = (*self.object_rules, *self.pod_rules)
            self._whole = frozenset(a.rule.code for a in rules if a.rule.whole_object)
        return self._whole

    def _part_finding(self, label: str) -> list[Finding]:
        """GL203: the checks left to the rendered overlay, once per file."""
        active = self.active.get(PART_CODE)
        if active is None or self._skipped_at is None or self._part is None:
            return []
        span, ref, path, document = self._skipped_at
        shown = ref.label() if ref is not None else "the object"
        message = self._part.message(shown, sorted(self._skipped))
        return [active.finding(label, span, message, ref, path, document)]

    def _stale(self, label: str, file: FileSuppressions) -> list[Finding]:
        """GL100 findings for the file's stale suppressions (after every ``apply``)."""
        unused = file.unused()
        if not unused:
            return []
        active = self.active[UNUSED_CODE]
        stale = [self._unused_finding(active, label, u) for u in unused]
        return file.apply_to_unused(stale)

    def _unused_finding(self, active: _Active, label: str, u: Unused) -> Finding:
        return active.finding(label, u.span, u.message, u.object, u.doc_path, u.document)

    def _run(
        self,
        active: _Active,
        ctx: RuleContext,
        target: Any,
        obj: K8sObject,
        label: str,
        doc: Document,
        failed: set[str],
        places: list[tuple[Path, ...] | None] | None = None,
    ) -> list[Finding]:
        rule = active.rule
        assert rule.check is not None
        out: list[Finding] = []
        try:
            for violation in rule.check(target, ctx):
                out.append(self._finding(active, violation, named(obj), label, doc))
                if places is not None:
                    places.append(tuple(violation.places) or None)
        except (Exception, SystemExit) as exc:
            # A rule's bug (usually a plugin's) is a GL900 finding on the object, once per
            # rule and object; what the rule reported before it raised is kept, and every
            # other rule, object and file is still checked. (SystemExit too: a rule must not
            # end the run, with whatever exit code it chose.)
            if rule.code not in failed:
                failed.add(rule.code)
                out.append(self._rule_error(rule, exc, obj, label, doc))
                if places is not None:
                    places.append(None)
        return out

    def _rule_error(
        self, rule: Rule, exc: BaseException, obj: K8sObject, label: str, doc: Document
    ) -> Finding:
        try:
            detail = " ".join(str(exc).split())  # one line, whatever the exception says
        except Exception:  # an exception whose __str__ raises
            detail = "(its message cannot be shown)"
        if len(detail) > MAX_DETAIL:
            detail = detail[: MAX_DETAIL - 1] + "\u2026"
        raised = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        from gpulint.util.schemacost import BudgetExceeded

        why = (  # a declarative rule's cost bound, not a bug
            "the rule costs more than gpulint allows on this input"
            if isinstance(exc, BudgetExceeded)
            else "a bug in the rule; report it to its author"
        )
        return Finding(
            rule=RULE_ERROR_CODE,
            name=self.rule_error_name,
            severity=Severity.ERROR,
            path=label,
            span=doc.value_span(obj.path),
            message=(
                f"rule {rule.code} ({rule.module}, {rule.origin}) raised {raised}: it did not "
                f"finish checking this object ({why})"
            ),
            object=named(obj),
            doc_path=obj.path,
            document=doc.index,
        )

    def _finding(
        self, active: _Active, v: Violation, ref: ObjectRef | None, label: str, doc: Document
    ) -> Finding:
        # What a rule yields is checked here, inside the rule's try in _run, so a malformed
        # Violation (a plugin's bug) is a GL900 finding on the object like any exception,
        # not an internal error later when the findings are sorted or printed.
        if not isinstance(v.message, str):
            raise TypeError(f"Violation.message must be a str, not {type(v.message).__name__}")
        if v.at not in ("key", "value"):
            raise ValueError(f"Violation.at must be 'key' or 'value', not {v.at!r}")
        if v.help is not None and not isinstance(v.help, str):
            raise TypeError(f"Violation.help must be a str, not {type(v.help).__name__}")
        span = doc.value_span(v.path) if v.at == "value" else doc.key_span(v.path)
        message, help = (v.message, v.help) if v.help is not None else split_help(v.message)
        if v.within is not None:
            from gpulint.loader.inscalar import place_within

            starts = self._text_source().starts
            span, message = place_within(
                self._text, doc.data, v.path, span, v.within, message, starts
            )
        severity = active.severity
        if v.severity is not None and not active.configured:
            # The module's SEVERITY is a name ("warning"), so a rule may write one here too.
            given = v.severity
            severity = given if isinstance(given, Severity) else Severity.parse(given)
        fix = None if v.fix is None else self._fix(v.fix, doc)
        return active.finding(
            label, span, message, ref, v.path, doc.index, severity, fix, tuple(v.related), help
        )

    def _fix(self, repair: Repair, doc: Document) -> Fix:
        """The text edits of a rule's fix (see ``gpulint.fix.edits``)."""
        if not isinstance(repair, Repair):
            raise TypeError(f"Violation.fix must be a Repair, not {type(repair).__name__}")
        if repair.applicability not in ("safe", "unsafe"):
            raise ValueError(
                f"Repair.applicability must be 'safe' or 'unsafe', not {repair.applicability!r}"
            )
        from gpulint.fix.edits import plan  # only when a finding has a fix

        source = self._text_source()
        if self._owned is None or self._owned[0] is not doc:
            self._owned = (doc, {})
        return plan(source, doc, repair, self._owned[1])

    def _text_source(self) -> Source:
        """The text being linted with its line index, made once a text."""
        from gpulint.fix.text import Source

        if self._source is None or self._source.text is not self._text:
            self._source = Source(self._text)
        return self._source

    def _problem_findings(
        self, label: str, problems: Iterable[Problem], view: DocumentView | None
    ) -> list[Finding]:
        out = []
        lines: list[str] | None = None  # the text's lines, split once for its duplicates
        for problem in problems:
            active = self.active.get(problem.code)
            if active is None:
                continue
            message, wanted = problem.message, problem.severity
            if self._foreign and not_for_foreign(problem):
                if lines is None:
                    lines = self._text.splitlines()
                name = dropped_accelerator(problem, lines, self.registry)
                if name is None:
                    continue
                message, wanted = dropped_message(problem, name), "warning"
            owner = view.owner(problem.doc_path) if view is not None else None
            index = view.index if view is not None else 0
            severity = None
            if wanted is not None and not active.configured:
                severity = Severity.parse(wanted)
            out.append(
                active.finding(
                    label, problem.span, message, owner, problem.doc_path, index, severity
                )
            )
        return out


#: Lines a file's one YAML 1.2 note names besides its own, before "and N more".
STRICT_LINES_SHOWN = 5


def once_per_file(findings: list[Finding]) -> list[Finding]:
    """``findings`` (sorted) with one YML001 note of YAML 1.2 a file breaks and Kubernetes
    reads (``not valid YAML 1.2, ...``, info): the first, its help naming the file's other
    such lines. A generated CRD breaks the same rule on dozens of lines, none of which the
    cluster minds; one note says so, as ruff's and yamllint's per-line findings would not."""
    from gpulint.loader.strict import YAML12

    strict = [
        i
        for i, f in enumerate(findings)
        if f.rule == codes.SYNTAX_ERROR
        and f.severity == Severity.INFO
        and f.message.startswith(YAML12)
    ]
    if len(strict) < 2:
        return findings
    first = findings[strict[0]]
    lines = sorted({findings[i].line for i in strict[1:]} - {first.line})
    if lines:
        shown = ", ".join(str(n) for n in lines[:STRICT_LINES_SHOWN])
        more = len(lines) - STRICT_LINES_SHOWN
        also = f"; also lines {shown}" + (f" and {more} more" if more > 0 else "")
        first = first._replace(help=(first.help or "") + also)
    dropped = set(strict[1:])
    return [first if i == strict[0] else f for i, f in enumerate(findings) if i not in dropped]
