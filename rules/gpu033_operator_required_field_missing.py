"""A GPU operator's resource without a field its CustomResourceDefinition requires.

## What it does
Reports, at `spec`, a GPU Operator `ClusterPolicy` or `NVIDIADriver` (`nvidia.com`), or a
KubeRay `RayCluster`, `RayJob`, `RayService` or `RayCronJob` (`ray.io`), whose `spec` lacks a
field the kind's CustomResourceDefinition requires (`gpulint/data/operator-fields.json`, read
from every release of the operator: a `ClusterPolicy` needs `daemonsets`, `dcgm`,
`dcgmExporter`, `devicePlugin`, `driver`, `gfd`, `nodeStatusExporter`, `operator` and
`toolkit`, even when a component is disabled). Each API version has its own list (KubeRay's
`v1alpha1` RayJob requires `entrypoint`, `v1` does not), and a required field the schema
gives a default is never missing: the API server fills it in before it validates.

- **error** when every release of the operator requires the field: the API server refuses
  the object whatever version the cluster runs;
- **info** when only the releases since one of them require it (`nodeStatusExporter`, since
  the GPU Operator's v1.8.0): the message names that release, assuming the cluster's operator
  is that one or later.

An object that holds fewer than half of the fields its kind requires is taken for a patch
(`kubectl patch --patch-file`, a Kustomize patch) and left alone (so a kind that requires a
single field, such as a `v1alpha1` RayJob's `entrypoint`, is never reported), and so is a
Kustomize patch linted without `--render` (GL203).

When the project holds the kind's own CustomResourceDefinition (a chart's `crds/`, an
operator's `config/crd/bases/`), its schema is the one applied, and the table above is not
used: for the resources of an accelerator vendor's API group (`rebellions.ai`,
`nvidia.com`, `amd.com`, `deviceplugin.intel.com`: a group whose domain is one of the device
registry's), the rule reports, at each mapping, the fields that schema's `required` names
and the object lacks (at `spec`, and inside every field the object sets: a `devicePlugin`
block without its required `enabled`), always as an error: the API server applies that
schema. A required field with a `default` in the schema is filled in first and never
missing; an object whose `spec` holds at most one of the several fields it requires is taken
for a patch and left alone.

## Why it matters
A CRD's `required` is checked by the API server on every create and update, whatever field
validation the client asks for: `kubectl apply` fails with `spec.gfd: Required value`, and
the GPU Operator never sees the ClusterPolicy: no driver, no device plugin, no GPU on any
node. An OpenShift console's example or a trimmed copy of the Helm chart's ClusterPolicy
often drops the sections of the components it does not use.

## Example
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: gpu-cluster-policy
spec:                      # GPU033: no gfd, no nodeStatusExporter
  operator: {defaultRuntime: crio}
  daemonsets: {}
  dcgm: {enabled: true}
  dcgmExporter: {enabled: true}
  devicePlugin: {enabled: true}
  driver: {enabled: true}
  toolkit: {enabled: true}
```

## Use instead
```yaml
  gfd: {enabled: true}
  nodeStatusExporter: {enabled: true}
```

## Options
None.

## References
- NVIDIA/gpu-operator `config/crd/bases/nvidia.com_clusterpolicies.yaml` (the `required`
  list of `spec`; `api/nvidia/v1/clusterpolicy_types.go` marks those fields without
  `omitempty`), ray-project/kuberay `ray-operator/config/crd/bases/`
- https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import (
    K8sObject,
    RuleContext,
    Violation,
    missing_required,
    operator_fields,
    operator_releases,
    version_of,
)

CODE = "GPU033"
NAME = "operator-required-field-missing"
SEVERITY = "error"
SCOPE = "object"
WHOLE_OBJECT = True  # GL203: a Kustomize patch holds only the fields it changes
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
OPTIONS: dict[str, Any] = {}


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None:
        return
    schema = (
        ctx.crds.schema(obj.group, obj.version, obj.kind)
        if ctx.crds is not None and obj.group and obj.kind
        else None
    )
    if schema is not None:  # the project's own CRD is the schema applied
        if ctx.registry.vendor_group(obj.group):
            yield from _project_schema(obj, schema)
        return
    key = f"{obj.group}/{obj.kind}"
    versions = operator_fields()["required"].get(key) or {}
    required: Mapping[str, str] | None = versions.get(obj.version)
    spec = obj.data.get("spec")
    if not required or not isinstance(spec, Mapping):
        return
    present = [field for field in required if field in spec]
    if len(present) * 2 < len(required):
        return  # a patch, or an object a template completes
    missing = [field for field in required if field not in spec]
    if not missing:
        return
    always = [field for field in missing if required[field] == "all"]
    lately = [field for field in missing if required[field] != "all"]
    operator = operator_releases(key)[0]
    if always:
        yield Violation(
            (*obj.path, "spec"),
            f"spec lacks {_listed(always)}, which every {operator} release requires: the API "
            f"server refuses the {obj.kind}",
            help=f"add {_listed(always)}, enabled: false if unused ({always[0]}: Required value)",
            at="key",
        )
    if lately:
        since = max((required[field] for field in lately), key=version_of)
        yield Violation(
            (*obj.path, "spec"),
            f"spec lacks {_listed(lately)}, which {operator} requires since {since}: the API "
            f"server refuses the {obj.kind}",
            help=f"add {_listed(lately)} ({lately[0]}: Required value; assumed: your {operator} "
            f"is {since} or later)",
            at="key",
            severity="info",
        )


def _project_schema(obj: K8sObject, schema: Mapping[str, Any]) -> Iterator[Violation]:
    """The fields the project's CRD requires that ``obj`` lacks, each level once; nothing
    for an object whose ``spec`` holds at most one of the several fields it requires (a
    patch)."""
    spec_rule = (schema.get("properties") or {}).get("spec")
    spec = obj.data.get("spec")
    if isinstance(spec_rule, Mapping) and isinstance(spec, Mapping):
        wanted = [f for f in spec_rule.get("required") or () if isinstance(f, str)]
        present = len([f for f in wanted if f in spec])
        if present <= 1 and present * 2 < len(wanted):
            return  # a patch, or an object a template completes
    for path, fields in missing_required(obj.data, schema):
        where = ".".join(str(step) for step in path) or "the object"
        named = (
            _listed(fields)
            if len(fields) <= 3
            else f"{fields[0]}, {fields[1]} and {len(fields) - 2} more"
        )
        yield Violation(
            (*obj.path, *path),
            f"{where} lacks {named}, required by the project's CustomResourceDefinition: the "
            f"API server refuses the {obj.kind}",
            help=f"add {_listed(fields)} ({fields[0]}: Required value)",
            at="key",
        )


def _listed(fields: list[str]) -> str:
    return fields[0] if len(fields) == 1 else ", ".join(fields[:-1]) + " and " + fields[-1]
