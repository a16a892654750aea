"""Documents -> workloads: Kubernetes objects and the pod specs inside them.

Where pod specs live is data, not code (DOMAIN.md §5): ``rules/workloads.json`` maps an API
group and kind to path patterns, and user configuration can add rows of the same shape. A
pattern is a dotted path in which ``*`` matches every item of a list or every value of a map,
e.g. ``spec.tasks.*.template.spec``.

Three kinds of location:

* ``pods`` -- a PodSpec (``containers``, ``initContainers``, ``tolerations``, ...);
* ``containers`` -- a single container outside a ``containers`` list (e.g. a KServe model
  predictor, an Argo template's ``container``); it joins the pod spec named by the pattern's
  ``pod`` if there is one;
* ``resources`` -- a bare ResourceRequirements (e.g. Kubeflow TrainJob
  ``spec.trainer.resourcesPerNode``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path as FsPath
from typing import Any

from gpulint.data import data_path
from gpulint.model import ObjectRef, Path
from gpulint.yamlload import Document

CONTAINER_SECTIONS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True, slots=True)
class WorkloadKind:
    """One row of the table: an API group and kind, and where its pod specs are."""

    group: str
    kind: str
    pods: tuple[tuple[str, ...], ...] = ()
    containers: tuple[tuple[str, ...], ...] = ()
    resources: tuple[tuple[str, ...], ...] = ()
    #: Node agents (DaemonSets) legitimately tolerate GPU taints without requesting GPUs.
    node_agent: bool = False
    #: Where the row came from: "built-in" or a configuration file.
    origin: str = "built-in"

    @classmethod
    def from_json(cls, row: Mapping[str, Any], origin: str = "built-in") -> WorkloadKind:
        def patterns(key: str) -> tuple[tuple[str, ...], ...]:
            return tuple(tuple(p.split(".")) for p in row.get(key, ()))

        return cls(
            group=row["group"],
            kind=row["kind"],
            pods=patterns("pods"),
            containers=patterns("containers"),
            resources=patterns("resources"),
            node_agent=bool(row.get("node_agent", False)),
            origin=origin,
        )


@dataclass(slots=True)
class K8sObject:
    """A Kubernetes object found in a document (the document itself or a List item)."""

    doc: Document
    path: Path
    data: dict[str, Any]
    ref: ObjectRef
    group: str
    version: str

    @property
    def kind(self) -> str:
        return self.ref.kind or ""


@dataclass(slots=True)
class Container:
    name: str | None
    path: Path
    data: dict[str, Any]
    #: "containers", "initContainers", "ephemeralContainers", or "container" for a
    #: single-container location.
    section: str
    #: An init container with ``restartPolicy: Always`` (a sidecar).
    sidecar: bool = False

    @property
    def resources(self) -> dict[str, Any] | None:
        res = self.data.get("resources")
        return res if isinstance(res, dict) else None


@dataclass(slots=True)
class PodSpec:
    """A pod spec (or a container / resources location standing in for one)."""

    obj: K8sObject
    path: Path
    spec: dict[str, Any]
    containers: list[Container] = field(default_factory=list)
    #: "pod", "container" or "resources": what kind of location the pattern named.
    location: str = "pod"
    #: The owning kind runs node agents (DaemonSet): see WorkloadKind.node_agent.
    node_agent: bool = False

    @property
    def tolerations(self) -> list[Any]:
        tol = self.spec.get("tolerations")
        return tol if isinstance(tol, list) else []

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
    if isinstance(data, dict) and head in data:
        yield from expand(data[head], rest, (*base, head))


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
        return WorkloadTable([*self._rows.values(), *rows])

    def pod_specs(self, obj: K8sObject) -> list[PodSpec]:
        row = self.lookup(obj.group, obj.kind)
        if row is None:
            return []
        pods: list[PodSpec] = []
        for pattern in row.pods:
            for path, spec in expand(obj.data, pattern, obj.path):
                if isinstance(spec, dict):
                    containers = _containers(spec, path)
                    pods.append(PodSpec(obj, path, spec, containers, "pod", row.node_agent))
        for pattern in row.containers:
            for path, data in expand(obj.data, pattern, obj.path):
                if isinstance(data, dict):
                    owner = _owning_pod(pods, path)
                    container = Container(_name(data), path, data, "container")
                    if owner is not None:
                        owner.containers.append(container)
                    else:
                        pods.append(PodSpec(obj, path, {}, [container], "container"))
        for pattern in row.resources:
            for path, data in expand(obj.data, pattern, obj.path):
                if isinstance(data, dict):
                    # A bare ResourceRequirements: present it as a container holding it, at
                    # the path of its parent, so resource rules read it like any other.
                    parent = path[:-1]
                    holder = {"resources": data}
                    container = Container(None, parent, holder, "resources")
                    pods.append(PodSpec(obj, parent, {}, [container], "resources"))
        return pods


def _name(data: dict[str, Any]) -> str | None:
    name = data.get("name")
    return name if isinstance(name, str) else None


def _owning_pod(pods: list[PodSpec], path: Path) -> PodSpec | None:
    for pod in pods:
        if path[: len(pod.path)] == pod.path:
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


def objects(doc: Document) -> Iterator[K8sObject]:
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
        group, version = split_api_version(data["apiVersion"])
        yield K8sObject(doc, path, data, _ref(data), group, version)


def _builtin_rows_path() -> FsPath:
    return data_path("gpulint.rules", "workloads.json")


@cache
def builtin_table() -> WorkloadTable:
    with open(_builtin_rows_path(), encoding="utf-8") as fh:
        rows = json.load(fh)["workloads"]
    return WorkloadTable(WorkloadKind.from_json(r) for r in rows)
