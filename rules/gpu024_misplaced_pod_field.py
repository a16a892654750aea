"""A pod field misspelt or written at the wrong level, which Kubernetes drops.

## What it does
Checks the keys of a pod template, its pod spec, each container (init, sidecar and
ephemeral containers included), each container's `resources` and each toleration against
the field names the Kubernetes API defines for that type (`rules/k8s-fields.json`, from
the core/v1 OpenAPI: `PodTemplateSpec`, `PodSpec`, `Container`, `EphemeralContainer`,
`ResourceRequirements`, `Toleration`). It reports, at the key:

- a key that is a field of another level: `tolerations` or `nodeSelector` under a
  container, `limits` or `requests` directly under a container, `tolerations` under the
  template instead of `template.spec`, `image` in the pod spec;
- a key close to a field of its own level: `resource:` for `resources:`, `toleration:` for
  `tolerations:`, `nodeselector` for `nodeSelector`, `limit` for `limits`, `Operator` for
  `operator` (case, plural, `_`/`-` separators, or a small edit);
- a resource name directly under `resources` or under a container
  (`resources: {nvidia.com/gpu: 1}`), which belongs under `resources.limits`.

Each message names the field to write (`did you mean resources?`) and what is lost. Keys
that resemble no field are left to a schema validator such as kubeconform. Only pod specs
known to be core `PodSpec`s are checked (pod templates, `.template.spec` rows and `Pod`
objects): operators' own types add fields of their own around them.

## Why it matters
Decoding ignores fields a type does not have. Unless the client asks for strict field
validation (`kubectl apply` does, and fails with `unknown field`), the object is stored
without them: a container with `resource:` runs without its GPU on whatever node has room,
and a pod with `toleration:` or with tolerations under its container stays Pending on a
tainted GPU pool. Nothing in the pod says why.

## Example
```yaml
containers:
- name: train
  image: nvcr.io/nvidia/pytorch:24.05-py3
  resource:                 # GPU024: did you mean resources?
    limits:
      nvidia.com/gpu: 1
  tolerations:              # GPU024: belongs to the pod spec
  - key: nvidia.com/gpu
    operator: Exists
```

## Use instead
```yaml
tolerations:
- key: nvidia.com/gpu
  operator: Exists
containers:
- name: train
  image: nvcr.io/nvidia/pytorch:24.05-py3
  resources:
    limits:
      nvidia.com/gpu: 1
```

## Fix safety
Unsafe: a near miss of a field of its own level (`resource:`, `toleration:`, `limit:`,
`Operator:`) is renamed to that field in place, value and comments kept; the pod then gets
the GPU or the toleration it silently lacked, so it schedules elsewhere than before. No fix
when the field is also written at that level (the rename would duplicate a key) or when the
key belongs to another level (moving it is left to the author).

## Options
None.

## References
- https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation (unknown
  fields: `Ignore`, `Warn`, `Strict`)
- Kubernetes API reference: PodSpec, Container, ResourceRequirements, Toleration
  (`api/openapi-spec/v3/api__v1_openapi.json`)
- `rules/k8s-fields.json` (the field names, checked against the kubernetes Python client's
  models in the test suite)
"""

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from gpulint.data import data_path
from gpulint.model import Path
from gpulint.rule import RenameKey, Repair, RuleContext, Violation
from gpulint.workloads import PodSpec

CODE = "GPU024"
NAME = "misplaced-pod-field"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

#: What is lost when a key meant for these fields is dropped.
_LOST = {
    "resources": "the container gets none of those resources (no GPU) and may run anywhere",
    "limits": "the container gets none of those resources (no GPU)",
    "requests": "the container requests none of those resources",
    "tolerations": "the pod has no such toleration and stays off tainted GPU nodes",
    "nodeSelector": "the pod may be placed on any node",
    "affinity": "the pod may be placed on any node",
    "runtimeClassName": "the pod runs with the default container runtime",
    "key": "the toleration loses that field and no longer matches the taint",
    "operator": "the toleration loses that field (it means Equal) and may not match the taint",
    "value": "the toleration loses that field and may not match the taint",
    "effect": "the toleration loses that field (it then matches every effect)",
}
#: Resource names Kubernetes defines besides extended resources.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_NATIVE_RESOURCE = r"^(cpu|memory|ephemeral-storage|storage|pods|hugepages-\S+)$"


@lru_cache(maxsize=1)
def field_names() -> Mapping[str, frozenset[str]]:
    """Type name -> its JSON field names (``rules/k8s-fields.json``)."""
    text = data_path("gpulint.rules", "k8s-fields.json").read_text(encoding="utf-8")
    return {name: frozenset(fields) for name, fields in json.loads(text)["types"].items()}


class Misplaced:
    """A key GPU024 reports: its path (the key itself), the message, and the field to rename
    it to when the fix is a rename in place (a near miss of a field of its own level).
    (Records of this module are plain classes, see docs/architecture.md.)"""

    __slots__ = ("message", "path", "rename")

    def __init__(self, path: Path, message: str, rename: str | None = None) -> None:
        self.path = path
        self.message = message
        self.rename = rename


class Level:
    """A mapping of one API type (``type``), and where it is."""

    __slots__ = ("data", "label", "path", "type")

    def __init__(self, kind: str, data: Mapping[Any, Any], path: Path, label: str) -> None:
        self.type = kind
        self.data = data
        self.path = path
        #: How a message names it.
        self.label = label


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for found in misplaced_keys(pod, ctx):
        fix = None
        if found.rename is not None:
            fix = Repair(
                f"rename `{found.path[-1]}` to `{found.rename}`",
                (RenameKey(found.path, found.rename),),
                "unsafe",
            )
        yield Violation(found.path, found.message, at="key", fix=fix)


