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

from gpulint.util.discover import Part
from gpulint.util.walk import walk

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
        # lexists: a link to a FIFO or out of the repository is found, and refused when read
        if (name in present) if present is not None else os.path.lexists(path):
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


class Reference(NamedTuple):
    """A path a kustomization names: the field, the text written, where it points. A patch
    written inline is one too: field ``inline``, its text, no path. ``target`` is a patch's
    ``target`` selector as written (a mapping), when it has one."""

    field: str
    text: str
    path: str  # absolute ("" for an inline patch)
    line: int
    target: Any = None
    #: The kustomization field it is written in (``patchesJson6902``, ``patches``, ...).
    origin: str = ""


class Kustomization:
    """What one kustomization file names, read without running anything.

    ``data`` is the file's mapping keyed by kustomize's own field names (``Resources:`` is
    ``resources``). ``problem`` says why the file must not be built (it could not be read
    safely, is not YAML kustomize and gpulint read alike, or has a key that is no field),
    ``line`` where; such a kustomization names nothing (``refs`` is empty).
    """

    __slots__ = ("data", "file", "folder", "line", "problem", "refs")

    def __init__(
        self,
        folder: str,
        file: str,
        data: Any,
        refs: list[Reference],
        problem: str | None = None,
        line: int = 1,
    ) -> None:
        self.folder = folder
        self.file = file
        self.data = data
        self.refs = refs
        self.problem = problem
        self.line = line

    def folders(self) -> list[str]:
        """The kustomizations this one builds on (resources, bases, components)."""
        return [r.path for r in self.refs if os.path.isdir(r.path)]

    def files(self) -> list[str]:
        """The files it names (a link to a device too: refused, and not linted alone)."""
        return [r.path for r in self.refs if os.path.lexists(r.path) and not os.path.isdir(r.path)]

    def patches(self) -> list[str]:
        return [r.path for r in self.refs if r.field.startswith("patch") and os.path.isfile(r.path)]

    def resources(self) -> list[str]:
        return [r.path for r in self.refs if r.field in ("resources", "bases", "components")]


#: Every field of kustomize's ``Kustomization`` type (api/types/kustomization.go, kustomize
#: v5, with the inline ``TypeMeta``'s ``kind`` and ``apiVersion``). kustomize decodes the file
#: with encoding/json, which matches a key to a field ignoring case (:func:`go_fold`).
KUSTOMIZATION_FIELDS = (
    *("kind", "apiVersion", "metadata", "openapi", "namePrefix", "nameSuffix", "namespace"),
    *("commonLabels", "labels", "commonAnnotations", "patchesStrategicMerge", "patchesJson6902"),
    *("patches", "images", "imageTags", "replacements", "replicas", "vars", "sortOptions"),
    *("resources", "components", "crds", "bases", "configMapGenerator", "secretGenerator"),
    *("helmGlobals", "helmCharts", "helmChartInflationGenerator", "generatorOptions"),
    *("configurations", "generators", "transformers", "validators", "buildMetadata"),
)
#: Fields whose items are paths (or, for resources/bases/components, folders or URLs).
_LIST_FIELDS = (
    "resources",
    "bases",
    "components",
    "crds",
    "patchesStrategicMerge",
    "configurations",
)
#: Fields whose items are mappings with a ``path`` (types.Patch, types.ReplacementField), and
#: every field of those items.
_PATH_ITEM_FIELDS = {
    "patches": ("path", "patch", "target", "options"),
    "patchesJson6902": ("path", "patch", "target", "options"),
    "replacements": ("path", "source", "targets"),
}
_GENERATORS = ("configMapGenerator", "secretGenerator")
#: The fields of types.ConfigMapArgs and types.SecretArgs (GeneratorArgs, KvPairSources).
_GENERATOR_FIELDS = (
    *("namespace", "name", "behavior", "literals", "files", "envs", "env", "options", "type"),
)
#: Fields that configure plugins (exec or container functions): never built.
PLUGIN_FIELDS = (
    "generators",
    "transformers",
    "validators",
    "helmCharts",
    "helmChartInflationGenerator",
)
#: Kustomization files larger than this are not read (nor built).
MAX_KUSTOMIZATION_BYTES = 1 << 20

