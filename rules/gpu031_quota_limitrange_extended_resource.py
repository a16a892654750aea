"""Quota or limit range that cannot work for a GPU resource.

## What it does
Checks ResourceQuota, LimitRange and Kueue ClusterQueue and Cohort objects for the
extended-resource mistakes Kubernetes does not warn about:

- a ResourceQuota `spec.hard` item `limits.nvidia.com/gpu`, or a bare `nvidia.com/gpu`, for a
  GPU or accelerator resource (warning): only the `requests.` form is ever enforced; the
  same in a Kubeflow `Profile`'s `spec.resourceQuotaSpec`, the quota of its namespace;
- a LimitRange item whose `default` and `defaultRequest` differ for an extended resource
  (error): the API server rejects the LimitRange;
- a LimitRange item with a `defaultRequest` but no `default` for an extended resource
  (error): every container that does not set its own limit is then rejected;
- a LimitRange Container item whose `default` gives a GPU or accelerator resource (an amount
  above 0) to every container of the namespace that does not set its own (info: certain for
  those containers, a mistake only if the namespace runs containers that need no GPU, which
  gpulint cannot see from the object; the finding says so), and one whose `max` does with no
  `default` for it: the API server makes a Container item's `max` its `default` where none
  is written (`SetDefaults_LimitRangeItem`), so a cap alone hands the resource out (at the
  `max` value; a `defaultRequest` is compared with it as with a written `default`);
- a Kueue `ClusterQueue` or `Cohort` flavor whose `resources` name a resource twice, do not
  list as many resources as the group's `coveredResources`, or list them in another order
  (error): the API server rejects the object;
- a `borrowingLimit` or `lendingLimit` in a ClusterQueue that belongs to no cohort (`cohort`,
  v1beta2 `cohortName`), or a Cohort with no parent (error): Kueue rejects it, there is
  nothing to borrow from or lend to;
- a ClusterQueue's cohort (or a Cohort's parent) written as a mapping or a list (a cohort's
  quotas inline, `cohort: {minQuota: ..., borrowingLimit: ...}`) where the schema takes its
  name, a string (`CohortReference`): the API server rejects the object (error).

## Why it matters
The quota's pod evaluator only tracks an extended resource through the `requests.` prefix
(`isExtendedResourceNameForQuota` in `pkg/quota/v1/evaluator/core/pods.go`: "only quota
objects in format of requests.resourceName is allowed"). Validation accepts
`limits.nvidia.com/gpu` (`ValidateResourceQuotaResourceName` only checks names without a
`/`), but no evaluator matches it: admission never checks pods against it, and the quota
controller never records usage for it. The namespace looks capped and is not.

For LimitRange, `ValidateLimitRange` rejects non-overcommittable resources whose default and
default request differ: `spec.limits[0].defaultRequest[nvidia.com/gpu]: Invalid value: "1":
default value 2 must equal to defaultRequest value 1 in nvidia.com/gpu`. With only a
`defaultRequest`, the LimitRanger admission plugin gives every container without its own
value a GPU request and no limit, and pod validation then rejects it (`Limit must be set for
non overcommitable resources`).
A valid `default` is applied just as surely: the LimitRanger gives the GPU to every
container without its own value, so a CPU gateway, an init container or an injected sidecar
of that namespace asks for a GPU too (a pod of two such containers asks for two) and waits
for a GPU node. A `max` alone does the same: the API server writes a Container item's `max`
into its `default` where none is given, so a cap of one GPU a container becomes one GPU for
every container that asks for none.

Kueue's CRD keys a flavor's `resources` by name (`+listType=map`, `+listMapKey=name` on
`FlavorQuotas.Resources`) and requires `size(x.resources) == size(self.coveredResources)` for
every flavor of a resource group (`flavors must have the same number of resources as the
coveredResources`): the API server refuses the ClusterQueue, so no workload is admitted
through it. Its webhook compares each flavor's resources with `coveredResources` one by one
(`validateFlavorQuotas`: "must match the name in coveredResources"), and the CRD's rule
refuses a limit with no cohort ("borrowingLimit must be nil when cohort is empty"; the
webhook says the same of `lendingLimit`).

## Example
```yaml
kind: ResourceQuota
spec:
  hard:
    limits.nvidia.com/gpu: 4      # GPU031 (warning): never enforced
---
kind: LimitRange
spec:
  limits:
  - type: Container
    default: {nvidia.com/gpu: 1}
    defaultRequest: {nvidia.com/gpu: 0}   # GPU031 (error): rejected
---
kind: ClusterQueue
spec:
  resourceGroups:
  - coveredResources: ["cpu", "nvidia.com/gpu"]
    flavors:
    - name: a100
      resources:
      - {name: cpu, nominalQuota: 96}
      - {name: nvidia.com/gpu, nominalQuota: 8}
      - {name: nvidia.com/gpu, nominalQuota: 8}   # GPU031 (error): rejected
```

## Use instead
```yaml
kind: ResourceQuota
spec:
  hard:
    requests.nvidia.com/gpu: 4
---
kind: LimitRange
spec:
  limits:
  - type: Container
    max: {nvidia.com/gpu: 2}
    default: {nvidia.com/gpu: 0}   # else max is the default
```

## Fix safety
Unsafe: renames a ResourceQuota's `limits.<resource>` (or unprefixed) item to
`requests.<resource>`, or deletes it when that item exists: the quota starts being enforced,
so pods the namespace admitted before may be refused. LimitRange findings have no fix.

## Options
None. The quota case is a warning, the LimitRange and Kueue cases the API server rejects
errors, and a LimitRange default that hands out GPUs info; a severity configured for GPU031
applies to all of them.

## References
- kubernetes `pkg/quota/v1/evaluator/core/pods.go` (`isExtendedResourceNameForQuota`,
  `MatchingResources`), `pkg/controller/resourcequota/resource_quota_controller.go`
  (`syncResourceQuota` records usage only for matched resources)
- kubernetes `pkg/apis/core/validation/validation.go` (`ValidateResourceQuotaResourceName`,
  `ValidateLimitRange`)
- https://kubernetes.io/docs/concepts/policy/resource-quotas/#resource-quota-for-extended-resources
- kubernetes `plugin/pkg/admission/limitranger/admission.go`
  (`defaultContainerResourceRequirements`)
- kubernetes `pkg/apis/core/v1/defaults.go` (`SetDefaults_LimitRangeItem`: a Container
  item's `max` is its `default` where none is given, its `default` its `defaultRequest`);
  https://kubernetes.io/docs/tasks/administer-cluster/manage-resources/cpu-constraint-namespace/
  ("even though you didn't specify default values in the configuration file for the
  LimitRange, they were created automatically")
- kubernetes-sigs/kueue `apis/kueue/v1beta1/clusterqueue_types.go` (`ResourceGroup`'s and
  `ClusterQueueSpec`'s XValidation rules, `FlavorQuotas.Resources`),
  `pkg/webhooks/clusterqueue_webhook.go` (`validateFlavorQuotas`)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    DeleteKey,
    K8sObject,
    Path,
    RenameKey,
    Repair,
    RuleContext,
    Severity,
    Violation,
    amount,
    format_amount,
    is_extended_resource,
)

CODE = "GPU031"
NAME = "extended-resource-quota-or-limitrange"
SEVERITY = "error"
SCOPE = "object"
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, object] = {}


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.group == "kueue.x-k8s.io" and obj.kind in ("ClusterQueue", "Cohort"):
        spec = obj.data.get("spec")
        if isinstance(spec, dict):
            yield from _kueue_quota(obj, spec)
        return
    if obj.group == "kubeflow.org" and obj.kind == "Profile":
        # A Kubeflow Profile's namespace gets a ResourceQuota of its resourceQuotaSpec.
        spec = obj.data.get("spec")
        quota = spec.get("resourceQuotaSpec") if isinstance(spec, dict) else None
        if isinstance(quota, dict):
            yield from _quota(obj, quota, ctx, ("spec", "resourceQuotaSpec"))
        return
    if obj.group != "":
        return
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return
    if obj.kind == "ResourceQuota":
        yield from _quota(obj, spec, ctx)
    elif obj.kind == "LimitRange":
        yield from _limit_range(obj, spec, ctx)


def _is_gpu(name: str, ctx: RuleContext) -> bool:
    return is_extended_resource(name) and ctx.registry.may_be_accelerator(name)


def _quota(
    obj: K8sObject, spec: dict[str, Any], ctx: RuleContext, at: Path = ("spec",)
) -> Iterator[Violation]:
    hard = spec.get("hard")
    if not isinstance(hard, dict):
        return
    for key in hard:
        if not isinstance(key, str):
            continue
        if key.startswith("limits.") and _is_gpu(key[len("limits.") :], ctx):
            resource = key[len("limits.") :]
            what = f"{key} is never enforced: quotas track an extended resource only as"
        elif _is_gpu(key, ctx):
            resource = key
            what = (
                f"{key} without the requests. prefix is never enforced: quotas track an "
                "extended resource only as"
            )
        else:
            continue
        fixed = f"requests.{resource}"
        path = (*obj.path, *at, "hard", key)
        if fixed in hard:
            advice = f"delete it, {fixed} already caps the namespace"
            fix = Repair(f"delete {key}", (DeleteKey(path, prune=0),), "unsafe")
        else:
            advice = f"write {fixed} (for GPUs the request always equals the limit)"
            fix = Repair(f"rename {key} to {fixed}", (RenameKey(path, fixed),), "unsafe")
        yield Violation(
            path,
            f"{what} {fixed}; the API server accepts this item, but admission never checks "
            f"pods against it and the quota never records usage for it; {advice}",
            severity=Severity.WARNING,
            fix=fix,
        )


def _kueue_quota(obj: K8sObject, spec: dict[str, Any]) -> Iterator[Violation]:
    # A ClusterQueue's cohort (v1beta1 `cohort`, v1beta2 `cohortName`), a Cohort's parent.
    keys = ("cohort", "cohortName") if obj.kind == "ClusterQueue" else ("parent", "parentName")
    yield from _named_cohort(obj, spec, keys)
    groups = spec.get("resourceGroups")
    if not isinstance(groups, list):
        return
    parented = any(spec.get(k) not in (None, "") for k in keys)
    for g, group in enumerate(groups):
        if not isinstance(group, dict):
            continue
        covered = group.get("coveredResources")
        flavors = group.get("flavors")
        if not isinstance(flavors, list):
            continue
        for f, flavor in enumerate(flavors):
            if not isinstance(flavor, dict) or not isinstance(flavor.get("resources"), list):
                continue
            resources = flavor["resources"]
            base = (*obj.path, "spec", "resourceGroups", g, "flavors", f, "resources")
            given = flavor.get("name")
            flavor_name = given if isinstance(given, str) else f"#{f}"
            seen: set[str] = set()
            duplicated = False
            for r, item in enumerate(resources):
                name = item.get("name") if isinstance(item, dict) else None
                if not isinstance(name, str):
                    continue
                if name in seen:
                    duplicated = True
                    yield Violation(
                        (*base, r, "name"),
                        f"flavor {flavor_name} lists {name} twice: the API server rejects the "
                        f"{obj.kind} (its CRD keys a flavor's resources by name)",
                        help="keep one entry per resource, in the order of coveredResources",
                    )
                seen.add(name)
            if not duplicated and isinstance(covered, list) and len(resources) != len(covered):
                yield Violation(
                    base,
                    f"flavor {flavor_name} has {len(resources)} resources for "
                    f"{len(covered)} coveredResources: the API server rejects the {obj.kind}",
                    help="list each covered resource once in every flavor (Kueue's CRD "
                    "requires as many resources as coveredResources)",
                )
            elif not duplicated and isinstance(covered, list):
                yield from _out_of_order(obj, resources, covered, base, flavor_name)
            if not parented:
                yield from _limits_without_cohort(obj, resources, base, flavor_name)


def _out_of_order(
    obj: K8sObject, resources: list[Any], covered: list[Any], base: Path, flavor: str
) -> Iterator[Violation]:
    """The first resource of a flavor whose name is not the covered resource at its place:
    Kueue's webhook compares them one by one (``validateFlavorQuotas``)."""
    for r, (item, name) in enumerate(zip(resources, covered, strict=True)):
        given = item.get("name") if isinstance(item, dict) else None
        if isinstance(given, str) and isinstance(name, str) and given != name:
            yield Violation(
                (*base, r, "name"),
                f"flavor {flavor} lists {given} where coveredResources has {name}: Kueue "
                f"rejects the {obj.kind} (each name must match coveredResources in order)",
                help="list the flavor's resources in the order of coveredResources",
            )
            return


