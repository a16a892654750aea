"""A pod field misspelt or written at the wrong level, which Kubernetes drops.

## What it does
Checks the keys of a pod template, its pod spec, each container (init, sidecar and
ephemeral containers included) and every object under them whose type it knows — each
container's `resources`, `env` and `envFrom` items (and their `valueFrom`), `volumeMounts`,
`ports`, probes, `lifecycle` handlers and `securityContext`; the pod's tolerations,
`volumes` (and their common sources), `securityContext`, `affinity` terms and topology
spread constraints — against the field names the Kubernetes API defines for that type
(`gpulint/data/k8s-fields.json`, from the core/v1 OpenAPI, which also says which field holds which
type). It reports, at the key:

- a key that is a field of another level: `tolerations` or `nodeSelector` under a
  container, `limits` or `requests` directly under a container, `tolerations` under the
  template instead of `template.spec`, `image` in the pod spec; an env item's `valueFrom`
  directly under the container (a lost `- `), `secretKeyRef` directly in an env item
  instead of under `valueFrom`, `fsGroup` in a container's `securityContext` (a pod-level
  field) or `privileged` in the pod's, `mountPath` in a volume, `readOnly` in a volume's
  `hostPath`, `configMap`, `secret` or `emptyDir` (a mount's field), `path` or `port` directly
  under a probe instead of under `httpGet`, a preferred term's `weight` in a required
  affinity term;
- a key close to a field of its own level: `resource:` for `resources:`, `toleration:` for
  `tolerations:`, `nodeselector` for `nodeSelector`, `limit` for `limits`, `Operator` for
  `operator`, `allowPrivilegedEscalation` for `allowPrivilegeEscalation`, `readonly` for
  `readOnly` (case, plural, `_`/`-` separators, or a small edit);
- a resource name directly under `resources` or under a container
  (`resources: {nvidia.com/gpu: 1}`), which belongs under `resources.limits`.

Each message names the field to write (`did you mean resources?`) and what is lost. A key
that resembles no field is reported only when a GPU request is written under it (the
`extendedResources:` of a 2017 proposal Kubernetes never took up, holding the pod's
`nvidia.com/gpu`): the request is dropped with it. Other keys that resemble no field are
left to a schema validator such as kubeconform, but for one place: a chart's values (found
by shape, docs/workloads.md) whose container `resources:` holds a key beside `limits` and
`requests` (a probe's `startup:` written there in bjw-s app-template values) get `info` at
that key, since the chart passes it to a ResourceRequirements, which drops it (assumed: the
chart writes the values' resources into the container as they are). The same holds of an
operator's resource whose kind has no workload row (its `spec.resources` found by shape),
unless a CustomResourceDefinition in the project declares the key for that kind (a chart's
`crds/`, an operator's `config/crd/`): then it is the operator's own field
(`spec.resources.gpu: {count: 1}`, which the operator turns into a GPU request), not a slip,
and nothing is said. Only pod specs known to be core `PodSpec`s are checked (pod templates,
`.template.spec` rows, `Pod` objects, and the pods a workload row's `core_pods` names, such
as a KServe LLMInferenceService's `spec.template`): operators' own types add fields of their own
around them; of a KServe ServingRuntime (or ClusterServingRuntime), whose `containers` are
core Containers in a spec of KServe's own, the containers alone.

A field of `metadata` written at the root of the object that holds the pod spec (`labels:`
or `annotations:` in column 0 beside `metadata:`, a Deployment's or an InferenceService's)
is reported at the key, once an object: `kubectl apply` refuses the unknown field (strict
field validation, its default), or it is dropped, and the object lacks the labels a selector
or an operator looks for. Not in a Kustomization file, whose `namespace` and `labels` are its
own, nor in an OpenShift Template, whose root `labels` go on every object it makes.

A key of that object's `metadata`, or of its pod template's, that is no ObjectMeta field
(`app: redis` straight under `metadata`, a lost `labels:` level; `label:` for `labels:`) is
reported at the key, the object's once an object, for the same reasons: kubectl refuses the
unknown field or it is dropped, and a Service or selector looking for the label finds nothing.
Every ObjectMeta field counts, those a `kubectl get -o yaml` dump keeps too (`uid`,
`resourceVersion`, `managedFields`, and `clusterName`, which releases before 1.25 served).

A pod spec field written in a built-in workload's spec beside its `template` (`affinity`,
`nodeSelector` or `tolerations` under a Job's, a Deployment's or a CronJob's
`jobTemplate.spec`, a Job embedded in another object such as an AppWrapper's too) is
reported at the key: the workload's spec (DeploymentSpec, JobSpec, ... in the same field
table) has no such field (a field both have by name, such as a Job's `activeDeadlineSeconds`,
is the workload's own), so kubectl refuses it or the pods are made without it. So is the
other way round, a field of the workload's spec written in its pod spec (a Deployment's
`strategy` indented under `template.spec`): the rollout settings are dropped.

A key under a container's `limits` or `requests` that is no resource name (no domain, and
not `cpu`, `memory`, `ephemeral-storage` or `hugepages-<size>`: a probe's `port`, an object
pasted into the container) is an error at the key: the API server refuses the pod ("must be
a standard resource type or fully qualified"). A key in capitals with an underscore
(`FILLED_BY_VALIDATOR`) is a placeholder a program replaces, and is left alone. A bare name
that looks like an accelerator (`gpu: 1`) is GPU010's.

In a Flux `HelmRelease` of bjw-s app-template 2 or later (`spec.chart.spec.chart:
app-template` with such a `version`), a `resources` written at the root of `values` that
holds a GPU request is reported at that key: since version 2 the chart reads a container's
resources only under `controllers.<controller>.containers.<container>.resources` (version
1 read them at the root), so no container gets the GPU. A release that names the chart
through `chartRef` to an OCIRepository called `app-template`, or to one of any name whose
values are in app-template 2's shape (`controllers` of `containers` mappings), gets `info`:
the version is the repository's tag, assumed to be 2 or later (app-template 2 came before
Flux's `chartRef`).
TrueCharts' own chart of that name (a `sourceRef` named `truecharts`) is another chart: its
common library gives every container the `resources` at the root of the values.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

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
key belongs to another level (moving it is left to the author), nor for a key of `metadata`.

## Options
None.

## References
- bjw-s-labs/helm-charts `charts/library/common/values.schema.json` (the values' root
  properties: `controllers`, `defaultPodOptions`, `persistence`, `service`, ...; no
  `resources`, and unknown root keys are allowed, so one is dropped without a word) and
  `schemas/containers.json` (a container's `resources`)
- https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation (unknown
  fields: `Ignore`, `Warn`, `Strict`)
- Kubernetes API reference: PodSpec, Container, ResourceRequirements, Toleration, EnvVar,
  VolumeMount, Volume, Probe, Lifecycle, SecurityContext, Affinity
  (`api/openapi-spec/v3/api__v1_openapi.json`)
- ObjectMeta's fields: kubernetes/apimachinery `pkg/apis/meta/v1/types.go`
- `gpulint/data/k8s-fields.json` (the field names and which field holds which type, generated
  from the kubernetes Python client's models by `python -m tests.k8s_fields` and checked
  against them in the test suite)
"""

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from gpulint.api import (
    METADATA_AT_ROOT,
    Path,
    PodSpec,
    RenameKey,
    Repair,
    RuleContext,
    Violation,
    app_template_values,
    data_path,
    holds_placeholder,
    in_chart_values,
    metadata_at_root,
    near_field,
    value_at,
)

CODE = "GPU024"
NAME = "misplaced-pod-field"
SEVERITY = "warning"
SCOPE = "pod"
AS_WRITTEN = True
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, Any] = {}

#: What is lost when a key meant for a field of a type is dropped.
_LOST = {
    ("Container", "resources"): (
        "the container gets none of those resources (no GPU) and may run anywhere"
    ),
    ("ResourceRequirements", "limits"): "the container gets none of those resources (no GPU)",
    ("ResourceRequirements", "requests"): "the container requests none of those resources",
    ("PodSpec", "tolerations"): "the pod has no such toleration and stays off tainted GPU nodes",
    ("PodSpec", "nodeSelector"): "the pod may be placed on any node",
    ("PodSpec", "affinity"): "the pod may be placed on any node",
    ("PodSpec", "runtimeClassName"): "the pod runs with the default container runtime",
    ("Toleration", "key"): "the toleration loses that field and no longer matches the taint",
    ("Toleration", "operator"): (
        "the toleration loses that field (it means Equal) and may not match the taint"
    ),
    ("Toleration", "value"): "the toleration loses that field and may not match the taint",
    ("Toleration", "effect"): "the toleration loses that field (it then matches every effect)",
    ("EnvVar", "value"): "the container runs without that environment variable's value",
    ("EnvVar", "valueFrom"): "the container runs without that environment variable's value",
    ("Container", "env"): "the container runs without those environment variables",
    ("Container", "volumeMounts"): "the container runs without those volumes mounted",
}
#: Resource names Kubernetes defines besides extended resources.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_NATIVE_RESOURCE = r"^(cpu|memory|ephemeral-storage|storage|pods|hugepages-\S+)$"


