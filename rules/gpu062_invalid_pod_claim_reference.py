"""Pod whose DRA claims are referenced wrongly, or name a claim nothing defines.

## What it does
Checks a pod spec's `spec.resourceClaims` and its containers' `resources.claims`:

- a container's `resources.claims[].name` that names no entry of `spec.resourceClaims`
  (error: "must be one of the names in pod.spec.resourceClaims");
- a `resourceClaims` entry without a name, with a name that is not a DNS label or is used
  twice, with both `resourceClaimName` and `resourceClaimTemplateName` or with neither, or
  written in the shape before Kubernetes 1.31 (`source: {resourceClaimTemplateName: …}`):
  errors, as the API server says them;
- an entry whose ResourceClaim or ResourceClaimTemplate is in no file of the pod's project
  (its repository, or the folder whose configuration says `project: true`; docs/cluster.md
  "Projects"): it may exist in the cluster, so this is `info` saying so, unless the project
  defines one of that kind whose name is a near miss (one typo away): then a `warning` with
  the name it probably means. A claim in another file of the project is found whether or
  not the run was given that file; another project's claims are never looked at. An object
  whose operator creates a template counts as defining it: a ComputeDomain
  (`resource.nvidia.com`) defines the template named at `spec.channel.resourceClaimTemplate.name`,
  which NVIDIA's ComputeDomain controller creates in the domain's namespace
  (`gpulint.k8s.dra.TEMPLATE_CREATORS` lists such objects, each citing the operator's API
  type).

## Why it matters
The API server rejects a pod (or a Deployment's template) whose claims do not line up, and
a pod whose claim or template does not exist stays `Pending` with an event
(`resourceclaimtemplate "gpu-tmpl" not found`) few users find.

## Example
```yaml
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: single-gpu
  containers:
  - name: app
    resources:
      claims:
      - name: gpus        # GPU062: the pod's claim is named gpu
```

## Use instead
```yaml
    resources:
      claims:
      - name: gpu
```

## Options
None.

## References
- kubernetes `pkg/apis/core/validation/validation.go` (`validatePodResourceClaims`,
  `validatePodResourceClaim`, `validateResourceClaimNames`)
- kubernetes `staging/src/k8s.io/api/core/v1/types.go` (`PodResourceClaim`: the
  `source` field was replaced by `resourceClaimName` and `resourceClaimTemplateName` in 1.31)
- NVIDIA/k8s-dra-driver-gpu `api/nvidia.com/resource/v1beta1/computedomain.go`
  (`ComputeDomainResourceClaimTemplate`: "the ResourceClaimTemplate to generate") and
  `cmd/compute-domain-controller/resourceclaimtemplate.go` (the controller creates it)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, dns_label, holds_placeholder, one_typo_from

CODE = "GPU062"
NAME = "invalid-pod-claim-reference"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

_REFS = {"resourceClaimName": "ResourceClaim", "resourceClaimTemplateName": "ResourceClaimTemplate"}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod":
        return
    entries = pod.spec.get("resourceClaims")
    names: set[str] = set()
    base = (*pod.path, "resourceClaims")
    if isinstance(entries, list):
        for i, entry in enumerate(entries):
            if isinstance(entry, Mapping):
                yield from _entry(pod, entry, (*base, i), names, ctx)
    for container in pod.containers:
        resources = container.resources
        claims = resources.get("claims") if resources else None
        if not isinstance(claims, list):
            continue
        for j, claim in enumerate(claims):
            name = claim.get("name") if isinstance(claim, Mapping) else None
            if not isinstance(name, str) or not name or name in names:
                continue
            listed = ": " + ", ".join(sorted(names)) if names else " which is empty"
            close = one_typo_from(name, names)
            hint = f"; did you mean {close}?" if close else ""
            yield Violation(
                (*container.resources_path, "claims", j, "name"),
                f"the API server rejects this pod: container {container.label} claims "
                f'"{name}", which must be one of the names in pod.spec.resourceClaims'
                f"{listed}{hint}",
                at="value",
            )


def _entry(
    pod: PodSpec, entry: Mapping[str, Any], at: tuple[Any, ...], names: set[str], ctx: RuleContext
) -> Iterator[Violation]:
    rejected = "the API server rejects this pod"
    name = entry.get("name")
    if name is not None and not isinstance(name, str):
        shown = str(name).lower() if isinstance(name, bool) else str(name)
        yield Violation(
            (*at, "name"),
            f"{rejected}: the claim's name must be a string, and YAML reads this one as "
            f"{type(name).__name__} {shown}; quote it",
            at="value",
        )
    elif not name:
        yield Violation(at, f"{rejected}: resourceClaims entry without a name (Required value)")
    elif name in names:
        yield Violation((*at, "name"), f'{rejected}: Duplicate value: "{name}"', at="value")
    else:
        why = None if holds_placeholder(name) else dns_label(name)
        if why:
            yield Violation(
                (*at, "name"), f'{rejected}: Invalid value: "{name}": {why}', at="value"
            )
        names.add(name)
    if "source" in entry:
        yield _source(entry, at, ctx)
        return
    given = [k for k in _REFS if entry.get(k) not in (None, "")]
    if len(given) == 2:
        yield Violation(
            (*at, "resourceClaimTemplateName"),
            f"{rejected}: at most one of `resourceClaimName` or `resourceClaimTemplateName` "
            "may be specified",
        )
        return
    if not given:
        yield Violation(
            at,
            f"{rejected}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
        )
        return
    field = given[0]
    target = entry.get(field)
    if not isinstance(target, str) or holds_placeholder(target) or ctx.claims is None:
        return
    kind = _REFS[field]
    if ctx.claims.defines(kind, target, pod.obj.namespace):
        return
    defined = [n for n in ctx.claims.claim_names(kind) if n != target]
    close = one_typo_from(target, defined)
    if close:
        yield Violation(
            (*at, field),
            f"no {kind} named {target} is defined in this project, one typo from {close}",
            help=f"did you mean {close}? (the pod stays Pending if {target} does not exist)",
            at="value",
            severity="warning",
        )
        return
    yield Violation(
        (*at, field),
        f"{kind} {target} is not in this project: gpulint assumed it exists in the pod's "
        "namespace (a pod whose claim does not exist stays Pending); add it to a file of the "
        "project to have it checked",
        at="value",
        severity="info",
    )


def _source(entry: Mapping[str, Any], at: tuple[Any, ...], ctx: RuleContext) -> Violation:
    """The shape before Kubernetes 1.31. Every release still supported rejects it, so it is
    an error, unless the file's own DRA objects are of the alpha API it went with
    (``v1alpha2``, Kubernetes 1.30 and older): then the file targets such a cluster."""
    source = entry.get("source")
    inner = [k for k in _REFS if isinstance(source, Mapping) and k in source]
    hint = (
        f"move {inner[0]} up one level, next to name (the shape since Kubernetes 1.31)"
        if inner
        else "write resourceClaimName or resourceClaimTemplateName next to name"
    )
    message = (
        'the API server rejects this pod: strict decoding error: unknown field "source" '
        f"(replaced in Kubernetes 1.31); {hint}"
    )
    if ctx.claims is not None and "v1alpha2" in ctx.claims.versions():
        return Violation(
            (*at, "source"),
            "source: is the shape of Kubernetes 1.30 and older, which this file targets (its "
            "DRA objects are resource.k8s.io/v1alpha2); from 1.31 the API server rejects it "
            f'(unknown field "source"): {hint}',
            severity="info",
        )
    return Violation((*at, "source"), message)
