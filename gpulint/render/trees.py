"""Helm charts and Kustomize overlays in a tree: which folders are rendered, and which files
a rendered folder consumes (they are not linted on their own).

* A **chart** is a folder holding ``Chart.yaml``. The outermost one is rendered: a subchart
  under ``charts/`` is rendered by its parent. What rendering reads is not linted as plain
  YAML (its templates are not YAML until rendered; ``values.yaml`` and ``Chart.yaml`` are
  not manifests): the chart's top files, ``templates/``, ``charts/``, ``ci/`` and the files
  a template inserts. A manifest elsewhere in its folder (``examples/job.yaml``, a
  Deployment kept beside the chart, ``crds/``) is applied as it is, never rendered: it is
  linted as a file of its own, as when it is named (:meth:`Trees.chart_reads`).
* A **Kustomize root** (an overlay) is a folder holding a kustomization file that no other
  kustomization in the tree walked names as a resource, base or component. Only roots are
  built; a base is built as part of every overlay that uses it. The files a root consumes,
  directly or through its bases (resources, patches, generator inputs, the kustomization
  files themselves), are not linted on their own: a patch alone is half an object.
"""

import os
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.render.kustomize.files import (
    Kustomization,
    kustomization_file,
    read_folder,
    read_kustomization,
)
from gpulint.util.discover import Part, go_vendor, named_patch
from gpulint.util.safefile import ancestors, repository_root
from gpulint.util.walk import Listings, walk

if TYPE_CHECKING:
    import re

    from gpulint.render.helm.sources import InsertedFiles

CHART_FILE = "Chart.yaml"

#: Folders never walked when looking for kustomizations (as discover.SKIP_DIRS; a Go
#: project's vendored dependencies are left out too, as the files' walk leaves them).
_SKIP = frozenset({".git", ".hg", ".svn", ".venv", "node_modules", "venv", "__pycache__"})
#: Kustomizations read per scan at most (a tree with more is read no further).
MAX_KUSTOMIZATIONS = 10_000


def chart_of(path: str) -> str | None:
    """The outermost chart folder at or above ``path`` (a file or a folder), if any."""
    return _chart_above(
        os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    )


@lru_cache(maxsize=4096)
def _chart_above(folder: str) -> str | None:
    """(Per folder, once: pre-commit names thousands of files in a few folders.)"""
    found = None
    while True:
        if os.path.isfile(os.path.join(folder, CHART_FILE)):
            found = folder
        if os.path.exists(os.path.join(folder, ".git")):
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return found


def project_root(path: str) -> str:
    """The repository holding ``path``: the nearest folder with ``.git``; without one, the
    working directory when ``path`` is inside it, else the path's own folder."""
    return repository_root(
        os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    )


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class RenderTarget(NamedTuple):
    """A folder to render: ``helm`` (a chart) or ``kustomize`` (a root overlay)."""

    kind: str
    folder: str


