"""AppWrapper whose custompodresources account for other GPUs than the wrapped object asks.

## What it does
Checks each `spec.resources.GenericItems[*]` item of an MCAD AppWrapper
(`workload.codeflare.dev/v1beta1` or `mcad.ibm.com/v1beta1`) that has `custompodresources`.
For every accelerator resource of the device registry (`nvidia.com/gpu`, `amd.com/gpu`, ...)
it compares the GPUs the item accounts for, computed as MCAD computes them (the sum over
`custompodresources` of `replicas` x `requests`, or x `limits` when the request is absent or
0), with the GPUs the wrapped `generictemplate` object's pods ask for (each pod template's
replica count x its pod's effective request, the same arithmetic as the scheduler's).

- more accounted than asked (warning): the difference is reserved in the queue and never used;
- less accounted than asked, for `nvidia.com/gpu` (error): MCAD dispatches the AppWrapper on
  a count the cluster's free GPUs and quota were checked against, and the wrapped pods then
  ask for more;
- less accounted than asked for another accelerator resource (warning): multi-cluster-app-
  dispatcher only ever counts `nvidia.com/gpu` (the `project-codeflare/mcad` controller sums
  every name of `requests`), so where the figure admits nothing it still misstates the job.

The finding is reported at the accounting's value (`requests.<resource>`, or `limits.<resource>`
when MCAD reads the limit), or at `custompodresources` when no entry names the resource.
Nothing is reported when a replica count or an amount is a template placeholder or not a
plain number, or when a pod template's replica count is not known (a RayCluster worker group
without `replicas`, an object nested in the wrapped one, a kind gpulint has no row for).

## Why it matters
MCAD admits (dispatches) an AppWrapper by its aggregated resources, not by the pods it creates:
`GetAggregatedResources` sums `GetResources` over the generic items, and `GetResources` returns
the `custompodresources` sum as soon as the list is not empty, without looking at the wrapped
object's containers. `ScheduleNext` dispatches when that sum fits the free resources
(`aggqj.LessEqual(resources)`), and the quota manager charges the same sum against the
QuotaSubtree. Accounting for 8 GPUs while the wrapped Deployment runs 2 pods of 1 GPU holds 6
GPUs of the queue that no pod will use: other AppWrappers wait for them, or are preempted. The
other way round, accounting for 1 GPU while the wrapped job runs 4 pods of 2 GPUs gets the
AppWrapper dispatched onto a cluster (and a quota) with room for 1: the other 7 GPUs were never
checked, the pods stay Pending or take GPUs quota promised to other teams.

## Example
```yaml
apiVersion: workload.codeflare.dev/v1beta1
kind: AppWrapper
spec:
  resources:
    GenericItems:
    - custompodresources:
      - replicas: 1
        requests: {nvidia.com/gpu: 8}   # GPU044: 8 accounted, the Job's pod asks 1
      generictemplate:
        apiVersion: batch/v1
        kind: Job
        spec:
          template:
            spec:
              containers:
              - name: train
                resources:
                  limits: {nvidia.com/gpu: 1}
```

## Use instead
```yaml
    - custompodresources:
      - replicas: 1
        requests: {nvidia.com/gpu: 1}
        limits: {nvidia.com/gpu: 1}
```

## Options
None. A severity configured for GPU044 applies to every case.

## References
- project-codeflare/multi-cluster-app-dispatcher (d47de4a)
  `pkg/apis/controller/v1beta1/appwrapper.go` lines 115-140 (`CustomPodResources
  []CustomPodResourceTemplate`: `Replicas int`, `Requests`, `Limits v1.ResourceList`, no
  container)
- same, `pkg/controller/queuejobresources/genericresource/genericresource.go` lines 544-598
  (`GetResources`: the `custompodresources` sum first; `getPodResources`: "Use limit if
  request is 0", `req.GPU * int64(replicas)`)
- same, `pkg/controller/clusterstate/api/resource_info.go` lines 34 and 57-71
  (`GPUResourceName = "nvidia.com/gpu"`: the only accelerator `NewResource` counts)
- same, `pkg/controller/queuejob/queuejob_controller_ex.go` lines 631-644
  (`GetAggregatedResources`) and 1081-1194 (`ScheduleNext` dispatches when
  `aggqj.LessEqual(resources)`); `pkg/controller/quota/quotaforestmanager/
  qm_lib_backend_with_quotasubt_mgr.go` line 601 (the quota charge uses `GetResources`)
- project-codeflare/mcad (a3a0f28) `api/v1beta1/appwrapper_types.go` (`CustomPodResource`:
  `Replicas`, `Requests`, `Limits`) and `internal/controller/dispatch_logic.go`
  (`aggregateRequests`: `request.AddProd(cpr.Replicas, NewWeights(cpr.Requests))` over every
  generic item, the figure its dispatcher admits by)
- project-codeflare/appwrapper `api/v1beta2/appwrapper_types.go` (v1beta2 has no
  `custompodresources`: `podSets` give replicas and the path to each pod template, and the
  resources are read from the template; not checked by this rule)
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from gpulint.api import (
    K8sObject,
    Path,
    PodSpec,
    RuleContext,
    Severity,
    Violation,
    amount,
    format_amount,
    pod_requests,
)

CODE = "GPU044"
NAME = "appwrapper-gpu-accounting"
SEVERITY = "warning"
SCOPE = "object"

#: The API groups of MCAD's AppWrapper v1beta1 (renamed from mcad.ibm.com).
GROUPS = ("workload.codeflare.dev", "mcad.ibm.com")
#: MCAD's ``clusterstateapi.GPUResourceName``: the one accelerator its accounting counts.
MCAD_GPU = "nvidia.com/gpu"
#: Kinds whose ``spec.template`` pods are ``spec.replicas`` of them (1 when absent).
REPLICATED = frozenset({"Deployment", "StatefulSet", "ReplicaSet", "ReplicationController"})


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.kind != "AppWrapper" or obj.group not in GROUPS or ctx.workloads is None:
        return
    spec = obj.data.get("spec")
    resources = spec.get("resources") if isinstance(spec, dict) else None
    items = resources.get("GenericItems") if isinstance(resources, dict) else None
    if not isinstance(items, list):
        return
    pods: list[PodSpec] | None = None
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            continue
        accounting = item.get("custompodresources")
        template = item.get("generictemplate")
        if not isinstance(accounting, list) or not accounting or not isinstance(template, dict):
            continue
        base: Path = (*obj.path, "spec", "resources", "GenericItems", i)
        if pods is None:
            pods = ctx.pod_specs(obj)
        inner = (*base, "generictemplate")
        wrapped = [p for p in pods if p.path[: len(inner)] == inner]
        yield from _item(base, accounting, template, wrapped, ctx)


def _item(
    base: Path,
    accounting: list[Any],
    template: dict[str, Any],
    wrapped: list[PodSpec],
    ctx: RuleContext,
) -> Iterator[Violation]:
    accounted = _accounted(base, accounting, ctx)
    if accounted is None:
        return
    asked = _asked(base, template, wrapped, ctx)
    if asked is None:
        return
    kind = template.get("kind") if isinstance(template.get("kind"), str) else "object"
    for name in sorted(set(accounted) | set(asked)):
        have, where = accounted.get(name, (Decimal(0), (*base, "custompodresources")))
        want, shown = asked.get(name, (Decimal(0), "no pod asks for it"))
        if have == want:
            continue
        counted = f"{format_amount(have)} {name} accounted in custompodresources"
        asks = f"the wrapped {kind}'s pods ask for {format_amount(want)} ({shown})"
        if have > want:
            yield Violation(
                where,
                f"{counted} but {asks}",
                help=f"account for {format_amount(want)} (MCAD reserves the "
                f"{format_amount(have - want)} more in the queue and the quota, and no pod uses "
                "them)",
                at="value" if name in _named(accounting) else "key",
            )
        elif name == MCAD_GPU:
            yield Violation(
                where,
                f"{counted} but {asks}",
                help=f"account for {format_amount(want)} (MCAD dispatches by "
                f"custompodresources, so the {format_amount(want - have)} more were never "
                "checked against the free GPUs or the quota)",
                at="value" if name in _named(accounting) else "key",
                severity=Severity.ERROR,
            )
        else:
            yield Violation(
                where,
                f"{counted} but {asks}",
                help=f"account for {format_amount(want)} (the queue admits the AppWrapper by "
                f"custompodresources, so the {format_amount(want - have)} more were never "
                "checked)",
                at="value" if name in _named(accounting) else "key",
            )


def _named(accounting: list[Any]) -> set[str]:
    """The resource names some entry's requests or limits write."""
    names: set[str] = set()
    for entry in accounting:
        if isinstance(entry, dict):
            for section in ("requests", "limits"):
                lst = entry.get(section)
                if isinstance(lst, dict):
                    names.update(k for k in lst if isinstance(k, str))
    return names


