"""Documents that only rendering makes manifests: a Helm chart's files, and with the
``gpulint.render`` setting the files a Kustomize root builds.

``gpulint check`` never reads a chart's templates as YAML (they are not YAML until
rendered): the chart is one target, GL201 without ``--render``. The server does the same
for a document inside a chart that helm reads (its templates, values files, subcharts,
``files/``; :func:`gpulint.render.helm.sources.renders`): one GL201 information on its first
line instead of the YAML errors a template would give. With the setting on, the chart (or
every Kustomize root that builds the document) is rendered as ``check --render`` renders it
(same options from the configuration's ``render:``, same limits: each program's own and
the run's budget, README "Security") and the findings that map into the document are
shown; a render that fails is shown on the document's first line, naming where it failed.

Rendering reads the files as saved: the findings of a document are those of its saved
text, rendered again when a file of the chart or root is saved (:class:`Renders` keeps the
last render of each while no file under it changed).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gpulint import codes
from gpulint.loader.document import Problem
from gpulint.model import Finding, Span

if TYPE_CHECKING:
    from gpulint.lint.engine import Linter
    from gpulint.lsp.project import Project
    from gpulint.render.trees import RenderTarget, Trees
    from gpulint.util.walk import Listings

#: Folders of a chart whose files only rendering makes sense of (``files/``: what templates
#: insert with ``.Files``), beyond those helm renders (``gpulint.render.helm.sources.renders``).
_CHART_FOLDERS = ("templates", "charts", "ci", "files")
#: Files under a chart or root looked at at most for "did anything change since the render".
_MAX_STAMPED = 5_000


def owners(
    path: str, render: bool, scanned: dict[str, Trees] | None = None
) -> tuple[list[RenderTarget], Trees | None]:
    """What renders the file: its chart; with ``render``, else, the Kustomize roots of its
    repository that build it (and the kustomizations read; ``scanned`` keeps them per
    repository). Empty: the file is linted as it is, as ``check`` lints it."""
    from gpulint.render.helm.sources import renders
    from gpulint.render.trees import RenderTarget, Trees, chart_of, project_root

    chart = chart_of(path)
    if chart is not None:
        rel = os.path.relpath(os.path.abspath(path), chart).split(os.sep)
        if rel[0] in _CHART_FOLDERS or renders(chart, path):
            return [RenderTarget("helm", chart)], None
        return [], None  # chart/examples/job.yaml: linted as it is
    if not render:
        return [], None
    root = project_root(path)
    trees = scanned.get(root) if scanned is not None else None
    if trees is None:
        trees = Trees(True)
        trees.scan(root)
        if scanned is not None:
            scanned[root] = trees
    if not trees.consumed(path):
        return [], None
    used = {f for k in trees.kustomizations.values() for f in k.folders()}
    roots = sorted(d for d in trees.kustomizations if d not in used)
    full = os.path.abspath(path)
    found = [RenderTarget("kustomize", r) for r in roots if full in trees.consumed_by(r)]
    return found, trees


def not_rendered(linter: Linter, label: str, chart: str) -> list[Finding]:
    """GL201 on the document's first line: the chart is not rendered, and how to have it."""
    from gpulint.render.mapping import label_of

    message = (
        f"part of the Helm chart {label_of(chart)}: its templates are not YAML until rendered "
        "and were not linted; turn on the `gpulint.render` setting to lint what it renders "
        "(runs helm template)"
    )
    span = Span(1, 1, 1, 1)
    return linter.problem(label, Problem(codes.CHART_NOT_RENDERED, span, message))