def _named_cohort(
    obj: K8sObject, spec: dict[str, Any], keys: tuple[str, str]
) -> Iterator[Violation]:
    """A cohort (or parent) written as a mapping or a list: the schema takes its name, a
    string (``CohortReference``), and refuses the object. Not a template's action that YAML
    read as a flow mapping (``{{ .Values.cohort }}``)."""
    for key in keys:
        value = spec.get(key)
        if not isinstance(value, (dict, list)):
            continue
        if isinstance(value, dict) and any(
            not isinstance(k, str) or k.startswith((".", "$")) for k in value
        ):
            continue
        shape = "list" if isinstance(value, list) else "mapping"
        yield Violation(
            (*obj.path, "spec", key),
            f"spec.{key} is a cohort's name, a string, not a {shape}: the API server rejects "
            f"the {obj.kind}",
            help=f"write the name ({key}: my-cohort); quotas to borrow or lend belong in each "
            "flavor's resources (borrowingLimit, lendingLimit) or in a Cohort object",
            at="key",
        )


def _limits_without_cohort(
    obj: K8sObject, resources: list[Any], base: Path, flavor: str
) -> Iterator[Violation]:
    """A ``borrowingLimit`` or ``lendingLimit`` of a ClusterQueue in no cohort (a Cohort with
    no parent): Kueue refuses it (the CRD's rule and the webhook: "must be nil when cohort
    is empty")."""
    above = "cohort" if obj.kind == "ClusterQueue" else "parent cohort"
    for r, item in enumerate(resources):
        if not isinstance(item, dict):
            continue
        for key in ("borrowingLimit", "lendingLimit"):
            if key in item and item[key] is not None:
                yield Violation(
                    (*base, r, key),
                    f"flavor {flavor} sets a {key} but the {obj.kind} has no {above}: Kueue "
                    f"rejects it ({key} must be nil when cohort is empty)",
                    help=f"delete the {key}, or name the {above} it borrows from or lends to",
                )


def _limit_range(obj: K8sObject, spec: dict[str, Any], ctx: RuleContext) -> Iterator[Violation]:
    limits = spec.get("limits")
    if not isinstance(limits, list):
        return
    for i, item in enumerate(limits):
        if not isinstance(item, dict) or item.get("type") == "Pod":
            continue
        written = item.get("default")
        written = written if isinstance(written, dict) else {}
        requests = item.get("defaultRequest")
        requests = requests if isinstance(requests, dict) else {}
        base = (*obj.path, "spec", "limits", i)
        # A Container item's max is its default where none is written
        # (SetDefaults_LimitRangeItem), so a cap alone also hands the resource out.
        maximum = item.get("max") if item.get("type") in (None, "Container") else None
        from_max = {
            name: raw
            for name, raw in (maximum.items() if isinstance(maximum, dict) else ())
            if isinstance(name, str) and name not in written
        }
        default = {**from_max, **written}
        rejected: set[str] = set()
        for name, raw in requests.items():
            if not isinstance(name, str) or not is_extended_resource(name):
                continue
            request = amount(raw).value
            rejected.add(name)
            if name not in default:
                yield Violation(
                    (*base, "defaultRequest", name),
                    f"defaultRequest sets {name} without a default: the API server rejects the "
                    "pods it is given to (a request and no limit); set "
                    f"default.{name} instead (it also sets the request)",
                )
                continue
            limit = amount(default[name]).value
            if request is None or limit is None or request == limit:
                rejected.discard(name)
                continue
            which = "max (the default where none is written)" if name in from_max else "default"
            yield Violation(
                (*base, "defaultRequest", name),
                f"{which} {name} {format_amount(limit)} and defaultRequest "
                f"{format_amount(request)} differ: the API server rejects the LimitRange; "
                "keep only default (extended resources cannot be overcommitted)",
            )
        if item.get("type") not in (None, "Container"):
            continue
        namespace = (
            obj.data.get("metadata", {}).get("namespace")
            if isinstance(obj.data.get("metadata"), dict)
            else None
        )
        where = f"namespace {namespace}" if isinstance(namespace, str) else "its namespace"
        for name, raw in default.items():
            if not isinstance(name, str) or name in rejected or not _is_gpu(name, ctx):
                continue
            given = amount(raw).value
            if given is None or given <= 0:
                continue
            if name in from_max:
                yield Violation(
                    (*base, "max", name),
                    f"max {name} with no default is the default: {format_amount(given)} to "
                    f"every container of {where} without its own, CPU containers too",
                    help=f"this assumes {where} runs containers that need no accelerator; add "
                    f"default {{{name}: 0}} beside max to cap without handing it out",
                    severity=Severity.INFO,
                )
                continue
            yield Violation(
                (*base, "default", name),
                f"default gives {format_amount(given)} {name} to every container of {where} "
                "without its own, CPU containers and sidecars too",
                help=f"this assumes {where} runs containers that need no accelerator; set "
                f"{name} in the GPU containers' own resources, and its default here to 0 "
                "(max alone is the default where none is written)",
                severity=Severity.INFO,
            )
