"""Kustomization files read as kustomize reads them, without running anything: every field by
kustomize's own name (encoding/json's case folding), and every path, patch and generator
input they name.
"""

import os
from collections.abc import Iterable
from typing import Any, NamedTuple

#: The names kustomize accepts for a kustomization file, in its order of preference.
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def kustomization_file(folder: str, names: Iterable[str] | None = None) -> str | None:
    """The kustomization file of ``folder`` (given its file names when known)."""
    present = set(names) if names is not None else None
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(folder, name)
        # lexists: a link to a FIFO or out of the repository is found, and refused when read
        if (name in present) if present is not None else os.path.lexists(path):
            return path
    return None


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


class Generated(NamedTuple):
    """An object a ``configMapGenerator`` or ``secretGenerator`` entry makes: its kind, name
    and namespace as written, its ``behavior`` (``create``, ``merge``, ``replace``), whether
    its own ``options`` turn the name's hash suffix off, and where in the kustomization
    file's document it is written: the entry (``at``) and, for each data key it makes from a
    ``files`` or ``literals`` item, that item (``keys``)."""

    kind: str
    name: str
    namespace: str | None
    behavior: str
    no_hash: bool
    at: tuple[Any, ...]
    keys: dict[str, tuple[Any, ...]]
    #: The keys made by ``literals`` items (their value is written in the item).
    literals: frozenset[str] = frozenset()
    #: The ``envs`` (and ``env``) files it reads ``KEY=value`` lines from (absolute).
    envs: tuple[str, ...] = ()

    def literal(self, key: str) -> bool:
        return key in self.literals


class Kustomization:
    """What one kustomization file names, read without running anything.

    ``data`` is the file's mapping keyed by kustomize's own field names (``Resources:`` is
    ``resources``). ``problem`` says why the file must not be built (it could not be read
    safely, is not YAML kustomize and gpulint read alike, or has a key that is no field),
    ``line`` where; such a kustomization names nothing (``refs`` is empty).
    """

    __slots__ = ("data", "file", "folder", "generated", "line", "problem", "refs")

    def __init__(
        self,
        folder: str,
        file: str,
        data: Any,
        refs: list[Reference],
        problem: str | None = None,
        line: int = 1,
        generated: list[Generated] | None = None,
    ) -> None:
        self.folder = folder
        self.file = file
        self.data = data
        self.refs = refs
        self.problem = problem
        self.line = line
        #: The objects its generators make (see :class:`Generated`).
        self.generated = generated or []

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
        data, refs, generated = _references(folder, docs[0])
    except _Refused as refused:
        return Kustomization(folder, file, {}, [], refused.reason, refused.line)
    return Kustomization(folder, file, data, refs, generated=generated)


def _references(folder: str, doc: Any) -> tuple[dict[str, Any], list[Reference], list[Generated]]:
    """The kustomization's fields by their names, and every path they hold; _Refused for a
    key that is no field, or a path-bearing field of another shape than kustomize's."""
    reader = _References(folder, doc)
    top = reader.keyed(doc.data, _TOP, ())
    legacy = doc.data.get("patches")
    if isinstance(legacy, list) and any(isinstance(item, str) for item in legacy):
        # kustomize's FixKustomizationPreUnmarshalling: a `patches:` list holding a string
        # is the old name of `patchesStrategicMerge` (kustomize v1's field).
        top = {("patchesStrategicMerge" if f == "patches" else f): w for f, w in top.items()}
    for field, written in top.items():
        for key, value in written:
            if field in _LIST_FIELDS:
                for i, item in enumerate(reader.items(value, field, (key,))):
                    reader.add(field, item, (key, i), inline=field == "patchesStrategicMerge")
            elif field in _PATH_ITEM_FIELDS:
                reader.path_items(field, key, value)
            elif field in _GENERATORS:
                reader.generators(field, key, value)
            elif field == "openapi" and value is not None:
                # map[string]string: its keys are not folded; kustomize loads "path"
                if not isinstance(value, dict):
                    raise reader.refuse("`openapi` is not a mapping", (key,))
                reader.add("openapi", value.get("path"), (key, "path"))
    data = {field: written[-1][1] for field, written in top.items()}
    return data, reader.refs, reader.generated


class _References:
    """The paths one kustomization's fields hold, read as kustomize reads its Go structs."""

    __slots__ = ("doc", "folder", "generated", "refs")

    def __init__(self, folder: str, doc: Any) -> None:
        self.folder = folder
        self.doc = doc
        self.refs: list[Reference] = []
        self.generated: list[Generated] = []

    def line(self, where: tuple[Any, ...]) -> int:
        return int(self.doc.value_span(where).line)

    def refuse(self, reason: str, where: tuple[Any, ...]) -> _Refused:
        return _Refused(reason, self.line(where))

    def add(
        self,
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
            raise self.refuse(f"a `{field}` entry is not a string", where)
        if not text.strip():
            return
        line = self.line(where)
        if inline is None or (inline and "\n" in text):  # an inline patch, not a path
            self.refs.append(Reference("inline", text, "", line, target, origin or field))
        else:
            path = os.path.normpath(os.path.join(self.folder, text))
            self.refs.append(Reference(field, text, path, line, target, origin or field))

    def items(self, value: Any, field: str, where: tuple[Any, ...]) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.refuse(f"`{field}` is not a list", where)
        return value

    def keyed(self, value: Any, known: dict[str, str], where: tuple[Any, ...]) -> dict[str, Any]:
        """A mapping of a Go struct by field name (each key folded)."""
        if not isinstance(value, dict):
            raise self.refuse("an entry is not a mapping", where)
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = known.get(go_fold(key) or "") if isinstance(key, str) else None
            if name is None:
                raise _Refused(f"unknown field {key!r}", self.doc.key_span((*where, key)).line)
            out.setdefault(name, []).append((key, item))
        return out

    def path_items(self, field: str, key: Any, value: Any) -> None:
        """``patches``, ``replacements`` and the like: items whose ``path`` (or ``patch``)
        names a file (or holds the patch)."""
        known = _ITEM_FIELDS[field]
        shown = "replacements" if field == "replacements" else "patches"
        for i, item in enumerate(self.items(value, field, (key,))):
            given = self.keyed(item, known, (key, i))
            target = given["target"][-1][1] if "target" in given else None
            for path_key, path in given.get("path", []):
                self.add(shown, path, (key, i, path_key), target=target, origin=field)
            for patch_key, patch in given.get("patch", []) if shown == "patches" else ():
                self.add(shown, patch, (key, i, patch_key), None, target, field)

    def generators(self, field: str, key: Any, value: Any) -> None:
        """A ConfigMap or Secret generator's ``env``, ``files`` and ``envs``, and the object
        each entry makes (:class:`Generated`)."""
        for i, item in enumerate(self.items(value, field, (key,))):
            given_fields = self.keyed(item, _GENERATOR, (key, i))
            keys: dict[str, tuple[Any, ...]] = {}
            literals: set[str] = set()
            envs: list[str] = []
            for name, entries in given_fields.items():
                for sub, given in entries:
                    where = (key, i, sub)
                    if name == "env":
                        self.add(field, given, where)
                        if isinstance(given, str) and given.strip():
                            envs.append(os.path.normpath(os.path.join(self.folder, given)))
                    elif name in ("files", "envs"):
                        for j, entry in enumerate(self.items(given, name, where)):
                            if isinstance(entry, str):
                                if name == "files":  # `key=path`, or the file's own name
                                    named, sign, _ = entry.partition("=")
                                    data_key = named if sign else os.path.basename(entry)
                                    keys.setdefault(data_key.strip(), (*where, j))
                                entry = entry.rpartition("=")[2]
                                if name == "envs" and entry.strip():
                                    envs.append(os.path.normpath(os.path.join(self.folder, entry)))
                            self.add(field, entry, (*where, j))
                    elif name == "literals" and isinstance(given, list):
                        for j, entry in enumerate(given):  # `KEY=value`
                            if isinstance(entry, str) and "=" in entry:
                                literal = entry.partition("=")[0].strip()
                                literals.add(literal)
                                keys.setdefault(literal, (*where, j))
            made = _generated(field, given_fields, keys, (key, i))
            self.generated.append(made._replace(literals=frozenset(literals), envs=tuple(envs)))


def _generated(
    field: str, given: dict[str, Any], keys: dict[str, tuple[Any, ...]], at: tuple[Any, ...]
) -> Generated:
    """The object one generator entry makes (its fields as :meth:`_References.keyed` gave
    them: each a list of the key written and the value)."""

    def last(name: str) -> Any:
        return given[name][-1][1] if name in given else None

    name, namespace, behavior, options = (
        last(f) for f in ("name", "namespace", "behavior", "options")
    )
    no_hash = isinstance(options, dict) and any(
        isinstance(k, str) and k.lower() == "disablenamesuffixhash" and v is True
        for k, v in options.items()
    )
    return Generated(
        "ConfigMap" if field == "configMapGenerator" else "Secret",
        name if isinstance(name, str) else "",
        namespace if isinstance(namespace, str) and namespace else None,
        behavior.lower() if isinstance(behavior, str) and behavior else "create",
        no_hash,
        at,
        keys,
    )


def read_folder(folder: str) -> Kustomization | None:
    """The kustomization in ``folder`` (read, not kept), or ``None`` when it has none."""
    file = kustomization_file(folder)
    return read_kustomization(folder, file) if file is not None else None
