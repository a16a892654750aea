"""DRA request naming a DeviceClass that nothing defines.

## What it does
Checks the `deviceClassName` of every request and `firstAvailable` subrequest of a
ResourceClaim or ResourceClaimTemplate. A class is known when a DeviceClass in a file of
the claim's project defines it (whether or not the run was given that file; never another
project's), or when it is a class a known DRA driver installs
(the registry's `dra.device_classes` and `dra.other_device_classes`:
`gpu.nvidia.com`, `mig.nvidia.com`, `gpu.intel.com`, `gpu.amd.com`, ...). Otherwise:

- a near miss of a known class (one typo, or a known class with a label added or dropped:
  `nvidia.com` for `gpu.nvidia.com`): `warning`, with the class it probably means;
- any other name: `info`. A DeviceClass is cluster-scoped and usually installed with its
  driver, so it may well exist in your cluster; the finding says what was assumed.

A name that is not a DNS subdomain (`GPU.nvidia.com`) is GPU060's: the API server rejects the
claim, and the name is not reported twice.

## Why it matters
A claim for a class that does not exist is accepted by the API server, and its pod stays
`Pending`: the scheduler reports `device class gpu.nvdia.com does not exist` in an event.

## Example
```yaml
exactly:
  deviceClassName: gpu.nvdia.com   # GPU063
```

## Use instead
```yaml
exactly:
  deviceClassName: gpu.nvidia.com
```

## Options
None.

## References
- kubernetes `pkg/scheduler/framework/plugins/dynamicresources` (a missing class makes the
  claim unschedulable)
- NVIDIA/k8s-dra-driver-gpu `deployments/helm/*/templates/deviceclass-*.yaml`;
  intel/intel-resource-drivers-for-kubernetes; ROCm/k8s-gpu-dra-driver
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import (
    K8sObject,
    RuleContext,
    Violation,
    dns_subdomain,
    holds_placeholder,
    one_typo_from,
)

CODE = "GPU063"
NAME = "unknown-device-class"
SEVERITY = "warning"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.group != "resource.k8s.io" or obj.kind not in ("ResourceClaim", "ResourceClaimTemplate"):
        return
    spec = obj.data.get("spec")
    at: tuple[Any, ...] = (*obj.path, "spec")
    if obj.kind == "ResourceClaimTemplate":
        spec = spec.get("spec") if isinstance(spec, Mapping) else None
        at = (*at, "spec")
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    if not isinstance(requests, list):
        return
    registry = ctx.registry
    known = set(registry.device_classes) | set(registry.other_device_classes)
    defined = ctx.claims.class_names() if ctx.claims is not None else set()
    for i, request in enumerate(requests):
        if not isinstance(request, Mapping):
            continue
        path = (*at, "devices", "requests", i)
        places: list[tuple[tuple[Any, ...], Any]] = [(path, request)]
        exactly = request.get("exactly")
        if isinstance(exactly, Mapping):
            places.append(((*path, "exactly"), exactly))
        subs = request.get("firstAvailable")
        if isinstance(subs, list):
            places.extend(((*path, "firstAvailable", j), s) for j, s in enumerate(subs))
        for where, holder in places:
            name = holder.get("deviceClassName") if isinstance(holder, Mapping) else None
            if (
                not isinstance(name, str)
                or not name
                or holds_placeholder(name)
                or name in known
                or name in defined
                or dns_subdomain(name) is not None  # GPU060's: the API server rejects it
            ):
                continue
            yield _finding((*where, "deviceClassName"), name, known | defined)


def _finding(path: tuple[Any, ...], name: str, known: set[str]) -> Violation:
    close = one_typo_from(name, known)
    if close:
        return Violation(
            path,
            f"no DeviceClass {name} is defined in this project or by a DRA driver gpulint knows, "
            f"one typo from {close}: its pod stays Pending; did you mean {close}?",
            at="value",
        )
    return Violation(
        path,
        f"DeviceClass {name} is not defined in this project or by a DRA driver gpulint knows "
        "(assumed: your cluster has it); define the DeviceClass in a file of the project to "
        "have it checked",
        at="value",
        severity="info",
    )
