"""The fields a project's CustomResourceDefinitions declare for their kinds.

An operator's resource is a type of its own: what its ``spec.resources`` holds is whatever
its API type says, not necessarily Kubernetes' ResourceRequirements. When the project ships
the operator's CRD (a chart's ``crds/``, a ``config/crd/`` of the operator's repository),
its ``openAPIV3Schema`` says which fields the kind has; a field it declares is the
operator's, not a misplaced pod field (GPU024). Only what is declared counts: a kind the
project's CRDs do not describe, or a schema that does not reach the path, says nothing.

Read in the facts stage (:func:`gpulint.lint.prepass.crd_objects`) from every file of the
project whose bytes name ``CustomResourceDefinition``, so a resource is judged the same
whichever of the project's files the run was given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from gpulint.model import Path

#: Schemas kept at most per project (a CRD bundle of an operator holds a few dozen).
MAX_SCHEMAS = 4096
#: Levels of a schema followed at most when asking for a path (paths asked are short).
MAX_LEVELS = 64


class CrdFields:
    """The ``openAPIV3Schema`` of each ``(group, kind)`` the project's CRDs define, per
    version (``apiextensions.k8s.io/v1``; ``v1beta1``'s top-level ``validation`` too)."""

    def __init__(self) -> None:
        self._schemas: dict[tuple[str, str], dict[str | None, Mapping[str, Any]]] = {}
        self._count = 0

    def __bool__(self) -> bool:
        return bool(self._schemas)

    def add(self, crd: Mapping[str, Any]) -> None:
        """Keep the schemas of one CustomResourceDefinition object's data."""
        spec = crd.get("spec")
        if not isinstance(spec, Mapping):
            return
        group, names = spec.get("group"), spec.get("names")
        kind = names.get("kind") if isinstance(names, Mapping) else None
        if not isinstance(group, str) or not isinstance(kind, str):
            return
        kept = self._schemas.setdefault((group, kind), {})
        versions = spec.get("versions")
        for version in versions if isinstance(versions, list) else ():
            if isinstance(version, Mapping):
                self._keep(kept, version.get("name"), version.get("schema"))
        self._keep(kept, None, spec.get("validation"))  # v1beta1: one schema for all

    def _keep(self, kept: dict[str | None, Mapping[str, Any]], name: Any, holder: Any) -> None:
        schema = holder.get("openAPIV3Schema") if isinstance(holder, Mapping) else None
        if not isinstance(schema, Mapping) or self._count >= MAX_SCHEMAS:
            return
        kept[name if isinstance(name, str) else None] = schema
        self._count += 1

    def declares(self, group: str, version: str, kind: str, path: Path) -> bool:
        """Does a project CRD of the object's ``group`` and ``kind`` declare the field at
        ``path`` (keys and list indexes from the object's top) in its ``version``'s schema
        (any version's when that one has none)?"""
        schemas = self._schemas.get((group, kind))
        if not schemas:
            return False
        chosen = schemas.get(version)
        candidates = [chosen] if chosen is not None else list(schemas.values())
        return any(_reaches(schema, path) for schema in candidates)

    def schema(self, group: str, version: str, kind: str) -> Mapping[str, Any] | None:
        """The ``openAPIV3Schema`` a project CRD gives the object's ``group``, ``kind`` and
        ``version`` (a ``v1beta1`` CRD's one schema for all), or None."""
        schemas = self._schemas.get((group, kind)) or {}
        return schemas.get(version) or schemas.get(None)


def missing_required(
    data: Mapping[str, Any], schema: Mapping[str, Any]
) -> list[tuple[Path, list[str]]]:
    """The fields ``schema`` requires that ``data`` (an object, from its top) lacks: for each
    mapping of ``data`` the schema describes and whose ``required`` names fields it does
    not hold (and the schema gives no ``default``, which the API server fills in first),
    its path and those fields, in document order. ``apiVersion``, ``kind`` and ``metadata``
    are the API server's; a level with ``x-kubernetes-preserve-unknown-fields`` and no
    properties, or under ``allOf``/``anyOf``/``oneOf`` alone, says nothing. Walked with a
    stack (no recursion on the object's depth), at most :data:`MAX_LEVELS` deep."""
    found: list[tuple[Path, list[str]]] = []
    stack: list[tuple[Any, Any, Path]] = [(data, schema, ())]
    while stack:
        node, rule, path = stack.pop()
        if not isinstance(rule, Mapping) or len(path) > MAX_LEVELS:
            continue
        if isinstance(node, Mapping):
            properties = rule.get("properties")
            properties = properties if isinstance(properties, Mapping) else {}
            required = rule.get("required")
            if isinstance(required, list):
                lacking = [
                    field
                    for field in required
                    if isinstance(field, str)
                    and field not in node
                    and not (path == () and field in ("apiVersion", "kind", "metadata"))
                    and not (
                        isinstance(properties.get(field), Mapping)
                        and "default" in properties[field]
                    )
                ]
                if lacking:
                    found.append((path, lacking))
            extra = rule.get("additionalProperties")
            children: list[tuple[Any, Any, Path]] = []
            for key, value in node.items():
                if path == () and key in ("apiVersion", "kind", "metadata"):
                    continue
                child = properties.get(key) if isinstance(key, str) else None
                if child is None and isinstance(extra, Mapping):
                    child = extra
                if isinstance(child, Mapping) and isinstance(value, (Mapping, list)):
                    children.append((value, child, (*path, key)))
            stack.extend(reversed(children))
        elif isinstance(node, list):
            items = rule.get("items")
            if isinstance(items, Mapping):
                stack.extend(
                    (value, items, (*path, index))
                    for index, value in reversed(list(enumerate(node)))
                    if isinstance(value, (Mapping, list))
                )
    return found


def _reaches(schema: Mapping[str, Any], path: Sequence[str | int]) -> bool:
    """Does the schema declare a property at each key of ``path`` (``items`` at an index)?"""
    node: Any = schema
    for step in path[:MAX_LEVELS]:
        if not isinstance(node, Mapping):
            return False
        if isinstance(step, int):
            node = node.get("items")
            continue
        properties = node.get("properties")
        if isinstance(properties, Mapping) and step in properties:
            node = properties[step]
            continue
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):  # a map of names to values of one type
            node = extra
            continue
        return False
    return len(path) <= MAX_LEVELS


def project_crds(objects: Iterable[Mapping[str, Any]]) -> CrdFields | None:
    """The fields of the CustomResourceDefinitions among ``objects`` (documents' data);
    None when there is none."""
    fields = CrdFields()
    for data in objects:
        if (
            isinstance(data, Mapping)
            and data.get("kind") == "CustomResourceDefinition"
            and str(data.get("apiVersion", "")).startswith("apiextensions.k8s.io/")
        ):
            fields.add(data)
    return fields if fields else None


@lru_cache(maxsize=1)
def operator_fields() -> Mapping[str, Any]:
    """The GPU operators' own kinds, from ``gpulint/data/operator-fields.json``: ``sources``
    (each operator's repository, the releases read and its kinds), ``kinds`` (``group/kind``
    -> the field tree of its ``spec``: ``{field: subtree}``, ``0`` for a leaf or an open
    level) and ``required`` (``group/kind`` -> API version -> each field its ``spec``
    requires in the newest release -> the first release of the run of releases that all
    require it, ``"all"`` when every release does). Read once."""
    import json

    from gpulint.data import data_path

    path = data_path("gpulint.data", "operator-fields.json")
    data: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def operator_releases(kind: str) -> tuple[str, str, str]:
    """The operator whose CRDs gave ``kind`` (``group/kind``) its entry in
    :func:`operator_fields`, and the first and last of its releases read
    (``("operator", "?", "?")`` for a kind of none)."""
    for name, source in operator_fields()["sources"].items():
        if kind in source["kinds"]:
            first, _, last = source["releases"].partition("..")
            return str(name), first, last
    return "operator", "?", "?"
