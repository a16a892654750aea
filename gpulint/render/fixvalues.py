"""``--fix`` / ``--diff`` with ``--render``: a rendered finding's fix made where its value is written.

A rule's fix is planned on the rendered output (``helm template``, ``kubectl kustomize``), which
no one edits. When a finding points at the line that writes its value (a chart's
``values.yaml``, a ``--values`` file, a Kustomize patch or resource: :mod:`gpulint.render.mapping`)
the fix is carried there:

1. the rendered fix is applied to the rendered text, and what it changes is compared with
   what the source file writes: the *base* is the deepest enclosing node of the finding's
   path whose rendered value is exactly the value written in the source (a ``toYaml
   .Values.resources`` block, a patch's ``resources:``); every change must be under it;
2. the change is written as the same kinds of repair (``RenameKey``, ``MoveKey``,
   ``DeleteKey``, ``AddEntry``) on the source document, and planned there with the
   text-edit machinery (:mod:`gpulint.fix.edits`: comments, quoting and layout kept);
3. a copy of the tree with the edited file is rendered and linted again: the fix is kept
   only when the finding is gone and no finding appears that was not there.

Otherwise the finding says why it has no fix (``Fix.skipped``; the message ends with
``(no fix: ...)``): it points at a template or a fallback, the value written there is not
the rendered value, the change reaches outside the value written there, the same place is
used by several findings that want different changes, or the re-render still reports it.
Nothing is written here: the caller writes the files (``--fix``) or prints the diff.

The copy is made in a temporary folder: the chart's folder (``helm template`` reads only it
and the ``--values`` files) or, for a Kustomize root, the repository without ``.git`` (bases
are anywhere in it), at most :data:`MAX_COPY_FILES` files and :data:`MAX_COPY_BYTES` bytes.
Symbolic links are copied as links, never followed, and the render's own checks run on the
copy as on the tree.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpulint.model import (
    AddEntry,
    Change,
    DeleteKey,
    Edit,
    Finding,
    Fix,
    MoveKey,
    ObjectRef,
    RenameKey,
    Repair,
)
from gpulint.render.mapping import Place, load_documents, lookup, read_text

if TYPE_CHECKING:
    from gpulint.fix.loop import FileFix
    from gpulint.loader.document import Document
    from gpulint.model import Path, Span
    from gpulint.render import RenderOptions
    from gpulint.render.trees import Trees

#: The largest tree copied to re-render a fix (files, bytes).
MAX_COPY_FILES = 5000
MAX_COPY_BYTES = 64 << 20

#: A rendered finding, as far as re-linting can tell it again.
Key = tuple[str, object, tuple[object, ...]]

#: Renders the tree with some files' text replaced (absolute path -> text): the output, or why not.
Rerender = Callable[[dict[str, str]], "str | None"]
#: Lints a rendered output: the keys of its findings.
Relint = Callable[[str], set[Key]]


class NoFix(Exception):
    """Why a rendered finding's fix cannot be made in its source file."""


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
        self, mode: str, rendered_text: str, docs: list[Document], rerender: Rerender, relint: Relint
    ) -> None:
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
        for p, why in self.ambiguous(planned).items():
            out[p.index] = p.fix._replace(edits=(), skipped=why)
            planned.remove(p)
        before = {key_of(f) for f, _ in moved}
        current = set(before)
        by_edits: dict[tuple[str, tuple[object, ...]], list[Planned]] = {}
        for p in planned:
            by_edits.setdefault((p.file, p.fix.edits), []).append(p)
        for group in by_edits.values():  # one edit that fixes several uses: checked once
            keys = {key_of(moved[p.index][0]) for p in group}
            wants = {e for p in group for e in _rendered_fix(moved[p.index][0])}
            why = self.check(group[0], keys, current, wants)
            for p in group:
                f = moved[p.index][0]
                if why is None:
                    out[p.index] = p.fix
                    self.fixed += 1
                else:
                    out[p.index] = p.fix._replace(edits=(), skipped=why)
        for (f, _), fix in zip(moved, out, strict=True):
            if fix is not None and fix.skipped is not None and f.suppression is None:
                if self.mode == "unsafe" or fix.applicability == "safe":
                    self.notes.append(
                        f"{f.path}:{f.line}:{f.column}: {f.rule} not fixed: {fix.skipped}"
                    )
        return out

    def ambiguous(self, planned: list[Planned]) -> dict[Planned, str]:
        """The fixes whose edits overlap another's different edits in the same file: the
        place is used by several findings that want different changes."""
        out: dict[Planned, str] = {}
        for a in planned:
            for b in planned:
                if a is b or a.file != b.file or a.fix.edits == b.fix.edits:
                    continue
                if any(x.start < y.end and y.start < x.end for x in a.fix.edits for y in b.fix.edits):
                    out[a] = (
                        "the value written there is used in several places that want "
                        "different changes"
                    )
        return out

    def check(self, p: Planned, keys: set[Key], current: set[Key], wants: set[Edit]) -> str | None:
        """Render with the fix (and the fixes kept before it): ``None`` when the findings of
        ``keys`` are gone, nothing new appears and the output is what the findings' own
        fixes (``wants``, edits of the rendered text) make of it, else why it is refused."""
        from gpulint.fix.loop import apply

        old, now = self.changed.get(p.file, (p.text, p.text))
        try:
            new = apply(now, p.fix.edits) if now == p.text else None
        except ValueError:
            new = None
        if new is None:  # an earlier fix changed the file: this one waits for another run
            return "another fix changes the same file first; run --fix again"
        files = {path: text for path, (_, text) in self.changed.items()}
        files[p.file] = new
        output = self.rerender(files)
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
        self.changed[p.file] = (old, new)
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
            raise NoFix(f"its value is written in the template {where.path}, which is not edited")
        file = os.path.abspath(where.path)
        text = read_text(file)
        if text is None or "{{" in text and _templated(where.path):
            raise NoFix(f"{where.path} cannot be edited")
        found = _path_at(load_documents(text), where.span)
        if found is None:
            raise NoFix("its place is not the line that writes the value (a fallback)")
        doc, source_path = found
        rendered = next((d for d in self.docs if d.index == f.document), None)
        if rendered is None:
            raise NoFix("its rendered document was not found")
        base = _base(rendered.data, tuple(f.doc_path), doc.data, source_path)
        if base is None:
            raise NoFix(f"the value written at {where.path}:{where.span.line} is not the rendered value")
        rendered_base, source_base = base
        fixed_docs = load_documents(apply(self.text, f.fix.edits))
        new_doc = next((d for d in fixed_docs if d.index == f.document), None)
        if new_doc is None or len(fixed_docs) != len(self.docs):
            raise NoFix("its fix changes the rendered documents")
        old_sub = lookup(rendered.data, rendered_base)[1]
        present, new_sub = lookup(new_doc.data, rendered_base)
        if not present or _replaced(rendered.data, rendered_base, new_sub) != new_doc.data:
            raise NoFix(f"its fix changes more than the value written at {where.path}:{where.span.line}")
        changes = tuple(
            _rebase(c, source_base) for c in _changes(old_sub, new_sub, rendered_base, ())
        )
        if not changes:
            raise NoFix("its fix changes nothing there")
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
            if key == span or value == span:
                if best is None or len(path) > len(best):
                    best = path
        if best is not None:
            return doc, best
    return None


