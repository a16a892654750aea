"""Where a value of a built Kustomize root is written, found by following its objects
through the build as kustomize makes it (api/internal/target/kusttarget.go, kustomize v5).

A kustomization's output is its ``resources`` (files, and the built output of folders) in
order, then each of its ``components`` applied to that, then what its ``configMapGenerator``
and ``secretGenerator`` entries make (a generated object's writer is its entry, and each
key's the ``files`` or ``literals`` item, or the ``envs`` file's line, that makes it), then
its transformers in kustomize's order: ``patchesStrategicMerge``, ``patches``,
``namespace``, ``namePrefix``, ``nameSuffix``, then ``patchesJson6902``, then inline
``replacements`` (a value one copies is placed where its source value is written). Every
object is followed with its identity: its kind, every name it has had (a ``/metadata/name``
JSON6902 patch renames it, a ``namePrefix``/``nameSuffix`` adds to it: a patch's target
matches the original name or the current one, as kustomize's ``Select`` and ``GetById`` do)
and the writers that touched it in order (:class:`Layer`: the resource document, each
strategic-merge patch, each JSON6902 operation, each generator entry and replacement). A
rendered object is the followed object whose kind and final name are its own, exactly: a
source whose name is only part of the rendered one is another object.

A finding's value is placed at its **last writer** only when what that writer wrote equals
the rendered value (a mapping or a list is placed at its key, in the last writer that writes
one: a transformer changing a value inside it does not move it); otherwise something gpulint
does not follow (``images``, ``replicas``, a ``replacements`` entry whose ``options`` cut
the copy or that is read from a file) wrote it, and the finding falls back to the
kustomization entry that brought the object in, saying so.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from gpulint.loader.document import Document
from gpulint.model import Span
from gpulint.render.kustomize.files import (
    Generated,
    Kustomization,
    Reference,
    kustomization_file,
    read_kustomization,
)
from gpulint.render.mapping import load_documents, lookup, read_text


class Layer(NamedTuple):
    """One writer of an object: a resource document (``resource``), a strategic-merge patch
    (``smp``) or one operation of a JSON6902 patch (``json``, ``op`` its index)."""

    kind: str
    file: str  # the file holding the text (a kustomization file for an inline patch)
    doc: Document
    op: int = -1
    #: A generator's entry (``kind`` ``generator``; ``doc`` its kustomization's document).
    generated: Generated | None = None
    #: A replacement's source and the field paths it writes (``kind`` ``replacement``).
    replaced: Replaced | None = None
    #: An inline patch's place in its kustomization file: the line before its first line
    #: and its indentation; (-1, 0) when it is not a literal block (no position inside it).
    shift: tuple[int, int] = (0, 0)
    #: False for a patch whose target selects by labels or annotations, which are not
    #: followed: it may not have applied, so it is never where a finding goes.
    sure: bool = True


class Replaced(NamedTuple):
    """One target of a ``replacements`` entry: the object it copies from (None when gpulint
    cannot tell which, or the copy is not whole: ``options`` cut or wrap it), the field path
    it copies, and the target's field paths it writes."""

    source: Followed | None
    source_path: tuple[str, ...]
    paths: tuple[tuple[str, ...], ...]
    at: tuple[Any, ...] = ()  # the replacement's place in the kustomization's document


class Followed(NamedTuple):
    """An object of a build: its kind, every name it has had (the current one last), its
    namespace, its writers in order and the kustomization entry that brought it in."""

    kind: str
    names: tuple[str, ...]
    namespace: str | None
    layers: tuple[Layer, ...]
    entry: tuple[str, int]
    #: Made by a generator whose name kustomize ends with a hash of the content.
    hashed: bool = False


class Written(NamedTuple):
    """Where a value is written: the file, the span, and whether it is a fallback."""

    file: str
    span: Span
    fallback: bool = False
    #: What the message adds (the replacement that copied the value from there).
    note: str = ""


#: Kustomizations followed at most in one build (a deeper tree falls back).
MAX_DEPTH = 64


class Builds:
    """The followed objects of Kustomize roots, each file read once per root."""

    def __init__(self, kustomizations: dict[str, Kustomization]) -> None:
        self.kustomizations = kustomizations
        self._docs: dict[str, list[Document]] = {}
        self._built: dict[str, list[Followed]] = {}

    def documents(self, file: str) -> list[Document]:
        got = self._docs.get(file)
        if got is None:
            text = read_text(file)
            got = self._docs[file] = load_documents(text) if text is not None else []
        return got

    def kustomization(self, folder: str) -> Kustomization | None:
        k = self.kustomizations.get(folder)
        if k is None:
            file = kustomization_file(folder)
            k = read_kustomization(folder, file) if file else None
            if k is not None:
                self.kustomizations[folder] = k
        return k if k is not None and k.problem is None else None

    def build(self, folder: str, stack: tuple[str, ...] = ()) -> list[Followed]:
        """The objects of the kustomization in ``folder``, followed."""
        got = self._built.get(folder)
        if got is None:
            got = self._apply(folder, [], stack)
            self._built[folder] = got
        return got

    def _apply(
        self, folder: str, objects: list[Followed], stack: tuple[str, ...]
    ) -> list[Followed]:
        k = self.kustomization(folder)
        if k is None or folder in stack or len(stack) >= MAX_DEPTH:
            return objects
        stack = (*stack, folder)
        out = list(objects)
        for ref in k.refs:
            if ref.field not in ("resources", "bases"):
                continue
            entry = (k.file, ref.line)
            if os.path.isdir(ref.path):
                out.extend(o._replace(entry=entry) for o in self.build(ref.path, stack))
            elif os.path.isfile(ref.path):
                out.extend(self._resources(ref.path, entry))
        for ref in k.refs:
            if ref.field == "components" and os.path.isdir(ref.path):
                had = len(out)  # a component keeps the objects' order, adds after them
                out = self._apply(ref.path, out, stack)
                entry = (k.file, ref.line)
                out = out[:had] + [o._replace(entry=entry) for o in out[had:]]
        out = self._generate(k, out)
        for origin in ("patchesStrategicMerge", "patches"):
            for ref in k.refs:
                if ref.origin == origin and ref.field in ("inline", origin):
                    out = self._patch(k, ref, out, json_only=False)
        out = _renamed(k, out)
        for ref in k.refs:
            if ref.origin == "patchesJson6902":
                out = self._patch(k, ref, out, json_only=True)
        return self._replacements(k, out)

    def _replacements(self, k: Kustomization, objects: list[Followed]) -> list[Followed]:
        """``objects`` with the kustomization's inline ``replacements`` applied: each target
        it selects gets one more writer, whose value is its source's (a replacement in a file
        named by ``path`` is not followed: a value it writes falls back)."""
        given = k.data.get("replacements")
        docs = self.documents(k.file) if isinstance(given, list) else []
        if not docs:
            return objects
        key = next((k for k in docs[0].data if str(k).lower() == "replacements"), "replacements")
        for index, rep in enumerate(given):
            source = rep.get("source") if isinstance(rep, dict) else None
            targets = rep.get("targets") if isinstance(rep, dict) else None
            if not isinstance(source, dict) or not isinstance(targets, list):
                continue
            found = [o for o in objects if _selects(source, o)]
            field = source.get("fieldPath") or "metadata.name"
            whole = len(found) == 1 and not source.get("options") and isinstance(field, str)
            source_path = _field_path(field) if whole and isinstance(field, str) else None
            for target in targets:
                select = target.get("select") if isinstance(target, dict) else None
                paths = target.get("fieldPaths") if isinstance(target, dict) else None
                if not isinstance(select, dict) or not isinstance(paths, list):
                    continue
                parsed = tuple(p for p in (_field_path(f) for f in paths) if p is not None)
                ok = source_path is not None and not target.get("options")
                replaced = Replaced(
                    found[0] if ok else None, source_path or (), parsed, (key, index)
                )
                layer = Layer("replacement", k.file, docs[0], replaced=replaced)
                rejected = target.get("reject")
                rejects = (
                    [r for r in rejected if isinstance(r, dict)]
                    if isinstance(rejected, list)
                    else []
                )
                objects = [
                    o._replace(layers=(*o.layers, layer))
                    if _selects(select, o) and not any(_selects(r, o) for r in rejects)
                    else o
                    for o in objects
                ]
        return objects

    def _resources(self, file: str, entry: tuple[str, int]) -> list[Followed]:
        out = []
        for doc in self.documents(file):
            kind, name, namespace = _identity(doc.data)
            if kind is not None and name is not None:
                layer = Layer("resource", file, doc)
                out.append(Followed(kind, (name,), namespace, (layer,), entry))
        return out

    def _generate(self, k: Kustomization, objects: list[Followed]) -> list[Followed]:
        """``objects`` with what the kustomization's ``configMapGenerator`` and
        ``secretGenerator`` entries make: a new object (``behavior: create``, its name
        hashed unless ``options`` or ``generatorOptions`` say not), or one more writer of the
        object of that kind and name it merges into or replaces."""
        docs = self.documents(k.file) if k.generated else []
        if not docs:
            return objects
        options = k.data.get("generatorOptions")
        no_hash = isinstance(options, dict) and any(
            isinstance(key, str) and key.lower() == "disablenamesuffixhash" and value is True
            for key, value in options.items()
        )
        out = list(objects)
        for made in k.generated:
            if not made.name:
                continue
            layer = Layer("generator", k.file, docs[0], generated=made)
            line = docs[0].value_span(made.at).line
            if made.behavior in ("merge", "replace"):
                out = [
                    o._replace(layers=(*o.layers, layer))
                    if o.kind == made.kind
                    and o.names[-1] == made.name
                    and made.namespace in (None, o.namespace)
                    else o
                    for o in out
                ]
                continue
            hashed = not (made.no_hash or no_hash)
            out.append(
                Followed(made.kind, (made.name,), made.namespace, (layer,), (k.file, line), hashed)
            )
        return out

    def _patch(
        self, k: Kustomization, ref: Reference, objects: list[Followed], json_only: bool
    ) -> list[Followed]:
        """``objects`` with the patch of ``ref`` applied to those it targets."""
        if ref.field == "inline":
            docs, file, shift = load_documents(ref.text), k.file, _inline_shift(k.file, ref)
        elif os.path.isfile(ref.path):
            docs, file, shift = self.documents(ref.path), ref.path, (0, 0)
        else:
            return objects
        target = ref.target if isinstance(ref.target, dict) else None
        sure = target is None or not any(
            str(key).lower() in ("labelselector", "annotationselector") for key in target
        )
        for doc in docs:
            data = doc.data
            if isinstance(data, list) and target is not None:  # JSON6902 operations
                objects = [
                    _operations(o, data, Layer("json", file, doc, shift=shift, sure=sure))
                    if _selects(target, o)
                    else o
                    for o in objects
                ]
            elif isinstance(data, dict) and not json_only:
                kind, name, namespace = _identity(data)
                layer = Layer("smp", file, doc, shift=shift, sure=sure)
                objects = [
                    o._replace(layers=(*o.layers, layer))
                    if (
                        _selects(target, o)
                        if target is not None
                        else o.kind == kind
                        and name in o.names
                        and (namespace is None or namespace == o.namespace)
                    )
                    else o
                    for o in objects
                ]
        return objects

    def find(
        self, root: str, kind: str | None, name: str | None, namespace: str | None = None
    ) -> Followed | None:
        """The followed object of the root that is exactly ``kind``/``name`` (in
        ``namespace`` when several are)."""
        if kind is None or name is None:
            return None
        found = [o for o in self.build(root) if o.kind == kind and _named(o, name)]
        if len(found) > 1:
            found = [o for o in found if o.namespace == namespace]
        return found[0] if len(found) == 1 else None


#: The suffix kustomize adds to a generated object's name: a dash and ten characters of a
#: hash of its content (api/hasher: an encoding in lower-case letters and digits).
_HASH = re.compile(r"-[a-z0-9]{10}")


def _named(o: Followed, name: str) -> bool:
    """Is ``name`` the rendered name of ``o`` (its current name, with the hash suffix of a
    generated object)?"""
    last = o.names[-1]
    if name == last:
        return True
    return o.hashed and name.startswith(last) and _HASH.fullmatch(name[len(last) :]) is not None


def _identity(data: Any) -> tuple[str | None, str | None, str | None]:
    if not isinstance(data, dict):
        return None, None, None
    kind = data.get("kind")
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name, namespace = meta.get("name"), meta.get("namespace")
    return (
        kind if isinstance(kind, str) else None,
        name if isinstance(name, str) and name else None,
        namespace if isinstance(namespace, str) else None,
    )


def _renamed(k: Kustomization, objects: list[Followed]) -> list[Followed]:
    """``namespace``, ``namePrefix`` and ``nameSuffix`` applied as kustomize applies them."""
    namespace, prefix, suffix = (k.data.get(f) for f in ("namespace", "namePrefix", "nameSuffix"))
    prefix = prefix if isinstance(prefix, str) else ""
    suffix = suffix if isinstance(suffix, str) else ""
    if not (isinstance(namespace, str) and namespace) and not prefix and not suffix:
        return objects
    out = []
    for o in objects:
        if isinstance(namespace, str) and namespace and o.kind not in _CLUSTER_SCOPED:
            o = o._replace(namespace=namespace)
        if (prefix or suffix) and o.kind not in _NOT_PREFIXED:
            o = o._replace(names=(*o.names, prefix + o.names[-1] + suffix))
        out.append(o)
    return out


#: Kinds kustomize's namespace transformer leaves alone (a few cluster-scoped ones).
_CLUSTER_SCOPED = frozenset(
    {"Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition",
     "PersistentVolume", "StorageClass", "PriorityClass", "RuntimeClass"}
)  # fmt: skip
#: Kinds kustomize's prefix/suffix transformer leaves alone (its fieldspecs skip them).
_NOT_PREFIXED = frozenset({"CustomResourceDefinition", "Namespace"})


def _selects(target: Any, o: Followed) -> bool:
    """Does a patch's ``target`` (kind, name and namespace: regular expressions matched
    whole, the name against the original or the current name) select ``o``?"""
    sel = {str(key).lower(): value for key, value in target.items()}

    def match(pattern: Any, value: str | None) -> bool:
        if pattern is None or pattern == "":
            return True
        if not isinstance(pattern, str) or value is None:
            return False
        try:
            return re.fullmatch(pattern, value) is not None
        except re.error:
            return pattern == value

    return (
        match(sel.get("kind"), o.kind)
        and (match(sel.get("name"), o.names[0]) or match(sel.get("name"), o.names[-1]))
        and (sel.get("namespace") in (None, "") or match(sel.get("namespace"), o.namespace))
    )


def _operations(o: Followed, ops: list[Any], layer: Layer) -> Followed:
    """``o`` with the JSON6902 operations applied: each one a writer, a ``/metadata/name``
    one a rename."""
    layers, names, namespace = list(o.layers), o.names, o.namespace
    for i, op in enumerate(ops):
        if not isinstance(op, dict) or not isinstance(op.get("path"), str):
            continue
        layers.append(layer._replace(op=i))
        value = op.get("value")
        if op.get("op") in ("add", "replace") and isinstance(value, str):
            if op["path"] == "/metadata/name":
                names = (*names, value)
            elif op["path"] == "/metadata/namespace":
                namespace = value
    return o._replace(layers=tuple(layers), names=names, namespace=namespace)


def _inline_shift(file: str, ref: Reference) -> tuple[int, int]:
    """Where an inline patch's text is in its kustomization file: a literal block scalar
    (``patch: |``) starts on the next line, at its first line's indentation."""
    text = read_text(file)
    lines = text.splitlines() if text is not None else []
    if not 0 < ref.line <= len(lines) or not re.search(
        r"\|[-+0-9]*\s*(#.*)?$", lines[ref.line - 1]
    ):
        return (-1, 0)
    for line in lines[ref.line :]:
        if line.strip():
            return (ref.line, len(line) - len(line.lstrip(" ")))
    return (-1, 0)


def _index(part: str) -> int | None:
    return int(part) if part.isdigit() else None


def _pointer(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]


_GONE = object()  # a writer that removed the value


def written(
    o: Followed,
    rendered: Any,
    path: tuple[Any, ...],
    on_key: bool,
    memo: dict[Any, Any] | None = None,
) -> Written | None:
    """Where the value at ``path`` of the rendered object is written: its last writer,
    when what that wrote equals the rendered value. ``memo`` keeps, across the findings of
    one run, the paths each replacement writes in each rendered object (resolved once) and
    the lines of the ``envs`` files generators read."""
    memo = memo if memo is not None else {}
    ok, value = lookup(rendered, path)
    if not ok:
        return None
    if not path:  # the object itself: where it is defined
        first = o.layers[0]
        if first.generated is not None:
            return Written(first.file, first.doc.value_span(first.generated.at))
        return Written(first.file, first.doc.start)
    last: tuple[Layer, tuple[Any, ...], Any] | None = None
    for layer in o.layers:
        got = _writes(layer, rendered, path, memo)
        if got is not None:
            last = (layer, *got)
    if last is None:
        return None
    layer, at, wrote = last
    if layer.generated is not None:  # the `files` or `literals` item that makes the key
        if at:
            return Written(layer.file, layer.doc.value_span(at))
        env = _env_line(layer.generated, path[1], memo) if len(path) == 2 else None
        return env[0] if env is not None else None
    if layer.replaced is not None:  # where the value it copies is written
        source = layer.replaced.source
        copied = _copied(source, layer.replaced.source_path, value, memo) if source else None
        if copied is None or source is None:
            return None
        where = f"{os.path.basename(layer.file)}:{layer.doc.value_span(layer.replaced.at).line}"
        field = ".".join(layer.replaced.source_path)
        note = (
            f" (copied from {source.kind}/{source.names[0]} {field} by the replacement at {where})"
        )
        return copied._replace(note=note)
    if wrote is _GONE or not layer.sure or not _same(wrote, value):
        return None
    line, indent = layer.shift
    if line < 0:
        return None
    span = layer.doc.key_span(at) if on_key else layer.doc.value_span(at)
    if line or indent:
        span = Span(
            span.line + line, span.column + indent, span.end_line + line, span.end_column + indent
        )
    return Written(layer.file, span)


def _writes(
    layer: Layer, rendered: Any, path: tuple[Any, ...], memo: dict[Any, Any]
) -> tuple[tuple[Any, ...], Any] | None:
    """What ``layer`` writes at ``path`` (its path in the layer's document and the value),
    or None when it does not write it."""
    data = layer.doc.data
    if layer.generated is not None:
        return _generates(layer.generated, path)
    if layer.replaced is not None:
        key = (id(layer.replaced), id(rendered))
        paths = memo.get(key)
        if paths is None:  # once per replacement and object: each finding only looks it up
            paths = memo[key] = {_resolve(rendered, p, memo) for p in layer.replaced.paths}
        return ((), None) if path in paths else None
    if layer.kind != "json":
        at = _translate(rendered, data, path)
        if at is None:
            return None
        ok, wrote = lookup(data, at)
        return (at, _GONE if wrote is None and layer.kind == "smp" else wrote) if ok else None
    op = data[layer.op]
    pointer = _pointer(op["path"])
    kind = op.get("op")
    if len(pointer) > len(path):
        return None
    node = rendered
    for k, (part, want) in enumerate(zip(pointer, path[: len(pointer)], strict=True)):
        if isinstance(node, list) and isinstance(want, int):
            mine = node[want] if 0 <= want < len(node) else None
            item = op.get("value") if k == len(pointer) - 1 else None
            named = (
                isinstance(item, dict) and isinstance(mine, dict) and item.get("name") is not None
            )
            if named and item.get("name") != mine.get("name"):  # type: ignore[union-attr]
                return None  # it wrote another item: the indexes have moved since
            # The item of its name, wherever later operations moved it; else, appended
            # ("-"), the last item, or the item at that index.
            if not named and want != (len(node) - 1 if part == "-" else _index(part)):
                return None
        elif part != want:
            return None
        ok, node = lookup(node, (want,))
        if not ok:
            return None
    if kind == "remove":
        return (), _GONE
    if kind not in ("add", "replace") or "value" not in op:
        return (), _GONE  # move, copy: the value comes from elsewhere
    rest = path[len(pointer) :]
    inner = _translate(lookup(rendered, path[: len(pointer)])[1], op["value"], rest)
    if inner is None:
        return None
    return (layer.op, "value", *inner), lookup(op["value"], inner)[1]


def _field_path(text: Any) -> tuple[str, ...] | None:
    """A kustomize field path (``spec.template.spec.containers.[name=server].resources``,
    ``\\.`` a dot inside a key) as its parts, or None when it is not one."""
    if not isinstance(text, str) or not text:
        return None
    parts, part, escaped = [], "", False
    for char in text:
        if escaped:
            part, escaped = part + char, False
        elif char == "\\":
            escaped = True
        elif char == ".":
            parts.append(part)
            part = ""
        else:
            part += char
    parts.append(part)
    return tuple(parts) if all(parts) else None


def _resolve(
    data: Any, parts: tuple[str, ...], memo: dict[Any, Any] | None = None
) -> tuple[Any, ...] | None:
    """A field path's parts as a path in ``data``: ``[key=value]`` is the list item whose
    ``key`` is ``value`` (each list indexed by that key once, in ``memo``), a number an
    index of a list."""
    out: list[Any] = []
    for part in parts:
        if isinstance(data, list):
            if part.startswith("[") and part.endswith("]") and "=" in part:
                key, _, want = part[1:-1].partition("=")
                held = memo if memo is not None else {}
                by = held.get((id(data), key))
                if by is None:
                    by = held[(id(data), key)] = {}
                    for i, item in enumerate(data):
                        if isinstance(item, dict):
                            by.setdefault(str(item.get(key)), i)
                index = by.get(want)
            else:
                index = int(part) if part.isdigit() and int(part) < len(data) else None
            if index is None:
                return None
            out.append(index)
            data = data[index]
        elif isinstance(data, dict) and part in data:
            out.append(part)
            data = data[part]
        else:
            return None
    return tuple(out)


def _copied(
    o: Followed, parts: tuple[str, ...], value: Any, memo: dict[Any, Any]
) -> Written | None:
    """Where the value a replacement copies from ``o`` is written: its last writer that
    writes ``parts`` (a resource or patch document holding that value, or the generator
    item that makes that key), when what it wrote is the value copied."""
    for layer in reversed(o.layers):
        made = layer.generated
        if made is not None:
            key = parts[1] if len(parts) == 2 and parts[0] in _GENERATED_FIELDS else None
            at = made.keys.get(key) if key is not None else None
            if at is None:
                env = _env_line(made, key, memo) if key is not None else None
                return env[0] if env is not None and env[1] == str(value) else None
            ok, item = lookup(layer.doc.data, at)
            literal = item.partition("=")[2].strip().strip("'\"") if isinstance(item, str) else None
            if literal is not None and "=" in item and made.literal(key) and literal != str(value):
                return None
            return Written(layer.file, layer.doc.value_span(at))
        if layer.kind == "json" or layer.kind == "replacement" or layer.shift[0] < 0:
            return None  # an operation or another copy: not followed
        at = _resolve(layer.doc.data, parts)
        if at is None:
            continue
        ok, wrote = lookup(layer.doc.data, at)
        if not ok or not layer.sure or not _same(wrote, value):
            return None
        span = layer.doc.value_span(at)
        line, indent = layer.shift
        if line or indent:
            span = Span(
                span.line + line,
                span.column + indent,
                span.end_line + line,
                span.end_column + indent,
            )
        return Written(layer.file, span)
    return None


def _env_line(made: Generated, key: Any, memo: dict[Any, Any]) -> tuple[Written, str] | None:
    """The ``KEY=value`` line of the ``envs`` files of ``made`` that sets ``key``, and the
    value written there, when exactly one line of them does (each file read once a run,
    kept in ``memo``)."""
    if not isinstance(key, str) or not key:
        return None
    hits = []
    for file in made.envs:
        lines = memo.get(("env", file))
        if lines is None:
            lines = memo[("env", file)] = (read_text(file) or "").splitlines()
        for number, raw in enumerate(lines, 1):
            name, sign, rest = raw.strip().partition("=")
            if sign and name.strip() == key and not raw.lstrip().startswith("#"):
                written = Written(file, Span(number, 1, number, len(raw) + 1))
                hits.append((written, rest.strip().strip("'\"")))
    return hits[0] if len(hits) == 1 else None


#: The fields of a generated object that hold its keys (a Secret's values are base64 in
#: ``data``; ``stringData`` never comes out of a generator but is read the same way).
_GENERATED_FIELDS = ("data", "binaryData", "stringData")


def _generates(made: Generated, path: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any] | None:
    """What a generator entry writes at ``path``: a key its ``files`` or ``literals`` item
    makes (the item's place in the kustomization's document, and no value to compare: the
    item names the content rather than holding it), or the whole field (no place here: a
    key an ``envs`` file makes is at its line there, :func:`_env_line`)."""
    if path[0] not in _GENERATED_FIELDS:
        return None
    if len(path) == 1:
        return (), None
    at = made.keys.get(path[1]) if isinstance(path[1], str) else None
    return (at if at is not None else ()), None


def _translate(rendered: Any, source: Any, path: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``path`` of the rendered data as a path in ``source``, when ``source`` writes all of
    it: list items with a ``name`` are matched by it (a strategic merge patch merges
    containers by name), others by their index."""
    out: list[Any] = []
    for part in path:
        if isinstance(part, int):
            if not isinstance(rendered, list) or not isinstance(source, list):
                return None
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
                return None
            rendered, source = item, source[index]
            out.append(index)
            continue
        if not isinstance(source, dict) or part not in source or not isinstance(rendered, dict):
            return None
        rendered, source = rendered.get(part), source[part]
        out.append(part)
    return tuple(out)


def _same(wrote: Any, value: Any) -> bool:
    """Is what a writer wrote the rendered value? A mapping or a list is where its key is
    written, whatever a later transformer (``images``, ``labels``) changed inside it."""
    if isinstance(wrote, dict):  # the key of the mapping is where it is written
        return isinstance(value, dict)
    if isinstance(wrote, list):
        return isinstance(value, list)
    if isinstance(wrote, bool) or isinstance(value, bool):
        return wrote is value
    return bool(
        wrote == value or (wrote is not None and value is not None and str(wrote) == str(value))
    )
