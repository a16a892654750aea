"""Node pools written in Terraform: the ``*.tf`` files of a project, read for the node-pool
table (``gpulint/data/node-pools.json``, rows of group ``terraform``) as the project's YAML
node-pool objects are (:mod:`gpulint.cluster.objects`).

Many repositories keep their GPU node groups, and the taints their pods must tolerate, in the
Terraform next to the manifests: an ``aws_eks_node_group`` with a ``taint`` block, the
``eks_managed_node_groups`` of the ``terraform-aws-modules/eks/aws`` module, a
``google_container_node_pool``, an ``azurerm_kubernetes_cluster_node_pool``'s
``node_taints``, a Karpenter NodePool applied through ``kubernetes_manifest`` or
``kubectl_manifest``. Each is read as an object of its own: a resource as
``{"apiVersion": "terraform", "kind": TYPE, "metadata": {"name": NAME}, **body}``, a
module as kind ``module:SOURCE`` (the registry source without its version), and the
Kubernetes objects of ``kubernetes_manifest`` (``manifest``) and ``kubectl_manifest``
(``yaml_body``) as themselves.

What Terraform computes is not known: a value written with an interpolation (``${...}``,
``var.x``) is left out, except a whole ``local.NAME`` of the same folder's ``locals``
(Terraform's module is its folder). A block written once is read where the table's paths
step through it (:class:`gpulint.cluster.poolkinds.Blocks`).

The files are parsed with python-hcl2 (HCL2's grammar on lark's LALR parser: linear in the
text), only those whose bytes name one of the table's resources or modules, and ``locals``
files of their folders. Bounds: a file of more than :data:`MAX_FILE_BYTES` or one whose
brackets nest deeper than :data:`MAX_DEPTH` (counted before parsing, outside strings,
comments and heredocs) is not read, nor more than :data:`MAX_PROJECT_BYTES` of a project's
Terraform; a file that cannot be parsed adds nothing. Nothing in a file is evaluated.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any, NamedTuple

from gpulint.cluster.poolkinds import Blocks, builtin_kinds

#: The group of the table's Terraform rows.
GROUP = "terraform"
#: The module kinds' prefix: ``module:terraform-aws-modules/eks/aws``.
MODULE = "module:"
#: The largest ``*.tf`` file read.
MAX_FILE_BYTES = 512 * 1024
#: The most Terraform bytes of one project read.
MAX_PROJECT_BYTES = 8 * 1024 * 1024
#: The deepest nesting of brackets read (the parser's tree is walked recursively).
MAX_DEPTH = 40
#: The pools of one module whose own lines are looked up (the others cite the module).
MAX_PLACED = 64
#: Resources whose Kubernetes objects are read as the YAML files' are.
MANIFEST_RESOURCES = {"kubernetes_manifest": "manifest", "kubectl_manifest": "yaml_body"}

_HEREDOC = re.compile(r'<<-?"?([A-Za-z_][A-Za-z0-9_-]*)"?[ \t]*\r?\n')
_HEADER = re.compile(r'^[ \t]*(resource|module)[ \t]+"([^"\n]*)"(?:[ \t]+"([^"\n]*)")?', re.M)
#: What :func:`depth` stops at: brackets, quotes, escapes, interpolations, comments, heredocs
#: and line ends (which end an unterminated string).
_MARK = re.compile(r'[{}\[\]()"#\n]|\\|\$\{|//|/\*|<<')
_LOCAL = re.compile(r"\$\{local\.([A-Za-z0-9_-]+)\}")
_DROPPED = frozenset({"__is_block__", "__comments__", "__inline_comments__"})
#: A registry module source: an optional host, then namespace/name/provider and a sub-path.
_HOST = re.compile(r"^(?:registry\.terraform\.io/|registry\.opentofu\.org/)")


class Line(NamedTuple):
    """Where a pool of a module's map is written (as a parsed document's span tells it)."""

    line: int


@cache
def markers() -> tuple[bytes, ...]:
    """Bytes one of which a ``*.tf`` file holds when it may write a node pool."""
    kinds = [k for g, k in builtin_kinds() if g == GROUP]
    found = {k.removeprefix(MODULE).split("//")[0].encode() for k in kinds}
    return tuple(sorted(found | {k.encode() for k in MANIFEST_RESOURCES}))


def module_kind(source: Any) -> str | None:
    """A module block's kind: ``module:`` and its registry source (``//`` sub-path kept,
    version and host dropped); None for a source that is not a registry module's."""
    if not isinstance(source, str) or not source or "${" in source:
        return None
    text = _HOST.sub("", source.split("?")[0]).rstrip("/")
    if text.startswith((".", "/", "git::", "git@", "http")) or text.count("/") < 2:
        return None
    return MODULE + text


def depth(text: str) -> int:
    """How deep the brackets of an HCL text nest, outside its comments, strings and heredocs
    (a string's ``${...}`` counts: its expression is parsed). One pass from one mark to the
    next (:data:`_MARK`), no recursion."""
    most = level = 0
    i, n = 0, len(text)
    in_string: list[int] = []  # the bracket level at which each open string began
    while i < n:
        match = _MARK.search(text, i)
        if match is None:
            break
        i, mark = match.start(), match.group()
        if in_string and level == in_string[-1]:
            if mark == "\\":
                i += 2
                continue
            if mark == "${":
                level += 1
                most = max(most, level)
                i += 2
                continue
            if mark in ('"', "\n"):
                in_string.pop()  # closed, or never closed on its line (the parser refuses it)
            i += len(mark)
            continue
        if mark in ("#", "//"):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
            continue
        if mark == "/*":
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if mark == "<<":
            opener = _HEREDOC.match(text, i)
            if opener:
                closer = re.compile(rf"^[ \t]*{opener.group(1)}[ \t]*$", re.M)
                found = closer.search(text, opener.end())
                i = n if found is None else found.end()
                continue
        elif mark == '"':
            in_string.append(level)
        elif mark in "{[(":
            level += 1
            most = max(most, level)
        elif mark in "}])":
            level = max(level - 1, 0)
        i += len(mark)
    return most


def _load(text: str) -> Any:
    """The text's HCL as python-hcl2 serialises it: strings without their quotes, heredocs
    as their text, no comments. Raises on text the grammar refuses."""
    import hcl2
    from hcl2.utils import SerializationOptions

    # Heredocs as written (python-hcl2 escapes their quotes when it turns them into
    # strings): :func:`_heredoc` takes their text out.
    options = SerializationOptions(
        with_comments=False, strip_string_quotes=True, preserve_heredocs=True
    )
    return hcl2.loads(text, serialization_options=options)


def _clean(root: Any, local_values: Mapping[str, Any] | None = None) -> Any:
    """A copy of parsed HCL with what Terraform computes left out (``None``): strings that
    interpolate, save a whole ``${local.NAME}`` of ``local_values`` (taken as it is). Lists
    of blocks become :class:`Blocks`. Iterative: no recursion on the text's depth."""
    out: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(root, out, 0)]
    while stack:
        value, container, key = stack.pop()
        if isinstance(value, str):
            value = _heredoc(value)
            if "${" not in value and "%{" not in value:
                container[key] = value
            else:
                ref = _LOCAL.fullmatch(value)
                known = local_values is not None and ref is not None
                container[key] = local_values.get(ref.group(1)) if known else None  # type: ignore[union-attr]
        elif isinstance(value, dict):
            new: dict[str, Any] = {}
            container[key] = new
            for k, v in value.items():
                if isinstance(k, str) and k not in _DROPPED:
                    new[k] = None
                    stack.append((v, new, k))
        elif isinstance(value, list):
            blocks = bool(value) and all(
                isinstance(v, dict) and v.get("__is_block__") for v in value
            )
            items: list[Any] = Blocks([None] * len(value)) if blocks else [None] * len(value)
            container[key] = items
            stack.extend((v, items, i) for i, v in enumerate(value))
        else:
            container[key] = value
    return out[0]


def _heredoc(value: str) -> str:
    """A heredoc's text (``<<EOF`` / ``<<-EOF``, whose lines lose their common indent, as
    Terraform strips them); any other string as it is."""
    if not value.startswith("<<"):
        return value
    first, _, rest = value.partition("\n")
    body, _, last = rest.rpartition("\n")
    opener = _HEREDOC.match(first + "\n")
    if opener is None or last.strip() != opener.group(1):
        return value
    if first.startswith("<<-"):
        import textwrap

        body = textwrap.dedent(body)
    return body + "\n" if body else body


def _locals(data: Any) -> dict[str, Any]:
    """The ``locals`` blocks of a parsed file, each value with its own interpolations left
    out (a local that names another local is not followed)."""
    found: dict[str, Any] = {}
    for block in data.get("locals", ()) if isinstance(data, dict) else ():
        if isinstance(block, dict):
            found.update(
                (k, _clean(v)) for k, v in block.items() if isinstance(k, str) and k not in _DROPPED
            )
    return found


class _Place:
    """The lines of a Terraform file's blocks and of a module's pools, by their headers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        #: Each block header's offset: ``("resource", TYPE, NAME)`` or ``("module", NAME)``.
        self.headers: dict[tuple[str, ...], int] = {}
        for match in _HEADER.finditer(text):
            words = tuple(w for w in match.groups() if w is not None)
            self.headers.setdefault(words, match.start())

    def line_at(self, offset: int) -> int:
        import bisect

        if self._starts is None:
            self._starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        return bisect.bisect_right(self._starts, offset)

    def block(self, *words: str) -> int:
        """The offset of the header ``resource "TYPE" "NAME"`` / ``module "NAME"`` (0 if
        not found)."""
        return self.headers.get(words, 0)

    def key(self, name: str, after: int) -> int | None:
        """The offset of ``NAME = {`` after ``after`` (None: not written there, as for a
        map of pools taken from ``locals``: a key of that name before the module is another
        block's)."""
        pattern = re.compile(rf'^[ \t]*"?{re.escape(name)}"?[ \t]*=[ \t]*\{{', re.M)
        match = pattern.search(self.text, after)
        return match.start() if match else None


class _ModuleDoc:
    """A module's pools' lines for :func:`gpulint.cluster.objects.from_objects`."""

    def __init__(self, place: _Place, start: int) -> None:
        self.place, self.start, self.asked = place, start, 0

    def value_span(self, path: tuple[Any, ...]) -> Line:
        self.asked += 1
        name = path[-1] if path else None
        offset = (
            self.place.key(name, self.start)
            if isinstance(name, str) and self.asked <= MAX_PLACED
            else None
        )
        return Line(self.place.line_at(self.start if offset is None else offset))


def _objects(
    label: str, data: Any, text: str, local_values: Mapping[str, Any]
) -> Iterator[tuple[Any, str, Any]]:
    """The node-pool objects one parsed file writes, as ``(data, file:line, doc)``."""
    from gpulint.loader.stream import DocumentStream

    place = _Place(text)
    table = builtin_kinds()
    for block in data.get("resource", ()) if isinstance(data, dict) else ():
        for rtype, named in block.items() if isinstance(block, dict) else ():
            if not isinstance(named, dict):
                continue
            for name, body in named.items():
                if not isinstance(body, dict) or not isinstance(name, str):
                    continue
                source = f"{label}:{place.line_at(place.block('resource', rtype, name))}"
                field = MANIFEST_RESOURCES.get(rtype)
                if field is not None:
                    value = _clean(body.get(field), local_values)
                    if isinstance(value, dict):
                        yield value, source, None
                    elif isinstance(value, str):
                        for doc in DocumentStream(value):
                            yield doc.data, source, None
                elif (GROUP, rtype) in table:
                    own = _clean(body, local_values)
                    yield (
                        {"apiVersion": GROUP, "kind": rtype, "metadata": {"name": name}, **own},
                        source,
                        None,
                    )
    for block in data.get("module", ()) if isinstance(data, dict) else ():
        for name, body in block.items() if isinstance(block, dict) else ():
            kind = module_kind(body.get("source")) if isinstance(body, dict) else None
            if kind is None or (GROUP, kind) not in table or not isinstance(name, str):
                continue
            start = place.block("module", name)
            own = _clean(body, local_values)
            obj = {"apiVersion": GROUP, "kind": kind, "metadata": {"name": name}, **own}
            yield obj, f"{label}:{place.line_at(start)}", _ModuleDoc(place, start)


def terraform_objects(files: Iterable[tuple[str, bytes]]) -> Iterator[tuple[Any, str, Any]]:
    """The node-pool objects of a project's ``(label, bytes)`` Terraform files, as
    :func:`gpulint.cluster.objects.from_objects` reads them. Files that name none of the
    table's resources or modules are not parsed (save a ``locals`` file of the same folder
    as one that does)."""
    wanted = markers()
    by_folder: dict[str, list[tuple[str, bytes, bool]]] = {}
    for label, raw in files:
        named = any(m in raw for m in wanted)
        if named or b"locals" in raw:
            by_folder.setdefault(os.path.dirname(label), []).append((label, raw, named))
    spent = 0
    for rows in by_folder.values():
        if not any(named for _, _, named in rows):
            continue
        parsed: list[tuple[str, Any, str]] = []
        local_values: dict[str, Any] = {}
        for label, raw, named in rows:
            if len(raw) > MAX_FILE_BYTES or spent + len(raw) > MAX_PROJECT_BYTES:
                continue
            spent += len(raw)
            data = _parsed(raw)
            if data is None:
                continue
            local_values.update(_locals(data[0]))
            if named:
                parsed.append((label, *data))
        for label, data, text in parsed:
            yield from _objects(label, data, text, local_values)


def _parsed(raw: bytes) -> tuple[Any, str] | None:
    """A file's parsed HCL and text; None when it is not UTF-8 text, nests too deep or does
    not parse."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\0" in text or depth(text) > MAX_DEPTH:
        return None
    try:
        return _load(text), text
    except RecursionError:
        return None
    except Exception:  # the grammar refuses it: Terraform would too, and says so itself
        return None
