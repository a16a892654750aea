"""``--fix`` / ``--diff`` with ``--render``: a rendered finding's fix, made where its value is
written.

A rule's fix is planned on the rendered output (``helm template``, ``kubectl kustomize``), which
no one edits. When a finding points at the line that writes its value (a chart's
``values.yaml``, a ``--values`` file, a Kustomize patch or resource: :mod:`gpulint.render.mapping`)
the fix is carried there:

1. the rendered fix is applied to the rendered text, and what it changes is compared with
   what the source file writes: the *base* is the deepest enclosing node of the finding's
   path whose rendered value is exactly the value written in the source (a ``toYaml
   .Values.resources`` block, a patch's ``resources:``); every change must be under it;
2. the change is written as the same kinds of repair (``RenameKey``, ``MoveKey``,
   ``DeleteKey``, ``AddEntry``) on the source document (:mod:`gpulint.render.fixchanges`),
   and planned there with the text-edit machinery (:mod:`gpulint.fix.edits`: comments,
   quoting and layout kept);
3. the chart or overlay is rendered again with the edited file (in a private temporary
   folder, never in the tree: :mod:`gpulint.render.fixcopy`) and linted again: the fix is
   kept only when the finding is gone and no finding appears that was not there. All the
   fixes are first checked together, in one render; only when that fails is each checked
   on its own, with those kept before it (a render each).

Otherwise the finding says why it has no fix (``Fix.skipped``; the message ends with
``(no fix: ...)``): it points at a template or a fallback, the value written there is not
the rendered value, the change reaches outside the value written there, the same place is
used by several findings that want different changes, or the re-render still reports it.
Nothing is written here: the caller writes the files (``--fix``) or prints the diff.

How a fix is rendered again is :mod:`gpulint.render.fixcopy`'s.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpulint.model import (
    Change,
    Edit,
    Finding,
    Fix,
    ObjectRef,
    Repair,
)
from gpulint.render.fixchanges import (
    NoFix,
    added_field,
    aligned_base,
    base_of,
    changes_at,
    field_changes,
)
from gpulint.render.fixcopy import NotChecked
from gpulint.render.helm.inputs import through_link
from gpulint.render.mapping import Place, label_of, load_documents, read_text

if TYPE_CHECKING:
    from gpulint.fix.loop import FileFix
    from gpulint.loader.document import Document
    from gpulint.model import Path, Span
    from gpulint.render.fixcopy import Rerender

#: A rendered finding, as far as re-linting can tell it again.
Key = tuple[str, object, tuple[object, ...]]

#: Lints a rendered output: the keys of its findings.
Relint = Callable[[str], set[Key]]


def key_of(f: Finding) -> Key:
    return (f.rule, f.object, tuple(f.doc_path))


class Planned:
    """One finding's fix carried to its source file."""

    __slots__ = ("file", "fix", "index", "text")

    def __init__(self, index: int, file: str, text: str, fix: Fix) -> None:
        self.index, self.file, self.text, self.fix = index, file, text, fix


class ValuesFixer:
    """Plans, checks and applies the fixes of one rendered chart or Kustomize root."""

    def __init__(
        self,
        mode: str,
        rendered_text: str,
        docs: list[Document],
        rerender: Rerender,
        relint: Relint,
        folder: str = "",
        readers: Callable[[str], list[str]] = lambda path: [],
    ) -> None:
        #: The chart or root (absolute), and the other roots that read a file.
        self.folder, self.readers = os.path.abspath(folder), readers
        self.mode = mode
        self.text = rendered_text
        self.docs = docs
        self.rerender = rerender
        self.relint = relint
        #: The files changed, with their old and new text (absolute path -> (old, new)).
        self.changed: dict[str, tuple[str, str]] = {}
        self.fixed = 0
        self.notes: list[str] = []
        #: The keys of the findings the kept fixes removed.
        self.gone: set[Key] = set()
        #: The rendered fixes of those findings: what the output is expected to become.
        self.wanted: set[Edit] = set()
        #: The edits kept, per file (planned on its text as read).
        self.edits: dict[str, list[Edit]] = {}

    # -- the whole chart or root -------------------------------------------------------------
    def fixes(self, moved: list[tuple[Finding, Place]]) -> list[Fix | None]:
        """Each finding's fix in its source file, or why it has none (``Fix.skipped``)."""
        from gpulint.fix.loop import wanted

        out: list[Fix | None] = [None] * len(moved)
        planned: list[Planned] = []
        for i, (f, where) in enumerate(moved):
            if not wanted(f, self.mode):
                if f.fix is not None and f.suppression is None and f.fix.skipped is not None:
                    out[i] = Fix(f.fix.message, (), f.fix.applicability, f.fix.skipped)
                continue
            assert f.fix is not None
            try:
                planned.append(self.plan(i, f, where))
            except NoFix as exc:
                out[i] = Fix(f.fix.message, (), f.fix.applicability, str(exc))
        for p, reason in self.ambiguous(planned).items():
            out[p.index] = p.fix._replace(edits=(), skipped=reason)
            planned.remove(p)
        before = {key_of(f) for f, _ in moved}
        current = set(before)
        by_edits: dict[tuple[str, tuple[object, ...]], list[Planned]] = {}
        for p in planned:
            by_edits.setdefault((p.file, p.fix.edits), []).append(p)
        groups = list(by_edits.values())  # one edit that fixes several uses: checked once
        # Every fix at once first: one render when they all hold, not one per fix.
        together = len(groups) > 1 and self.check(groups, moved, current) is None
        for group in groups:
            why = None if together else self.check([group], moved, current)
            for p in group:
                if why is None:
                    out[p.index] = p.fix
                    self.fixed += 1
                else:
                    out[p.index] = p.fix._replace(edits=(), skipped=why)
        for (f, _), fix in zip(moved, out, strict=True):
            if (
                fix is not None
                and fix.skipped is not None
                and f.suppression is None
                and (self.mode == "unsafe" or fix.applicability == "safe")
            ):
                at = f"{f.path}:{f.line}:{f.column}"
                note = f"{at}: {f.rule} not fixed: {fix.skipped}"
                if note not in self.notes:  # copies of one object reported alike: said once
                    self.notes.append(note)
        return out

    def ambiguous(self, planned: list[Planned]) -> dict[Planned, str]:
        """The fixes whose edits overlap another's different edits in the same file: the
        place is used by several findings that want different changes."""
        out: dict[Planned, str] = {}
        for a in planned:
            for b in planned:
                if a is b or a.file != b.file or a.fix.edits == b.fix.edits:
                    continue
                pairs = itertools.product(a.fix.edits, b.fix.edits)
                if any(x.start < y.end and y.start < x.end for x, y in pairs):
                    out[a] = (
                        "the lines written there are what several findings are about, and "
                        "their fixes change them differently"
                    )
        return out

    def check(
        self, groups: list[list[Planned]], moved: list[tuple[Finding, Place]], current: set[Key]
    ) -> str | None:
        """Render with the fixes of ``groups`` (each group one edit, for several findings)
        and those kept before: ``None``, and the fixes kept, when their findings are gone,
        nothing new appears and the output is what the findings' own fixes (edits of the
        rendered text) make of it, else why they are refused."""
        from gpulint.fix.loop import apply

        keys = {key_of(moved[p.index][0]) for group in groups for p in group}
        wants = {e for group in groups for p in group for e in _rendered_fix(moved[p.index][0])}
        edits: dict[str, list[Edit]] = {}
        texts: dict[str, str] = {}
        for group in groups:
            p = group[0]
            edits.setdefault(p.file, list(self.edits.get(p.file, []))).extend(p.fix.edits)
            texts[p.file] = p.text
        files = {path: text for path, (_, text) in self.changed.items()}
        try:  # the fixes of one file are all planned on its text as it is
            files.update({file: apply(texts[file], e) for file, e in edits.items()})
        except ValueError:  # they overlap: this one waits for the next run
            return "another fix changes the same lines first; run --fix again"
        try:
            output = self.rerender(files)
        except NotChecked as exc:
            return str(exc)
        if output is None:
            return "the chart or overlay does not render with the fix"
        after = self.relint(output)
        if after & keys:
            return "rendered again with the fix, it still reports the finding"
        try:
            expected = [d.data for d in load_documents(apply(self.text, self.wanted | wants))]
        except ValueError:
            return "another fix changes the same rendered lines first; run --fix again"
        got = [d.data for d in load_documents(output)]
        own = {k[1].label() for k in keys if isinstance(k[1], ObjectRef)}
        others = [
            _name(a) or f"document {i + 1}"
            for i, (a, b) in enumerate(itertools.zip_longest(got, expected))
            if a != b and _name(a) not in own
        ]
        if others:
            return (
                f"the value written there is also used by {', '.join(others)}, "
                "which this change would change too"
            )
        new_rules = sorted({k[0] for k in after - current})
        if new_rules:
            return f"rendered again with the fix, it reports {', '.join(new_rules)}"
        if got != expected:
            return "rendered again with the fix, the object differs from what the rule's fix makes"
        self.wanted |= wants
        for file, e in edits.items():
            self.edits[file] = e
            self.changed[file] = (texts[file], files[file])
        current.clear()
        current.update(after)
        self.gone |= keys
        return None

    # -- one finding ------------------------------------------------------------------------
    def plan(self, index: int, f: Finding, where: Place) -> Planned:
        from gpulint.fix.edits import plan
        from gpulint.fix.loop import apply
        from gpulint.fix.text import Source

        assert f.fix is not None
        if not any(r.kind == "template" for r in where.related) and _templated(where.path):
            what = "its value is" if f.fix is None or not _adds(f) else "what it adds to is"
            raise NoFix(
                f"{what} written in the template itself ({where.path}:{where.span.line}), and "
                "templates are not edited"
            )
        file = os.path.abspath(where.path)
        others = [label_of(r) for r in self.readers(file) if r != self.folder]
        if others:
            shown = ", ".join(others[:3]) + (
                f" and {len(others) - 3} more" if len(others) > 3 else ""
            )
            raise NoFix(f"the file is also built into {shown}, which this change would change too")
        link = through_link(file)
        if link is not None:
            what = "it" if link == file else label_of(link)
            raise NoFix(f"{what} is a symbolic link, and fixes are never written through one")
        text = read_text(file)
        if text is None or ("{{" in text and _templated(where.path)):
            raise NoFix(f"{where.path} cannot be edited")
        found = _path_at(load_documents(text), where.span)
        if found is None:
            raise NoFix("its place is not the line that writes the value (a fallback)")
        doc, source_path = found
        rendered = next((d for d in self.docs if d.index == f.document), None)
        if rendered is None:
            raise NoFix("its rendered document was not found")
        at = f"{where.path}:{where.span.line}"
        fixed_docs = load_documents(apply(self.text, f.fix.edits))
        new_doc = next((d for d in fixed_docs if d.index == f.document), None)
        if new_doc is None or len(fixed_docs) != len(self.docs):
            raise NoFix("its fix changes the rendered documents")
        path = tuple(f.doc_path)
        field = added_field(rendered.data, new_doc.data, path)
        if field is not None:  # a field the object lacks, at the values key its template reads
            adds = field_changes(doc.data, source_path, *field, at)
            if adds:
                fix = plan(Source(text), doc, Repair(f.fix.message, adds, f.fix.applicability))
                if fix.skipped is not None:
                    raise NoFix(f"at {where.path}: {fix.skipped}")
                return Planned(index, file, text, fix)
        strict = base_of(rendered.data, path, doc.data, source_path)
        aligned = aligned_base(rendered.data, path, doc.data, source_path)
        if strict is None and aligned is None:
            raise NoFix(f"the value written at {at} is not the rendered value")
        changes: tuple[Change, ...] = ()
        for base in dict.fromkeys(b for b in (strict, aligned) if b is not None):
            try:
                changes = changes_at(rendered.data, new_doc.data, doc.data, base, at)
                break
            except NoFix as exc:
                why = exc
        else:
            raise why
        repair = Repair(f.fix.message, changes, f.fix.applicability)
        fix = plan(Source(text), doc, repair)
        if fix.skipped is not None:
            raise NoFix(f"at {where.path}: {fix.skipped}")
        return Planned(index, file, text, fix)

    # -- what changed -----------------------------------------------------------------------
    def file_fixes(self, chart: str, diff: bool) -> list[FileFix]:
        """What the kept fixes change, one per file (``--diff``: the diff; ``--fix``: the
        bytes, encoded as the file was); the notes go with the first, or alone, at the
        chart or root (``chart``), with no content."""
        from gpulint.fix.loop import FileFix, encode_like, unified_diff
        from gpulint.render.mapping import label_of

        out = []
        for path, (old, new) in sorted(self.changed.items()):
            shown = label_of(path)
            if diff:
                out.append(FileFix(path, shown, 0, None, unified_diff(shown, old, new), []))
                continue
            with open(path, "rb") as fh:
                raw = fh.read()
            out.append(FileFix(path, shown, 0, encode_like(raw, new), "", []))
        if out:  # the count and the notes once, with the first file
            out[0] = out[0]._replace(fixed=self.fixed, notes=self.notes)
        elif self.notes:
            out.append(FileFix(chart, chart, 0, None, "", self.notes))
        return out


def _name(data: Any) -> str | None:
    """``Kind/name`` of the object a rendered document is (as findings name it), or None."""
    meta = data.get("metadata") if isinstance(data, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    kind = data.get("kind") if isinstance(data, dict) else None
    return f"{kind}/{name}" if isinstance(kind, str) and isinstance(name, str) else None


def _rendered_fix(f: Finding) -> tuple[Edit, ...]:
    return f.fix.edits if f.fix is not None else ()


def _templated(path: str) -> bool:
    """Is ``path`` a chart's template (a file under a ``templates`` folder)?"""
    return "templates" in os.path.normpath(path).split(os.sep)


def _path_at(docs: list[Document], span: Span) -> tuple[Document, Path] | None:
    """The document of a file and the path in it whose key or value is at ``span``."""
    for doc in docs:
        best: Path | None = None
        for path, (key, value) in doc.positions.items():
            if (key == span or value == span) and (best is None or len(path) > len(best)):
                best = path
        if best is not None:
            return doc, best
    return None


def _adds(f: Finding) -> bool:
    """Does the finding's fix add a field to the mapping it is about (a pod spec's
    ``tolerations``), rather than change a value written there?"""
    from gpulint.render.helm.fieldreads import MISSING_FIELDS

    return f.rule in MISSING_FIELDS and bool(f.doc_path) and f.doc_path[-1] != "tolerations"