def _base(
    rendered: Any, path: tuple[object, ...], source: Any, source_path: Path
) -> tuple[Path, Path] | None:
    """The deepest... rather, the highest enclosing nodes of ``path`` (rendered) and
    ``source_path`` (written) reached by the same keys from both whose values are equal: the
    rendered node is a copy of the written one. ``None`` when even the finding's own value
    differs from what is written."""
    common = 0
    while (
        common < min(len(path), len(source_path))
        and path[len(path) - 1 - common] == source_path[len(source_path) - 1 - common]
    ):
        common += 1
    # The finding's path may go deeper than the written place (a key the rule names under
    # the value): the value at the written place is what is compared.
    best: tuple[Path, Path] | None = None
    for up in range(common + 1):
        r, s = path[: len(path) - up], source_path[: len(source_path) - up]
        here, r_value = lookup(rendered, r)
        there, s_value = lookup(source, s)
        if here and there and r_value == s_value:
            best = (r, s)
        elif best is not None:
            break
    return best


def _replaced(data: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        return {k: (_replaced(v, rest, value) if k == head else v) for k, v in data.items()}
    if isinstance(data, list):
        return [(_replaced(v, rest, value) if i == head else v) for i, v in enumerate(data)]
    return data


def _changes(old: Any, new: Any, base: Path, at: Path) -> list[Change]:
    """``old`` -> ``new`` (the values at ``base``) as changes of paths relative to it."""
    if old == new:
        return []
    if not (isinstance(old, dict) and isinstance(new, dict)):
        raise NoFix("its fix rewrites a value in place")
    removed = [((*at, k), v) for k, v in old.items() if k not in new]
    added = [((*at, k), v) for k, v in new.items() if k not in old]
    out: list[Change] = []
    for k in old:
        if k in new:
            out.extend(_changes(old[k], new[k], base, (*at, k)))
    return _paired(removed, added) + out


def _paired(removed: list[tuple[Path, Any]], added: list[tuple[Path, Any]]) -> list[Change]:
    """Removed and added entries as renames and moves where a value went elsewhere."""
    out: list[Change] = []
    rest = list(added)
    for path, value in removed:
        for i, (to, new_value) in enumerate(rest):
            chain: list[object] = []
            inner = new_value
            while inner != value and isinstance(inner, dict) and len(inner) == 1:
                (k, inner), = inner.items()
                chain.append(k)
            if inner != value:
                continue
            del rest[i]
            keys = [to[-1], *chain]
            if not chain and to[:-1] == path[:-1] and isinstance(to[-1], str):
                out.append(RenameKey(path, to[-1]))
            elif all(isinstance(k, str) for k in keys):
                mapping = (*to[:-1], *keys[:-1])
                out.append(MoveKey(path, mapping, str(keys[-1]), prune=0))
            else:
                raise NoFix("its fix moves a value in a way that cannot be written")
            break
        else:
            out.append(DeleteKey(path, prune=0))
    for to, value in rest:
        if not isinstance(to[-1], str):
            raise NoFix("its fix adds to a sequence")
        out.append(AddEntry(to[:-1], to[-1], value))
    return out


def _rebase(change: Change, base: Path) -> Change:
    if isinstance(change, RenameKey | DeleteKey):
        return change._replace(path=(*base, *change.path))
    if isinstance(change, MoveKey):
        return change._replace(path=(*base, *change.path), to=(*base, *change.to))
    if isinstance(change, AddEntry):
        return change._replace(mapping=(*base, *change.mapping))
    raise NoFix(f"its fix is a {type(change).__name__}")


# -- the copy a fix is rendered in ----------------------------------------------------------


def rerenderer(kind: str, folder: str, options: RenderOptions, trees: Trees) -> Rerender:
    """How the target is rendered again with some files changed: on a copy (module doc),
    with the program the run found for the real tree and the chart's options."""
    from gpulint.render import ChartOptions
    from gpulint.render import RenderOptions as Options
    from gpulint.render.tools import find_tool
    from gpulint.render.trees import Trees as Fresh
    from gpulint.render.trees import inside, project_root

    root = project_root(folder)
    helm = kind == "helm"
    top = os.path.abspath(folder) if helm else _read_by(folder, trees)
    tool = (
        find_tool(options.helm, ("helm",), root)
        if helm
        else find_tool(options.kustomize, ("kubectl", "kustomize"), root)
    )
    chart = options.for_chart(folder)
    where = os.path.relpath(os.path.abspath(folder), top)

    def run(copy: str, moved: dict[str, str]) -> str | None:
        here = os.path.normpath(os.path.join(copy, where))
        if not helm:
            from gpulint.render import kustomize

            opts = Options(True, None, tool, None, None, options.deadline)
            built = kustomize.render(here, opts, Fresh(True))
            return built if isinstance(built, str) else None
        from gpulint.render import helm as helm_render

        values = []
        for v in chart.values:
            a = os.path.abspath(v)
            values.append(
                moved.get(a) or (os.path.join(copy, os.path.relpath(a, top)) if inside(a, top) else a)
            )
        same = ChartOptions(
            tuple(values),
            chart.set,
            chart.kube_version,
            chart.release_name,
            chart.namespace,
            chart.configured_set,
        )
        out = helm_render.render(here, Options(True, tool, None, same, None, options.deadline))
        return out if isinstance(out, str) else None

    def rerender(files: dict[str, str]) -> str | None:
        if tool is None:
            return None
        return copied(top, files, run)

    return rerender


def _read_by(folder: str, trees: Trees) -> str:
    """The folder holding everything a Kustomize root reads (its kustomizations, and the
    files and folders they name, followed through every one)."""
    from gpulint.render.trees import kustomization_file, read_kustomization

    top = os.path.abspath(folder)
    todo, seen, paths = [top], set(), [top]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        k = trees.kustomizations.get(current)
        if k is None:
            file = kustomization_file(current)
            k = read_kustomization(current, file) if file else None
        for ref in k.refs if k is not None else ():
            if not ref.path:  # an inline patch
                continue
            paths.append(ref.path)
            if os.path.isdir(ref.path):
                todo.append(ref.path)
    return os.path.commonpath(paths)


def copied(
    top: str, files: dict[str, str], run: Callable[[str, dict[str, str]], str | None]
) -> str | None:
    """``run`` on a copy of the folder ``top`` in which ``files`` (absolute paths) hold the
    given text (a file outside ``top``, a ``--values`` file, is written beside the copy);
    ``run`` gets the copy's folder and where each of ``files`` is. ``None`` when the copy
    would be too big."""
    top = os.path.abspath(top)
    count, size = 0, 0
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        count += len(filenames)
        for name in filenames:
            try:
                size += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
        if count > MAX_COPY_FILES or size > MAX_COPY_BYTES:
            return None
    with tempfile.TemporaryDirectory(prefix="gpulint-fix-") as tmp:
        copy = os.path.join(tmp, "tree")
        shutil.copytree(top, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        os.mkdir(os.path.join(copy, ".git"))  # the copy is its own repository
        moved: dict[str, str] = {}
        for n, (path, text) in enumerate(sorted(files.items())):
            rel = os.path.relpath(path, top)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep):
                dest = os.path.join(tmp, f"values-{n}.yaml")
            else:
                dest = os.path.join(copy, rel)
                if os.path.islink(dest):
                    return None
            with open(dest, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            moved[path] = dest
        return run(copy, moved)
