"""Accelerator resource name outside a pod spec that no device plugin advertises.

## What it does
Checks the accelerator resource names written in objects that are no pods, against the same
device registry and with the same verdicts as GPU010 checks a container's:

- OpenShift AI `AcceleratorProfile` `spec.identifier` and `HardwareProfile`
  `spec.identifiers[].identifier` (not those of `resourceType` CPU or Memory);
- the `opendatahub.io/recommended-accelerators` annotation (a JSON list of names) of a
  ServingRuntime, a workbench ImageStream or any other object;

and the same objects inside an OpenShift `Template`'s `objects` (OpenShift AI ships its
serving runtimes as Templates of a ServingRuntime).
- Kueue `ClusterQueue` and `Cohort` `spec.resourceGroups[].coveredResources` (and a flavor's
  `resources[].name` the covered resources do not list);
- `ResourceQuota` `spec.hard` keys (`requests.`, `limits.` or bare) and OpenShift
  `ClusterResourceQuota` `spec.quota.hard`;
- `LimitRange` `spec.limits[]` `default`, `defaultRequest`, `min`, `max` and
  `maxLimitRequestRatio` keys (Container and Pod items);
- Karpenter `NodeOverlay` `spec.capacity` keys.

What counts as certain is GPU010's: a name that is a likely slip for a registered one (a
typo, a plural, wrong case, a misspelt vendor domain such as `intel.com/flex` for
`gpu.intel.com`) or a legacy name is no node's, and the rule suggests the closest real
name; any other name of a known vendor domain (`nvidia.com/a100`, another model or size of
a registered name, a MIG profile no GPU in the registry offers) is **info**: the registry
may be behind the device plugin, and the message gives the `devices:` line that declares
it; a name of an unknown vendor is no finding. A profile's identifier and the annotation say the
name is an accelerator's, so there any name with a domain is judged; elsewhere only names
that look like an accelerator's, as in GPU010.

A Kueue queue's resources are judged only when they are certain slips of a name with a
domain: Kueue's resource transformations (`nvidia.com/total-gpumem` computed from HAMi's
`nvidia.com/gpumem`, KEP-2937) and DRA device class mappings (`gpu.memory`) name quota
resources of their own that no device plugin advertises.

How bad a certain slip is depends on the place:

- **error** where pods that use the object can never run: a profile's identifier (every
  workbench or model server created with the profile asks for it and stays `Pending`), a
  ClusterQueue's or Cohort's resource (no quota for the real name: Kueue never admits a
  workload that asks for it through the queue), a LimitRange key of any section (a
  Container item's `max` and `min` default its `default` and `defaultRequest`, so every
  container that does not set the name gets it; `maxLimitRequestRatio`, and a Pod item,
  reject every container or pod that does not ask for it);
- **warning** where the name only does nothing: the annotation (the dashboard recommends
  the runtime for no real accelerator), a quota key (the namespace's accelerators are not capped),
  a NodeOverlay's capacity (Karpenter
  plans capacity no pod asks for; pods asking for the real name get none of it).

## Why it matters
Nothing in the API checks these names against what nodes advertise. An accelerator
profile's identifier is copied into the resources of every pod the dashboard creates with
it: a misspelt one leaves each workbench `Pending` with `Insufficient habana.ai/gaudi2`,
long after the profile was written. A queue, a quota or an overlay of a misspelt name looks
configured and governs nothing.

## Example
```yaml
apiVersion: dashboard.opendatahub.io/v1
kind: AcceleratorProfile
metadata:
  name: gaudi2
spec:
  displayName: Intel Gaudi 2
  enabled: true
  identifier: habana.ai/gaudi2   # GPU018: did you mean habana.ai/gaudi?
```

## Use instead
```yaml
spec:
  identifier: habana.ai/gaudi
```

## Fix safety
Unsafe: renames a quota's, LimitRange's or NodeOverlay's key to the one real name it is a
misspelling of (its `requests.` or `limits.` prefix kept); what the object governs then
changes. Names written as values (identifiers, covered resources, the annotation) have no
fix.

## Options
None. Add private or new device resources to the registry in configuration
(`devices: [{name: example.com/fpga}]`), as for GPU010.

## References
- opendatahub-io/odh-dashboard `packages/k8s-core/src/k8sTypes.ts` (`AcceleratorProfileKind`:
  `spec.identifier`), `frontend/src/pages/projects/screens/spawner/spawnerUtils.ts`
  (`getCompatibleIdentifiers`: the annotation, a JSON list)
- opendatahub-io/opendatahub-operator `api/infrastructure/v1/hardwareprofile_types.go`
  (`HardwareIdentifier`: `identifier`, `resourceType`)
- kubernetes-sigs/kueue `apis/kueue/v1beta2/clusterqueue_types.go` (`ResourceGroup`:
  `coveredResources`, `flavors[].resources[].name`);
  `keps/2937-resource-transformer/README.md`, `site/content/en/docs/tasks/run/using_hami.md`
  (transformation outputs as queue resources)
- kubernetes-sigs/karpenter `pkg/apis/v1alpha1/nodeoverlay.go` (`NodeOverlaySpec.Capacity`)
- kubernetes `pkg/apis/core/v1/defaults.go` (`SetDefaults_LimitRangeItem`),
  `plugin/pkg/admission/limitranger/admission.go` (`minConstraint`, `maxConstraint`,
  `limitRequestRatioConstraint`)
- `gpulint/data/devices.json` (the registry); GPU010 for the same names in pod specs
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from gpulint.api import (
    K8sObject,
    RenameKey,
    Repair,
    RuleContext,
    Severity,
    Verdict,
    Violation,
    judge_resource_name,
)

CODE = "GPU018"
NAME = "unknown-accelerator-name-in-object"
SEVERITY = "error"
SCOPE = "object"
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, object] = {}

ANNOTATION = "opendatahub.io/recommended-accelerators"
_PROFILE_GROUPS = ("dashboard.opendatahub.io", "infrastructure.opendatahub.io")
_PROFILE = "every workbench or model server created with this profile asks for it and stays Pending"
_QUEUE = (
    "the queue's quota for it serves no pod, and a workload that asks for the real name finds "
    "no quota for it here and is never admitted"
)
_QUOTA = "the quota caps a resource no pod asks for, so the namespace's accelerators are not capped"
_OVERLAY = (
    "Karpenter plans nodes with capacity of a resource no pod asks for, and pods that ask for "
    "the real name get none of this overlay's capacity"
)
#: What a LimitRange item does with a resource name, by its type: a Container item's `max`
#: defaults its `default`, that and `min` its `defaultRequest` (``SetDefaults_LimitRangeItem``),
#: so the LimitRanger gives the name to every container that does not set it; the other
#: constraints reject every container or pod that does not ask for it.
_CONTAINER_DEFAULTS = (
    "the LimitRanger gives it to every container of the namespace that does not set it "
    "(the LimitRange's {section} becomes its default), and those pods stay Pending"
)
_REJECTS = "the API server rejects every {what} of the namespace that does not ask for it"
_LIMIT_SECTIONS = ("default", "defaultRequest", "min", "max", "maxLimitRequestRatio")


class _Object(NamedTuple):
    """An object to read: a document's, or one of an OpenShift Template's ``objects``."""

    data: dict[str, Any]
    path: tuple[Any, ...]
    group: str
    kind: str


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    yield from _check(_Object(obj.data, tuple(obj.path), obj.group, obj.kind), ctx)


def _check(obj: _Object, ctx: RuleContext) -> Iterator[Violation]:
    spec = obj.data.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    yield from _annotation(obj, ctx)
    group, kind = obj.group, obj.kind
    if group in _PROFILE_GROUPS and kind == "AcceleratorProfile":
        yield from _profile(obj, ctx)
    elif group in _PROFILE_GROUPS and kind == "HardwareProfile":
        yield from _hardware_profile(obj, spec, ctx)
    elif group == "kueue.x-k8s.io" and kind in ("ClusterQueue", "Cohort"):
        yield from _queue(obj, spec, ctx)
    elif group == "" and kind == "ResourceQuota":
        yield from _hard(obj, spec.get("hard"), ("spec", "hard"), ctx)
    elif group == "quota.openshift.io" and kind == "ClusterResourceQuota":
        quota = spec.get("quota")
        hard = quota.get("hard") if isinstance(quota, dict) else None
        yield from _hard(obj, hard, ("spec", "quota", "hard"), ctx)
    elif group == "" and kind == "LimitRange":
        yield from _limit_range(obj, spec, ctx)
    elif group == "karpenter.sh" and kind == "NodeOverlay":
        yield from _overlay(obj, spec, ctx)
    elif group in ("template.openshift.io", "") and kind == "Template":
        # OpenShift AI ships its serving runtimes as Templates of a ServingRuntime.
        objects = obj.data.get("objects")
        for i, item in enumerate(objects if isinstance(objects, list) else ()):
            version = item.get("apiVersion") if isinstance(item, dict) else None
            inner = item.get("kind") if isinstance(item, dict) else None
            if isinstance(item, dict) and isinstance(version, str) and isinstance(inner, str):
                inner_group = version.rpartition("/")[0]
                yield from _check(_Object(item, (*obj.path, "objects", i), inner_group, inner), ctx)


def _verdict(name: Any, ctx: RuleContext, declared: bool = False) -> Verdict | None:
    if not isinstance(name, str) or not name or any(c in name for c in " {}$"):
        return None  # a template placeholder is not a name
    return judge_resource_name(name, ctx.registry, ctx.claims, declared)


def _violation(
    path: tuple[Any, ...],
    name: str,
    verdict: Verdict,
    consequence: str,
    blocking: bool,
    at: str = "value",
    fix: Repair | None = None,
) -> Violation:
    if not verdict.certain:
        return Violation(path, verdict.text, at=at, severity=Severity.INFO)
    lead = f"{name} is not a resource any GPU device plugin advertises"
    if verdict.kind == "legacy":
        lead = f"{name} is no longer advertised by any node"
    elif verdict.kind in ("unadvertised", "unconfigured"):
        lead = f"{name} is not advertised by the project's device plugin ({verdict.said})"
        blocking = blocking and verdict.kind == "unadvertised"
    return Violation(
        path,
        lead,
        help=f"{verdict.text} ({consequence})",
        at=at,
        severity=None if blocking else Severity.WARNING,
        fix=fix,
        related=verdict.evidence(),
    )


def _annotation(obj: _Object, ctx: RuleContext) -> Iterator[Violation]:
    metadata = obj.data.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    text = annotations.get(ANNOTATION) if isinstance(annotations, dict) else None
    if not isinstance(text, str):
        return
    try:
        names = json.loads(text)
    except ValueError:
        return  # the dashboard reads invalid JSON as no recommendation
    if not isinstance(names, list):
        return
    path = (*obj.path, "metadata", "annotations", ANNOTATION)
    for name in names:
        verdict = _verdict(name, ctx, declared=True)
        if verdict is None:
            continue
        consequence = (
            f"the dashboard matches it to no accelerator profile of a real name, so it never "
            f"recommends this {obj.kind} for one"
        )
        yield _violation(path, name, verdict, consequence, blocking=False)


def _profile(obj: _Object, ctx: RuleContext) -> Iterator[Violation]:
    spec = obj.data.get("spec")
    name = spec.get("identifier") if isinstance(spec, dict) else None
    verdict = _verdict(name, ctx, declared=True)
    if verdict is not None and isinstance(name, str):
        yield _violation((*obj.path, "spec", "identifier"), name, verdict, _PROFILE, True)


def _hardware_profile(obj: _Object, spec: dict[str, Any], ctx: RuleContext) -> Iterator[Violation]:
    identifiers = spec.get("identifiers")
    for i, row in enumerate(identifiers if isinstance(identifiers, list) else ()):
        if not isinstance(row, dict) or row.get("resourceType") in ("CPU", "Memory"):
            continue
        name = row.get("identifier")
        verdict = _verdict(name, ctx, declared=row.get("resourceType") == "Accelerator")
        if verdict is not None and isinstance(name, str):
            path = (*obj.path, "spec", "identifiers", i, "identifier")
            yield _violation(path, name, verdict, _PROFILE, True)


def _queue_verdict(name: Any, ctx: RuleContext) -> Verdict | None:
    """Only a certain slip with a domain: Kueue's resource transformations and DRA device
    class mappings give quota names of their own (``nvidia.com/total-gpumem``, ``gpu``,
    ``gpu.memory``) that no device plugin advertises and no pod asks for."""
    verdict = _verdict(name, ctx)
    if verdict is None or not verdict.certain or "/" not in str(name):
        return None
    return verdict


def _queue(obj: _Object, spec: dict[str, Any], ctx: RuleContext) -> Iterator[Violation]:
    groups = spec.get("resourceGroups")
    for g, group in enumerate(groups if isinstance(groups, list) else ()):
        if not isinstance(group, dict):
            continue
        base = (*obj.path, "spec", "resourceGroups", g)
        covered = group.get("coveredResources")
        covered = covered if isinstance(covered, list) else []
        for c, name in enumerate(covered):
            verdict = _queue_verdict(name, ctx)
            if verdict is not None:
                yield _violation((*base, "coveredResources", c), name, verdict, _QUEUE, True)
        flavors = group.get("flavors")
        for f, flavor in enumerate(flavors if isinstance(flavors, list) else ()):
            resources = flavor.get("resources") if isinstance(flavor, dict) else None
            for r, row in enumerate(resources if isinstance(resources, list) else ()):
                name = row.get("name") if isinstance(row, dict) else None
                if name in covered:
                    continue  # reported where it is covered
                verdict = _queue_verdict(name, ctx)
                if verdict is not None and isinstance(name, str):
                    path = (*base, "flavors", f, "resources", r, "name")
                    yield _violation(path, name, verdict, _QUEUE, True)


def _rename(
    path: tuple[Any, ...], key: str, to: str | None, section: dict[str, Any]
) -> Repair | None:
    if to is None or to in section or "/" not in to:
        return None
    return Repair(f"rename {key} to {to}", (RenameKey(path, to),), "unsafe")


def _hard(obj: _Object, hard: Any, at: tuple[str, ...], ctx: RuleContext) -> Iterator[Violation]:
    if not isinstance(hard, dict):
        return
    for key in hard:
        if not isinstance(key, str):
            continue
        prefix = next((p for p in ("requests.", "limits.") if key.startswith(p)), "")
        name = key[len(prefix) :]
        verdict = _verdict(name, ctx)
        if verdict is None:
            continue
        path = (*obj.path, *at, key)
        to = f"{prefix}{verdict.to}" if verdict.to else None
        fix = _rename(path, key, to, hard)
        yield _violation(path, name, verdict, _QUOTA, False, at="key", fix=fix)


def _limit_range(obj: _Object, spec: dict[str, Any], ctx: RuleContext) -> Iterator[Violation]:
    limits = spec.get("limits")
    for i, item in enumerate(limits if isinstance(limits, list) else ()):
        if not isinstance(item, dict) or item.get("type") not in ("Container", "Pod"):
            continue  # PersistentVolumeClaim items take no accelerators
        kind = str(item["type"])
        for section in _LIMIT_SECTIONS:
            values = item.get(section)
            if not isinstance(values, dict):
                continue
            if kind == "Container" and section != "maxLimitRequestRatio":
                consequence = _CONTAINER_DEFAULTS.format(section=section)
            else:
                consequence = _REJECTS.format(what=kind.lower())
            for name in values:
                verdict = _verdict(name, ctx)
                if verdict is None or not isinstance(name, str):
                    continue
                path = (*obj.path, "spec", "limits", i, section, name)
                fix = _rename(path, name, verdict.to, values)
                yield _violation(path, name, verdict, consequence, True, at="key", fix=fix)


def _overlay(obj: _Object, spec: dict[str, Any], ctx: RuleContext) -> Iterator[Violation]:
    capacity = spec.get("capacity")
    if not isinstance(capacity, dict):
        return
    for name in capacity:
        verdict = _verdict(name, ctx)
        if verdict is None or not isinstance(name, str):
            continue
        path = (*obj.path, "spec", "capacity", name)
        fix = _rename(path, name, verdict.to, capacity)
        yield _violation(path, name, verdict, _OVERLAY, False, at="key", fix=fix)
