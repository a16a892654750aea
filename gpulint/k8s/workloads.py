"""Documents -> workloads: Kubernetes objects and the pod specs inside them.

Where pod specs live is data, not code (docs/domain.md#where-pod-specs-live):
``gpulint/data/workloads.json`` maps an API group and kind to path patterns, and user configuration
can add rows of the same shape (validated with :func:`validate_row`). Matching is on the API
group and the kind, never the kind alone (``kind: Job`` in ``batch.volcano.sh`` is a Volcano
Job), and ignores the version, so ``apps/v1beta1`` and ``apps/v1`` share a row.

The rows and their validation are in :mod:`gpulint.k8s.workrows`, the objects, pod specs and
containers in :mod:`gpulint.k8s.objects`; this module holds the table that applies the rows, and
re-exports the names rule authors and configuration use (``PodSpec``, ``Container``,
``K8sObject``, ``objects``, ``validate_row``, ...), so ``from gpulint.k8s.workloads import
PodSpec`` keeps working.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path as FsPath
from typing import Any

from gpulint.data import data_path
from gpulint.k8s.objects import (
    Container,
    K8sObject,
    PodSpec,
    containers_of,
    expand,
    first_present,
    is_object,
    make_object,
    name_of,
    objects,
    split_api_version,
    value_at,
)
from gpulint.k8s.shapes import find_pod_specs
from gpulint.k8s.workrows import (
    CONTAINER_SECTIONS,
    LOCATIONS,
    MAX_NESTING,
    POD_DEFAULT_FIELDS,
    ROW_KEYS,
    WorkloadKind,
    WorkloadRowError,
    parse_pattern,
    parse_row,
    validate_pattern,
    validate_row,
)
from gpulint.model import Path

__all__ = [
    "CONTAINER_SECTIONS",
    "LOCATIONS",
    "MAX_NESTING",
    "POD_DEFAULT_FIELDS",
    "ROW_KEYS",
    "Container",
    "K8sObject",
    "OffCluster",
    "PodSpec",
    "WorkloadKind",
    "WorkloadRowError",
    "WorkloadTable",
    "builtin_table",
    "expand",
    "is_object",
    "make_object",
    "objects",
    "parse_pattern",
    "parse_row",
    "split_api_version",
    "validate_pattern",
    "validate_row",
]


class OffCluster:
    """API groups whose objects are resources of a platform that is no Kubernetes cluster
    (``off_cluster`` in the table): a Cloud Run job or service, a Config Connector resource.
    Their containers never become pods on a node, so no pod rule (taints, node sizes,
    node selectors) applies to them.

    A group written ``*.suffix`` covers every group under ``suffix``. A group with a
    ``marker`` (a key prefix) is off the cluster only for objects that carry it: as a key of
    the object's labels or annotations, of a pod template's annotations, or of a pod's
    ``nodeSelector`` (a Knative Service written for Cloud Run, whose YAML is Knative's)."""

    def __init__(self, rows: Iterable[Mapping[str, Any]] = ()) -> None:
        self._groups: set[str] = set()
        self._suffixes: list[str] = []
        self._markers: dict[str, tuple[str, ...]] = {}
        for row in rows:
            group = str(row["group"])
            marker = row.get("marker")
            if isinstance(marker, str):
                self._markers[group] = (*self._markers.get(group, ()), marker)
            elif group.startswith("*."):
                self._suffixes.append(group[1:])
            else:
                self._groups.add(group)

    def group(self, group: str) -> bool:
        """Every object of ``group`` is off the cluster."""
        return group in self._groups or any(group.endswith(s) for s in self._suffixes)

    def marked(self, obj: K8sObject, pods: Iterable[PodSpec]) -> bool:
        """``obj`` (of a group with a marker) carries its group's marker."""
        markers = self._markers.get(obj.group)
        if not markers:
            return False
        maps: list[Any] = []
        meta = obj.data.get("metadata")
        if isinstance(meta, dict):
            maps += [meta.get("labels"), meta.get("annotations")]
        for pod in pods:
            maps.append(pod.spec.get("nodeSelector"))
            template = pod.template_metadata()
            if template is not None:
                maps.append(template.get("annotations"))
        return any(
            isinstance(m, dict) and any(isinstance(k, str) and k.startswith(markers) for k in m)
            for m in maps
        )


class WorkloadTable:
    """API group + kind -> where the pod specs are."""

    def __init__(
        self,
        rows: Iterable[WorkloadKind],
        pod_free: Iterable[tuple[str, str]] = (),
        off_cluster: OffCluster | None = None,
    ) -> None:
        self._rows: dict[tuple[str, str], WorkloadKind] = {}
        for row in rows:
            self._rows[(row.group, row.kind)] = row
        #: (group, kind) of kinds known to hold no pod (``not_workloads``): not searched by
        #: shape.
        self.pod_free = frozenset(pod_free)
        #: Groups whose objects run on another platform than the cluster (``off_cluster``).
        self.off_cluster = OffCluster() if off_cluster is None else off_cluster

    def rows(self) -> list[WorkloadKind]:
        return list(self._rows.values())

    def lookup(self, group: str, kind: str) -> WorkloadKind | None:
        return self._rows.get((group, kind))

    def extended(self, rows: Iterable[WorkloadKind]) -> WorkloadTable:
        """A copy with ``rows`` added; a row for an existing group and kind replaces it."""
        return WorkloadTable([*self._rows.values(), *rows], self.pod_free, self.off_cluster)

    def pod_specs(self, obj: K8sObject) -> list[PodSpec]:
        return self._pod_specs(obj, 0)

    def _pod_specs(self, obj: K8sObject, depth: int) -> list[PodSpec]:
        row = self.lookup(obj.group, obj.kind)
        if row is None:
            if (obj.group, obj.kind) in self.pod_free or self.off_cluster.group(obj.group):
                return []
            # A kind without a row: pod specs and resource requirements by their shape.
            return find_pod_specs(obj)
        pods = _row_pods(obj, row)
        _row_containers(obj, row, pods)
        _row_resources(obj, row, pods)
        if row.require_containers:
            pods = [p for p in pods if p.containers]
        _operated(obj, row, pods)
        if self.off_cluster.marked(obj, pods):
            return []
        if depth < MAX_NESTING:
            for pattern in row.objects:
                for path, data in expand(obj.data, pattern, obj.path):
                    if is_object(data):
                        inner = make_object(obj.doc, path, data, obj)
                        pods.extend(self._pod_specs(inner, depth + 1))
        return pods


def _row_pods(obj: K8sObject, row: WorkloadKind) -> list[PodSpec]:
    """The pod specs at the row's ``pods`` patterns."""
    pods: list[PodSpec] = []
    for pattern in row.pods:
        for path, spec in expand(obj.data, pattern, obj.path):
            if isinstance(spec, dict):
                containers = containers_of(spec, path)
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
    return pods


def _row_containers(obj: K8sObject, row: WorkloadKind, pods: list[PodSpec]) -> None:
    """The containers at the row's ``containers`` patterns, given to the pod spec they are
    in, else each standing for a pod of its own (added to ``pods``)."""
    # Pod specs by path, for the containers found apart (Argo templates): asking each
    # container's owner among all pods was quadratic (20,000 templates: 152 s).
    by_path: dict[Path, PodSpec] = {}
    for pod in pods:
        if pod.location == "pod":
            by_path.setdefault(pod.path, pod)
    # The pod spec the containers no pod spec encloses join (one place, or none).
    places = [p for p, _ in expand(obj.data, row.container_pod, obj.path)]
    joined = places[0] if row.container_pod and len(places) == 1 else None
    for pattern in row.containers:
        for path, data in expand(obj.data, pattern, obj.path):
            if isinstance(data, dict):
                owner = _owning_pod(by_path, path)
                if owner is None and joined is not None:
                    owner = by_path.get(joined)
                container = Container(name_of(data), path, data, "container")
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


def _row_resources(obj: K8sObject, row: WorkloadKind, pods: list[PodSpec]) -> None:
    """The resource requirements at the row's ``resources`` patterns, each standing for a
    pod of its own (added to ``pods``)."""
    for pattern in row.resources:
        for path, data in expand(obj.data, pattern, obj.path):
            if isinstance(data, dict) and path[-1:] and isinstance(path[-1], int):
                # A list item holding limits / requests beside its own fields (llmaz
                # flavors): the item stands in for the container, its own resources.
                name = data.get("name")
                item = Container(
                    name if isinstance(name, str) else None, path, data, "resources", False, ""
                )
                pods.append(
                    PodSpec(
                        obj,
                        path,
                        {},
                        [item],
                        "resources",
                        row.node_agent,
                        pattern=".".join(pattern),
                    )
                )
            elif isinstance(data, dict) and path[-1:] and isinstance(path[-1], str):
                # A bare ResourceRequirements: present it as a container whose
                # resources are that field, so resource rules read it like any other.
                parent = path[:-1]
                holder = value_at(obj.doc.data, parent)
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


def _operated(obj: K8sObject, row: WorkloadKind, pods: list[PodSpec]) -> None:
    """What the workload's operator gives its pods: tolerations, accelerators, the
    object-wide defaults a pod inherits."""
    if row.added_tolerations or row.operator_amounts:
        for pod in pods:
            pod.added_tolerations = row.added_tolerations
            pod.operator_amounts = row.operator_amounts and pod.location == "resources"
    if row.operator_gpus and pods:
        _add_operator_gpus(obj, row, pods)
    if row.pod_defaults and pods:
        # The object-wide defaults do not depend on the pod: found once, not per pod.
        defaults = [
            (name, first_present(obj.data, patterns, obj.path))
            for name, patterns in row.pod_defaults
        ]
        for pod in pods:
            if pod.location != "pod":
                continue
            for name, found in defaults:
                if found is not None and found != (*pod.path, name):
                    pod.inherited[name] = found


def _add_operator_gpus(obj: K8sObject, row: WorkloadKind, pods: list[PodSpec]) -> None:
    """Give the pod specs inside each unit of ``row.operator_gpus`` the accelerator the
    operator writes into them (an explicit zero, or a value that is no scalar, gives none).
    An amount path that reaches a mapping names a ResourceList: its entry for the
    resource is the amount."""
    for unit, amount_path, resource, resource_field, resource_values, every in row.operator_gpus:
        # Every unit of one pattern is as deep (``*`` is one level): the pods inside each
        # are found by their path's prefix of that depth, once per pod, not per unit.
        depth = len(obj.path) + len(unit)
        inside: dict[Path, list[PodSpec]] = {}
        for pod in pods:
            if pod.location == "pod" and len(pod.path) >= depth:
                inside.setdefault(pod.path[:depth], []).append(pod)
        for path, data in expand(obj.data, unit, obj.path):
            if not isinstance(data, dict) or path not in inside:
                continue
            written = value_at(data, amount_path)
            at: Path = (*path, *amount_path)
            if isinstance(written, dict):
                # A ResourceList the operator copies into a container (soperator's
                # slurmd.resources): the amount is its entry for the resource.
                written, at = written.get(resource), (*at, resource)
            if written is None or isinstance(written, (dict, list, bool)):
                continue
            if _explicit_zero(written):
                continue
            name = value_at(data, resource_field) if resource_field else None
            if resource_values and isinstance(name, str):
                # The field names a vendor (Kaiwo's gpuVendor); a value the table does not
                # map leaves the operator's default resource.
                name = dict(resource_values).get(name.lower())
            name = name if isinstance(name, str) and name else resource
            found = (name, at)
            for pod in inside[path]:
                pod.operator_gpus = (*pod.operator_gpus, found)
                pod.operator_every_container = pod.operator_every_container or every


def _explicit_zero(written: Any) -> bool:
    """An amount that asks for nothing (``0``, ``"0"``); one that does not parse still shows
    the intent (a placeholder) and counts, as in :func:`gpulint.k8s.resources.gpu_demand`."""
    from gpulint.k8s.quantity.parse import QuantityError, parse_quantity

    try:
        return parse_quantity(str(written).strip()) <= 0
    except QuantityError:
        return False


def _owning_pod(by_path: Mapping[Path, PodSpec], path: Path) -> PodSpec | None:
    """The pod spec (of those found by a ``pods`` pattern, keyed by their path) with the
    longest path enclosing ``path``: one lookup per prefix of ``path``."""
    for end in range(len(path), -1, -1):
        pod = by_path.get(path[:end])
        if pod is not None:
            return pod
    return None


def _builtin_rows_path() -> FsPath:
    return data_path("gpulint.data", "workloads.json")


@cache
def builtin_table() -> WorkloadTable:
    """The shipped table. Its rows are not validated on every run (that cost a few ms of
    each one-file run's start-up): tests/test_workloads.py validates the file instead."""
    with open(_builtin_rows_path(), encoding="utf-8") as fh:
        data = json.load(fh)
    return WorkloadTable(
        [WorkloadKind.from_json(row, "built-in") for row in data["workloads"]],
        [(entry["group"], entry["kind"]) for entry in data.get("not_workloads", ())],
        OffCluster(data.get("off_cluster", ())),
    )
