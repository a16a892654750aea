"""Quota or limit range that cannot work for a GPU resource.

## What it does
Checks ResourceQuota and LimitRange objects for the extended-resource mistakes Kubernetes
does not warn about:

- a ResourceQuota `spec.hard` item `limits.nvidia.com/gpu`, or a bare `nvidia.com/gpu`, for a
  GPU or accelerator resource (warning): only the `requests.` form is ever enforced;
- a LimitRange item whose `default` and `defaultRequest` differ for an extended resource
  (error): the API server rejects the LimitRange;
- a LimitRange item with a `defaultRequest` but no `default` for an extended resource
  (error): every container that does not set its own limit is then rejected.

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
```

## Fix safety
Unsafe: renames a ResourceQuota's `limits.<resource>` (or unprefixed) item to
`requests.<resource>`, or deletes it when that item exists: the quota starts being enforced,
so pods the namespace admitted before may be refused. LimitRange findings have no fix.

## Options
None. The quota case is a warning and the LimitRange cases errors; a severity configured for
GPU031 applies to all of them.

## References
- kubernetes `pkg/quota/v1/evaluator/core/pods.go` (`isExtendedResourceNameForQuota`,
  `MatchingResources`), `pkg/controller/resourcequota/resource_quota_controller.go`
  (`syncResourceQuota` records usage only for matched resources)
- kubernetes `pkg/apis/core/validation/validation.go` (`ValidateResourceQuotaResourceName`,
  `ValidateLimitRange`)
- https://kubernetes.io/docs/concepts/policy/resource-quotas/#resource-quota-for-extended-resources
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    DeleteKey,
    K8sObject,
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
    if obj.group != "":
        return
    spec = obj.data.get("spec")
    if not isinstance(spec, dict):
        return
    if obj.kind == "ResourceQuota":
        yield from _quota(obj, spec, ctx)
    elif obj.kind == "LimitRange":
        yield from _limit_range(obj, spec)


def _is_gpu(name: str, ctx: RuleContext) -> bool:
    registry = ctx.registry
    return is_extended_resource(name) and (
        registry.is_accelerator(name) or registry.looks_like_accelerator(name)
    )


def _quota(obj: K8sObject, spec: dict[str, Any], ctx: RuleContext) -> Iterator[Violation]:
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
        path = (*obj.path, "spec", "hard", key)
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


def _limit_range(obj: K8sObject, spec: dict[str, Any]) -> Iterator[Violation]:
    limits = spec.get("limits")
    if not isinstance(limits, list):
        return
    for i, item in enumerate(limits):
        if not isinstance(item, dict) or item.get("type") == "Pod":
            continue
        default = item.get("default")
        default = default if isinstance(default, dict) else {}
        requests = item.get("defaultRequest")
        requests = requests if isinstance(requests, dict) else {}
        base = (*obj.path, "spec", "limits", i)
        for name, raw in requests.items():
            if not isinstance(name, str) or not is_extended_resource(name):
                continue
            request = amount(raw).value
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
                continue
            yield Violation(
                (*base, "defaultRequest", name),
                f"default {name} {format_amount(limit)} and defaultRequest "
                f"{format_amount(request)} differ: the API server rejects the LimitRange; "
                "keep only default (extended resources cannot be overcommitted)",
            )
