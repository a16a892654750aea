"""A Kustomize root built with ``kubectl kustomize`` (or ``kustomize build``), and findings
moved to the patch or base file the field came from.

Building: ``kubectl kustomize DIR`` with kustomize's defaults, which keep plugins off (exec
and container functions need ``--enable-alpha-plugins``/``--enable-exec``, Helm inflation
``--enable-helm``: none is passed) and the load restrictor on (files outside the root's
folder tree are refused). Before building, the kustomizations it reads are checked: a
resource that is not a local path (a remote base: kustomize would run ``git`` or fetch a
URL), a plugin field, or a path that leaves the repository is GL200 and nothing is built.
The kustomization files are read as kustomize reads them (field names ignoring case, see
:mod:`gpulint.render.trees`), and every field that holds a path is checked: no URL or git
reference anywhere (kustomize fetches them from ``configurations``, ``openapi.path``, patches
and generator files too), no key that is no kustomize field.

Mapping: the object's kind and name (a ``namePrefix``/``nameSuffix`` may have changed the
name: a source's name must be part of the rendered one) are looked up in the files the
root consumes, patches applied last first, then the bases' files; the first that writes the
finding's key path (list items matched by their ``name`` when they have one) is where the
finding goes, else the one that writes most of it, else the root's kustomization file.
"""

from __future__ import annotations

import os
import re
from typing import Any

from gpulint import codes
from gpulint.loader.document import Document
from gpulint.model import Finding, Span
from gpulint.render import RenderOptions
from gpulint.render.helm import Failure, tool_error
from gpulint.render.mapping import Place, Rendered, at_key, label_of, load_documents, read_text
from gpulint.render.tools import BUDGET_SPENT, find_tool, run_tool, time_left
from gpulint.render.trees import (
    PLUGIN_FIELDS,
    Kustomization,
    Trees,
    inside,
    kustomization_file,
    project_root,
    read_kustomization,
)

INSTALL_KUSTOMIZE = (
    "kubectl was not found: install kubectl (https://kubernetes.io/docs/tasks/tools/) or "
    "kustomize, or pass --kustomize PATH"
)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # http:, ssh:, file:, git:: ...
_USER = re.compile(r"[A-Za-z][A-Za-z0-9-]*@")  # git@host:org/repo (kustomize's extractUsername)


def remote_reference(text: str) -> bool:
    """Whether kustomize could take ``text`` for something to fetch rather than a local path:
    a URL (``https://``, ``//host``, any ``scheme:``), a git repository as kustomize's
    api/internal/git/repospec.go reads one (``git@host:org/repo``, ``github.com/org/repo``,
    ``...?ref=v1``). kustomize tries a git URL before a local folder of the same name, so
    these are refused even when such a folder exists."""
    t = text.strip()
    return (
        "://" in t
        or "?" in t
        or t.startswith("//")
        or t.lower().startswith("github.com")
        or _SCHEME.match(t) is not None
        or _USER.match(t) is not None
    )


def _check(folder: str, trees: Trees) -> Failure | None:
    """Why the root must not be built, if it must not: a kustomization it reads that could
    not be read safely or has a key that is no kustomize field (kustomize folds case, so
    ``Resources:`` is ``resources``), a plugin field, a remote reference (URL or git) in any
    field that holds paths, or a path that is missing, leaves the repository or is not a
    regular file (a folder, for resources, bases and components)."""
    root = project_root(folder)
    top = os.path.abspath(folder)
    todo, seen = [top], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        k = trees.kustomizations.get(current)
        if k is None:
            file = kustomization_file(current)
            k = read_kustomization(current, file) if file else None
            if k is None:
                continue
            trees.kustomizations[current] = k
        where = label_of(k.file)
        at_root = current == top

        def refused(
            message: str, line: int, where: str = where, at_root: bool = at_root
        ) -> Failure:
            return Failure(
                codes.RENDER_FAILED, f"not built: {where}:{line}: {message}", line if at_root else 1
            )

        if k.problem is not None:
            return refused(k.problem, k.line)
        for field in PLUGIN_FIELDS:
            if field in k.data:
                return Failure(
                    codes.RENDER_FAILED,
                    f"not built: {where} uses `{field}`, which runs plugins or fetches "
                    "charts; build it yourself and lint the output (`... | gpulint check -`)",
                )
        for ref in k.refs:
            if ref.field == "inline":
                continue  # a patch written in the kustomization: no path to check
            entry = f"{ref.field} entry {ref.text!r}"
            if remote_reference(ref.text):
                return refused(
                    f"{entry} is a URL or git repository: gpulint never fetches remote bases",
                    ref.line,
                )
            if not os.path.lexists(ref.path):
                return refused(
                    f"{entry} is not a file or folder in the repository (gpulint never "
                    "fetches remote bases)",
                    ref.line,
                )
            real = os.path.realpath(ref.path)
            if not inside(real, root):
                return refused(f"{entry} is outside the repository", ref.line)
            folders = ref.field in ("resources", "bases", "components")
            if not (os.path.isfile(real) or (folders and os.path.isdir(real))):
                return refused(f"{entry} is not a regular file", ref.line)
        todo.extend(k.folders())
    return None


def render(folder: str, options: RenderOptions, trees: Trees) -> str | Failure:
    """The root's built output, or why there is none."""
    tool = find_tool(options.kustomize, ("kubectl", "kustomize"), project_root(folder))
    if tool is None:
        if options.kustomize:
            return Failure(
                codes.RENDERER_MISSING, f"--kustomize {options.kustomize}: not an executable file"
            )
        return Failure(codes.RENDERER_MISSING, INSTALL_KUSTOMIZE)
    refused = _check(folder, trees)
    if refused is not None:
        return refused
    name = os.path.basename(tool)
    target = os.path.abspath(folder)
    argv = [tool, "kustomize", target] if name.startswith("kubectl") else [tool, "build", target]
    timeout = time_left(options.deadline)
    if timeout is None:
        return Failure(codes.RENDER_FAILED, BUDGET_SPENT)
    result = run_tool(argv, cwd=target, timeout=timeout)
    what = "kubectl kustomize" if name.startswith("kubectl") else "kustomize build"
    if result.reason is not None:
        return Failure(codes.RENDER_FAILED, f"{what} {result.reason}")
    if result.returncode != 0:
        return Failure(
            codes.RENDER_FAILED, f"{what} failed: {tool_error(result.stderr, result.returncode)}"
        )
    return result.stdout


class KustomizeRendered(Rendered):
    command = "kubectl kustomize"

    def __init__(self, label: str, folder: str, text: str, trees: Trees) -> None:
        super().__init__(label, folder, text)
        self.trees = trees
        self._sources: list[str] | None = None
        self._by_kind: dict[str | None, list[tuple[str, Document]]] | None = None
        self._objects: dict[tuple[str | None, str], list[tuple[str, Document]]] = {}
        self._by_name: dict[str | None, tuple[dict[str, list[int]], list[int]]] = {}

    def fallback(self) -> str:
        file = kustomization_file(self.folder)
        return label_of(file or self.folder)

    def sources(self) -> list[str]:
        """The files the root reads, in the order a field is looked for in them."""
        if self._sources is None:
            out: list[str] = []
            seen: set[str] = set()

            def visit(folder: str) -> None:
                if folder in seen:
                    return
                seen.add(folder)
                k: Kustomization | None = self.trees.kustomizations.get(folder)
                if k is None:
                    file = kustomization_file(folder)
                    k = read_kustomization(folder, file) if file else None
                if k is None:
                    return
                out.extend(reversed(k.patches()))
                for res in k.resources():
                    if os.path.isdir(res):
                        visit(res)
                    elif os.path.isfile(res):
                        out.append(res)

            visit(os.path.abspath(self.folder))
            self._sources = out
        return self._sources

    def candidates(self, kind: str | None, name: str) -> list[tuple[str, Document]]:
        """The source documents that may be the object ``kind``/``name``, in search order.

        Each source file is read and parsed once per render (not once per finding), and the
        documents of one object are picked out once for all of its findings.
        """
        if self._by_kind is None:
            self._by_kind = {}
            for file in self.sources():
                text = read_text(file)
                for source in load_documents(text) if text is not None else []:
                    data = source.data
                    kind_of = data.get("kind") if isinstance(data, dict) else 0
                    if kind_of is None or isinstance(kind_of, str):
                        self._by_kind.setdefault(kind_of, []).append((file, source))
        key = (kind, name)
        got = self._objects.get(key)
        if got is None:
            docs = self._by_kind.get(kind, [])
            if len(name) > _LONGEST_NAME:  # not a Kubernetes name: looked for one by one
                got = [(f, d) for f, d in docs if _named(d.data, name)]
            else:
                names, lengths = self._names(kind, docs)
                at: set[int] = set()
                for n in lengths:  # every part of the rendered name that is a source's name
                    if n > len(name):
                        break
                    for i in range(len(name) - n + 1):
                        at.update(names.get(name[i : i + n], ()))
                got = [docs[i] for i in sorted(at)]
            self._objects[key] = got
        return got

    def _names(
        self, kind: str | None, docs: list[tuple[str, Document]]
    ) -> tuple[dict[str, list[int]], list[int]]:
        """The kind's documents by name, and the lengths of those names (shortest first)."""
        got = self._by_name.get(kind)
        if got is None:
            names: dict[str, list[int]] = {}
            for i, (_, source) in enumerate(docs):
                meta = source.data.get("metadata")
                own = meta.get("name") if isinstance(meta, dict) else None
                if isinstance(own, str) and own:
                    names.setdefault(own, []).append(i)
            got = self._by_name[kind] = (names, sorted({len(n) for n in names}))
        return got

    def place(self, finding: Finding) -> Place:
        doc = self.document(finding.document)
        if doc is None or finding.object is None:
            return Place(self.fallback(), Span(1, 1, 1, 1))
        on_key = at_key(doc, finding)
        best: tuple[int, str, Any, tuple[Any, ...]] | None = None
        for file, source in self.candidates(finding.object.kind, finding.object.name or ""):
            path = _translate(doc.data, source.data, finding.doc_path)
            if len(path) == len(finding.doc_path):
                span = source.key_span(path) if on_key else source.value_span(path)
                return Place(label_of(file), span)
            if best is None or len(path) > best[0]:
                best = (len(path), file, source, path)
        if best is not None:
            _, file, source, path = best
            return Place(label_of(file), source.key_span(path))
        return Place(self.fallback(), Span(1, 1, 1, 1))


#: Kubernetes names are at most 253 characters (a DNS subdomain); a source whose name is part
#: of a rendered name that long is found by looking at each of the parts' lengths.
_LONGEST_NAME = 253


def _named(data: Any, name: str) -> bool:
    """Is ``data`` named as part of ``name`` (a ``namePrefix``/``nameSuffix`` may add to it)?"""
    meta = data.get("metadata") if isinstance(data, dict) else None
    own = meta.get("name") if isinstance(meta, dict) else None
    return isinstance(own, str) and bool(own) and own in name


def _translate(rendered: Any, source: Any, path: tuple[Any, ...]) -> tuple[Any, ...]:
    """The longest prefix of ``path`` that ``source`` writes, as a path in ``source``: list
    items are matched by ``name`` (a strategic merge patch merges containers by name)."""
    out: list[Any] = []
    for part in path:
        if isinstance(part, int):
            if not isinstance(rendered, list) or not isinstance(source, list):
                break
            item = rendered[part] if 0 <= part < len(rendered) else None
            name = item.get("name") if isinstance(item, dict) else None
            if name is not None:
                index = next(
                    (
                        i
                        for i, s in enumerate(source)
                        if isinstance(s, dict) and s.get("name") == name
                    ),
                    None,
                )
            else:
                index = part if part < len(source) else None
            if index is None:
                break
            rendered, source = item, source[index]
            out.append(index)
            continue
        if not isinstance(source, dict) or part not in source or not isinstance(rendered, dict):
            break
        rendered, source = rendered.get(part), source[part]
        out.append(part)
    return tuple(out)