def misplaced_keys(pod: PodSpec, ctx: RuleContext) -> Iterator[Misplaced]:
    """Every key of the pod spec's levels that GPU024 reports (what a fix renames)."""
    if not _core_pod_spec(pod):
        return
    fields = field_names()
    for level in _levels(pod, fields):
        known = fields[level.type]
        for key in level.data:
            if not isinstance(key, str) or key in known:
                continue
            found = _diagnose(key, level, fields, ctx)
            if found is not None:
                message, rename = found
                if rename is not None and rename in level.data:
                    rename = None  # the field is there too: renaming would duplicate a key
                yield Misplaced((*level.path, key), message, rename)


def _core_pod_spec(pod: PodSpec) -> bool:
    """Is this a core/v1 PodSpec (a pod template's, or a Pod's)? Operators' inline pod
    specs (KServe predictors, Argo templates) carry fields of their own."""
    if pod.location != "pod":
        return False
    if pod.pattern.lower().endswith("template.spec"):
        return True
    return pod.obj.kind == "Pod" and pod.path == ("spec",)


def _levels(pod: PodSpec, fields: Mapping[str, frozenset[str]]) -> Iterator[Level]:
    """The levels of the pod spec that hold a key their type does not have. Most levels
    hold none: one set test each, before anything else is made for them."""
    template = pod.template_path
    if template is not None and pod.pattern.lower().endswith("template.spec"):
        data = pod.template()
        if data is not None and not data.keys() <= fields["PodTemplateSpec"]:
            yield Level("PodTemplateSpec", data, template, "the pod template")
    if not pod.spec.keys() <= fields["PodSpec"]:
        yield Level("PodSpec", pod.spec, pod.path, "the pod spec")
    tolerations = pod.spec.get("tolerations")
    known = fields["Toleration"]
    for i, item in enumerate(tolerations if isinstance(tolerations, list) else ()):
        if isinstance(item, dict) and not item.keys() <= known:
            yield Level("Toleration", item, (*pod.path, "tolerations", i), "a toleration")
    for container in pod.containers:
        if container.section not in ("containers", "initContainers", "ephemeralContainers"):
            continue
        kind = "EphemeralContainer" if container.section == "ephemeralContainers" else "Container"
        if not container.data.keys() <= fields[kind]:
            yield Level(kind, container.data, container.path, f"container {container.label}")
        resources = container.data.get("resources")
        if isinstance(resources, dict) and not resources.keys() <= fields["ResourceRequirements"]:
            yield Level(
                "ResourceRequirements",
                resources,
                (*container.path, "resources"),
                f"the resources of container {container.label}",
            )


#: Where a field of another type belongs, seen from a level.
_ELSEWHERE: dict[str, tuple[tuple[str, str], ...]] = {
    "PodTemplateSpec": (("PodSpec", "under template.spec"),),
    "PodSpec": (
        ("PodTemplateSpec", "in the pod template, next to spec"),
        ("Container", "in a container"),
    ),
    "Container": (
        ("ResourceRequirements", "under resources"),
        ("PodSpec", "in the pod spec, not in a container"),
    ),
    "EphemeralContainer": (
        ("ResourceRequirements", "under resources"),
        ("PodSpec", "in the pod spec, not in a container"),
    ),
    "ResourceRequirements": (),
    "Toleration": (),
}


def _diagnose(
    key: str, level: Level, fields: Mapping[str, frozenset[str]], ctx: RuleContext
) -> tuple[str, str | None] | None:
    own = fields[level.type]
    head = f"{key} is not a field of {level.label}"
    # A resource name where a ResourceRequirements or a container has its fields.
    if level.type in ("ResourceRequirements", "Container", "EphemeralContainer") and (
        _resource_name(key, ctx)
    ):
        where = "under limits" if level.type == "ResourceRequirements" else "under resources.limits"
        return (
            f"{head}: a resource name belongs {where}; Kubernetes drops it, so the container "
            f"gets no {key}",
            None,
        )
    # A field of another level, exactly.
    for other, where in _ELSEWHERE[level.type]:
        if key in fields[other] and key not in own:
            return f"{head}: {key} belongs {where}; Kubernetes drops it here{_lost(key)}", None
    # A near miss of a field of this level, then of another level.
    near = _near(key, own)
    if near is not None:
        return f"{head}: did you mean {near}? Kubernetes drops it{_lost(near)}", near
    for other, where in _ELSEWHERE[level.type]:
        near = _near(key, fields[other])
        if near is not None:
            return (
                f"{head}: did you mean {near}, which belongs {where}? Kubernetes drops it"
                f"{_lost(near)}",
                None,
            )
    return None


def _lost(field: str) -> str:
    lost = _LOST.get(field)
    return f": {lost}" if lost else ""


def _resource_name(key: str, ctx: RuleContext) -> bool:
    registry = ctx.registry
    return bool(
        registry.is_accelerator(key)
        or registry.looks_like_accelerator(key)
        or (re.match(_NATIVE_RESOURCE, key) and key not in ("pods", "storage"))
    )


def _squash(name: str) -> str:
    return re.sub(r"[-_.\s]", "", name).lower()


def _near(key: str, fields: frozenset[str]) -> str | None:
    """The field ``key`` was meant to be: same letters in another case or with separators,
    a plural or singular, or a small edit of a longer name."""
    squashed = _squash(key)
    for field in sorted(fields):
        squashed_field = _squash(field)
        if squashed in (squashed_field, squashed_field + "s") or squashed + "s" == squashed_field:
            return field
    if len(key) < 5:
        return None  # short keys are close to too many things
    import difflib  # only for a key that is not a field

    close = difflib.get_close_matches(key, sorted(fields), n=1, cutoff=0.85)
    return close[0] if close else None
