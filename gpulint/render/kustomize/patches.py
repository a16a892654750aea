"""Kustomize patches in a run without ``--render``: which files the kustomizations of the
tree patch with, and which objects of their resources those patches complete.

Without ``--render`` every file is linted alone, but a patch is half an object: the GPU it
adds has its toleration in the base, or the reverse. The parts found here
(:class:`gpulint.util.discover.Part`) tell the engine to leave the rules that need the whole
object to the rendered overlay on them (GL203):

* a **patch** is a file a kustomization names in ``patchesStrategicMerge`` or in
  ``patches:``/``patchesJson6902`` (``- path:``): every object in it is a part;
* a **patched resource** is a file a kustomization consumes through ``resources`` (through
  its bases and components too) holding an object that one of its patches targets, by
  ``kind`` and ``metadata.name`` (or the patch's ``target``), when the patch reaches the
  pod spec (:data:`POD_KEYS`): a patch that sets ``replicas`` changes nothing a GPU rule
  reads, and the resource is linted whole.

Patches are read as kustomization files are (gpulint.util.safefile, at most
:data:`MAX_PATCH_BYTES`), never built.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from gpulint.util.discover import Part

if TYPE_CHECKING:
    from gpulint.render.kustomize.files import Kustomization

#: Keys that, anywhere in a patch (or a JSON patch's ``path``), reach a pod spec: the pod
#: template, the containers and what a pod-level GPU rule reads (tolerations, selectors,
#: volumes for /dev/shm, resources).
POD_KEYS = frozenset(
    {
        "template", "jobTemplate", "containers", "initContainers", "ephemeralContainers",
        "tolerations", "nodeSelector", "affinity", "volumes", "volumeMounts", "hostIPC",
        "resources", "env", "args", "command", "image",
    }
)  # fmt: skip
#: The pod spec's placement (where its pods run), and the keys a patch reaches it through: a
#: patch that reaches the pod only through these leaves its containers as written.
PLACEMENT_KEYS = frozenset({"nodeSelector", "affinity", "tolerations"})
_PLACEMENT_PATH = PLACEMENT_KEYS | {"template", "jobTemplate"}
#: Patch files larger than this are not read (still patches; what they target is unknown).
MAX_PATCH_BYTES = 1 << 20
#: How deep a patch is searched for those keys.
MAX_DEPTH = 24
#: The fields of a kustomization that name a patch file.
PATCH_FIELDS = ("patches", "patchesStrategicMerge")
#: The fields through which a kustomization consumes resources, and through which its
#: patches reach them.
RESOURCE_FIELDS = ("resources", "bases", "components")

#: A patched object: ``(kind, name)``, a name of ``None`` for every object of the kind.
Patched = tuple[str, "str | None"]
#: The kustomization of a folder, read when first asked for (``None``: there is none).
Read = Callable[[str], "Kustomization | None"]


def parts(folders: list[str], read: Read, label: Callable[[str], str]) -> dict[str, Part]:
    """Every patch and patched resource of the kustomizations in ``folders``, by absolute
    path. A file that a kustomization patches with stays a patch wherever else it is used;
    a resource several kustomizations patch is a part of the first one (sorted by folder),
    with the objects all of them patch."""
    out: dict[str, Part] = {}
    for folder in sorted(folders):
        k = read(folder)
        if k is None or k.problem is not None:
            continue
        for ref in k.refs:
            if ref.field in PATCH_FIELDS and ref.path not in out and os.path.isfile(ref.path):
                out[ref.path] = Part(label(k.file), ref.line)
    for folder in sorted(folders):
        k = read(folder)
        if k is None or k.problem is not None:
            continue
        patched: set[Patched] = set()
        beyond: set[Patched] = set()  # patched beyond the pods' placement
        first: tuple[int, str] | None = None
        for line, patch, objects in _patches(k, read):
            patched.update(objects)
            beyond.update(o for o, placement in objects.items() if not placement)
            if objects and first is None:
                first = (line, patch)
        if first is None:
            continue
        for file in _resources(k, read):
            had = out.get(file)
            if had is None:
                out[file] = Part(
                    label(k.file),
                    first[0],
                    first[1],
                    frozenset(patched),
                    beyond_placement=frozenset(beyond),
                )
            elif had.patch is not None:
                out[file] = had._replace(
                    objects=had.objects | patched,
                    beyond_placement=had.beyond_placement | beyond,
                )
    for folder in sorted(folders):
        k = read(folder)
        if k is None or k.problem is not None or not _labels_templates(k.data):
            continue
        for file in _resources(k, read):
            had = out.get(file)
            out[file] = (
                Part(label(k.file), k.line, "", frozenset(), True)
                if had is None
                else had._replace(labels=True)
            )
    return {path: p._replace(patch=label(p.patch)) if p.patch else p for path, p in out.items()}


def _labels_templates(data: Any) -> bool:
    """Does a kustomization add labels to its resources' pod templates? ``commonLabels``
    (selectors and templates), or a ``labels`` entry with ``includeSelectors`` or
    ``includeTemplates``."""
    if not isinstance(data, dict):
        return False
    common = data.get("commonLabels")
    if isinstance(common, dict) and common:
        return True
    entries = data.get("labels")
    return any(
        isinstance(e, dict)
        and (e.get("includeSelectors") is True or e.get("includeTemplates") is True)
        and isinstance(e.get("pairs"), dict)
        and bool(e.get("pairs"))
        for e in (entries if isinstance(entries, list) else ())
    )


def _patches(k: Kustomization, read: Read) -> Iterator[tuple[int, str, dict[Patched, bool]]]:
    """Each patch of ``k`` and of the components it uses: its line in ``k``, the patch file
    (``""``: inline) and the objects whose pod spec it reaches, each with whether it reaches
    only the pods' placement (:data:`PLACEMENT_KEYS`)."""
    for ref in k.refs:
        if ref.field == "inline":
            yield ref.line, "", _targets(_load(ref.text), ref.target)
        elif ref.field in PATCH_FIELDS and os.path.isfile(ref.path):
            yield ref.line, ref.path, _targets(_read(ref.path), ref.target)
        elif ref.field == "components" and os.path.isdir(ref.path):
            component = read(ref.path)
            if component is not None and component.problem is None:
                for _, patch, objects in _patches(component, read):
                    yield ref.line, patch, objects


def _resources(k: Kustomization, read: Read) -> Iterator[str]:
    """The files ``k`` consumes as resources, through its bases and components too."""
    todo, seen = [k], {k.folder}
    while todo:
        current = todo.pop()
        for ref in current.refs:
            if ref.field not in RESOURCE_FIELDS:
                continue
            if os.path.isfile(ref.path):
                yield ref.path
            elif os.path.isdir(ref.path) and ref.path not in seen:
                seen.add(ref.path)
                inner = read(ref.path)
                if inner is not None and inner.problem is None:
                    todo.append(inner)


def _targets(documents: list[Any], target: Any) -> dict[Patched, bool]:
    """The objects a patch's documents reach the pod spec of: its ``target`` selector's
    kind and name when it has one, else each document's own ``kind`` and name; each with
    whether every document that reaches it reaches only the pods' placement."""
    selector = _fold(target) if isinstance(target, dict) else {}
    kind, name = selector.get("kind"), selector.get("name")
    out: dict[Patched, bool] = {}
    for data in documents:
        keys: set[str] = set()
        _pod_keys(data, 0, keys)
        if not keys:
            continue
        placement = keys <= _PLACEMENT_PATH and bool(keys & PLACEMENT_KEYS)
        found: Patched | None = None
        if isinstance(kind, str):
            found = (kind, name if isinstance(name, str) else None)
        elif isinstance(data, dict):
            meta = data.get("metadata")
            own = meta.get("name") if isinstance(meta, dict) else None
            if isinstance(data.get("kind"), str) and isinstance(own, str):
                found = (data["kind"], own)
        if found is not None:
            out[found] = out.get(found, True) and placement
    return out


def _fold(mapping: dict[Any, Any]) -> dict[str, Any]:
    """A selector's fields by their names (kustomize decodes them ignoring case)."""
    return {k.lower(): v for k, v in mapping.items() if isinstance(k, str)}


def _pod_keys(data: Any, depth: int, into: set[str]) -> None:
    """Add to ``into`` the keys of :data:`POD_KEYS` that ``data`` holds, anywhere in it (a
    JSON patch operation's ``path`` counts its segments); searched :data:`MAX_DEPTH` deep."""
    if depth > MAX_DEPTH:
        return
    if isinstance(data, dict):
        for key, value in data.items():
            if key in POD_KEYS:
                into.add(key)
                if key not in _PLACEMENT_PATH:
                    continue  # reaches the containers: what lies below changes nothing
            if key == "path" and isinstance(value, str):  # a JSON patch operation
                into.update(POD_KEYS.intersection(value.split("/")))
            else:
                _pod_keys(value, depth + 1, into)
    elif isinstance(data, list):
        for item in data:
            _pod_keys(item, depth + 1, into)


def _read(path: str) -> list[Any]:
    from gpulint.util import safefile

    try:
        raw, _ = safefile.read_regular(path, MAX_PATCH_BYTES)
    except OSError:
        return []
    return _load(raw.decode("utf-8", "replace")) if raw is not None else []


def _load(text: str) -> list[Any]:
    """The documents of a patch's text (none when it is not YAML: the lint says so)."""
    from gpulint.loader.stream import load_text

    try:
        return [doc.data for doc in load_text(text).documents]
    except Exception:  # a patch that does not load is reported when it is linted
        return []
