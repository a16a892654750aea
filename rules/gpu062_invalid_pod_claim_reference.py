"""Pod whose DRA claims are referenced wrongly, or name a claim nothing defines.

## What it does
Checks a pod spec's `spec.resourceClaims` and its containers' `resources.claims`:

- a container's `resources.claims[].name` that names no entry of `spec.resourceClaims`
  (error: "must be one of the names in pod.spec.resourceClaims");
- a container's `resources.claims[].request` that names no device request of the claim or
  template the entry refers to, when the file or its project defines it (a `warning`
  naming the requests it has; `request/subrequest` is checked by its request): the
  container is given none of the claim's devices;
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
- an entry that no container lists in its `resources.claims`: the API server takes the pod
  and the scheduler allocates the device to it, but DRA gives a claim's devices only to the
  containers that name it. A `warning` when the claim (or template) of the project asks for
  an accelerator class; `info` when its classes are not known (a NIC that a DRA network
  driver moves into the pod needs no container to name it) or when the entry is in a
  chart's values (bjw-s app-template's `defaultPodOptions` or a controller's `pod`, whose
  containers below get no claim: assumed, the chart writes their resources as given);
  nothing when every class is known to hand out no accelerator (NVIDIA's IMEX channels, a
  class of the project whose selectors name a driver of another kind), or when the entry is
  reported for another reason. A project's class whose driver gpulint does not know but whose
  name says GPU, TPU, NPU or accelerator (`gpu.resource.example.com`) is not known: `info`.

## Why it matters
The API server rejects a pod (or a Deployment's template) whose claims do not line up, and
a pod whose claim or template does not exist stays `Pending` with an event
(`resourceclaimtemplate "gpu-tmpl" not found`) few users find. A claim no container names
holds a GPU that nothing uses: the application runs on the CPU, or fails to find a device.

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

from gpulint.api import (
    CHART_POD_KEYS,
    PodSpec,
    RuleContext,
    Violation,
    chart_pod_options,
    dns_label,
    entry_devices,
    holds_placeholder,
    one_typo_from,
    value_at,
)

CODE = "GPU062"
NAME = "invalid-pod-claim-reference"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

_REFS = {"resourceClaimName": "ResourceClaim", "resourceClaimTemplateName": "ResourceClaimTemplate"}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod":
        yield from _chart_unused(pod, ctx)
        return
    entries = pod.spec.get("resourceClaims")
    names: set[str] = set()
    base = (*pod.path, "resourceClaims")
    flagged: set[int] = set()  # entries already reported: not said unused as well
    if isinstance(entries, list):
        for i, entry in enumerate(entries):
            if isinstance(entry, Mapping):
                found = list(_entry(pod, entry, (*base, i), names, ctx))
                if found:
                    flagged.add(i)
                yield from found
    used: set[str] = set()
    unmatched = False
    for container in pod.containers:
        resources = container.resources
        claims = resources.get("claims") if resources else None
        if not isinstance(claims, list):
            continue
        for j, claim in enumerate(claims):
            name = claim.get("name") if isinstance(claim, Mapping) else None
            if isinstance(name, str):
                used.add(name)
            if isinstance(name, str) and name in names:
                yield from _request(pod, container, claim, (j, name), entries, ctx)
                continue
            if not isinstance(name, str) or not name:
                continue
            unmatched = True
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
    if isinstance(entries, list) and pod.containers and not unmatched:
        # (A container naming a claim the pod has not got is the slip reported above.)
        kept = [e if i not in flagged else None for i, e in enumerate(entries)]
        yield from _unused(pod, kept, base, used, ctx, chart=False)


def _request(
    pod: PodSpec,
    container: Any,
    claim: Mapping[str, Any],
    at: tuple[int, str],
    entries: Any,
    ctx: RuleContext,
) -> Iterator[Violation]:
    """A container's ``resources.claims[].request`` that names no device request of the
    claim (or template) the pod's entry refers to, when the file or its project defines it:
    the container gets no device of it, and kubelet cannot start it."""
    request = claim.get("request")
    if not isinstance(request, str) or not request or ctx.claims is None:
        return
    j, name = at
    entry = next((e for e in entries if isinstance(e, Mapping) and e.get("name") == name), None)
    found = None
    for field, kind in _REFS.items():
        target = entry.get(field) if entry is not None else None
        if isinstance(target, str) and target:
            found = ctx.claims.claim(kind, target, pod.obj.namespace)
    if found is None or not found.requests:
        return
    wanted = request.split("/", 1)[0]  # ``req/sub``: a firstAvailable alternative
    known = [r.name for r in found.requests]
    if wanted in known:
        return
    close = one_typo_from(wanted, set(known))
    hint = f"; did you mean {close}?" if close else ""
    yield Violation(
        (*container.resources_path, "claims", j, "request"),
        f"container {container.label} asks for request {request} of claim {name}, but "
        f"{found.kind} {found.name} ({found.place()}) has none of that name: "
        f"{', '.join(known)}{hint}",
        help="name one of the claim's device requests, or leave `request` out to get them all",
        at="value",
        severity="warning",
    )


def _claim_names(claims: Any) -> set[str]:
    """The names a container's ``resources.claims`` lists."""
    if not isinstance(claims, list):
        return set()
    return {c["name"] for c in claims if isinstance(c, Mapping) and isinstance(c.get("name"), str)}


def _unused(
    pod: PodSpec,
    entries: list[Any],
    base: tuple[Any, ...],
    used: set[str],
    ctx: RuleContext,
    chart: bool,
) -> Iterator[Violation]:
    """A claim of the pod that no container lists in its ``resources.claims``: the API
    server takes the pod and the device is allocated to it, but a claim's accelerators reach
    only the containers that name it. A warning for a claim of an accelerator class in a pod
    spec; info where the claim's devices are not known (a device that a DRA network driver
    moves into the pod needs no container to name it) or where a chart's values hold it
    (the chart may write the containers' claims itself). Nothing for a claim whose classes
    are all known to be no accelerator."""
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(name, str) or not name or name in used or holds_placeholder(name):
            continue
        if "source" in entry or sum(entry.get(k) not in (None, "") for k in _REFS) != 1:
            continue  # an entry the API server rejects: reported as such above
        devices = entry_devices(entry, pod.obj.namespace, ctx.registry, ctx.claims)
        if devices == "other":
            continue
        assumed = []
        if devices == "unknown":
            assumed.append(
                "its devices are accelerators, which reach only the containers naming it"
            )
        if chart:
            assumed.append("the chart gives the containers their resources as written")
        help_ = f"add `claims: [{{name: {name}}}]` to the resources of the container that uses it"
        if assumed:
            help_ += f" (assumed: {'; '.join(assumed)})"
        yield Violation(
            (*base, i, "name"),
            f"no container lists the pod's claim {name} in its resources.claims: the device "
            "is allocated to the pod, but no container gets it",
            help=help_,
            at="value",
            severity="info" if assumed else "warning",
        )


def _chart_unused(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    """In a chart's values: the ``resourceClaims`` of the pod options above the containers
    (bjw-s app-template's ``defaultPodOptions``, a controller's ``pod``) that none of the
    containers below them lists: every container the options reach (each of app-template's
    containers is a pod spec of its own here), each holder reported once an object."""
    holders: dict[tuple[Any, ...], list[Any]] = {}
    for container in pod.containers:
        options = chart_pod_options(pod, container, ("resourceClaims",))
        if "resourceClaims" not in options:
            continue
        holder, where = options["resourceClaims"]
        entries = holder.get("resourceClaims")
        if isinstance(entries, list):
            holders[where] = entries
    done = pod.obj.memo.setdefault("GPU062 chart claims", set())
    for where, entries in holders.items():
        if where in done:
            continue  # judged with the first container under it
        done.add(where)
        scope = where[:-1] if where and where[-1] in CHART_POD_KEYS else where
        used = _listed_below(pod, scope)
        yield from _unused(pod, entries, (*where, "resourceClaims"), used, ctx, chart=True)


#: How many mappings and lists below a chart's pod options are read for containers' claims.
_SCAN_BUDGET = 20_000


def _listed_below(pod: PodSpec, scope: tuple[Any, ...]) -> set[str]:
    """The claim names every ``resources.claims`` below ``scope`` (the mapping that holds
    the pod options: the values, or a controller) lists: its containers' and init
    containers' (a stack, bounded by :data:`_SCAN_BUDGET`)."""
    node = value_at(pod.obj.doc.data, scope)
    used: set[str] = set()
    stack: list[Any] = [node]
    budget = _SCAN_BUDGET
    while stack and budget > 0:
        budget -= 1
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, Mapping):
            resources = item.get("resources")
            if isinstance(resources, Mapping):
                used |= _claim_names(resources.get("claims"))
            stack.extend(v for v in item.values() if isinstance(v, (Mapping, list)))
    return used


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
