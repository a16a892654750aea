"""DRA object written in a resource.k8s.io version that is deprecated or no longer served.

## What it does
Reports a ResourceClaim, ResourceClaimTemplate, DeviceClass or ResourceSlice whose
`apiVersion` is `resource.k8s.io/v1beta1` or `v1beta2`, with the release that deprecates it
and the one that stops serving it, or an alpha version (served only where alpha APIs were
turned on, and no longer served for these kinds: `v1alpha2` from 1.31, `v1alpha3` from 1.34,
where it keeps DeviceTaintRule alone), at the `apiVersion` value. `v1` is the
stable version (Kubernetes 1.34). A version no release has served (`v1alpha4`, `v2`) is an
`error`: the API server refuses the object (`no matches for kind "ResourceClaimTemplate" in
version "resource.k8s.io/v1alpha4"`).

The kinds of the classic DRA API, `ResourceClass`, `ResourceClassParameters` and
`ResourceClaimParameters`, exist only in `resource.k8s.io/v1alpha2`, which Kubernetes 1.31
removed when structured parameters replaced it: no later release serves them in any version.
They are reported at the `kind` value with what replaced them (a DeviceClass whose CEL
selectors pick the driver's devices; a class's or claim's `config[].opaque` parameters).

The NVIDIA DRA driver's own parameters kinds of classic DRA (`gpu.resource.nvidia.com`:
`GpuClaimParameters`, `MigDeviceClaimParameters`, `ComputeInstanceClaimParameters`,
`DeviceClassParameters`) went with it: the driver's releases for structured parameters
define none of them, and take the settings as a claim's or class's `config[].opaque`
parameters (`resource.nvidia.com/v1beta1` `GpuConfig`, `MigDeviceConfig`). They are reported
at the `kind` value.

It is `info`: a cluster older than the removal release still accepts the object, and
gpulint does not know your cluster's version. Moving to `v1` also moves the class, selectors,
mode and count of an exact request under `exactly:` (GPU060 checks that shape).

## Why it matters
A manifest kept on a beta version stops applying on the first upgrade past its removal
release (`no matches for kind "ResourceClaimTemplate" in version "resource.k8s.io/v1beta1"`),
often in the middle of a cluster upgrade.

## Example
```yaml
apiVersion: resource.k8s.io/v1beta1   # GPU061
kind: ResourceClaimTemplate
```

## Use instead
```yaml
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
```

## Options
None.

## References
- kubernetes `staging/src/k8s.io/api/resource/v1beta1/zz_generated.prerelease-lifecycle.go`
  (introduced 1.32, deprecated 1.35, removed 1.38), `v1beta2/…` (1.33, 1.36, 1.39)
- https://kubernetes.io/docs/reference/using-api/deprecation-guide/
- kubernetes/api `resource/v1alpha3/register.go` (v0.33.0: DeviceClass, ResourceClaim,
  ResourceClaimTemplate, ResourceSlice, DeviceTaintRule; v0.34.0: DeviceTaintRule alone)
- kubernetes `CHANGELOG/CHANGELOG-1.31.md` (DRA: `resource.k8s.io/v1alpha3` replaces
  `v1alpha2`; ResourceClass, ResourceClassParameters and ResourceClaimParameters removed) and
  KEP-4381 (structured parameters)
- NVIDIA/k8s-dra-driver-gpu `api/nvidia.com/resource/gpu/v1alpha1/register.go` (the classic
  parameters kinds) and commit 22c9e810 ("Remove Claim/Class parameters in favor of versioned
  Configs types", 2024-09-10)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import DRA_LIFECYCLE, K8sObject, RuleContext, Violation

CODE = "GPU061"
NAME = "deprecated-dra-version"
SEVERITY = "info"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}

_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice")
#: The alpha versions of resource.k8s.io a release has served these kinds in, and the
#: release that stopped serving them there (v1alpha1 in 1.26; v1alpha2 in 1.27 to 1.30;
#: v1alpha3 in 1.31 to 1.33: from 1.34 it registers DeviceTaintRule alone, k8s.io/api
#: v0.34.0 ``resource/v1alpha3/register.go``); the betas are DRA_LIFECYCLE's.
SERVED_ALPHAS = {"v1alpha1": "1.27", "v1alpha2": "1.31", "v1alpha3": "1.34"}


def _version_like(version: str) -> bool:
    """A Kubernetes API version (``v2``, ``v1alpha4``, ``v1beta3``), not a placeholder."""
    import re

    return re.fullmatch(r"v[0-9]+(?:(?:alpha|beta)[0-9]+)?", version) is not None


#: Kinds of ``resource.k8s.io/v1alpha2`` only (removed in Kubernetes 1.31) -> what replaced
#: them.
_REMOVED_KINDS = {
    "ResourceClass": "a DeviceClass (resource.k8s.io/v1) whose CEL selectors pick the "
    "driver's devices (device.driver == '...')",
    "ResourceClassParameters": "a DeviceClass's spec.config[].opaque parameters "
    "(resource.k8s.io/v1)",
    "ResourceClaimParameters": "a claim's spec.devices.config[].opaque parameters "
    "(resource.k8s.io/v1)",
}


#: The NVIDIA DRA driver's parameters kinds for classic DRA (``gpu.resource.nvidia.com``,
#: NVIDIA/k8s-dra-driver-gpu ``api/nvidia.com/resource/gpu/v1alpha1/register.go``), removed
#: with it (commit 22c9e810, 2024-09-10, "Remove Claim/Class parameters in favor of versioned
#: Configs types") -> what replaced them.
_CLASSIC_DRIVER_KINDS = {
    ("gpu.resource.nvidia.com", "GpuClaimParameters"): "GpuConfig",
    ("gpu.resource.nvidia.com", "MigDeviceClaimParameters"): "MigDeviceConfig",
    ("gpu.resource.nvidia.com", "ComputeInstanceClaimParameters"): "MigDeviceConfig",
    ("gpu.resource.nvidia.com", "DeviceClassParameters"): "GpuConfig",
}


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None:
        return
    config = _CLASSIC_DRIVER_KINDS.get((obj.group, obj.kind))
    if config is not None:
        yield Violation(
            (*obj.path, "kind"),
            f"{obj.kind} is a parameters kind of the NVIDIA DRA driver for classic DRA, gone "
            "with it (Kubernetes 1.31): no later driver release defines it",
            help=f"give the settings as a claim's or class's config[].opaque parameters: "
            f"{{driver: gpu.nvidia.com, parameters: {{apiVersion: resource.nvidia.com/v1beta1, "
            f"kind: {config}}}}}",
            at="value",
        )
        return
    if obj.group != "resource.k8s.io":
        return
    replaced = _REMOVED_KINDS.get(obj.kind)
    if replaced is not None:
        yield Violation(
            (*obj.path, "kind"),
            f"{obj.kind} is a kind of resource.k8s.io/v1alpha2 only, removed with the classic "
            "DRA API in Kubernetes 1.31: no later release serves it; "
            f"write {replaced}",
            at="value",
        )
        return
    if obj.kind not in _KINDS:
        return
    lifecycle = DRA_LIFECYCLE.get(obj.version)
    if lifecycle is not None:
        deprecated, removed = lifecycle
        when = f"is deprecated from Kubernetes {deprecated} and no longer served from {removed}"
    elif obj.version in SERVED_ALPHAS:
        when = (
            f"{obj.kind} is an alpha version, served only where alpha APIs were turned on, and "
            f"no longer served from Kubernetes {SERVED_ALPHAS[obj.version]}"
        )
    elif obj.version not in ("v1", "") and _version_like(obj.version):
        yield Violation(
            (*obj.path, "apiVersion"),
            f"no Kubernetes release serves resource.k8s.io/{obj.version[:20]}: the API server "
            f"refuses the {obj.kind}",
            help="write apiVersion: resource.k8s.io/v1 (stable since 1.34), with each exact "
            "request's class, selectors and count under exactly:",
            at="value",
            severity="error",
        )
        return
    else:
        return
    yield Violation(
        (*obj.path, "apiVersion"),
        f"resource.k8s.io/{obj.version} {when}; write apiVersion: resource.k8s.io/v1 (stable "
        "since 1.34), with each exact request's class, selectors and count under exactly:",
        at="value",
    )
