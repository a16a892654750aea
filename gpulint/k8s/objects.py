"""Kubernetes objects in a document, and the pod specs and containers found in them.

The classes rule authors use (:class:`K8sObject`, :class:`PodSpec`, :class:`Container`) are
re-exported by :mod:`gpulint.k8s.workloads`, where rules import them from. Which paths of an
object hold pod specs is the workload table's business (:mod:`gpulint.k8s.workloads`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from gpulint.k8s.workrows import CONTAINER_SECTIONS
from gpulint.loader.document import Document
from gpulint.model import ObjectRef, Path


class K8sObject:
    """A Kubernetes object found in a document (the document itself, a List item, or an
    object embedded in another one)."""

    __slots__ = ("data", "doc", "group", "memo", "parent", "path", "pods", "ref", "version")

    def __init__(
        self,
        doc: Document,
        path: Path,
        data: dict[str, Any],
        ref: ObjectRef,
        group: str,
        version: str,
        parent: K8sObject | None = None,
    ) -> None:
        self.doc = doc
        self.path = path
        self.data = data
        self.ref = ref
        self.group = group
        self.version = version
        #: The object this one is embedded in (``objects`` locations), if any.
        self.parent = parent
        #: The pod specs the per-file view found in this object, set by the engine only
        #: while the object's rules run, so an object rule that needs them (a declarative
        #: ``when: {gpu: ...}``) reuses them (None otherwise). Never kept: ``PodSpec.obj``
        #: points back here, and a lasting cycle would keep each document alive until the
        #: garbage collector ran.
        self.pods: list[PodSpec] | None = None
        #: Answers a rule asks of the whole object once for each of its pod specs (what a
        #: chart's values mount, found once for all of its containers), as ``PodSpec.memo``:
        #: they live and die with the object. Nothing kept here may point back to it.
        self.memo: dict[Any, Any] = {}

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


class Made:
    """What a chart writes into a container beyond the values that describe it (vLLM
    production stack's model: the engine's command line, its GPUs, its /dev/shm), each
    word with the path of the value it is made from."""

    __slots__ = ("argv", "gpus", "shm")

    def __init__(
        self,
        argv: tuple[tuple[str, Path], ...],
        gpus: tuple[int, str, Path] | None,
        shm: bool | None,
    ) -> None:
        #: The command line, word by word: (text, path of the value it comes from).
        self.argv = argv
        #: Whole devices the chart requests for the container: (count, resource, path).
        self.gpus = gpus
        #: True when the chart mounts a memory emptyDir at /dev/shm, None when the values
        #: mount something else there (not judged), False when nothing is.
        self.shm = shm


class Container:
    __slots__ = ("data", "made", "memo", "name", "path", "resources_key", "section", "sidecar")

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
        #: container, the field's own name for a bare one such as ``resourcesPerNode``),
        #: or "" when ``data`` itself holds ``limits`` / ``requests`` (a list item such as
        #: an llmaz flavor: ``{name, limits, nodeSelector}``).
        self.resources_key = resources_key
        #: Answers several rules ask of this container (its whole-GPU count), as
        #: ``PodSpec.memo``: they live and die with the container. Nothing kept here may
        #: point back to the container (a ResourceEntry does): that cycle would keep each
        #: document alive until the garbage collector ran.
        self.memo: dict[Any, Any] = {}
        #: What a chart writes into this container beyond its values (None: nothing, or
        #: not a chart's values).
        self.made: Made | None = None

    def __repr__(self) -> str:
        return f"Container({self.name!r}, path={self.path!r}, section={self.section!r})"

    @property
    def resources(self) -> dict[str, Any] | None:
        res = self.data.get(self.resources_key) if self.resources_key else self.data
        return res if isinstance(res, dict) else None

    @property
    def privileged(self) -> bool:
        """``securityContext.privileged: true``: the container sees every device of its node."""
        context = self.data.get("securityContext")
        return isinstance(context, dict) and context.get("privileged") is True

    @property
    def resources_path(self) -> Path:
        return (*self.path, self.resources_key) if self.resources_key else self.path

    @property
    def label(self) -> str:
        """The container's name, else the field that holds it (``model``, ``container``; a
        chart's ``main`` for its ``resources``), else the field's own (``resourcesPerNode``)."""
        if self.name:
            return self.name
        if self.section == "resources" and self.resources_key not in ("", "resources"):
            return self.resources_key
        keys = [p for p in self.path if isinstance(p, str)]
        return keys[-1] if keys else "?"


class PodSpec:
    """A pod spec (or a container / resources location standing in for one)."""

    __slots__ = (
        "added_tolerations",
        "containers",
        "found_by",
        "inherited",
        "location",
        "memo",
        "node_agent",
        "obj",
        "operator_amounts",
        "operator_every_container",
        "operator_gpus",
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
        found_by: str = "table",
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
        #: The pattern that found this pod spec (as written in the table; "" when found by
        #: shape).
        self.pattern = pattern
        #: "table": a workload row's pattern found it; "shape": the kind has no row and
        #: :mod:`gpulint.k8s.shapes` recognised a pod spec or resource requirements by shape.
        self.found_by = found_by
        #: Tolerations the owning kind's operator adds to the pods it makes
        #: (``WorkloadKind.added_tolerations``).
        self.added_tolerations: tuple[Any, ...] = ()
        #: The resources are an operator's amounts, written into requests and limits both
        #: (``WorkloadKind.operator_amounts``).
        self.operator_amounts = False
        #: Accelerators the owning kind's operator adds to the pod from its own fields
        #: (``WorkloadKind.operator_gpus``): ``(resource name, path of the amount)``.
        self.operator_gpus: tuple[tuple[str, Path], ...] = ()
        #: Every container of the pod holds the operator's accelerators (Kaiwo writes them into
        #: all), not only one whose values hold the amount.
        self.operator_every_container = False
        #: Answers computed from this pod spec that several rules ask for (its resource
        #: entries): they live and die with the pod spec, not in a module-level cache.
        self.memo: dict[Any, Any] = {}

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
            value = value_at(self.obj.doc.data, inherited)
            if isinstance(value, list):
                return value
        return own

    @property
    def template_path(self) -> Path | None:
        """The pod template holding this spec (``.../template``), when there is one."""
        if self.location == "pod" and len(self.path) >= 2 and self.path[-1] == "spec":
            return self.path[:-1]
        return None

    def template(self) -> dict[str, Any] | None:
        """The pod template holding this spec (its ``metadata`` and ``spec``), if any."""
        if self.template_path is None:
            return None
        node = value_at(self.obj.doc.data, self.template_path)
        return node if isinstance(node, dict) else None

    def template_metadata(self) -> dict[str, Any] | None:
        node = self.template()
        meta = node.get("metadata") if node is not None else None
        return meta if isinstance(meta, dict) else None

    def pod_metadata(self) -> tuple[dict[str, Any] | None, Path | None]:
        """The metadata of the pods this spec makes, and where it is written: its template's,
        or a Pod object's own (a mapping, else None; no place for a spec that is neither)."""
        if self.template_path is not None:
            return self.template_metadata(), (*self.template_path, "metadata")
        if self.obj.kind == "Pod" and self.path == (*self.obj.path, "spec"):
            data = self.obj.data
            meta = data.get("metadata") if isinstance(data, dict) else None
            return (meta if isinstance(meta, dict) else None), (*self.obj.path, "metadata")
        return None, None


def image_reference(image: Any) -> str | None:
    """A container's image as one reference: the string as written, or a chart's
    ``{repository, tag}`` (``repository:tag``; the tag alone when the values give only a tag,
    as a subchart's values that keep the chart's repository do), or None."""
    if isinstance(image, str):
        return image if image.strip() else None
    if not isinstance(image, dict):
        return None
    repository = image.get("repository")
    tag = image.get("tag")
    tag = str(tag) if isinstance(tag, (str, int, float)) and not isinstance(tag, bool) else None
    if isinstance(repository, str) and repository.strip():
        return repository + (f":{tag}" if tag else "")
    return tag or None


#: Fields of an object's ``metadata`` (ObjectMeta) that no kind has at its root: written there,
#: they are an unknown field of the object (GPU024 for objects with a pod, GPU078 without).
METADATA_AT_ROOT = frozenset(
    {"labels", "annotations", "name", "namespace", "generateName", "finalizers", "ownerReferences"}
)


def metadata_at_root(kind: str, key: str) -> tuple[str, str]:
    """The message and the help for ``key``, a field of :data:`METADATA_AT_ROOT`, written at
    the root of an object of ``kind``."""
    return (
        f"{key} is a field of metadata, not of the {kind}: kubectl refuses the unknown field, "
        "or it is dropped",
        f"move it under metadata (metadata.{key})",
    )


def value_at(data: Any, path: Path) -> Any:
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


def first_present(data: Any, patterns: Iterable[tuple[str, ...]], base: Path) -> Path | None:
    for pattern in patterns:
        for path, value in expand(data, pattern, base):
            if value is not None:
                return path
    return None


def name_of(data: dict[str, Any]) -> str | None:
    name = data.get("name")
    return name if isinstance(name, str) else None


def containers_of(spec: dict[str, Any], path: Path) -> list[Container]:
    out: list[Container] = []
    for section in CONTAINER_SECTIONS:
        items = spec.get(section)
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if isinstance(item, dict):
                sidecar = section == "initContainers" and item.get("restartPolicy") == "Always"
                out.append(Container(name_of(item), (*path, section, i), item, section, sidecar))
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
    parent: K8sObject | None = None,
) -> K8sObject:
    group, version = split_api_version(data["apiVersion"])
    return K8sObject(doc, path, data, _ref(data), group, version, parent)


def sops_encrypted(data: Any) -> bool:
    """A document SOPS encrypted (getsops/sops: a top-level ``sops`` mapping with its
    ``mac`` or ``lastmodified``): its keys are plain, its values ciphertext
    (``ENC[AES256_GCM,...]``), so names, selectors and mounts cannot be compared."""
    meta = data.get("sops") if isinstance(data, dict) else None
    return isinstance(meta, dict) and ("mac" in meta or "lastmodified" in meta)


def objects(doc: Document) -> Iterator[K8sObject]:
    """Every Kubernetes object in a document; non-Kubernetes YAML yields nothing, nor does
    a document SOPS encrypted (:func:`sops_encrypted`).

    ``kind: List`` and any ``*List`` kind with an ``items`` sequence yield their items.
    """
    if sops_encrypted(doc.data):
        return
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
        yield make_object(doc, path, data)


#: Where a pod spec's required node-affinity terms are (terms ORed, expressions ANDed).
NODE_TERMS = (
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms",
)


def required_node_terms(spec: dict[str, Any]) -> list[Any]:
    """A pod spec's required node-affinity terms (``[]``: none, or not a list)."""
    terms = value_at(spec, NODE_TERMS)
    return terms if isinstance(terms, list) else []


def expression_key_path(pod: Path, term: int, expression: int) -> Path:
    """The path of the ``key`` of a required node-affinity term's match expression."""
    return (*pod, *NODE_TERMS, term, "matchExpressions", expression, "key")
