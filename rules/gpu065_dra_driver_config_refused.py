"""DRA opaque configuration the driver refuses.

## What it does
Checks the `opaque` configuration of a claim's or a DeviceClass's `config` entries that name
a driver whose configuration API gpulint knows, as the driver decodes and validates it
before it prepares a device. For NVIDIA's `gpu.nvidia.com` (`parameters` of
`apiVersion: resource.nvidia.com/v1beta1`):

- a `kind` the driver does not know (`GpuConfig`, `MigDeviceConfig`, `VfioDeviceConfig`,
  `ComputeDomainChannelConfig`, `ComputeDomainDaemonConfig`);
- a field `GpuConfig` or `MigDeviceConfig` does not have: the driver decodes strictly, so
  `sharing.timeSlicing` (for `timeSlicingConfig`) or `mpsConfig.activeThreadPercentage` is
  refused, not ignored; `timeSlicingConfig` in a `MigDeviceConfig`;
- a sharing `strategy` other than `TimeSlicing` or `MPS`, a time-slice `interval` other
  than `Default`, `Short`, `Medium` or `Long` (both case-sensitive), an MPS
  `defaultActiveThreadPercentage` outside 0-100.

## Why it matters
The API server stores opaque parameters without looking inside them. The driver reads them
when the pod is scheduled to a node, refuses them (`unknown GPU sharing strategy`, `unknown
time-slice interval`, `strict decoding error: unknown field`), and the pod never starts: it
stays in `ContainerCreating` with an event from the kubelet plugin.

## Example
```yaml
config:
- opaque:
    driver: gpu.nvidia.com
    parameters:
      apiVersion: resource.nvidia.com/v1beta1
      kind: GpuConfig
      sharing:
        strategy: TimeSlicing
        timeSlicingConfig:
          interval: short     # GPU065
```

## Use instead
```yaml
        timeSlicingConfig:
          interval: Short
```

## Options
None.

## References
- NVIDIA/k8s-dra-driver-gpu `api/nvidia.com/resource/v1beta1/api.go` (`StrictDecoder`),
  `gpuconfig.go`, `migconfig.go`, `sharing.go`, `validate.go`
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import K8sObject, RuleContext, Violation, dra_opaque_configs, is_dra_object

CODE = "GPU065"
NAME = "dra-driver-config-refused"
SEVERITY = "error"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}

_DRIVER = "gpu.nvidia.com"
_API = "resource.nvidia.com/v1beta1"
_CONFIG_KINDS = (
    "GpuConfig",
    "MigDeviceConfig",
    "VfioDeviceConfig",
    "ComputeDomainChannelConfig",
    "ComputeDomainDaemonConfig",
)
_STRATEGIES = ("TimeSlicing", "MPS")
_INTERVALS = ("Default", "Short", "Medium", "Long")
_MPS_FIELDS = (
    "defaultActiveThreadPercentage",
    "defaultPinnedDeviceMemoryLimit",
    "defaultPerDevicePinnedMemoryLimit",
)
#: The fields of each kind's ``sharing`` (GpuSharing, MigDeviceSharing).
_SHARING_FIELDS = {
    "GpuConfig": ("strategy", "timeSlicingConfig", "mpsConfig"),
    "MigDeviceConfig": ("strategy", "mpsConfig"),
}


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if not is_dra_object(obj):
        return
    for path, opaque in dra_opaque_configs(obj.kind, obj.data):
        if opaque.get("driver") != _DRIVER:
            continue
        params = opaque.get("parameters")
        if not isinstance(params, Mapping) or params.get("apiVersion") != _API:
            continue
        yield from _parameters(params, (*obj.path, *path, "parameters"))


def _refused(detail: str) -> str:
    return (
        f"the gpu.nvidia.com DRA driver refuses this configuration ({detail}): the pod never starts"
    )


def _parameters(params: Mapping[str, Any], at: tuple[Any, ...]) -> Iterator[Violation]:
    kind = params.get("kind")
    if kind not in _CONFIG_KINDS:
        close = next(
            (k for k in _CONFIG_KINDS if isinstance(kind, str) and k.lower() == kind.lower()), None
        )
        hint = f"; write {close}" if close else f"; one of {', '.join(_CONFIG_KINDS)}"
        yield Violation((*at, "kind"), _refused(f"no kind {kind} in {_API}") + hint, at="value")
        return
    fields = _SHARING_FIELDS.get(kind)
    if fields is None:
        return
    for key in params:
        if key not in ("apiVersion", "kind", "sharing"):
            yield _unknown((*at, key), f"{kind}.{key}")
    sharing = params.get("sharing")
    if not isinstance(sharing, Mapping):
        return
    base = (*at, "sharing")
    for key in sharing:
        if key not in fields:
            yield _unknown((*base, key), f"{kind}.sharing.{key}")
    strategy = sharing.get("strategy")
    if strategy not in _STRATEGIES:
        close = next(
            (s for s in _STRATEGIES if isinstance(strategy, str) and s.lower() == strategy.lower()),
            None,
        )
        hint = (
            f"; write {close} (strategies are case-sensitive)"
            if close
            else "; write TimeSlicing or MPS"
        )
        yield Violation(
            (*base, "strategy") if "strategy" in sharing else base,
            _refused(f'unknown GPU sharing strategy: "{strategy}"') + hint,
            at="value",
        )
    time_slicing = sharing.get("timeSlicingConfig")
    if isinstance(time_slicing, Mapping) and "timeSlicingConfig" in fields:
        for key in time_slicing:
            if key != "interval":
                yield _unknown((*base, "timeSlicingConfig", key), f"timeSlicingConfig.{key}")
        interval = time_slicing.get("interval")
        if interval is not None and interval not in _INTERVALS:
            close = next(
                (
                    i
                    for i in _INTERVALS
                    if isinstance(interval, str) and i.lower() == interval.lower()
                ),
                None,
            )
            hint = (
                f"; write {close} (intervals are case-sensitive)"
                if close
                else "; write Default, Short, Medium or Long"
            )
            yield Violation(
                (*base, "timeSlicingConfig", "interval"),
                _refused(f'unknown time-slice interval: "{interval}"') + hint,
                at="value",
            )
    mps = sharing.get("mpsConfig")
    if isinstance(mps, Mapping):
        for key in mps:
            if key not in _MPS_FIELDS:
                yield _unknown((*base, "mpsConfig", key), f"mpsConfig.{key}")
        percentage = mps.get("defaultActiveThreadPercentage")
        if (
            isinstance(percentage, int)
            and not isinstance(percentage, bool)
            and not 0 <= percentage <= 100
        ):
            yield Violation(
                (*base, "mpsConfig", "defaultActiveThreadPercentage"),
                _refused(f"active thread percentage {percentage} is outside 0-100"),
                at="value",
            )


def _unknown(path: tuple[Any, ...], name: str) -> Violation:
    return Violation(path, _refused(f'strict decoding error: unknown field "{name}"'))