class Renders:
    """The last render of each chart and root, kept while no file under it changed."""

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str, int], tuple[float, list[Finding]]] = {}
        #: The kustomizations of each repository, read once until a file is saved.
        self._scanned: dict[str, Trees] = {}

    def findings(
        self, project: Project, path: str, label: str, render: bool
    ) -> list[Finding] | None:
        """The findings of the document at ``path`` (shown as ``label``) that rendering
        gives; None when nothing renders it (it is linted as it is)."""
        found, trees = owners(path, render, self._scanned)
        if not found:
            return None
        full = os.path.abspath(path)
        if not render:
            plain = not_rendered(project.linter, label, found[0].folder)
            for f in self._as_written(project, found[0]):
                if os.path.abspath(f.path) == full:
                    plain.append(f._replace(path=label))
            plain.sort(key=Finding.sort_key)
            return plain
        out: list[Finding] = []
        for target in found:
            for f in self._render(project, target, trees):
                if os.path.abspath(f.path) == full:
                    out.append(f._replace(path=label))
                elif f.rule in (codes.RENDER_FAILED, codes.RENDERER_MISSING):
                    where = f"{f.path}:{f.line}:{f.column}"
                    out.append(
                        f._replace(
                            path=label, span=Span(1, 1, 1, 1), message=f"{f.message} (at {where})"
                        )
                    )
        out.sort(key=Finding.sort_key)
        return out

    def _render(self, project: Project, target: RenderTarget, trees: Trees | None) -> list[Finding]:
        from gpulint.commands.check import render_options
        from gpulint.commands.checkoptions import CheckOptions
        from gpulint.errors import GpulintError
        from gpulint.render.mapping import label_of
        from gpulint.render.target import lint_rendered
        from gpulint.util.discover import Target
        from gpulint.util.walk import Listings

        key = (target.kind, target.folder, id(project))
        files = trees.consumed_by(target.folder) if trees is not None else None
        # The folders this render lists, listed once: the stamp's walk, the chart's entries
        # checked before helm reads them, the templates' walks (gpulint.util.walk).
        listings = Listings()
        stamp = _stamp(target.folder, files, listings)
        kept = self._kept.get(key)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        try:
            run = render_options(project.effective, CheckOptions(render=True), listings)
        except GpulintError as exc:  # the configuration's render: cannot be used
            message = f"not rendered: {exc}"
            problem = Problem(codes.RENDER_FAILED, Span(1, 1, 1, 1), message)
            return project.linter.problem(target.folder, problem)
        if trees is not None:  # the kustomizations already read
            run = (run[0], trees)
        shown = Target(label_of(target.folder), target.folder, target.kind)
        findings = lint_rendered(project.linter, shown, run)
        self._kept[key] = (stamp, findings)
        return findings

    def _as_written(self, project: Project, target: RenderTarget) -> list[Finding]:
        """A chart's findings without rendering it, as ``gpulint check`` gives them (what
        its templates write as plain text, GPU082 on its values), GL201 aside: kept while
        no file under it changed."""
        from gpulint.render.mapping import label_of
        from gpulint.render.target import lint_rendered
        from gpulint.util.discover import Target
        from gpulint.util.walk import Listings

        if target.kind != "helm":
            return []
        key = ("as-written", target.folder, id(project))
        listings = Listings()
        stamp = _stamp(target.folder, None, listings)
        kept = self._kept.get(key)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        shown = Target(label_of(target.folder), target.folder, target.kind)
        findings = [
            f for f in lint_rendered(project.linter, shown, None)
            if f.rule != codes.CHART_NOT_RENDERED
        ]  # fmt: skip
        self._kept[key] = (stamp, findings)
        return findings

    def saved(self) -> None:
        """A file was saved: a kustomization may name other files now."""
        self._scanned.clear()

    def forget(self) -> None:
        self._kept.clear()
        self._scanned.clear()


def _stamp(folder: str, files: set[str] | None, listings: Listings | None = None) -> float:
    """The newest modification time of ``files`` (what a root builds, its bases' too), else
    of everything under ``folder`` (a chart): rendered again once one of them is saved
    (``listings``: the render's, which keeps the chart's listings for its other walks)."""
    newest, seen = 0.0, 0
    if files is not None:
        for file in sorted(files)[:_MAX_STAMPED]:
            try:
                newest = max(newest, os.stat(file).st_mtime)
            except OSError:
                continue
        return newest
    from gpulint.util.walk import walk  # os.walk without recursion: any depth

    for dirpath, dirnames, filenames in walk(folder, None, listings):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in (".", *filenames):
            try:
                newest = max(newest, os.stat(os.path.join(dirpath, name)).st_mtime)
            except OSError:
                continue
            seen += 1
            if seen > _MAX_STAMPED:
                return newest
    return newest