@lru_cache(maxsize=1)
def _data() -> Mapping[str, Any]:
    text = data_path("gpulint.data", "k8s-fields.json").read_text(encoding="utf-8")
    data: Mapping[str, Any] = json.loads(text)
    return data


@lru_cache(maxsize=1)
def field_names() -> Mapping[str, frozenset[str]]:
    """Type name -> its JSON field names (``gpulint/data/k8s-fields.json``)."""
    return {name: frozenset(fields) for name, fields in _data()["types"].items()}


@lru_cache(maxsize=1)
def children() -> Mapping[str, Mapping[str, str]]:
    """Type name -> its fields that hold another type of the table -> that type."""
    held: Mapping[str, Mapping[str, str]] = _data()["children"]
    return held


class Misplaced:
    """A key GPU024 reports: its path (the key itself), the message, and the field to rename
    it to when the fix is a rename in place (a near miss of a field of its own level).
    (Records of this module are plain classes, see docs/architecture.md.)"""

    __slots__ = ("message", "path", "rename", "severity")

    def __init__(
        self, path: Path, message: str, rename: str | None = None, severity: str | None = None
    ) -> None:
        self.path = path
        self.message = message
        self.rename = rename
        #: None: the rule's; ``info`` where what happens to the key is assumed.
        self.severity = severity


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
    yield from _app_template_root(pod, ctx)
    yield from _not_resource_names(pod, ctx)
    yield from _metadata_at_root(pod)
    yield from _metadata_keys(pod)
    yield from _fields_across_workload_and_pod(pod)
    for found in misplaced_keys(pod, ctx):
        fix = None
        if found.rename is not None:
            fix = Repair(
                f"rename `{found.path[-1]}` to `{found.rename}`",
                (RenameKey(found.path, found.rename),),
                "unsafe",
            )
        yield Violation(found.path, found.message, at="key", fix=fix, severity=found.severity)


#: A key in capitals with an underscore: a placeholder a program replaces before the pod is
#: created (the GPU Operator's validator writes the resource name over FILLED_BY_VALIDATOR).
_CAPITALS_PLACEHOLDER = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
#: The resource names a container may write without a domain (Kubernetes'
#: ``IsStandardContainerResourceName``; ``hugepages-<size>`` besides).
_NATIVE = frozenset({"cpu", "memory", "ephemeral-storage"})


def _not_resource_names(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    """Keys under a container's ``limits`` or ``requests`` that are no resource name: no
    domain and not a native one (``port``, ``apiVersion`` pasted from a probe or another
    object). A bare name that looks like an accelerator (``gpu``) is GPU010's."""
    if pod.location != "pod" or pod.found_by != "table":
        return
    from gpulint.api import holds_placeholder, resource_lists

    registry = ctx.registry
    for container in pod.containers:
        for section, mapping in resource_lists(container):
            for key in mapping:
                if not isinstance(key, str) or "/" in key or key in _NATIVE:
                    continue
                if key.startswith("hugepages-") or holds_placeholder(key):
                    continue
                if re.fullmatch(_CAPITALS_PLACEHOLDER, key):
                    continue  # FILLED_BY_VALIDATOR: a name a program writes in
                if registry.may_be_accelerator(key):
                    continue
                yield Violation(
                    (*container.path, "resources", section, key),
                    f"{section} key {key[:60]} is no resource name: the API server refuses the "
                    f"{pod.obj.kind} (a name without a domain is cpu, memory, ephemeral-storage "
                    "or hugepages-*)",
                    help="move it where it belongs (a probe's port, another object pasted into "
                    "the container), or remove it",
                    at="key",
                    severity="error",
                )


#: The chart whose values put a container's resources under its controller from version 2 on
#: Groups whose kinds have some of these at the root as their own fields (a Kustomization's
#: ``namespace`` and ``labels``; an OpenShift Template's ``labels`` for every object it makes).
_ROOT_FIELD_GROUPS = frozenset({"kustomize.config.k8s.io", "template.openshift.io"})


def _metadata_at_root(pod: PodSpec) -> Iterator[Violation]:
    """A field of ``metadata`` written at the root of the object that holds a pod spec
    (``labels:`` in column 0 beside ``metadata:``): reported once an object."""
    obj = pod.obj.root
    if not obj.kind or obj.group in _ROOT_FIELD_GROUPS or obj.kind == "Template":
        return  # (a Template of OpenShift's legacy `apiVersion: v1` too)
    if obj.memo.get("GPU024 root") is not None:
        return
    obj.memo["GPU024 root"] = True
    for key in obj.data:
        if isinstance(key, str) and key in METADATA_AT_ROOT:
            message, advice = metadata_at_root(obj.kind, key)
            yield Violation((*obj.path, key), message, help=advice, at="key")


#: The fields of ObjectMeta (k8s.io/apimachinery/pkg/apis/meta/v1, types.go), with
#: ``clusterName``, which releases before 1.25 served.
OBJECT_META_FIELDS = frozenset(
    {
        "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
        "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
        "annotations", "ownerReferences", "finalizers", "managedFields", "clusterName",
    }
)  # fmt: skip


def _metadata_keys(pod: PodSpec) -> Iterator[Violation]:
    """A key of the ``metadata`` of the object that holds a pod spec, or of its pod template,
    that is no ObjectMeta field (``app: redis`` under ``metadata`` for ``metadata.labels``):
    the API server refuses it (kubectl's strict field validation) or drops it, and a
    selector looking for the label finds nothing. The object's own once an object."""
    obj = pod.obj.root
    places: list[tuple[Path, Any]] = []
    if obj.kind and obj.memo.get("GPU024 metadata") is None:
        obj.memo["GPU024 metadata"] = True
        places.append(((*obj.path, "metadata"), obj.data.get("metadata")))
    template = pod.template_path
    if template is not None and pod.pattern.lower().endswith("template.spec"):
        data = pod.template()
        if data is not None:
            places.append(((*template, "metadata"), data.get("metadata")))
    for path, meta in places:
        if not isinstance(meta, dict) or meta.keys() <= OBJECT_META_FIELDS:
            continue
        for key, value in meta.items():
            if not isinstance(key, str) or key in OBJECT_META_FIELDS or holds_placeholder(key):
                continue
            near = near_field(key, OBJECT_META_FIELDS)
            if near is not None:
                hint = f"did you mean {near}?"
            elif isinstance(value, (str, int, float, bool)):
                hint = f"a label? write it under labels ({key}: {str(value)[:40]})"
            else:
                hint = "remove it, or move it where it belongs"
            yield Violation(
                (*path, key),
                f"{key} is not a field of metadata: kubectl refuses the unknown field, or it "
                "is dropped",
                help=hint,
                at="key",
            )


#: The built-in workloads whose spec holds a pod template, and the type of that spec in
#: ``gpulint/data/k8s-fields.json`` (apps/v1, batch/v1; a CronJob's ``jobTemplate.spec`` is a
#: JobSpec): a pod spec field written there instead of under ``template.spec`` is none of its.
_WORKLOAD_SPECS = {
    "Deployment": "DeploymentSpec",
    "StatefulSet": "StatefulSetSpec",
    "DaemonSet": "DaemonSetSpec",
    "ReplicaSet": "ReplicaSetSpec",
    "Job": "JobSpec",
}
#: The API groups those kinds are served in (and were, for the removed betas).
_WORKLOAD_GROUPS = frozenset({"apps", "batch", "extensions"})


def _fields_across_workload_and_pod(pod: PodSpec) -> Iterator[Violation]:
    """A pod spec field (``affinity``, ``nodeSelector``, ``tolerations``) written in a
    built-in workload's spec beside its ``template`` instead of under ``template.spec``: a
    Deployment's, a Job's (a CronJob's ``jobTemplate.spec``, a Job embedded in another
    object such as an AppWrapper's ``generictemplate``); and the other way round, a field of
    that workload's spec written in its pod spec (``strategy``, ``ttlSecondsAfterFinished``)."""
    if pod.location != "pod":
        return
    relative = tuple(pod.path[len(pod.obj.path) :])
    if len(relative) < 3 or relative[-3:] != ("spec", "template", "spec"):
        return
    where = relative[:-2]
    spec = value_at(pod.obj.data, where)
    if not isinstance(spec, Mapping):
        return
    kind: Any = "Job"
    if len(where) < 2 or where[-2] != "jobTemplate":
        holder = value_at(pod.obj.data, where[:-1]) if len(where) > 1 else pod.obj.data
        if not isinstance(holder, Mapping):
            return
        kind, version = holder.get("kind"), holder.get("apiVersion")
        group = version.partition("/")[0] if isinstance(version, str) and "/" in version else ""
        if group not in _WORKLOAD_GROUPS:
            return
    spec_type = _WORKLOAD_SPECS.get(kind) if isinstance(kind, str) else None
    if spec_type is None:
        return
    fields = field_names()[spec_type]
    pod_fields = field_names()["PodSpec"]
    for key in spec:
        if isinstance(key, str) and key in pod_fields and key not in fields:
            yield Violation(
                (*pod.obj.path, *where, key),
                f"{key} is a field of the pod spec, not of the {kind}'s spec: kubectl refuses "
                "the unknown field, or it is dropped and the pods never get it",
                help=f"move it under template.spec (template.spec.{key})",
                at="key",
            )
    for key in pod.spec:
        # The other way round: the workload's own field written in its pod spec (a
        # Deployment's `strategy` indented under template.spec).
        if isinstance(key, str) and key in fields and key not in pod_fields:
            yield Violation(
                (*pod.path, key),
                f"{key} is a field of the {kind}'s spec, not of the pod spec: kubectl refuses "
                "the unknown field, or it is dropped and the workload never gets it",
                help=f"move it up beside template (spec.{key})",
                at="key",
            )


#: (bjw-s-labs/helm-charts, charts/other/app-template: 1.x read `resources` at the root).
_APP_TEMPLATE = "app-template"


def _app_template_root(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    """A GPU request in ``resources`` at the root of a Flux HelmRelease's values for bjw-s
    app-template 2 or later, which reads a container's resources only under
    ``controllers.<controller>.containers.<container>.resources``."""
    obj = pod.obj
    if pod.location != "resources" or obj.kind != "HelmRelease" or obj.parent is not None:
        return
    if tuple(pod.path) != (*obj.path, "spec", "values", "resources"):
        return
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return
    version = _app_template_version(spec)
    if version is None:
        return
    from gpulint.api import accelerator_entries

    entries = list(accelerator_entries(pod, ctx.registry))
    if not entries:
        return
    assumed = version == ""
    yield Violation(
        pod.path,
        f"resources at the root of app-template{'' if assumed else ' ' + version}'s values hold "
        f"{entries[0].name}, which the chart reads only under a controller's container: no "
        "container gets it",
        help="move it to controllers.<controller>.containers.<container>.resources"
        + (
            " (assumed: the chart's version, which the OCIRepository sets, is 2 or later)"
            if assumed
            else ""
        ),
        at="key",
        severity="info" if assumed else None,
    )


def _truecharts(chart: dict[str, Any]) -> bool:
    """Whether a HelmRelease's chart comes from TrueCharts' repository, whose own
    ``app-template`` (its common library: versions 14 and later) takes ``resources`` at the
    root of the values as every container's, unlike bjw-s's."""
    source = chart.get("sourceRef")
    name = source.get("name") if isinstance(source, dict) else None
    return isinstance(name, str) and "truecharts" in name.lower()


def _app_template_version(spec: dict[str, Any]) -> str | None:
    """The app-template version a HelmRelease ``spec`` installs when it is 2 or later, ``""``
    when it names the chart through ``chartRef`` (the version is the source's), else None."""
    chart = spec.get("chart")
    inner = chart.get("spec") if isinstance(chart, dict) else None
    if isinstance(inner, dict) and inner.get("chart") == _APP_TEMPLATE and not _truecharts(inner):
        version = inner.get("version")
        text = str(version).strip().lstrip("v") if isinstance(version, (str, int)) else ""
        major = text.split(".", 1)[0]
        return text if major.isdigit() and int(major) >= 2 else None
    ref = spec.get("chartRef")
    if isinstance(ref, dict) and ref.get("kind") == "OCIRepository":
        name = ref.get("name")
        if isinstance(name, str) and (
            _APP_TEMPLATE in name or app_template_values(spec.get("values"))
        ):
            return ""
    return None


def misplaced_keys(pod: PodSpec, ctx: RuleContext) -> Iterator[Misplaced]:
    """Every key of the pod spec's levels that GPU024 reports (what a fix renames)."""
    if pod.location == "resources" and pod.found_by == "shape":
        yield from _chart_requirements(pod, ctx)
        return
    core = _core_pod_spec(pod, ctx)
    if not core and not _core_containers(pod):
        return
    fields = field_names()
    for level in _levels(pod, fields) if core else _container_levels(pod, fields):
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


#: The keys under which an object hands values to a chart (Flux HelmRelease ``values``,
#: Argo CD ``helm.valuesObject``).
def _chart_requirements(pod: PodSpec, ctx: RuleContext) -> Iterator[Misplaced]:
    """A key beside ``limits`` and ``requests`` in a container's ``resources`` of a chart's
    values (found by shape: one such key is a slip, :mod:`gpulint.k8s.shapes`). The chart
    is assumed to write the values' resources into the container as they are: info."""
    fields = field_names()
    known = fields["ResourceRequirements"]
    obj = pod.obj
    values = in_chart_values(obj, pod.path)
    assumed = (
        ": the chart writes these resources into the container as they are"
        if values
        else f": {obj.kind}'s resources are Kubernetes' ResourceRequirements, given to its "
        "pods as they are; a CustomResourceDefinition of the kind in the project that "
        "declares the key makes it the operator's own field"
    )
    for container in pod.containers:
        key = container.resources_key
        data = container.data.get(key) if key == "resources" else None
        if not isinstance(data, Mapping):
            continue
        label = f"the resources of container {container.label}"
        level = Level("ResourceRequirements", data, (*container.path, key), label)
        for name in data:
            if not isinstance(name, str) or name in known:
                continue
            if ctx.crds is not None and ctx.crds.declares(
                obj.group, obj.version, obj.kind, (*level.path, name)[len(obj.path) :]
            ):
                continue  # the operator's own field: its CRD in the project declares it
            found = _diagnose(name, level, fields, ctx)
            message, rename = (
                found
                if found is not None
                else (
                    f"{name} is not a field of {label} (limits, requests, claims): Kubernetes "
                    "drops it, so whatever it was meant to set is not set",
                    None,
                )
            )
            yield Misplaced(
                (*level.path, name),
                # The assumption is said on the help line: after the remedy, else alone.
                message
                + (" (assumed" if "; " in message else "; assumed")
                + assumed
                + (")" if "; " in message else ""),
                rename,
                "info",
            )


#: Operators' kinds whose ``containers`` are core/v1 Containers inside a pod spec of their
#: own (KServe ``ServingRuntimeSpec``: ``containers []corev1.Container``): the containers
#: are checked, not the spec around them.
CORE_CONTAINER_KINDS = frozenset(
    {("serving.kserve.io", "ServingRuntime"), ("serving.kserve.io", "ClusterServingRuntime")}
)


def _core_containers(pod: PodSpec) -> bool:
    return pod.location == "pod" and (pod.obj.group, pod.obj.kind) in CORE_CONTAINER_KINDS


def _container_levels(pod: PodSpec, fields: Mapping[str, frozenset[str]]) -> Iterator[Level]:
    """The levels of the pod's ``containers`` and ``initContainers`` alone."""
    for container in pod.containers:
        if container.section in ("containers", "initContainers"):
            label = f"container {container.label}"
            yield from _walk("Container", container.data, container.path, label, fields)


def _core_pod_spec(pod: PodSpec, ctx: RuleContext) -> bool:
    """Is this a core/v1 PodSpec (a pod template's, a Pod's, or one its workload row declares
    so: ``core_pods``)? Operators' inline pod specs (KServe predictors, Argo templates)
    carry fields of their own."""
    if pod.location != "pod":
        return False
    if pod.pattern.lower().endswith("template.spec"):
        return True
    if pod.obj.kind == "Pod" and pod.path == ("spec",):
        return True
    row = ctx.workloads.lookup(pod.obj.group, pod.obj.kind) if ctx.workloads else None
    return row is not None and tuple(pod.pattern.split(".")) in row.core_pods


def _levels(pod: PodSpec, fields: Mapping[str, frozenset[str]]) -> Iterator[Level]:
    """The levels of the pod spec that hold a key their type does not have. Most levels
    hold none: one set test each, before anything else is made for them."""
    template = pod.template_path
    if template is not None and pod.pattern.lower().endswith("template.spec"):
        data = pod.template()
        if data is not None and not data.keys() <= fields["PodTemplateSpec"]:
            yield Level("PodTemplateSpec", data, template, "the pod template")
    yield from _walk("PodSpec", pod.spec, pod.path, "the pod spec", fields)
    for container in pod.containers:
        if container.section not in ("containers", "initContainers", "ephemeralContainers"):
            continue
        kind = "EphemeralContainer" if container.section == "ephemeralContainers" else "Container"
        yield from _walk(
            kind, container.data, container.path, f"container {container.label}", fields
        )


#: Types whose levels ``_levels`` reaches itself (containers carry their labels).
_NOT_WALKED = frozenset({"PodSpec", "Container", "EphemeralContainer"})


#: A level's label before it is written out: a string, or (field, index or None, item,
#: parent label) for a level under a field of its parent, written only for a level that is
#: reported (most are not).
_Label = Any


def _walk(
    kind: str,
    data: Mapping[Any, Any],
    path: Path,
    label: str,
    fields: Mapping[str, frozenset[str]],
) -> Iterator[Level]:
    """The level ``data`` of type ``kind`` and the levels under it, by the field table, each
    before the levels under it and in the table's order (a stack, not recursion)."""
    table = children()
    stack: list[tuple[str, Mapping[Any, Any], Path, _Label]] = [(kind, data, path, label)]
    while stack:
        kind, data, path, label = stack.pop()
        if not data.keys() <= fields[kind]:
            yield Level(kind, data, path, _written(label))
        below: list[tuple[str, Mapping[Any, Any], Path, _Label]] = []
        for field, child in table.get(kind, {}).items():
            value = data.get(field)
            if child in _NOT_WALKED or not value:
                continue
            if isinstance(value, dict):
                below.append((child, value, (*path, field), (field, None, value, label)))
            elif isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, dict):
                        below.append((child, item, (*path, field, i), (field, i, item, label)))
        stack.extend(reversed(below))


def _written(label: _Label) -> str:
    """A level's label in words (``the resources of container main``)."""
    chain: list[tuple[str, int | None, Mapping[Any, Any]]] = []
    while not isinstance(label, str):
        field, index, item, label = label
        chain.append((field, index, item))
    text: str = label
    for field, index, item in reversed(chain):
        text = f"the {field} of {text}" if index is None else _item_label(field, index, item, text)
    return text


def _item_label(field: str, index: int, item: Mapping[Any, Any], parent: str) -> str:
    if field == "tolerations":
        return "a toleration"
    name = item.get("name")
    which = name if isinstance(name, str) and name else f"#{index + 1}"
    return f"{field} item {which} of {parent}"


_CONTAINER_ELSEWHERE = (
    ("ResourceRequirements", "under resources"),
    ("PodSpec", "in the pod spec, not in a container"),
    ("EnvVar", "in an env item (a lost `- `?)"),
    ("EnvFromSource", "in an envFrom item (a lost `- `?)"),
    ("VolumeMount", "in a volumeMounts item (a lost `- `?)"),
    ("ContainerPort", "in a ports item (a lost `- `?)"),
    ("Probe", "in a probe (livenessProbe, readinessProbe or startupProbe)"),
    ("SecurityContext", "under securityContext"),
)
_HANDLER_ELSEWHERE = (
    ("HTTPGetAction", "under httpGet"),
    ("ExecAction", "under exec"),
    ("TCPSocketAction", "under tcpSocket"),
)
_AFFINITY_TERM = "under requiredDuringSchedulingIgnoredDuringExecution (or a podAffinityTerm)"
#: Where a field of another type belongs, seen from a level (types not named: none).
_ELSEWHERE: dict[str, tuple[tuple[str, str], ...]] = {
    "PodTemplateSpec": (("PodSpec", "under template.spec"),),
    "PodSpec": (
        ("PodTemplateSpec", "in the pod template, next to spec"),
        ("Container", "in a container"),
    ),
    "Container": _CONTAINER_ELSEWHERE,
    "EphemeralContainer": _CONTAINER_ELSEWHERE,
    "EnvVar": (
        ("EnvVarSource", "under valueFrom"),
        ("EnvFromSource", "in an envFrom item, not in env"),
    ),
    "EnvVarSource": (("SecretKeySelector", "under secretKeyRef or configMapKeyRef"),),
    "EnvFromSource": (("ConfigMapEnvSource", "under configMapRef or secretRef"),),
    "Volume": (("VolumeMount", "in a container's volumeMounts"),),
    # A mount's field in the volume's source (`hostPath: {path: /run, readOnly: false}`).
    **dict.fromkeys(
        (
            "HostPathVolumeSource",
            "EmptyDirVolumeSource",
            "ConfigMapVolumeSource",
            "SecretVolumeSource",
            "PersistentVolumeClaimVolumeSource",
        ),
        (("VolumeMount", "in the volumeMounts item of the container that mounts it"),),
    ),
    "VolumeMount": (("Volume", "in the pod spec's volumes"),),
    "Probe": _HANDLER_ELSEWHERE,
    "Lifecycle": (("LifecycleHandler", "under postStart or preStop"),),
    "LifecycleHandler": _HANDLER_ELSEWHERE,
    "SecurityContext": (("PodSecurityContext", "in the pod spec's securityContext"),),
    "PodSecurityContext": (("SecurityContext", "in a container's securityContext"),),
    "Affinity": (
        ("NodeAffinity", "under nodeAffinity, podAffinity or podAntiAffinity"),
        ("PodAffinityTerm", "in a podAffinity or podAntiAffinity term"),
    ),
    "NodeAffinity": (("NodeSelector", "under requiredDuringSchedulingIgnoredDuringExecution"),),
    "NodeSelector": (("NodeSelectorTerm", "in a nodeSelectorTerms item"),),
    "NodeSelectorTerm": (
        ("NodeSelectorRequirement", "in a matchExpressions item"),
        ("PreferredSchedulingTerm", "in a preferredDuringSchedulingIgnoredDuringExecution item"),
    ),
    "PreferredSchedulingTerm": (("NodeSelectorTerm", "under preference"),),
    "PodAffinity": (("PodAffinityTerm", _AFFINITY_TERM),),
    "PodAntiAffinity": (("PodAffinityTerm", _AFFINITY_TERM),),
    "WeightedPodAffinityTerm": (("PodAffinityTerm", "under podAffinityTerm"),),
    # A preferred term's weight in a required one (a required term has none).
    "PodAffinityTerm": (
        (
            "WeightedPodAffinityTerm",
            "in a preferredDuringSchedulingIgnoredDuringExecution item (a required term has no "
            "weight)",
        ),
    ),
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
            f"{head}: Kubernetes drops it, so the container gets no {key}; a resource name "
            f"belongs {where}",
            None,
        )
    # A field of another level, exactly.
    elsewhere = _ELSEWHERE.get(level.type, ())
    for other, where in elsewhere:
        if key in fields[other] and key not in own:
            return (
                f"{head}: Kubernetes drops it here{_lost(other, key)}; {key} belongs {where}",
                None,
            )
    # A near miss of a field of this level, then of another level.
    near = near_field(key, own)
    if near is not None:
        return f"{head}: Kubernetes drops it{_lost(level.type, near)}; did you mean {near}?", near
    for other, where in elsewhere:
        near = near_field(key, fields[other])
        if near is not None:
            return (
                f"{head}: Kubernetes drops it{_lost(other, near)}; did you mean {near}, which "
                f"belongs {where}?",
                None,
            )
    # A key that resembles no field but holds a GPU request: the request goes with it.
    held = _accelerator_within(level.data.get(key), ctx)
    if held is not None:
        return (
            f"{head}: Kubernetes drops it, and the {held} written under it with it, so the pod "
            f"gets no {held}; a container's GPU belongs under its resources.limits",
            None,
        )
    return None


#: How many nodes of an unknown key's value ``_accelerator_within`` reads at most.
_WITHIN_BUDGET = 2_000


def _accelerator_within(value: Any, ctx: RuleContext) -> str | None:
    """The first accelerator resource name written as a key somewhere under ``value`` (a
    stack, not recursion; at most ``_WITHIN_BUDGET`` nodes read)."""
    registry = ctx.registry
    stack = [value]
    budget = _WITHIN_BUDGET
    while stack and budget > 0:
        node = stack.pop()
        budget -= 1
        if isinstance(node, Mapping):
            for name, child in node.items():
                if isinstance(name, str) and registry.is_accelerator(name):
                    return name
                if isinstance(child, (Mapping, list)):
                    stack.append(child)
        elif isinstance(node, list):
            stack.extend(item for item in node if isinstance(item, (Mapping, list)))
    return None


def _lost(kind: str, field: str) -> str:
    lost = _LOST.get(("Container" if kind == "EphemeralContainer" else kind, field))
    return f", so {lost}" if lost else ""


def _resource_name(key: str, ctx: RuleContext) -> bool:
    registry = ctx.registry
    return bool(
        registry.may_be_accelerator(key)
        or (re.match(_NATIVE_RESOURCE, key) and key not in ("pods", "storage"))
    )