def _accounted(
    base: Path, accounting: list[Any], ctx: RuleContext
) -> dict[str, tuple[Decimal, Path]] | None:
    """Accelerator name -> (GPUs accounted, where the first non-zero one is written), as
    MCAD's getPodResources computes them; None when a figure is not a plain number."""
    out: dict[str, tuple[Decimal, Path]] = {}
    for j, entry in enumerate(accounting):
        if not isinstance(entry, dict):
            return None
        replicas = entry.get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            return None
        at: Path = (*base, "custompodresources", j)
        requests = entry.get("requests")
        limits = entry.get("limits")
        requests = requests if isinstance(requests, dict) else {}
        limits = limits if isinstance(limits, dict) else {}
        for name in {*requests, *limits}:
            if not isinstance(name, str) or not ctx.registry.is_accelerator(name):
                continue
            value, path = _figure(requests, name, (*at, "requests", name))
            if value is None:
                return None
            if value <= 0 and name in limits:
                # "Use limit if request is 0"
                value, path = _figure(limits, name, (*at, "limits", name))
                if value is None:
                    return None
            if name not in requests and name not in limits:
                continue
            total = value * replicas
            before = out.get(name)
            if before is None:
                out[name] = (total, path)
            else:
                # Reported at the first entry that accounts for some.
                first = path if before[0] == 0 and total > 0 else before[1]
                out[name] = (before[0] + total, first)
    return out


def _figure(lst: dict[Any, Any], name: str, path: Path) -> tuple[Decimal | None, Path]:
    if name not in lst:
        return Decimal(0), path
    value = amount(lst[name]).value
    if value is None or value != value.to_integral_value():
        return None, path
    return value, path


def _asked(
    base: Path, template: dict[str, Any], wrapped: list[PodSpec], ctx: RuleContext
) -> dict[str, tuple[Decimal, str]] | None:
    """Accelerator name -> (GPUs the wrapped pods ask for, how), or None when a pod that
    asks for one has no known replica count or an amount that is not a number."""
    inner: Path = (*base, "generictemplate")
    totals: dict[str, list[tuple[int, Decimal]]] = {}
    for pod in wrapped:
        reqs = pod_requests(pod, ctx.registry.is_accelerator)
        if reqs.unevaluated:
            return None
        asks = {n: v for n, v in reqs.requests.items() if v > 0}
        if not asks:
            continue
        if pod.location != "pod":
            # Resources found apart from a pod spec (a RayCluster's autoscalerOptions):
            # whose pods they go to, and how many, is not known.
            return None
        count = _replicas(template, pod.path[len(inner) :])
        if count is None:
            return None
        for name, value in asks.items():
            totals.setdefault(name, []).append((count, value))
    out: dict[str, tuple[Decimal, str]] = {}
    for name, parts in totals.items():
        total = sum((Decimal(c) * v for c, v in parts), Decimal(0))
        shown = " + ".join(f"{_pods(c)} x {format_amount(v)}" for c, v in parts)
        out[name] = (total, shown)
    return out


def _pods(count: int) -> str:
    return f"{count} pod" if count == 1 else f"{count} pods"


def _int(value: Any, default: int | None) -> int | None:
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _replicas(template: dict[str, Any], rel: Path) -> int | None:
    """How many pods the pod spec at ``rel`` (inside the wrapped object) runs, when known."""
    kind = template.get("kind")
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return None
    if rel == ("spec",):
        return 1 if kind == "Pod" else None
    if len(rel) < 3 or rel[-2:] != ("template", "spec"):
        return None
    holder_path = rel[:-2]
    if holder_path == ("spec",):
        if kind in REPLICATED:
            return _int(spec.get("replicas"), 1)
        if kind == "Job":
            parallelism = _int(spec.get("parallelism"), 1)
            completions = _int(spec.get("completions"), None)
            if parallelism is None:
                return None
            if "completions" in spec and completions is None:
                return None
            return parallelism if completions is None else min(parallelism, completions)
        return _int(spec.get("replicas"), None) if "replicas" in spec else None
    holder: Any = template
    for key in holder_path:
        if isinstance(holder, dict) and isinstance(key, str):
            holder = holder.get(key)
        elif isinstance(holder, list) and isinstance(key, int) and key < len(holder):
            holder = holder[key]
        else:
            return None
    if not isinstance(holder, dict):
        return None
    parent = holder_path[-2] if len(holder_path) >= 2 else None
    if len(holder_path) == 3 and isinstance(parent, str) and parent.endswith("ReplicaSpecs"):
        # Kubeflow training jobs: spec.<x>ReplicaSpecs.<type>.replicas, 1 when absent.
        return _int(holder.get("replicas"), 1)
    if kind == "RayCluster" and holder_path == ("spec", "headGroupSpec"):
        return 1
    if kind == "RayCluster" and len(holder_path) == 3 and parent == "workerGroupSpecs":
        replicas = _int(holder.get("replicas"), None) if "replicas" in holder else None
        hosts = _int(holder.get("numOfHosts"), 1)
        return None if replicas is None or hosts is None else replicas * hosts
    return None