class Trees:
    """The charts and Kustomize roots of the trees a run walks.

    ``discover`` asks it about every folder it walks (:meth:`folder`) and every file it
    would lint (:meth:`consumed`); a file named on the command line is mapped to what
    renders it (:meth:`owners`), so a pre-commit run on a changed template lints its chart.
    Without ``render`` charts are still found (their templates are not YAML: the chart is
    reported as not rendered) but Kustomize folders are linted file by file, a patch and
    the objects it completes as parts (:meth:`part`, ``gpulint.render.kustomize.patches``).
    """

    def __init__(self, render: bool, listings: Listings | None = None) -> None:
        self.render = render
        #: The run's listings, shared with its other walks (gpulint.util.walk).
        self.listings = listings
        self.kustomizations: dict[str, Kustomization] = {}
        self._scanned: set[str] = set()
        self._consumed: set[str] | None = None
        self._roots: set[str] | None = None
        self._parts: dict[str, Part] | None = None
        #: Roots built to name those a failing base or component breaks (None: it built).
        self.failures: dict[str, Any] = {}
        self._flux: dict[str, frozenset[str]] = {}
        self._whole: dict[str, Trees] = {}
        #: Per chart folder met by a walk, the files its templates insert (read once).
        self._inserted: dict[str, InsertedFiles] = {}

    def flux_paths(self, repo: str) -> frozenset[str]:
        """The folders the repository's Flux Kustomizations build (read once a run)."""
        if repo not in self._flux:
            from gpulint.render.kustomize.flux import flux_paths

            self._flux[repo] = flux_paths(repo)
        return self._flux[repo]

    def whole(self, repo: str) -> "Trees":
        """Every kustomization of the repository (scanned once a run, apart from the
        folders this run walks): which roots read a base does not depend on what the run
        was given."""
        if repo not in self._whole:
            tree = Trees(True, self.listings)
            tree.scan(repo)
            tree.failures = self.failures
            self._whole[repo] = tree
        return self._whole[repo]

    def scan(self, root: str) -> None:
        """Read every kustomization under ``root`` (once)."""
        top = os.path.abspath(root)
        # Scanned already when it or a folder above it was: a climb of its folders, not a
        # look at every root scanned (a run given 20,000 folders scans 20,000 roots).
        if any(folder in self._scanned for folder in ancestors(top)):
            return
        self._scanned.add(top)
        self._consumed = self._roots = self._parts = None
        for dirpath, dirnames, filenames in walk(top, None, self.listings):
            dirnames[:] = sorted(
                d for d in dirnames if d not in _SKIP and not go_vendor(dirpath, d, filenames)
            )
            if CHART_FILE in filenames:
                dirnames[:] = []
                continue
            file = kustomization_file(dirpath, filenames)
            if file is None or dirpath in self.kustomizations:
                continue
            if len(self.kustomizations) >= MAX_KUSTOMIZATIONS:
                return
            found = read_kustomization(dirpath, file)
            if found is not None:
                self.kustomizations[dirpath] = found

    def _index(self) -> tuple[set[str], set[str]]:
        if self._roots is None or self._consumed is None:
            used = {f for k in self.kustomizations.values() for f in k.folders()}
            self._roots = {d for d in self.kustomizations if d not in used}
            consumed: set[str] = set()
            for root in self._roots:
                consumed.update(self.consumed_by(root))
            self._consumed = consumed
        return self._roots, self._consumed

    def builds_on(self, folder: str) -> Iterator[Kustomization]:
        """The kustomization in ``folder``, then every one it builds on (resources, bases,
        components), each once; those not read yet are read and kept."""
        todo, seen = [folder], set()
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            k = self._read(current)
            if k is not None:
                yield k
                todo.extend(k.folders())

    def consumed_by(self, folder: str) -> set[str]:
        """Every file the kustomization in ``folder`` reads, through its bases too."""
        return {f for k in self.builds_on(folder) for f in (k.file, *k.files())}

    def folder(self, dirpath: str, filenames: list[str]) -> RenderTarget | None:
        """What a walked folder is: a chart, a Kustomize root to build, or neither."""
        if CHART_FILE in filenames:
            return RenderTarget("helm", dirpath)
        if self.render and kustomization_file(dirpath, filenames) is not None:
            roots, _ = self._index()
            if os.path.abspath(dirpath) in roots:
                return RenderTarget("kustomize", dirpath)
        return None

    def enclosing_chart(self, root: str) -> str | None:
        """The outermost chart holding a folder a walk starts from (its ``templates/``, a
        subchart): None when no chart holds it or it is that chart (the walk finds it)."""
        if not os.path.isdir(root):
            return None
        full = os.path.abspath(root)
        chart = _chart_above(full)
        return None if chart is None or chart == full else _shown(chart)

    def chart_reads(self, chart: str, path: str, folder: bool = False) -> bool:
        """Does rendering the chart whose folder ``chart`` a walk found read ``path``: a
        file (:func:`gpulint.render.helm.sources.renders`), or a ``folder`` the walk is about
        to enter or starts from (under ``templates/``, ``charts/``, ``ci/`` of the chart's
        top)? What it does not read is linted as plain YAML, as the file is when named on the
        command line."""
        from gpulint.render.helm.sources import RENDERED_FOLDERS, inserted_names, renders

        if folder:
            rel = os.path.relpath(path, chart).split(os.sep)
            return rel[0] in RENDERED_FOLDERS
        if not self.render and values_as_written(chart, path):
            return False
        if chart not in self._inserted:
            self._inserted[chart] = inserted_names(chart, self.listings)
        return renders(chart, path, self._inserted[chart])

    def readers(self, path: str) -> list[str]:
        """The built Kustomize roots that read the file (through their bases too)."""
        if not self.render or not self.kustomizations:
            return []
        path = os.path.abspath(path)
        return sorted(r for r in self._index()[0] if path in self.consumed_by(r))

    def consumed(self, path: str) -> bool:
        """Is the file part of a Kustomize root that is built (so not linted alone)?"""
        if not self.render or not self.kustomizations:
            return False
        _, consumed = self._index()
        return os.path.abspath(path) in consumed

    def part(self, path: str, named: bool = False) -> Part | None:
        """Without ``render``: what a kustomization makes of the file, a patch or a resource
        it completes (``None``: neither); a file no kustomization names whose name says it is
        a patch (:func:`gpulint.util.discover.named_patch`) is a patch too. A file ``named``
        on the command line has its repository scanned for the kustomizations that use it."""
        if self.render:
            return None
        if named:
            self.scan(project_root(path))
        found = None
        if self.kustomizations:
            if self._parts is None:
                from gpulint.render.kustomize.patches import parts

                self._parts = parts(list(self.kustomizations), self._read, _shown)
            found = self._parts.get(os.path.abspath(path))
        if found is None and named_patch(path):
            return Part("", 0, by_name=True)
        return found

    def _read(self, folder: str) -> Kustomization | None:
        if folder not in self.kustomizations:
            found = read_folder(folder)
            if found is None:
                return None
            self.kustomizations[folder] = found
        return self.kustomizations[folder]

    def owners(self, path: str) -> Iterator[RenderTarget]:
        """What renders a file named on the command line: its chart, or the roots that
        consume it (the working directory is scanned for them)."""
        chart = _chart_above(os.path.dirname(os.path.abspath(path)))  # a file: no stat
        if chart is not None:
            from gpulint.render.helm.sources import renders

            if renders(chart, path) and (self.render or not values_as_written(chart, path)):
                yield RenderTarget("helm", _shown(chart))
            return  # chart/examples/job.yaml: not rendered, linted as it is
        if not self.render:
            return
        self.scan(os.curdir)
        roots, consumed = self._index()
        full = os.path.abspath(path)
        if full not in consumed:
            return
        for root in sorted(roots):
            if full in self.consumed_by(root):
                yield RenderTarget("kustomize", _shown(root))