#: The two runes outside ASCII that Go's case folding takes to an ASCII letter: the long s
#: (U+017F) and the Kelvin sign (U+212A).
_GO_FOLDS = str.maketrans({"\u017f": "S", "\u212a": "K"})


def go_fold(key: str) -> str | None:
    """``key`` as encoding/json folds it to match a field name (``bytes.EqualFold``: ASCII
    case ignored, the long s U+017F is ``s`` and the Kelvin sign U+212A is ``k``), or None
    when it cannot match an ASCII name."""
    folded = key.translate(_GO_FOLDS)
    return folded.upper() if folded.isascii() else None


def _fields(names: Iterable[str]) -> dict[str, str]:
    return {name.upper(): name for name in names}


_TOP = _fields(KUSTOMIZATION_FIELDS)
_ITEM_FIELDS = {field: _fields(keys) for field, keys in _PATH_ITEM_FIELDS.items()}
_GENERATOR = _fields(_GENERATOR_FIELDS)


class _Refused(Exception):
    """A kustomization that must not be built: the reason, and the line."""

    def __init__(self, reason: str, line: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


def read_kustomization(folder: str, file: str) -> Kustomization:
    """The kustomization in ``file``, its fields named as kustomize names them. It is read as
    a manifest is (gpulint.util.safefile): a link out of the repository, a FIFO, a device or a
    file over :data:`MAX_KUSTOMIZATION_BYTES` is never opened, and it is a ``problem``
    (which quotes nothing of what the link points at), as is a file that is not one YAML
    mapping without problems or that has a key no field of a kustomization folds to."""
    from gpulint.loader.stream import load_text
    from gpulint.util import safefile

    try:
        raw, why = safefile.read_regular(file, MAX_KUSTOMIZATION_BYTES)
    except OSError as exc:
        why = f"cannot be read: {exc.strerror or type(exc).__name__}"
        raw = None
    if raw is None:
        if why == safefile.LARGE:
            why = f"larger than {MAX_KUSTOMIZATION_BYTES >> 20} MiB"
        return Kustomization(folder, file, {}, [], f"the kustomization file is {why}")
    try:
        loaded = load_text(raw.decode("utf-8", "replace"))
    except Exception:  # an unreadable kustomization is built by no one; never a traceback
        return Kustomization(folder, file, {}, [], "the kustomization file is not valid YAML")
    docs = loaded.documents
    problems = [*loaded.problems, *(docs[0].problems if docs else [])]
    if problems:
        # A syntax error, a duplicate key, a tag: kustomize's YAML reader (go-yaml) may read
        # what gpulint's did not (a later document, the other duplicate, !!binary decoded).
        first = min(problems, key=lambda p: (p.span.line, p.span.column))
        return Kustomization(folder, file, {}, [], f"{first.code} {first.message}", first.span.line)
    if not docs or not isinstance(docs[0].data, dict):
        return Kustomization(folder, file, {}, [], "the kustomization file is not a mapping")
    try:
        data, refs = _references(folder, docs[0])
    except _Refused as refused:
        return Kustomization(folder, file, {}, [], refused.reason, refused.line)
    return Kustomization(folder, file, data, refs)


def _references(folder: str, doc: Any) -> tuple[dict[str, Any], list[Reference]]:
    """The kustomization's fields by their names, and every path they hold; _Refused for a
    key that is no field, or a path-bearing field of another shape than kustomize's."""
    refs: list[Reference] = []

    def line(where: tuple[Any, ...]) -> int:
        return int(doc.value_span(where).line)

    def refuse(reason: str, where: tuple[Any, ...]) -> _Refused:
        return _Refused(reason, line(where))

    def add(
        field: str,
        text: Any,
        where: tuple[Any, ...],
        inline: bool | None = False,
        target: Any = None,
        origin: str = "",
    ) -> None:
        """``inline``: None for a patch's ``patch:`` (always its text), True for an entry
        of ``patchesStrategicMerge`` (its text when it has more than one line)."""
        if text is None:
            return  # null decodes to an empty string: kustomize reads nothing
        if not isinstance(text, str):
            raise refuse(f"a `{field}` entry is not a string", where)
        if inline is None or (inline and "\n" in text):  # an inline patch, not a path
            if text.strip():
                refs.append(Reference("inline", text, "", line(where), target, origin or field))
        elif text.strip():
            path = os.path.normpath(os.path.join(folder, text))
            refs.append(Reference(field, text, path, line(where), target, origin or field))

    def items(value: Any, field: str, where: tuple[Any, ...]) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise refuse(f"`{field}` is not a list", where)
        return value

    def keyed(value: Any, known: dict[str, str], where: tuple[Any, ...]) -> dict[str, Any]:
        """A mapping of a Go struct by field name (each key folded)."""
        if not isinstance(value, dict):
            raise refuse("an entry is not a mapping", where)
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = known.get(go_fold(key) or "") if isinstance(key, str) else None
            if name is None:
                raise _Refused(f"unknown field {key!r}", doc.key_span((*where, key)).line)
            out.setdefault(name, []).append((key, item))
        return out

    top = keyed(doc.data, _TOP, ())
    for field, written in top.items():
        for key, value in written:
            if field in _LIST_FIELDS:
                for i, item in enumerate(items(value, field, (key,))):
                    add(field, item, (key, i), inline=field == "patchesStrategicMerge")
            elif field in _PATH_ITEM_FIELDS:
                known = _ITEM_FIELDS[field]
                shown = "replacements" if field == "replacements" else "patches"
                for i, item in enumerate(items(value, field, (key,))):
                    given = keyed(item, known, (key, i))
                    target = given["target"][-1][1] if "target" in given else None
                    for path_key, path in given.get("path", []):
                        add(shown, path, (key, i, path_key), target=target, origin=field)
                    for patch_key, patch in given.get("patch", []) if shown == "patches" else ():
                        add(shown, patch, (key, i, patch_key), None, target, field)
            elif field in _GENERATORS:
                for i, item in enumerate(items(value, field, (key,))):
                    for name, entries in keyed(item, _GENERATOR, (key, i)).items():
                        for sub, given in entries:
                            where = (key, i, sub)
                            if name == "env":
                                add(field, given, where)
                            elif name in ("files", "envs"):
                                for j, entry in enumerate(items(given, name, where)):
                                    if isinstance(entry, str):
                                        entry = entry.rpartition("=")[2]
                                    add(field, entry, (*where, j))
            elif field == "openapi" and value is not None:
                # map[string]string: its keys are not folded; kustomize loads "path"
                if not isinstance(value, dict):
                    raise refuse("`openapi` is not a mapping", (key,))
                add("openapi", value.get("path"), (key, "path"))
    data = {field: written[-1][1] for field, written in top.items()}
    return data, refs


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

    def __init__(self, render: bool) -> None:
        self.render = render
        self.kustomizations: dict[str, Kustomization] = {}
        self._scanned: list[str] = []
        self._consumed: set[str] | None = None
        self._roots: set[str] | None = None
        self._parts: dict[str, Part] | None = None
        #: Roots built to name those a failing base or component breaks (None: it built).
        self.failures: dict[str, Any] = {}

    def scan(self, root: str) -> None:
        """Read every kustomization under ``root`` (once)."""
        top = os.path.abspath(root)
        if any(inside(top, done) for done in self._scanned):
            return
        self._scanned.append(top)
        self._consumed = self._roots = self._parts = None
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
        it completes (``None``: neither). A file ``named`` on the command line has its
        repository scanned for the kustomizations that use it."""
        if self.render:
            return None
        if named:
            self.scan(project_root(path))
        if not self.kustomizations:
            return None
        if self._parts is None:
            from gpulint.render.kustomize.patches import parts

            self._parts = parts(list(self.kustomizations), self._read, _shown)
        return self._parts.get(os.path.abspath(path))

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

            if renders(chart, path):
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


def read_folder(folder: str) -> Kustomization | None:
    """The kustomization in ``folder`` (read, not kept), or ``None`` when it has none."""
    file = kustomization_file(folder)
    return read_kustomization(folder, file) if file is not None else None


def _shown(folder: str) -> str:
    """A folder as a label: relative to the working directory when it is inside it."""
    rel = os.path.relpath(folder)
    return folder if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel
