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
    from gpulint.fix.text import Source
    from gpulint.loader.document import Document
    from gpulint.model import Path, Span
    from gpulint.render.fixcopy import Rerender

#: A rendered finding, as far as re-linting can tell it again.
Key = tuple[str, object, tuple[object, ...]]

#: Lints a rendered output: the keys of its findings.
Relint = Callable[[str], set[Key]]


def key_of(f: Finding) -> Key:
    return (f.rule, f.object, tuple(f.doc_path))


class _SourceFile:
    """A source file as read, parsed once for all the findings it writes the value of: its
    documents, the line index fixes are planned with, and the path at each key's or value's
    place."""

    __slots__ = ("docs", "places", "source", "text")

    def __init__(self, text: str) -> None:
        from gpulint.fix.text import Source

        self.text = text
        self.docs = load_documents(text)
        self.source = Source(text)
        #: Span -> (document, the deepest path whose key or value is there), for the first
        #: document that has one (what a walk of every document's places found first).
        self.places: dict[Span, tuple[Document, Path]] = {}
        for doc in self.docs:
            mine: dict[Span, Path] = {}
            for path, (key, value) in doc.positions.items():
                for span in (key, value):
                    if span is None:
                        continue
                    best = mine.get(span)
                    if best is None or len(path) > len(best):
                        mine[span] = path
            for span, path in mine.items():
                self.places.setdefault(span, (doc, path))


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
        #: What :meth:`plan` reads, once per chart or root (not once per finding): the
        #: source files, the rendered documents by index, and the rendered text's lines.
        self.sources: dict[str, _SourceFile | None] = {}
        self.by_index = {d.index: d for d in docs}
        self.lines: Source | None = None

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
        refused = self.ambiguous(planned)
        for p, reason in refused.items():
            out[p.index] = p.fix._replace(edits=(), skipped=reason)
        planned = [p for p in planned if p not in refused]
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
        why = (
            "the lines written there are what several findings are about, and their fixes "
            "change them differently"
        )
        hit = _overlapping(planned)
        return {p: why for p in planned if id(p) in hit}

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
        if file not in self.sources:
            read = read_text(file)
            self.sources[file] = None if read is None else _SourceFile(read)
        parsed = self.sources[file]
        if parsed is None or ("{{" in parsed.text and _templated(where.path)):
            raise NoFix(f"{where.path} cannot be edited")
        text = parsed.text
        found = parsed.places.get(where.span)
        if found is None:
            raise NoFix("its place is not the line that writes the value (a fallback)")
        doc, source_path = found
        rendered = self.by_index.get(f.document)
        if rendered is None:
            raise NoFix("its rendered document was not found")
        at = f"{where.path}:{where.span.line}"
        new_data = self._fixed_document(rendered, f.fix.edits)
        path = tuple(f.doc_path)
        field = added_field(rendered.data, new_data, path)
        if field is not None:  # a field the object lacks, at the values key its template reads
            adds = field_changes(doc.data, source_path, *field, at)
            if adds:
                repair = Repair(f.fix.message, adds, f.fix.applicability)
                fix = plan(parsed.source, doc, repair)
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
                changes = changes_at(rendered.data, new_data, doc.data, base, at)
                break
            except NoFix as exc:
                why = exc
        else:
            raise why
        repair = Repair(f.fix.message, changes, f.fix.applicability)
        fix = plan(parsed.source, doc, repair)
        if fix.skipped is not None:
            raise NoFix(f"at {where.path}: {fix.skipped}")
        return Planned(index, file, text, fix)

    def _fixed_document(self, rendered: Document, edits: tuple[Edit, ...]) -> Any:
        """The data of the rendered document ``rendered`` once the rule's ``edits`` are
        made: its own text, cut from the output and parsed alone (the whole output parsed
        again for each finding made planning output x findings)."""
        from gpulint.fix.loop import apply
        from gpulint.fix.text import Source

        if self.lines is None:
            self.lines = Source(self.text)
        span = rendered.start
        start = self.lines.offset(span.line, span.column)
        end = self.lines.offset(span.end_line, span.end_column)
        if not edits or any(e.start < start or e.end > end for e in edits):
            raise NoFix("its fix changes the rendered documents")
        cut = self.text[start:end]
        moved = [e._replace(start=e.start - start, end=e.end - start) for e in edits]
        try:
            before, after = load_documents(cut), load_documents(apply(cut, moved))
        except ValueError:
            raise NoFix("its fix changes the rendered documents") from None
        if len(before) != 1 or before[0].data != rendered.data:
            raise NoFix("its rendered document cannot be read apart from the others")
        if len(after) != 1:
            raise NoFix("its fix changes the rendered documents")
        return after[0].data

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
                patch = unified_diff(shown, old, new, self.edits.get(path))
                out.append(FileFix(path, shown, 0, None, patch, []))
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


def _overlapping(planned: list[Planned]) -> set[int]:
    """The ``id`` of each planned fix one of whose edits overlaps an edit of another fix of
    the same file that makes different edits: one sweep over the edits in the order of
    their start, each edit compared with those still open, not every pair of fixes."""
    import heapq

    hit: set[int] = set()
    by_file: dict[str, list[tuple[int, int, int, Planned]]] = {}
    for n, p in enumerate(planned):
        for e in p.fix.edits:
            by_file.setdefault(p.file, []).append((e.start, e.end, n, p))
    for rows in by_file.values():
        # An empty edit (an insertion) at a point overlaps only an edit around the point:
        # insertions come before the edits that start there.
        rows.sort(key=lambda r: (r[0], r[1], r[2]))
        open_ends: list[tuple[int, int, int]] = []  # (end, row, group) of the open edits
        counts: dict[int, int] = {}  # open edits per group (the fixes of equal edits)
        unmarked: dict[int, set[int]] = {}  # open edits per group whose fix is not hit yet
        groups: dict[tuple[Edit, ...], int] = {}
        group_of = [groups.setdefault(p.fix.edits, len(groups)) for *_, p in rows]
        for r, (start, end, _, p) in enumerate(rows):
            while open_ends and open_ends[0][0] <= start:
                _, gone, g = heapq.heappop(open_ends)
                counts[g] -= 1
                unmarked.get(g, set()).discard(gone)
                if not unmarked.get(g, True):
                    del unmarked[g]
            g = group_of[r]
            # Every open edit ends after this one starts and starts no later: they overlap
            # it (an insertion at a point: they surround the point).
            if len(open_ends) - counts.get(g, 0) > 0:
                hit.add(id(p))
                for other in [k for k in unmarked if k != g]:
                    for row in unmarked.pop(other):
                        hit.add(id(rows[row][3]))
            heapq.heappush(open_ends, (end, r, g))
            counts[g] = counts.get(g, 0) + 1
            if id(p) not in hit:
                unmarked.setdefault(g, set()).add(r)
    return hit


def _adds(f: Finding) -> bool:
    """Does the finding's fix add a field to the mapping it is about (a pod spec's
    ``tolerations``), rather than change a value written there?"""
    from gpulint.render.helm.fieldreads import MISSING_FIELDS

    return f.rule in MISSING_FIELDS and bool(f.doc_path) and f.doc_path[-1] != "tolerations"