#: What the values file of a chart without templates of its own holds when it hands
#: app-template its values (gpulint.k8s.chartvalues); a larger file is left to the chart.
APP_TEMPLATE_MARKS = (b"app-template:", b"controllers:")
#: vLLM production stack's models (vllm-project/production-stack): what the chart makes of
#: them is known from the values alone, whatever templates the chart around them adds.
PRODUCTION_STACK_MARKS = (b"servingEngineSpec:", b"modelSpec:")
VALUES_PEEK = 1024 * 1024


@lru_cache(maxsize=1)
def _dependency_mark() -> "re.Pattern[bytes]":
    """An umbrella chart's values for a GPU vendor's or GPU scheduler's chart it depends on:
    a top-level key named for one of :data:`gpulint.k8s.operatorvalues.CHARTS`, whose values
    GPU049 reads as that chart's, whatever templates the umbrella chart adds. Built on
    first use (a values file beside a Chart.yaml asks)."""
    import re

    from gpulint.k8s.operatorvalues import CHARTS

    names = b"|".join(re.escape(c.encode()) for c in CHARTS)
    return re.compile(rb"(?m)^(?:" + names + rb"):[ \t]*(?:#.*)?\r?$")


def values_as_written(chart: str, path: str) -> bool:
    """Is ``path`` the values file of a chart that only configures bjw-s app-template (no
    ``templates/`` of its own, its values under ``app-template:``), or a values file of a
    chart that sets vLLM production stack's models (``servingEngineSpec:`` and
    ``modelSpec:``, with or without templates of its own), or one that holds values for a
    GPU chart it depends on (``nvidia-device-plugin:`` at its top)? Without ``--render`` it
    is linted as a file: its controllers' or models' pods are read as written
    (:mod:`gpulint.k8s.chartvalues`), where the chart otherwise gets one GL201 and no check.
    A file of at most :data:`VALUES_PEEK` bytes is read for the marks (the lint parses it
    once)."""
    rel = os.path.relpath(os.path.abspath(path), chart)
    if os.sep in rel or "values" not in rel.lower() or not rel.endswith((".yaml", ".yml")):
        return False
    from gpulint.util import safefile

    try:
        head, _ = safefile.read_regular(path, VALUES_PEEK)
    except OSError:
        return False
    if head is None:
        return False
    if all(mark in head for mark in PRODUCTION_STACK_MARKS):
        return True
    if _dependency_mark().search(head):
        return True
    if os.path.isdir(os.path.join(chart, "templates")):
        return False
    return all(mark in head for mark in APP_TEMPLATE_MARKS)


def _shown(folder: str) -> str:
    """A folder as a label: relative to the working directory when it is inside it."""
    rel = os.path.relpath(folder)
    return folder if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel
