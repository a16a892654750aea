"""Workload rows: where a kind's pod specs are, as path patterns, and their validation.

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
  one), else the one ``container_pod`` names, or stands alone as a pod-less container;
* ``resources`` -- a bare ResourceRequirements (Kubeflow TrainJob
  ``spec.trainer.resourcesPerNode``), or a list item holding ``limits`` / ``requests``
  beside fields of its own (llmaz ``spec.inferenceConfig.flavors.*``);
* ``objects`` -- a whole Kubernetes object embedded in this one (Katib's
  ``spec.trialTemplate.trialSpec``); it is looked up in the table by its own group and kind.

Two row options cover what a plain path cannot say:

* ``pod_defaults`` -- pod-spec fields taken from elsewhere in the object when the pod spec
  does not set them, first match wins (Argo: a template without tolerations gets
  ``spec.tolerations``). Only ``tolerations`` is supported.
* ``require_containers`` -- a matched pod spec with no containers is not a pod (Argo
  templates of type steps, dag, resource or suspend run no container).
* ``container_pod`` -- the pod spec (a pattern matching one place) the ``containers`` no pod
  spec encloses belong to: Slinky's NodeSet keeps its ``slurmd`` container at
  ``spec.slurmd`` beside the pod template ``spec.template.spec`` the operator puts it in.
* ``operator_gpus`` -- accelerators the kind's operator writes into the pods it makes from
  a field of its own (NVIDIA Dynamo's ``spec.services.*.resources.limits.gpu: "1"`` becomes
  ``nvidia.com/gpu: 1`` in the main container): each entry names the unit (``at``, a
  pattern), the amount (``amount``, a path from the unit, or from it to a ResourceList whose
  entry for the resource is the amount: soperator's ``spec.slurmd.resources``), the resource
  it becomes (``resource``) and optionally the field that names another resource
  (``resource_field``), either as the resource itself (Dynamo's ``gpuType``) or as a key of
  ``resource_values`` (Kaiwo's ``gpuVendor: nvidia`` means ``nvidia.com/gpu``); the pod specs
  inside the unit are GPU pods when the amount is not an explicit zero, and with
  ``every_container`` each of their containers holds the accelerator (Kaiwo writes it into
  all of them), not only a container the amount is written under.
"""

import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from gpulint.errors import GpulintError

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
    "container_pod",
    "core_pods",
    "node_agent",
    "mounts_shm",
    "added_tolerations",
    "operator_amounts",
    "operator_gpus",
    "source",
)
#: Embedded objects nest at most this deep (an object inside an object inside ...).
MAX_NESTING = 8

#: A pattern segment (compiled on first use: only configuration rows are validated).
_SEGMENT = r"^([A-Za-z0-9_-]+|\*)$"


class OperatorGpu(NamedTuple):
    """One ``operator_gpus`` entry of a row (see the module's docstring)."""

    unit: tuple[str, ...]
    amount: tuple[str, ...]
    resource: str
    #: The field that names another resource, as a path from the unit (``()``: none).
    resource_field: tuple[str, ...]
    #: The resource field's values, in lower case, and the resources they mean (Kaiwo's
    #: ``gpuVendor``); without them the field's value is the resource (Dynamo's ``gpuType``).
    resource_values: tuple[tuple[str, str], ...]
    #: The operator writes the accelerator into every container of the pods (Kaiwo), not
    #: into one main container.
    every_container: bool = False


class WorkloadRowError(GpulintError, ValueError):
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
    #: The pod spec the ``containers`` no pod spec encloses join (Slinky's NodeSet).
    container_pod: tuple[str, ...] = ()
    #: The ``pods`` patterns whose pod specs the API types declare as core/v1 PodSpecs (no
    #: field of the operator's own beside them): their fields are checked as a Pod's (GPU024).
    core_pods: tuple[tuple[str, ...], ...] = ()
    #: Node agents (DaemonSets) legitimately tolerate GPU taints without requesting GPUs.
    node_agent: bool = False
    #: The kind's operator mounts a memory-backed ``/dev/shm`` in the pods it makes (KubeRay
    #: in the Ray container, KServe's default LLMInferenceService template in ``main``):
    #: GPU042 does not ask the object for one.
    mounts_shm: bool = False
    #: Tolerations the kind's operator adds to every pod it makes from the object (KAITO
    #: tolerates the taints of the GPU nodes it provisions): GPU020 counts them as the pod's.
    added_tolerations: tuple[Mapping[str, Any], ...] = ()
    #: The ``resources`` locations are the operator's own amounts, which its controller
    #: writes into a container's requests *and* limits (llmaz flavors): the rules that
    #: compare requests with limits (GPU001, GPU002, GPU003) do not apply to them.
    operator_amounts: bool = False
    #: Accelerators the operator writes into the pods from its own fields (:class:`OperatorGpu`).
    operator_gpus: tuple[OperatorGpu, ...] = ()
    #: Where the row came from: "built-in" or a configuration file.
    origin: str = "built-in"
    source: str = ""

    @classmethod
    def from_json(cls, row: Mapping[str, Any], origin: str = "built-in") -> "WorkloadKind":
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
            container_pod=parse_pattern(row["container_pod"]) if row.get("container_pod") else (),
            core_pods=patterns(row.get("core_pods", ())),
            node_agent=bool(row.get("node_agent", False)),
            mounts_shm=bool(row.get("mounts_shm", False)),
            added_tolerations=tuple(row.get("added_tolerations", ())),
            operator_amounts=bool(row.get("operator_amounts", False)),
            operator_gpus=tuple(
                OperatorGpu(
                    parse_pattern(g["at"]),
                    parse_pattern(g["amount"]),
                    str(g["resource"]),
                    parse_pattern(g["resource_field"]) if g.get("resource_field") else (),
                    tuple(
                        (str(k).lower(), str(v))
                        for k, v in (g.get("resource_values") or {}).items()
                    ),
                    bool(g.get("every_container", False)),
                )
                for g in row.get("operator_gpus", ())
            ),
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
    errors.extend(_identity_errors(row))
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
    errors.extend(_pod_default_errors(row.get("pod_defaults")))
    errors.extend(_core_pod_errors(row))
    added = row.get("added_tolerations")
    if added is not None and (
        not isinstance(added, list) or not all(isinstance(t, Mapping) for t in added)
    ):
        errors.append(f"added_tolerations: must be a list of tolerations, got {_shown(added)}")
    errors.extend(_operator_gpu_errors(row.get("operator_gpus")))
    if "container_pod" in row:
        errors.extend(f"container_pod: {m}" for m in validate_pattern(row["container_pod"], "pods"))
    for flag in ("require_containers", "node_agent", "mounts_shm", "operator_amounts"):
        if flag in row and not isinstance(row[flag], bool):
            errors.append(f"{flag}: must be true or false, got {_shown(row[flag])}")
    if "source" in row and not isinstance(row["source"], str):
        errors.append(f"source: must be a string, got {_shown(row['source'])}")
    return errors


def _core_pod_errors(row: Mapping[str, Any]) -> list[str]:
    """Why ``core_pods`` is not a list of the row's ``pods`` patterns."""
    core = row.get("core_pods")
    if core is None:
        return []
    if not isinstance(core, list):
        return [f"core_pods: must be a list of the row's pods patterns, got {_shown(core)}"]
    written = row.get("pods")
    pods: list[Any] = written if isinstance(written, list) else []
    return [
        f"core_pods[{i}]: {_shown(p)} is not one of the row's pods patterns"
        for i, p in enumerate(core)
        if p not in pods
    ]


def _identity_errors(row: Mapping[str, Any]) -> list[str]:
    """Why the row's ``group`` and ``kind`` do not name an API group and a kind."""
    errors: list[str] = []
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
    return errors


def _pod_default_errors(defaults: Any) -> list[str]:
    """Why a ``pod_defaults`` value is not a mapping of supported fields to patterns."""
    errors: list[str] = []
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
    return errors


def _operator_gpu_errors(entries: Any) -> list[str]:
    """Why an ``operator_gpus`` value is not a list of ``{at, amount, resource,
    resource_field?, resource_values?, every_container?}`` entries of valid paths."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        return [f"operator_gpus: must be a list, got {_shown(entries)}"]
    errors: list[str] = []
    for i, entry in enumerate(entries):
        where = f"operator_gpus[{i}]"
        if not isinstance(entry, Mapping):
            errors.append(f"{where}: must be a mapping with at, amount and resource")
            continue
        unknown = set(entry) - {
            "at",
            "amount",
            "resource",
            "resource_field",
            "resource_values",
            "every_container",
        }
        if unknown:
            errors.append(f"{where}: unknown key {sorted(unknown)[0]!r}")
        for key in ("at", "amount", "resource"):
            if not isinstance(entry.get(key), str) or not entry.get(key):
                errors.append(f"{where}.{key}: required, a non-empty string")
        for key in ("at", "amount", "resource_field"):
            if isinstance(entry.get(key), str) and entry[key]:
                errors.extend(f"{where}.{key}: {m}" for m in validate_pattern(entry[key], key))
        if not isinstance(entry.get("every_container", False), bool):
            errors.append(f"{where}.every_container: must be true or false")
        values = entry.get("resource_values")
        if values is not None:
            if not entry.get("resource_field"):
                errors.append(f"{where}.resource_values: needs resource_field")
            if not isinstance(values, Mapping) or not all(
                isinstance(k, str) and k and isinstance(v, str) and v for k, v in values.items()
            ):
                errors.append(
                    f"{where}.resource_values: must map field values to resource names (strings)"
                )
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
