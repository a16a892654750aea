"""Documents -> workloads: Kubernetes objects and the pod specs inside them.

Where pod specs live is data, not code (docs/domain.md#where-pod-specs-live):
``rules/workloads.json`` maps an API group and kind to path patterns, and user configuration
can add rows of the same shape (validated with :func:`validate_row`). Matching is on the API
group and the kind, never the kind alone (``kind: Job`` in ``batch.volcano.sh`` is a Volcano
Job), and ignores the version, so ``apps/v1beta1`` and ``apps/v1`` share a row.

Pattern semantics
-----------------
A pattern is a dotted path from the object's root, e.g. ``spec.tasks.*.template.spec``. Each
segment is

* a mapping key (letters, digits, ``_`` and ``-``);
* ``*`` -- every item of a list, or every value of a mapping (replica types such as
  ``Master`` / ``Worker``);
* a number -- that item of a list (``spec.tasks.0.template.spec``).

A pattern that matches nothing in a given object is not an error (most fields are optional).

Locations
---------
* ``pods`` -- a PodSpec (``containers``, ``initContainers``, ``tolerations``, ...);
* ``containers`` -- a single container outside a ``containers`` list (a KServe model predictor,
  an Argo template's ``container``); it joins the pod spec whose path encloses it (the nearest
  one), or stands alone as a pod-less container;
* ``resources`` -- a bare ResourceRequirements (Kubeflow TrainJob
  ``spec.trainer.resourcesPerNode``);
* ``objects`` -- a whole Kubernetes object embedded in this one (Katib's
  ``spec.trialTemplate.trialSpec``); it is looked up in the table by its own group and kind.

Two row options cover what a plain path cannot say:

* ``pod_defaults`` -- pod-spec fields taken from elsewhere in the object when the pod spec
  does not set them, first match wins (Argo: a template without tolerations gets
  ``spec.tolerations``). Only ``tolerations`` is supported.
* ``require_containers`` -- a matched pod spec with no containers is not a pod (Argo
  templates of type steps, dag, resource or suspend run no container).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.data import data_path
from gpulint.loader.document import Document
from gpulint.model import ObjectRef, Path

if TYPE_CHECKING:
    from gpulint.dra import ClaimIndex

CONTAINER_SECTIONS = ("initContainers", "containers", "ephemeralContainers")
#: The location keys of a row, in the order :class:`WorkloadTable` applies them.
LOCATIONS = ("pods", "containers", "resources", "objects")
#: Pod-spec fields a row may take from elsewhere in the object (``pod_defaults``).
POD_DEFAULT_FIELDS = ("tolerations",)
ROW_KEYS = (
    "group",
    "kind",
    *LOCATIONS,
    "pod_defaults",
    "require_containers",
    "node_agent",
    "source",
)
#: Embedded objects nest at most this deep (an object inside an object inside ...).
MAX_NESTING = 8

#: A pattern segment (compiled on first use: only configuration rows are validated).
_SEGMENT = r"^([A-Za-z0-9_-]+|\*)$"


class WorkloadRowError(ValueError):
    """A workload row that cannot be used; ``messages`` says every reason."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def parse_pattern(pattern: str) -> tuple[str, ...]:
    return tuple(pattern.split("."))


class WorkloadKind(NamedTuple):
    """One row of the table: an API group and kind, and where its pod specs are."""

    group: str
    kind: str
    pods: tuple[tuple[str, ...], ...] = ()
    containers: tuple[tuple[str, ...], ...] = ()
    resources: tuple[tuple[str, ...], ...] = ()
    objects: tuple[tuple[str, ...], ...] = ()
    #: Pod-spec field -> patterns where the object keeps its default for that field.
    pod_defaults: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = ()
    require_containers: bool = False
    #: Node agents (DaemonSets) legitimately tolerate GPU taints without requesting GPUs.
    node_agent: bool = False
    #: Where the row came from: "built-in" or a configuration file.
    origin: str = "built-in"
    source: str = ""

    @classmethod
    def from_json(cls, row: Mapping[str, Any], origin: str = "built-in") -> WorkloadKind:
        """Build a row without validating it (see :func:`parse_row`)."""

        def patterns(values: Iterable[str]) -> tuple[tuple[str, ...], ...]:
            return tuple(parse_pattern(p) for p in values)

        defaults = row.get("pod_defaults") or {}
        return cls(
            group=row["group"],
            kind=row["kind"],
            pods=patterns(row.get("pods", ())),
            containers=patterns(row.get("containers", ())),
            resources=patterns(row.get("resources", ())),
            objects=patterns(row.get("objects", ())),
            pod_defaults=tuple((k, patterns(v)) for k, v in defaults.items()),
            require_containers=bool(row.get("require_containers", False)),
            node_agent=bool(row.get("node_agent", False)),
            origin=origin,
            source=str(row.get("source", "")),
        )


# -- validation of rows (configuration and the built-in table) --------------------------------


def validate_pattern(pattern: Any, location: str) -> list[str]:
    """Why ``pattern`` is not a usable path for a ``location`` ("pods", ...); [] if it is."""
    if not isinstance(pattern, str):
        return [f"must be a dotted path string, got {_shown(pattern)}"]
    if not pattern:
        return ["is empty: write a dotted path such as 'spec.template.spec'"]
    text = pattern.strip()
    if text != pattern or any(ch.isspace() for ch in pattern):
        return [f"{pattern!r} contains whitespace"]
    if text.startswith("$") or text.startswith("."):
        fixed = text.lstrip("$").lstrip(".")
        return [f"{pattern!r}: patterns start at the object's root without '$' or '.': {fixed!r}"]
    if "[" in text or "]" in text:
        fixed = re.sub(r"\[\s*(\*|\d*)\s*\]", lambda m: "." + (m.group(1) or "*"), text)
        fixed = fixed.replace("..", ".")
        return [
            f"{pattern!r}: list items are written as '.*' (every item) or '.0' (one item), "
            f"not brackets: {fixed!r}"
        ]
    segments = text.split(".")
    if any(seg == "" for seg in segments):
        return [f"{pattern!r} has an empty segment (two dots in a row, or a trailing dot)"]
    if "**" in segments:
        return [f"{pattern!r}: '**' is not supported; '*' matches one level"]
    bad = [seg for seg in segments if not re.match(_SEGMENT, seg)]
    if bad:
        return [
            f"{pattern!r}: segment {bad[0]!r} is not a key (letters, digits, '_', '-'), "
            "'*' or a list index"
        ]
    last = segments[-1]
    parent = ".".join(segments[:-1])
    if location == "pods":
        if last in CONTAINER_SECTIONS:
            where = repr(parent) if parent else "the object itself"
            return [f"{pattern!r} names a container list; the pod spec holding it is {where}"]
    elif location == "containers":
        if last in (*CONTAINER_SECTIONS, "sidecars"):
            return [
                f"{pattern!r} names a list of containers; add '.*' to match each one: "
                f"{text + '.*'!r}"
            ]
    elif location == "resources" and last in ("limits", "requests"):
        return [
            f"{pattern!r} ends inside a ResourceRequirements; name the mapping that holds "
            f"'limits' and 'requests': {parent!r}"
        ]
    return []


def validate_row(row: Any) -> list[str]:
    """Every reason why ``row`` is not a valid workload row, as readable messages.

    Each message starts with the field it is about (``pods[1]: ...``). An empty list means
    the row is valid. This is the check configuration loading reports as a configuration
    error; ``schemas/workloads.schema.json`` says the same in JSON Schema.
    """
    if not isinstance(row, Mapping):
        return [
            f"a workload row must be a mapping with 'group', 'kind' and at least one of "
            f"{', '.join(LOCATIONS)}; got {_shown(row)}"
        ]
    errors: list[str] = []
    for key in row:
        if key not in ROW_KEYS:
            import difflib  # only for a misspelt key: keeps it off the start-up path

            close = difflib.get_close_matches(str(key), ROW_KEYS, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            errors.append(f"{key}: unknown key ({hint}allowed: {', '.join(ROW_KEYS)})")
    group = row.get("group")
    if "group" not in row:
        errors.append("group: required (the API group, '' for the core group)")
    elif not isinstance(group, str):
        errors.append(f"group: must be a string, got {_shown(group)}")
    elif "/" in group:
        name = group.partition("/")[0]
        errors.append(
            f"group: {group!r} is an apiVersion; write the API group without the version "
            f"({name!r}); versions are not matched"
        )
    elif re.fullmatch(r"v\d+((alpha|beta)\d+)?", group):
        errors.append(f"group: {group!r} is a version; the core API group is ''")
    kind = row.get("kind")
    if "kind" not in row:
        errors.append("kind: required (the object's kind, e.g. 'PyTorchJob')")
    elif not isinstance(kind, str) or not kind:
        errors.append(f"kind: must be a non-empty string, got {_shown(kind)}")
    elif not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", kind):
        errors.append(f"kind: {kind!r} is not a kind name (letters and digits, e.g. 'RayJob')")
    present = 0
    for location in LOCATIONS:
        if location not in row:
            continue
        values = row[location]
        if not isinstance(values, list):
            errors.append(f"{location}: must be a list of path patterns, got {_shown(values)}")
            continue
        present += len(values)
        for i, pattern in enumerate(values):
            errors.extend(f"{location}[{i}]: {m}" for m in validate_pattern(pattern, location))
    if present == 0:
        errors.append(
            f"the row names no location: give at least one pattern under {', '.join(LOCATIONS)}"
        )
    defaults = row.get("pod_defaults")
    if defaults is not None:
        if not isinstance(defaults, Mapping):
            errors.append(f"pod_defaults: must be a mapping, got {_shown(defaults)}")
        else:
            for name, values in defaults.items():
                where = f"pod_defaults.{name}"
                if name not in POD_DEFAULT_FIELDS:
                    errors.append(
                        f"{where}: unsupported field (supported: {', '.join(POD_DEFAULT_FIELDS)})"
                    )
                elif not isinstance(values, list) or not values:
                    errors.append(f"{where}: must be a non-empty list of path patterns")
                else:
                    for i, pattern in enumerate(values):
                        errors.extend(
                            f"{where}[{i}]: {m}" for m in validate_pattern(pattern, "defaults")
                        )
    for flag in ("require_containers", "node_agent"):
        if flag in row and not isinstance(row[flag], bool):
            errors.append(f"{flag}: must be true or false, got {_shown(row[flag])}")
    if "source" in row and not isinstance(row["source"], str):
        errors.append(f"source: must be a string, got {_shown(row['source'])}")
    return errors


def parse_row(row: Any, origin: str = "built-in") -> WorkloadKind:
    """A validated row, or :class:`WorkloadRowError` with every problem."""
    errors = validate_row(row)
    if errors:
        raise WorkloadRowError(errors)
    return WorkloadKind.from_json(row, origin)


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, Mapping)):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


# -- objects and pod specs ----------------------------------------------------------------------


class K8sObject:
    """A Kubernetes object found in a document (the document itself, a List item, or an
    object embedded in another one)."""

    __slots__ = ("data", "doc", "group", "parent", "path", "ref", "stream", "version")

    def __init__(
        self,
        doc: Document,
        path: Path,
        data: dict[str, Any],
        ref: ObjectRef,
        group: str,
        version: str,
        stream: ClaimIndex | None = None,
        parent: K8sObject | None = None,
    ) -> None:
        self.doc = doc
        self.path = path
        self.data = data
        self.ref = ref
        self.group = group
        self.version = version
        #: The objects of the same file or stream, for cross-document lookups (DRA claims).
        self.stream = stream
        #: The object this one is embedded in (``objects`` locations), if any.
        self.parent = parent

    def __repr__(self) -> str:
        return f"K8sObject({self.ref!r}, path={self.path!r})"

    @property
    def kind(self) -> str:
        return self.ref.kind or ""

    @property
    def root(self) -> K8sObject:
        obj = self
        while obj.parent is not None:
            obj = obj.parent
        return obj

    @property
    def namespace(self) -> str | None:
        """The namespace written on this object or, for an embedded one, on its outermost."""
        return self.ref.namespace or (self.parent.namespace if self.parent else None)


class Container:
    __slots__ = ("data", "name", "path", "resources_key", "section", "sidecar")

    def __init__(
        self,
        name: str | None,
        path: Path,
        data: dict[str, Any],
        section: str,
        sidecar: bool = False,
        resources_key: str = "resources",
    ) -> None:
        self.name = name
        self.path = path
        self.data = data
        #: "containers", "initContainers", "ephemeralContainers", "container" for a
        #: single-container location, or "resources" for a bare ResourceRequirements.
        self.section = section
        #: An init container with ``restartPolicy: Always`` (a sidecar).
        self.sidecar = sidecar
        #: The key of the ResourceRequirements inside ``data`` (``resources`` for a
        #: container, the field's own name for a bare one such as ``resourcesPerNode``).
        self.resources_key = resources_key

    def __repr__(self) -> str:
        return f"Container({self.name!r}, path={self.path!r}, section={self.section!r})"

    @property
    def resources(self) -> dict[str, Any] | None:
        res = self.data.get(self.resources_key)
        return res if isinstance(res, dict) else None

    @property
    def resources_path(self) -> Path:
        return (*self.path, self.resources_key)

    @property
    def label(self) -> str:
        """The container's name, else the field that holds it (``model``, ``container``)."""
        if self.name:
            return self.name
        if self.section == "resources":
            return self.resources_key
        keys = [p for p in self.path if isinstance(p, str)]
        return keys[-1] if keys else "?"


class PodSpec:
    """A pod spec (or a container / resources location standing in for one)."""

    __slots__ = (
        "containers",
        "inherited",
        "location",
        "node_agent",
        "obj",
        "path",
        "pattern",
        "spec",
    )

    def __init__(
        self,
        obj: K8sObject,
        path: Path,
        spec: dict[str, Any],
        containers: list[Container] | None = None,
        location: str = "pod",
        node_agent: bool = False,
        inherited: dict[str, Path] | None = None,
        pattern: str = "",
    ) -> None:
        self.obj = obj
        self.path = path
        self.spec = spec
        self.containers: list[Container] = [] if containers is None else containers
        #: "pod", "container" or "resources": what kind of location the pattern named.
        self.location = location
        #: The owning kind runs node agents (DaemonSet): see WorkloadKind.node_agent.
        self.node_agent = node_agent
        #: Pod-spec field -> path of the value the object supplies when the spec lacks it.
        self.inherited: dict[str, Path] = {} if inherited is None else inherited
        #: The pattern that found this pod spec (as written in the table).
        self.pattern = pattern

    def __repr__(self) -> str:
        return f"PodSpec(path={self.path!r}, location={self.location!r})"

    @property
    def own_tolerations(self) -> list[Any]:
        tol = self.spec.get("tolerations")
        return tol if isinstance(tol, list) else []

    @property
    def tolerations_path(self) -> Path | None:
        """Where the pod's effective tolerations are written, if anywhere."""
        if self.own_tolerations:
            return (*self.path, "tolerations")
        inherited = self.inherited.get("tolerations")
        if inherited is not None:
            return inherited
        return (*self.path, "tolerations") if "tolerations" in self.spec else None

    @property
    def tolerations(self) -> list[Any]:
        """The tolerations the pod runs with: its own, else the object's default."""
        own = self.own_tolerations
        if own:
            return own
        inherited = self.inherited.get("tolerations")
        if inherited is not None:
            value = _get(self.obj.doc.data, inherited)
            if isinstance(value, list):
                return value
        return own

    @property
    def template_path(self) -> Path | None:
        """The pod template holding this spec (``.../template``), when there is one."""
        if self.location == "pod" and len(self.path) >= 2 and self.path[-1] == "spec":
            return self.path[:-1]
        return None

    def template_metadata(self) -> dict[str, Any] | None:
        if self.template_path is None:
            return None
        node = _get(self.obj.doc.data, self.template_path)
        meta = node.get("metadata") if isinstance(node, dict) else None
        return meta if isinstance(meta, dict) else None


def _get(data: Any, path: Path) -> Any:
    for part in path:
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            return None
    return data


def expand(data: Any, pattern: tuple[str, ...], base: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every (path, value) that ``pattern`` matches below ``data``."""
    if not pattern:
        yield base, data
        return
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        if isinstance(data, list):
            for i, item in enumerate(data):
                yield from expand(item, rest, (*base, i))
        elif isinstance(data, dict):
            for key, item in data.items():
                yield from expand(item, rest, (*base, key))
        return
    if isinstance(data, dict):
        if head in data:
            yield from expand(data[head], rest, (*base, head))
    elif isinstance(data, list) and head.isdigit():
        index = int(head)
        if index < len(data):
            yield from expand(data[index], rest, (*base, index))


def _first(data: Any, patterns: Iterable[tuple[str, ...]], base: Path) -> Path | None:
    for pattern in patterns:
        for path, value in expand(data, pattern, base):
            if value is not None:
                return path
    return None


class WorkloadTable:
    """API group + kind -> where the pod specs are."""

    def __init__(self, rows: Iterable[WorkloadKind]) -> None:
        self._rows: dict[tuple[str, str], WorkloadKind] = {}
        for row in rows:
            self._rows[(row.group, row.kind)] = row

    def rows(self) -> list[WorkloadKind]:
        return list(self._rows.values())

    def lookup(self, group: str, kind: str) -> WorkloadKind | None:
        return self._rows.get((group, kind))

    def extended(self, rows: Iterable[WorkloadKind]) -> WorkloadTable:
        """A copy with ``rows`` added; a row for an existing group and kind replaces it."""
        return WorkloadTable([*self._rows.values(), *rows])

    def pod_specs(self, obj: K8sObject) -> list[PodSpec]:
        return self._pod_specs(obj, 0)

    def _pod_specs(self, obj: K8sObject, depth: int) -> list[PodSpec]:
        row = self.lookup(obj.group, obj.kind)
        if row is None:
            return []
        pods: list[PodSpec] = []
        for pattern in row.pods:
            for path, spec in expand(obj.data, pattern, obj.path):
                if isinstance(spec, dict):
                    containers = _containers(spec, path)
                    pods.append(
                        PodSpec(
                            obj,
                            path,
                            spec,
                            containers,
                            "pod",
                            row.node_agent,
                            pattern=".".join(pattern),
                        )
                    )
        # Pod specs by path, for the containers found apart (Argo templates): asking each
        # container's owner among all pods was quadratic (20,000 templates: 152 s).
        by_path: dict[Path, PodSpec] = {}
        for pod in pods:
            if pod.location == "pod":
                by_path.setdefault(pod.path, pod)
        for pattern in row.containers:
            for path, data in expand(obj.data, pattern, obj.path):
                if isinstance(data, dict):
                    owner = _owning_pod(by_path, path)
                    container = Container(_name(data), path, data, "container")
                    if owner is not None:
                        owner.containers.append(container)
                    else:
                        pods.append(
                            PodSpec(
                                obj,
                                path,
                                {},
                                [container],
                                "container",
                                row.node_agent,
                                pattern=".".join(pattern),
                            )
                        )
        for pattern in row.resources:
            for path, data in expand(obj.data, pattern, obj.path):
                if isinstance(data, dict) and path[-1:] and isinstance(path[-1], str):
                    # A bare ResourceRequirements: present it as a container whose
                    # resources are that field, so resource rules read it like any other.
                    parent = path[:-1]
                    holder = _get(obj.doc.data, parent)
                    if not isinstance(holder, dict):
                        continue
                    container = Container(None, parent, holder, "resources", False, path[-1])
                    pods.append(
                        PodSpec(
                            obj,
                            path,
                            {},
                            [container],
                            "resources",
                            row.node_agent,
                            pattern=".".join(pattern),
                        )
                    )
        if row.require_containers:
            pods = [p for p in pods if p.containers]
        if row.pod_defaults and pods:
            # The object-wide defaults do not depend on the pod: found once, not per pod.
            defaults = [
                (name, _first(obj.data, patterns, obj.path)) for name, patterns in row.pod_defaults
            ]
            for pod in pods:
                if pod.location != "pod":
                    continue
                for name, found in defaults:
                    if found is not None and found != (*pod.path, name):
                        pod.inherited[name] = found
        if depth < MAX_NESTING:
            for pattern in row.objects:
                for path, data in expand(obj.data, pattern, obj.path):
                    if is_object(data):
                        inner = make_object(obj.doc, path, data, obj.stream, obj)
                        pods.extend(self._pod_specs(inner, depth + 1))
        return pods


def _name(data: dict[str, Any]) -> str | None:
    name = data.get("name")
    return name if isinstance(name, str) else None


def _owning_pod(by_path: Mapping[Path, PodSpec], path: Path) -> PodSpec | None:
    """The pod spec (of those found by a ``pods`` pattern, keyed by their path) with the
    longest path enclosing ``path``: one lookup per prefix of ``path``."""
    for end in range(len(path), -1, -1):
        pod = by_path.get(path[:end])
        if pod is not None:
            return pod
    return None


def _containers(spec: dict[str, Any], path: Path) -> list[Container]:
    out: list[Container] = []
    for section in CONTAINER_SECTIONS:
        items = spec.get(section)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if isinstance(item, dict):
                sidecar = section == "initContainers" and item.get("restartPolicy") == "Always"
                out.append(Container(_name(item), (*path, section, i), item, section, sidecar))
    return out


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> ("apps", "v1"); ``v1`` -> ("", "v1")."""
    if "/" in api_version:
        group, _, version = api_version.partition("/")
        return group, version
    return "", api_version


def _ref(data: dict[str, Any]) -> ObjectRef:
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name")
    if not isinstance(name, str):
        generate = meta.get("generateName")
        name = generate if isinstance(generate, str) else None
    namespace = meta.get("namespace")
    api_version = data.get("apiVersion")
    return ObjectRef(
        api_version if isinstance(api_version, str) else None,
        data.get("kind") if isinstance(data.get("kind"), str) else None,
        namespace if isinstance(namespace, str) else None,
        name,
    )


def is_object(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("apiVersion"), str)
        and isinstance(data.get("kind"), str)
    )


def make_object(
    doc: Document,
    path: Path,
    data: dict[str, Any],
    stream: ClaimIndex | None = None,
    parent: K8sObject | None = None,
) -> K8sObject:
    group, version = split_api_version(data["apiVersion"])
    return K8sObject(doc, path, data, _ref(data), group, version, stream, parent)


def objects(doc: Document, stream: ClaimIndex | None = None) -> Iterator[K8sObject]:
    """Every Kubernetes object in a document; non-Kubernetes YAML yields nothing.

    ``kind: List`` and any ``*List`` kind with an ``items`` sequence yield their items.
    """
    stack: list[tuple[Any, Path]] = [(doc.data, ())]
    while stack:
        data, path = stack.pop()
        if not is_object(data):
            continue
        kind = data["kind"]
        items = data.get("items")
        if kind.endswith("List") and isinstance(items, list):
            for i in range(len(items) - 1, -1, -1):
                stack.append((items[i], (*path, "items", i)))
            continue
        yield make_object(doc, path, data, stream)


def _builtin_rows_path() -> FsPath:
    return data_path("gpulint.rules", "workloads.json")


@cache
def builtin_table() -> WorkloadTable:
    """The shipped table. Its rows are not validated on every run (that cost a few ms of
    each one-file run's start-up): tests/test_workloads.py validates the file instead."""
    with open(_builtin_rows_path(), encoding="utf-8") as fh:
        rows = json.load(fh)["workloads"]
    return WorkloadTable([WorkloadKind.from_json(row, "built-in") for row in rows])
