"""Helm charts and Kustomize overlays in a tree: which folders are rendered, and which files
a rendered folder consumes (they are not linted on their own).

* A **chart** is a folder holding ``Chart.yaml``. The outermost one is rendered: a subchart
  under ``charts/`` is rendered by its parent. Nothing inside a chart folder is linted as
  plain YAML (its templates are not YAML until rendered; ``values.yaml`` and ``Chart.yaml``
  are not manifests).
* A **Kustomize root** (an overlay) is a folder holding a kustomization file that no other
  kustomization in the tree walked names as a resource, base or component. Only roots are
  built; a base is built as part of every overlay that uses it. The files a root consumes,
  directly or through its bases (resources, patches, generator inputs, the kustomization
  files themselves), are not linted on their own: a patch alone is half an object.
"""

import os
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, NamedTuple

from gpulint.walk import walk

CHART_FILE = "Chart.yaml"
#: The names kustomize accepts for a kustomization file, in its order of preference.
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

#: Folders never walked when looking for kustomizations (as discover.SKIP_DIRS).
_SKIP = frozenset({".git", ".hg", ".svn", ".venv", "node_modules", "venv", "__pycache__"})
#: Kustomizations read per scan at most (a tree with more is read no further).
MAX_KUSTOMIZATIONS = 10_000


def kustomization_file(folder: str, names: Iterable[str] | None = None) -> str | None:
    """The kustomization file of ``folder`` (given its file names when known)."""
    present = set(names) if names is not None else None
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(folder, name)
        if (name in present) if present is not None else os.path.isfile(path):
            return path
    return None


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
    start = os.path.realpath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
    folder = start
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    cwd = os.path.realpath(os.getcwd())
    return cwd if inside(start, cwd) else start


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def links_outside(folder: str, root: str) -> str | None:
    """The first symbolic link under ``folder`` that resolves outside ``root``, if any: a
    chart's ``.Files`` would read it into the rendered output."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) and not inside(os.path.realpath(path), root):
                return path
    return None


class Reference(NamedTuple):
    """A path a kustomization names: the field, the text written, where it points."""

    field: str
    text: str
    path: str  # absolute
    line: int


class Kustomization:
    """What one kustomization file names, read without running anything."""

    __slots__ = ("data", "file", "folder", "refs")

    def __init__(self, folder: str, file: str, data: Any, refs: list[Reference]) -> None:
        self.folder = folder
        self.file = file
        self.data = data
        self.refs = refs

    def folders(self) -> list[str]:
        """The kustomizations this one builds on (resources, bases, components)."""
        return [r.path for r in self.refs if os.path.isdir(r.path)]

    def files(self) -> list[str]:
        return [r.path for r in self.refs if os.path.isfile(r.path)]

    def patches(self) -> list[str]:
        return [r.path for r in self.refs if r.field.startswith("patch") and os.path.isfile(r.path)]

    def resources(self) -> list[str]:
        return [r.path for r in self.refs if r.field in ("resources", "bases", "components")]


#: Fields whose items are paths (or, for resources/bases/components, folders or URLs).
_LIST_FIELDS = ("resources", "bases", "components", "crds", "patchesStrategicMerge")
#: Fields whose items are mappings with a ``path``.
_PATH_ITEM_FIELDS = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
#: Fields that configure plugins (exec or container functions): never built.
PLUGIN_FIELDS = (
    "generators",
    "transformers",
    "validators",
    "helmCharts",
    "helmChartInflationGenerator",
)


def read_kustomization(folder: str, file: str) -> Kustomization | None:
    """The kustomization in ``file``, or None when it cannot be read as one mapping."""
    from gpulint.loader.stream import load_text

    try:
        with open(file, "rb") as fh:
            text = fh.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return None
    try:
        docs = load_text(text).documents
    except Exception:  # an unreadable kustomization is built by no one; never a traceback
        return None
    if not docs or not isinstance(docs[0].data, dict):
        return None
    doc = docs[0]
    data = doc.data
    refs: list[Reference] = []

    def add(field: str, text: Any, where: tuple[Any, ...]) -> None:
        if not isinstance(text, str) or not text.strip() or "\n" in text:
            return  # an inline patch, not a path
        line = doc.value_span(where).line
        refs.append(Reference(field, text, os.path.normpath(os.path.join(folder, text)), line))

    for field in _LIST_FIELDS:
        items = data.get(field)
        if isinstance(items, list):
            for i, item in enumerate(items):
                add(field, item, (field, i))
    for field in _PATH_ITEM_FIELDS:
        items = data.get(field)
        if isinstance(items, list):
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    add(
                        "patches" if field != "replacements" else field,
                        item.get("path"),
                        (field, i, "path"),
                    )
    for field in _GENERATORS:
        items = data.get(field)
        if isinstance(items, list):
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    continue
                for key in ("files", "envs"):
                    values = item.get(key)
                    if isinstance(values, list):
                        for j, value in enumerate(values):
                            if isinstance(value, str):
                                add(field, value.rpartition("=")[2], (field, i, key, j))
                add(field, item.get("env"), (field, i, "env"))
    return Kustomization(folder, file, data, refs)


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
    reported as not rendered) but Kustomize folders are linted file by file as before.
    """

    def __init__(self, render: bool) -> None:
        self.render = render
        self.kustomizations: dict[str, Kustomization] = {}
        self._scanned: list[str] = []
        self._consumed: set[str] | None = None
        self._roots: set[str] | None = None

    # -- scanning ----------------------------------------------------------------------

    def scan(self, root: str) -> None:
        """Read every kustomization under ``root`` (once)."""
        if not self.render:
            return
        top = os.path.abspath(root)
        if any(inside(top, done) for done in self._scanned):
            return
        self._scanned.append(top)
        self._consumed = self._roots = None
        for dirpath, dirnames, filenames in walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP)
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

    def consumed_by(self, folder: str) -> set[str]:
        """Every file the kustomization in ``folder`` reads, through its bases too."""
        out: set[str] = set()
        todo, seen = [folder], set()
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            k = self.kustomizations.get(current)
            if k is None:
                k = _read_folder(current)
                if k is None:
                    continue
                self.kustomizations[current] = k
            out.add(k.file)
            out.update(k.files())
            todo.extend(k.folders())
        return out

    # -- what discover asks ------------------------------------------------------------

    def folder(self, dirpath: str, filenames: list[str]) -> RenderTarget | None:
        """What a walked folder is: a chart, a Kustomize root to build, or neither."""
        if CHART_FILE in filenames:
            return RenderTarget("helm", dirpath)
        if self.render and kustomization_file(dirpath, filenames) is not None:
            roots, _ = self._index()
            if os.path.abspath(dirpath) in roots:
                return RenderTarget("kustomize", dirpath)
        return None

    def consumed(self, path: str) -> bool:
        """Is the file part of a Kustomize root that is built (so not linted alone)?"""
        if not self.render or not self.kustomizations:
            return False
        _, consumed = self._index()
        return os.path.abspath(path) in consumed

    def owners(self, path: str) -> Iterator[RenderTarget]:
        """What renders a file named on the command line: its chart, or the roots that
        consume it (the working directory is scanned for them)."""
        chart = _chart_above(os.path.dirname(os.path.abspath(path)))  # a file: no stat
        if chart is not None:
            yield RenderTarget("helm", _shown(chart))
            return
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


def _read_folder(folder: str) -> Kustomization | None:
    file = kustomization_file(folder)
    return read_kustomization(folder, file) if file is not None else None


def _shown(folder: str) -> str:
    """A folder as a label: relative to the working directory when it is inside it."""
    rel = os.path.relpath(folder)
    return folder if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel
