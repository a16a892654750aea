"""Which values path wrote a rendered scalar: one more ``helm template`` run, with markers.

A template reaches values through logic that a line-by-line reading of it cannot follow:
``range`` variables, ``dict``/``merge``, ``include`` helpers, ``concat``, a templated key
(``{{ .Values.gpu.resource }}: 1``). So the values helm merges are rendered a second time
with every string leaf replaced by a marker (``gplv000042x``): the values of the chart and
of each unpacked subchart (under the name its parent gives it), then the ``--values``
files, as helm merges them (maps merged, anything else replaced, ``null`` deletes), are
written to one more values file passed last. The marker a rendered scalar holds in that run
names the values path, and the file and line, that wrote it.

A marker is trusted only when nothing else could have written the value (never
confidently wrong): the two renders have the same shape down the finding's path (the same
documents of each template, the same number of keys and items at every step), the marked
scalar is the marker and nothing more (not a marker inside a ``printf``), and the first
render's scalar equals what the values file says at that path. Otherwise nothing is
traced and the finding stays where the template reading put it.

Strings are marked in that render; a string that looks like a version, a number, a
boolean or a template (``semverCompare``, ``int``, ``tpl``) or is empty (``if .Values.x``)
is kept as written, as is every value under a name the chart's templates compare, test or
parse (``eq .Values.engine.type "vllm"`` keeps each ``type``; ``include``, ``tpl``,
``required``, ``int`` and sprig's parsers too). Numbers (a GPU count a ``range`` writes)
are marked in a render of their own: ``n`` becomes ``n`` plus millionths that name it (``1``
-> ``1.000043``: ``int``, ``until`` and ``gt n 0`` see what they saw). Booleans are never
marked. A chart whose marked render fails is not traced. Each costs one more render per
chart, made only when a finding needs it, with the bounds of every render. A packaged
subchart's own ``values.yaml`` (inside its ``.tgz``) is not read: a value the umbrella sets
for it is traced, its defaults are not.

A pod's ``tolerations`` that are empty or left out have no scalar to mark: a third render,
made only for such a finding, gives every empty ``tolerations: []`` of the values one item
``{key: <marker>}`` (:func:`marked_lists`); the item found in the object's ``tolerations``
names the list, when the object is otherwise rendered the same (:meth:`Tracer.list_origin`).

Keys are not marked (a template looks values up by them). A key the template does not
write, in a mapping it copies whole (``toYaml $group.resources``), is put on its values key
when exactly one mapping of the merged values, under the same key name, equals the rendered
one; two groups that render the same mapping leave it at the template.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from typing import Any

from gpulint.loader.document import Document
from gpulint.model import Related, Span
from gpulint.render.helm.templatetext import actions
from gpulint.render.helm.values import Leaf, Origin, chart_values, merged, plain, rebuild
from gpulint.render.mapping import Place, label_of, load_documents, lookup, read_text
from gpulint.util.walk import (  # os.walk without recursion: a folder of any depth
    Listings,
    walk,
)

_MARK = re.compile(r"gplv([0-9]{6})x", re.IGNORECASE)
_WHOLE = re.compile(r"-?[0-9]{1,6}")
_MARKED_TEXT = re.compile(r"-?[0-9]+\.[0-9]+")
#: Strings kept as written: a template may parse or test them.
_KEPT = re.compile(
    r"""v?[0-9][0-9.]*([-+][0-9A-Za-z.+-]*)?   # a version or a number
    |true|false|yes|no|on|off|null|~          # what YAML or a template reads as a value
    """,
    re.IGNORECASE | re.VERBOSE,
)
#: String leaves marked at most (a chart with more traces the first ones).
MAX_MARKS = 100_000


def markable(value: object) -> bool:
    return (
        isinstance(value, str)
        and value.strip() != ""
        and "\n" not in value
        and "{{" not in value
        and len(value) <= 1000
        and _KEPT.fullmatch(value.strip()) is None
        and _MARK.search(value) is None
    )


#: An action that compares or tests a string: its values are kept as written.
_TESTS = re.compile(
    r"\b(?:eq|ne|lt|le|gt|ge|has|hasKey|contains|hasPrefix|hasSuffix|regexMatch|"
    r"mustRegexMatch|semverCompare|include|template|tpl|fail|required|lookup|fromYaml|"
    r"fromJson|b64dec|atoi|int|int64|float64|splitList|split|regexFind)\b"
)
_NAME = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)\b(?![.(])")
#: What a number's marker could change: an exact comparison.
_COMPARES = re.compile(r"\b(?:eq|ne|lt|le|gt|ge)\b")
#: Template files read at most for the names they compare, and bytes of each.
MAX_TEMPLATES = 2000


def compared_names(
    folders: list[str], numbers: bool = False, listings: Listings | None = None
) -> set[str]:
    """The names of the values the templates of ``folders`` (charts) compare, test or
    parse (``eq .Values.engine.type "vllm"``: ``type``): a marker there would change
    what is rendered, or fail the render. For numbers, only those compared (``int`` or a
    helper drops a number's marker, which then traces nothing). ``listings``: the run's,
    shared with its other walks."""
    tests = _COMPARES if numbers else _TESTS
    names: set[str] = set()
    for text in _template_texts(folders, listings):
        for action in actions(text):
            body = action.body
            if tests.search(body):
                names.update(_NAME.findall(body))
    return names


def _template_texts(folders: list[str], listings: Listings | None = None) -> Iterator[str]:
    """The text of every template of ``folders`` (charts), then of every chart packaged in
    their ``charts/`` (a library such as bjw-s' common, whose helpers validate and compare
    the values they render: ``has $controllerValues.type $allowedControllerTypes``), at
    most :data:`MAX_TEMPLATES` files, each read within its bounds."""
    from gpulint.render.helm.sources import Archive

    count = 0
    for folder in folders:
        for dirpath, dirnames, filenames in walk(os.path.join(folder, "templates"), None, listings):
            dirnames.sort()
            for name in sorted(filenames):
                count += 1
                if count > MAX_TEMPLATES:
                    return
                yield read_text(os.path.join(dirpath, name), 1 << 20) or ""
    for folder in folders:
        charts = os.path.join(folder, "charts")
        try:
            packed = sorted(n for n in os.listdir(charts) if n.endswith((".tgz", ".tar.gz")))
        except OSError:
            continue
        for name in packed:
            if not os.path.isfile(os.path.join(charts, name)):
                continue
            archive = Archive(os.path.join(charts, name))
            for member in sorted(archive.members):
                if "/templates/" not in member:
                    continue
                count += 1
                if count > MAX_TEMPLATES:
                    return
                yield archive.members[member]


#: Marked renders made again, at most, after a template refused a marker it names.
MAX_REFUSED_RENDERS = 3


def marked(
    tree: Any,
    origins: list[Origin],
    keep: frozenset[str] | set[str] = frozenset(),
    numbers: dict[float, int | None] | None = None,
    refused: set[tuple[Any, ...]] | frozenset[tuple[Any, ...]] = frozenset(),
) -> Any:
    """Plain data for ``tree`` with each markable string a marker (its index in
    ``origins``, which it is appended to), but those under a key in ``keep`` and those at a
    values path in ``refused`` (a template refused their marker); with
    ``numbers``, each number instead (the marker float -> its index, None for two alike).
    Any depth (:func:`gpulint.render.helm.values.rebuild`); a value too deep to be traced
    is kept as it is."""

    def leaf(tree: Any, _: tuple[Any, ...]) -> Any:
        if not isinstance(tree, Leaf):
            return tree if isinstance(tree, (str, int, float, bool)) else str(tree)
        name = next((p for p in reversed(tree.origin.path) if isinstance(p, str)), None)
        value = tree.value
        if name not in keep and tree.origin.values_path not in refused and len(origins) < MAX_MARKS:
            if numbers is None and markable(value):
                origins.append(tree.origin)
                return f"gplv{len(origins) - 1:06d}x"
            n = _as_number(value)
            if numbers is not None and n is not None and abs(n) < 1e6:
                origins.append(tree.origin)
                mark = n + len(origins) / 1e6
                numbers[mark] = None if mark in numbers else len(origins) - 1
                return mark if _number(value) else repr(mark)  # "4" (an engine's argument) too
        return value if isinstance(value, (str, int, float, bool)) else str(value)

    return rebuild(tree, leaf, key=str)


_END = object()


def _json(data: Any) -> str:
    """``json.dumps(data)`` for plain data of any depth: the open mappings and lists are
    held on a list (``json``'s encoders recurse once per level)."""
    out: list[str] = []
    stack: list[list[Any]] = []  # [its items, a mapping?, nothing written yet]

    def start(value: Any) -> None:
        if isinstance(value, dict):
            out.append("{")
            stack.append([iter(value.items()), True, True])
        elif isinstance(value, list):
            out.append("[")
            stack.append([iter(value), False, True])
        else:
            out.append(json.dumps(value))

    start(data)
    while stack:
        top = stack[-1]
        item: Any = next(top[0], _END)
        if item is _END:
            stack.pop()
            out.append("}" if top[1] else "]")
            continue
        if not top[2]:
            out.append(", ")
        top[2] = False
        if top[1]:
            out.append(json.dumps(str(item[0])) + ": ")
            item = item[1]
        start(item)
    return "".join(out)


def _number(value: object) -> bool:  # not a bool, not NaN
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _mark_text(value: object) -> float | None:
    return float(value) if isinstance(value, str) and _MARKED_TEXT.fullmatch(value) else None


def _as_number(value: object) -> float | None:
    """A number, or a string of a whole number (``"4"``), as a float."""
    if _number(value):
        return float(value)  # type: ignore[arg-type]
    return float(value) if isinstance(value, str) and _WHOLE.fullmatch(value) else None


def _keyed(text: str, documents: list[Document]) -> dict[tuple[str, int], Document]:
    """Each document by (the template helm's header names, its place among that
    template's documents)."""
    from gpulint.render.helm.sources import headers

    found = headers(text)
    starts, names = [line for line, _ in found], [name for _, name in found]
    out: dict[tuple[str, int], Document] = {}
    counts: dict[str, int] = {}
    for doc in documents:
        at = bisect.bisect_right(starts, doc.start.line) - 1
        name = names[at] if at >= 0 else ""
        n = counts[name] = counts.get(name, -1) + 1
        out[(name, n)] = doc
    return out


def _parallel(normal: Any, mark: Any, path: tuple[Any, ...]) -> tuple[Any, Any, Any, Any] | None:
    """Walk ``path`` down both renders by position: (normal key, marked key, normal value,
    marked value) at its end, or None where their shapes differ."""
    nk: Any = None
    mk: Any = None
    for part in path:
        if isinstance(part, int):
            if not (isinstance(normal, list) and isinstance(mark, list)):
                return None
            if len(normal) != len(mark) or not 0 <= part < len(normal):
                return None
            nk = mk = part
            normal, mark = normal[part], mark[part]
            continue
        if not (isinstance(normal, dict) and isinstance(mark, dict)) or len(normal) != len(mark):
            return None
        keys = list(normal)
        if part not in normal:
            return None
        i = keys.index(part)
        nk, mk = part, list(mark)[i]
        if mk != nk and _MARK.search(str(mk)) is None:
            return None
        normal, mark = normal[nk], mark[mk]
    return nk, mk, normal, mark


class Tracer:
    """A chart's marked render, made the first time a finding asks (:meth:`origin`)."""

    def __init__(
        self,
        folder: str,
        values: tuple[str, ...],
        render: Callable[[str], str | None],
        listings: Listings | None = None,
    ) -> None:
        #: The chart's values files and the ``--values`` ones, as helm applies them.
        own = chart_values(folder)
        self.files = [*own, *((os.path.abspath(v), ()) for v in values)]
        self._charts = len(own)
        self._keys: dict[int, tuple[str, int]] | None = None
        self._render = render
        #: The run's listings, for the walks of the charts' templates.
        self._listings = listings
        self._docs: dict[tuple[str, int], Document] | None = None
        self._origins: list[Origin] = []
        #: The numbers' render: its documents, origins and markers (:func:`marked`).
        self._number_docs: dict[tuple[str, int], Document] | None = None
        self._number_origins: list[Origin] = []
        self._numbers: dict[float, int | None] = {}
        self._values: dict[str, Any] = {}
        self._tree: dict[Any, Any] | None = None
        #: (key, the mapping as canonical JSON): the one mapping of the merged values under
        #: that key equal to it, None for several.
        self._mappings: dict[tuple[Any, str], dict[Any, Any] | None] | None = None
        #: Per list field, the render with its empty lists marked and their values paths.
        self._lists: dict[Any, tuple[dict[tuple[str, int], Document], list[tuple[Any, ...]]]]
        self._lists = {}

    def _marked_docs(self, numbers: bool = False) -> dict[tuple[str, int], Document]:
        if numbers:
            if self._number_docs is None:
                self._number_docs = self._run(self._number_origins, self._numbers)
            return self._number_docs
        if self._docs is None:
            self._docs = self._run(self._origins, None)
        return self._docs

    def _run(
        self, origins: list[Origin], numbers: dict[float, int | None] | None
    ) -> dict[tuple[str, int], Document]:
        charts = [os.path.dirname(file) for file, _ in self.files[: self._charts]]
        keep = compared_names(charts, numbers is not None, self._listings)
        refused: set[tuple[Any, ...]] = set()
        for _ in range(1 + MAX_REFUSED_RENDERS):
            origins.clear()
            if numbers is not None:
                numbers.clear()
            data = marked(self._merged(), origins, keep, numbers, refused)
            if not origins:
                return {}
            with tempfile.TemporaryDirectory(prefix="gpulint-marks-") as tmp:
                path = os.path.join(tmp, "marks.yaml")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(_json(data))  # JSON is YAML
                text = self._render(path)
            if text is not None:
                return _keyed(text, load_documents(text))
            # A template that refused a marker names it (bjw-s' common: "References
            # non-existent container 'gplv000007x'"): that value is kept as written, and
            # the chart rendered once more.
            named = {int(m.group(1)) for m in _MARK.finditer(getattr(self._render, "error", ""))}
            more = {origins[i].values_path for i in named if i < len(origins)} - refused
            if numbers is not None or not more:
                return {}
            refused |= more
        return {}

    def trace(
        self,
        text: str,
        documents: list[Document],
        doc: Document,
        path: tuple[Any, ...],
        on_key: bool,
        template_depth: Callable[[], int] | None,
    ) -> tuple[Origin, bool] | None:
        """Where the scalar (``on_key``: the key) at ``path`` of the first render's
        document ``doc`` is written, and whether that is a key of the values file: a
        marker, or for a key the template does not write (``template_depth``: how much of
        the path it writes), the values mapping it was copied from."""
        if self._keys is None:
            self._keys = {d.index: key for key, d in _keyed(text, documents).items()}
        key = self._keys.get(doc.index)
        origin = self.origin(key, doc, path, on_key) if key is not None else None
        if origin is not None:
            return origin, False
        if on_key and template_depth is not None and template_depth() < len(path):
            origin = self.key_origin(doc.data, path)
            if origin is not None:
                return origin, True
        return None

    def entry(
        self, text: str, documents: list[Document], doc: Document, path: tuple[Any, ...],
        prefix: tuple[Any, ...], under: tuple[Any, ...],
    ) -> Any:  # fmt: skip
        """The key (or index) of the entry of the values at ``under`` (in a chart whose
        values are at ``prefix`` of the merged ones) that the subtree at ``path`` of the
        first render's ``doc`` came from: the one every marker in it names. A subtree with no
        marker of those values (a pod spec that writes none: a NodeSet's slurmd image is
        beside it) is judged by the nearest enclosing mapping that has some."""
        under = (*prefix, *under)
        if self._keys is None:
            self._keys = {d.index: key for key, d in _keyed(text, documents).items()}
        mark_doc = self._marked_docs().get(self._keys.get(doc.index) or ("", -1))
        for end in range(len(path), -1, -1):
            walked = _parallel(doc.data, mark_doc.data, path[:end]) if mark_doc else None
            found: set[Any] = set()
            todo = [walked[3]] if walked else []
            while todo and len(found) < 2:
                node = todo.pop()
                if isinstance(node, (dict, list)):
                    todo.extend(node.values() if isinstance(node, dict) else node)
                elif (m := _MARK.fullmatch(str(node))) and int(m.group(1)) < len(self._origins):
                    at = self._origins[int(m.group(1))].values_path
                    if at[: len(under)] == under and len(at) > len(under):
                        found.add(at[len(under)])
            if found or walked is None:
                return found.pop() if len(found) == 1 else None
        return None

    def origin(
        self, key: tuple[str, int], normal: Document, path: tuple[Any, ...], on_key: bool
    ) -> Origin | None:
        """The values file and path that wrote the scalar (``on_key``: the key) at ``path``
        of the first render's document ``normal`` (``key``: its template and place), or
        None when that is not certain."""
        present, value = lookup(normal.data, path)
        if not path or not present or (not on_key and isinstance(value, (dict, list))):
            return None  # no scalar there: no render for it
        numeric = not on_key and _as_number(value) is not None
        mark_doc = self._marked_docs(numeric).get(key)
        if mark_doc is None:
            return None
        walked = _parallel(normal.data, mark_doc.data, path)
        if walked is None:
            return None
        nk, mk, nv, mv = walked
        seen, got = (nk, mk) if on_key else (nv, mv)
        if isinstance(seen, (dict, list)) or isinstance(got, (dict, list)):
            return None
        if numeric:
            mark = _as_number(got) if _number(got) else _mark_text(got)
            at = self._numbers.get(mark) if mark is not None else None
            if at is None:
                return None
            origin = self._number_origins[at]
        else:
            m = _MARK.fullmatch(str(got))
            if m is None or int(m.group(1)) >= len(self._origins):
                return None
            origin = self._origins[int(m.group(1))]
        present, written = lookup(self._file_data(origin.file), origin.path)
        if not present or str(written) != str(seen) or isinstance(seen, bool):
            return None
        return origin

    def list_origin(
        self, text: str, documents: list[Document], doc: Document, obj: tuple[Any, ...],
        field: str,
    ) -> tuple[Origin, list[str]] | None:  # fmt: skip
        """Where the empty (or left out) list ``field`` of the object at ``obj`` of the
        first render's ``doc`` comes from: the values list that, given one marked item,
        is the one item of that field in a render of its own (:func:`marked_lists`), set
        empty in the values file helm applies last that has it; with the other objects
        (``Kind/name``) that render the same list. None when that is not certain: the
        renders differ elsewhere on the way to the object, the field holds anything else,
        or the list is not written empty in a values file."""
        if self._keys is None:
            self._keys = {d.index: key for key, d in _keyed(text, documents).items()}
        key = self._keys.get(doc.index)
        if key is None or field not in LISTS:
            return None
        found = self._list_origin(key, doc, obj, field, marked_lists)
        return found or self._list_origin(key, doc, obj, field, marked_options)

    def _list_origin(
        self,
        key: tuple[str, int],
        doc: Document,
        obj: tuple[Any, ...],
        field: str,
        marking: Callable[[Any, str, list[tuple[Any, ...]]], Any],
    ) -> tuple[Origin, list[str]] | None:
        """:meth:`list_origin` with one way of giving the values a marked item: an empty
        list of the field (:func:`marked_lists`), or, made only when that traced nothing,
        an empty mapping of pod options (:func:`marked_options`)."""
        if (field, marking) not in self._lists:
            paths: list[tuple[Any, ...]] = []
            data = marking(self._merged(), field, paths)
            docs: dict[tuple[str, int], Document] = {}
            if paths:
                with tempfile.TemporaryDirectory(prefix="gpulint-marks-") as tmp:
                    path = os.path.join(tmp, "marks.yaml")
                    with open(path, "w", encoding="utf-8") as fh:
                        fh.write(_json(data))  # JSON is YAML
                    out = self._render(path)
                docs = _keyed(out, load_documents(out)) if out is not None else {}
            self._lists[(field, marking)] = (docs, paths)
        docs, paths = self._lists[(field, marking)]
        empty: Any = {} if marking is marked_options else []
        mark_doc = docs.get(key)
        walked = _parallel(doc.data, mark_doc.data, obj) if mark_doc is not None else None
        if walked is None or not isinstance(walked[2], dict) or not isinstance(walked[3], dict):
            return None
        normal, mark = walked[2], walked[3]
        if set(mark) - set(normal) - {field} or set(normal) - set(mark):
            return None  # the object itself changed: not this list alone
        if normal.get(field, []) != []:
            return None
        items = mark.get(field)
        if not (isinstance(items, list) and len(items) == 1 and isinstance(items[0], dict)):
            return None
        m = _MARK.fullmatch(str(items[0].get("key")))
        if m is None or len(items[0]) != 1 or int(m.group(1)) >= len(paths):
            return None
        values_path = paths[int(m.group(1))]
        origin = None
        for file, prefix in reversed(self.files):
            if values_path[: len(prefix)] != prefix:
                continue
            inner = values_path[len(prefix) :]
            present, written = lookup(self._file_data(file), inner)
            if present:
                origin = Origin(file, inner, values_path) if written == empty else None
                break
        if origin is None:
            return None
        marker = m.group(0)
        others = [
            "{}/{}".format(d.data.get("kind"), (d.data.get("metadata") or {}).get("name"))
            for k, d in docs.items()
            if k != key and isinstance(d.data, dict) and marker in _json(d.data)
        ]
        return origin, others

    def _merged(self) -> dict[Any, Any]:
        if self._tree is None:
            self._tree = merged(self.files)
        return self._tree

    def key_origin(self, data: Any, path: tuple[Any, ...]) -> Origin | None:
        """Where the key at ``path`` of a rendered document ``data`` is written, when the
        mapping holding it was copied whole from values (``toYaml $group.resources``) and
        the template does not write the key itself (the caller knows): the one mapping of
        the merged values under the same key that equals the rendered one."""
        if len(path) < 2 or not isinstance(path[-2], str) or not isinstance(path[-1], str):
            return None
        present, parent = lookup(data, path[:-1])
        if not (present and isinstance(parent, dict)) or path[-1] not in parent:
            return None
        if self._mappings is None:
            self._mappings = {}
            for name, node in _mappings_named(self._merged()):
                key = (name, _canonical(plain(node)))
                self._mappings[key] = None if key in self._mappings else node
        found = self._mappings.get((path[-2], _canonical(parent)))
        if found is None or path[-1] not in found:
            return None  # none, or several alike
        child, depth = found[path[-1]], 0
        while not isinstance(child, Leaf):
            if not isinstance(child, (dict, list)):
                return None  # deeper than values are traced
            items = list(child.values()) if isinstance(child, dict) else child
            if not items:
                return None
            child, depth = items[0], depth + 1
        o = child.origin
        end = len(o.path) - depth
        return Origin(o.file, o.path[:end], o.values_path[: len(o.values_path) - depth])

    def _file_data(self, file: str) -> Any:
        if file not in self._values:
            text = read_text(file)
            docs = load_documents(text) if text is not None else []
            self._values[file] = docs[0].data if docs else None
        return self._values[file]


#: The list fields a pod may lack that are traced by a render of their own (GPU020's and
#: GPU023's ``tolerations``): each empty list of that name in the values becomes one item
#: whose ``key`` is a marker, so the item shows which values list the template wrote there,
#: through any helper, ``dict``, ``merge`` or ``fromYaml`` round trip.
LISTS = ("tolerations",)


def marked_lists(tree: Any, field: str, paths: list[tuple[Any, ...]]) -> Any:
    """Plain data for ``tree`` with each empty list under a key ``field`` one item
    ``{"key": marker}`` (its index in ``paths``, which its values path is appended to)."""
    return _marked(tree, paths, lambda k, v: k == field and v == [], lambda item: [item])


#: A values mapping of pod-level options a library reads a pod's fields from by name
#: (bjw-s' common: ``defaultPodOptions``, a controller's ``pod``): an empty one is given the
#: missing field when no empty list of it traced anything.
_POD_OPTIONS = re.compile(r"^(?:default)?pod(?:options|spec|template)?$", re.IGNORECASE)


def marked_options(tree: Any, field: str, paths: list[tuple[Any, ...]]) -> Any:
    """Plain data for ``tree`` with each empty mapping of pod options (:data:`_POD_OPTIONS`)
    given ``field`` as one item ``{"key": marker}`` (its index in ``paths``, which the
    mapping's values path is appended to)."""

    def named(k: Any, v: Any) -> bool:
        return isinstance(k, str) and bool(_POD_OPTIONS.match(k)) and v == {}

    return _marked(tree, paths, named, lambda item: {field: [item]})


def _marked(
    tree: Any,
    paths: list[tuple[Any, ...]],
    wanted: Callable[[Any, Any], bool],
    holding: Callable[[dict[str, str]], Any],
) -> Any:
    """Plain data for ``tree`` with the value of each mapping key that is ``wanted`` (key,
    value) replaced by ``holding`` one marker item (its index in ``paths``, which the key's
    values path is appended to); at most :data:`MAX_MARKS` nodes walked and marks made."""
    data = plain(tree)
    todo: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    seen = 0
    while todo and seen < MAX_MARKS:
        node, at = todo.pop()
        seen += 1
        pairs = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in pairs:
            if isinstance(node, dict) and wanted(k, v) and len(paths) < MAX_MARKS:
                paths.append((*at, k))
                node[k] = holding({"key": f"gplv{len(paths) - 1:06d}x"})
            elif isinstance(v, (dict, list)):
                todo.append((v, (*at, k)))
    return data


def _mappings_named(tree: Any) -> Iterator[tuple[Any, dict[Any, Any]]]:
    """Every mapping in the merged values, with the key it is under."""
    todo = [tree]
    seen = 0
    while todo and seen < MAX_MARKS:
        node = todo.pop()
        seen += 1
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, dict):
                    yield k, v
                todo.append(v)
        elif isinstance(node, list):
            todo.extend(node)


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, default=str)


def traced_place(
    origin: Origin, values: Document, template: Place | None, chart: str = "", key: bool = False
) -> Place:
    """A finding put on the values line ``origin`` names (``template``: where the template
    that rendered it writes it, when that is a file of the ``chart`` folder)."""
    dotted = ".".join(str(p) for p in origin.values_path)
    span = values.key_span(origin.path) if key else values.value_span(origin.path)
    if template is None:
        return Place(label_of(origin.file), span, f" (as .Values.{dotted})")
    line = template.span.line
    related = Related(
        "template",
        template.path,
        Span(line, 1, line, 1),
        f"the template that uses .Values.{dotted}",
    )
    used = os.path.relpath(template.path, label_of(chart)) if chart else template.path
    note = f" (used by {used}:{line} as .Values.{dotted})"
    return Place(label_of(origin.file), span, note, (related,))


def list_place(
    origin: Origin, values: Document, field: str, others: list[str], template: str
) -> Place | str:
    """A missing ``field`` put on the empty values list ``origin`` names, when no other
    object renders it; else why it stays at the template, naming that list and them (adding
    the item there would give it to every one of them)."""
    dotted = ".".join(str(p) for p in origin.values_path)
    present, written = lookup(values.data, origin.path)
    if present and written == {}:  # a mapping of pod options: the field goes under it
        return _under_place(origin, values, field, others, template, dotted)
    span = values.value_span(origin.path)
    where = f"{label_of(origin.file)}:{span.line}"
    if not others:
        note = (
            f" (as .Values.{dotted}, which is empty here: {template} writes this object's "
            f"{field} from it through template logic)"
        )
        return Place(label_of(origin.file), span, note)
    shown = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
    one = len(others) == 1
    return (
        f" (shown at the template: this object's {field} come from .Values.{dotted} "
        f"({where}), which is empty here and which {shown} also render{'s' if one else ''}: "
        f"{field} added there go to {'it' if one else 'them'} too; give this object {field} "
        "of its own to change it alone)"
    )


def _under_place(
    origin: Origin, values: Document, field: str, others: list[str], template: str, dotted: str
) -> Place | str:
    """A missing ``field`` put on the empty mapping of pod options it is read from (a
    library's ``defaultPodOptions: {}``), saying to add it under that key."""
    span = values.key_span(origin.path)
    if not others:
        note = (
            f" (as .Values.{dotted}.{field}, which no values file sets: {template} writes this "
            f"object's {field} from .Values.{dotted} through template logic; add {field} "
            "under it here)"
        )
        return Place(label_of(origin.file), span, note)
    shown = ", ".join(others[:3]) + (", …" if len(others) > 3 else "")
    return (
        f" (shown at the template: this object's {field} come from .Values.{dotted}.{field} "
        f"({label_of(origin.file)}:{span.line}), which no values file sets and which {shown} "
        f"also read: {field} added there go to them too; give this object {field} of its own "
        "to change it alone)"
    )
