"""A MIG layout of several device sizes under the single MIG strategy.

## What it does
Flags the NVIDIA GPU Operator configured to partition its GPUs with the MIG manager's
`all-balanced` layout (`migManager.config.default: all-balanced`, from the built-in
`default-mig-parted-config`) while its MIG strategy is `single` (`mig.strategy: single`, or
left out: `single` is the default of the chart and of the ClusterPolicy). It reads a
`ClusterPolicy` (`spec.mig.strategy`, `spec.migManager`) and the values handed to the
operator's Helm chart (a Flux HelmRelease, an Argo CD source, a values file of the chart).
The finding is at the layout's value (inside an Argo CD `helm.values` text, at its
`migManager` key). A MIG manager that is turned off (`enabled: false`) or reads a
configuration of the project's own (`config.name`) is not judged.

## Why it matters
`all-balanced` gives each GPU MIG devices of several sizes (on an A100 40GB: two `1g.5gb`,
one `2g.10gb`, one `3g.20gb`). The `single` strategy advertises a node's MIG devices as
`nvidia.com/gpu` and requires them all to be of one type: on such a node the device plugin
fails to start (`more than one MIG device type present on node`) and GPU Feature Discovery
labels the node `nvidia.com/mig.strategy` invalid, so the node offers no GPU at all. A
layout of several sizes needs the `mixed` strategy, which advertises each size as its own
resource (`nvidia.com/mig-1g.5gb`). On nodes whose GPUs cannot be partitioned the layout is
not applied, and nothing happens.

## Example
```yaml
# values of the gpu-operator chart
migManager:
  enabled: true
  config:
    default: all-balanced    # GPU038: mig.strategy is left at single
```

## Use instead
```yaml
mig:
  strategy: mixed
migManager:
  enabled: true
  config:
    default: all-balanced
```

## Options
None.

## References
- NVIDIA/k8s-device-plugin `internal/rm/device_map.go` (`assertAllMigDevicesAreValid`:
  "more than one MIG device type present on node" under the `single` strategy)
- NVIDIA/gpu-feature-discovery `internal/lm/mig-strategy.go` (`newInvalidMigStrategyLabeler`)
- NVIDIA/mig-parted `examples/config.yaml` and the GPU Operator's
  `default-mig-parted-config` (`all-balanced`: several profiles a GPU)
- https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
  (`mig.strategy`: `single` when every MIG device of a node is of one type, else `mixed`)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import K8sObject, OperatorValues, Path, RuleContext, Violation, chart_values_of

CODE = "GPU038"
NAME = "mig-layout-needs-mixed-strategy"
SEVERITY = "warning"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}
#: Also run on a values file of the GPU Operator's chart (no object).
READS_CHART_VALUES = True

#: Layouts of the built-in ``default-mig-parted-config`` that give a GPU MIG devices of
#: several sizes.
MIXED_LAYOUTS = frozenset({"all-balanced"})
#: The name of the built-in configuration (the chart's and the ClusterPolicy's default).
BUILT_IN = "default-mig-parted-config"


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None:
        return
    if obj.group == "nvidia.com" and obj.kind == "ClusterPolicy":
        spec = obj.data.get("spec")
        if isinstance(spec, Mapping):
            found = _judge(spec, (*obj.path, "spec"))
            if found is not None:
                yield found
        return
    for values in chart_values_of(obj):
        if values.chart != "gpu-operator":
            continue
        found = _judge(values.data, values.path, values)
        if found is not None:
            yield found


def _judge(
    settings: Mapping[Any, Any], path: Path, text: OperatorValues | None = None
) -> Violation | None:
    manager = settings.get("migManager")
    if not isinstance(manager, Mapping) or manager.get("enabled") is False:
        return None
    config = manager.get("config")
    if not isinstance(config, Mapping):
        return None
    layout = config.get("default")
    name = config.get("name")
    if not isinstance(layout, str) or layout.strip() not in MIXED_LAYOUTS:
        return None
    if name is not None and name != BUILT_IN:
        return None  # a configuration of the project's own: its layouts are not read here
    mig = settings.get("mig")
    strategy = mig.get("strategy") if isinstance(mig, Mapping) else None
    if strategy is not None and strategy != "single":
        return None
    said = "mig.strategy is single" if strategy == "single" else "mig.strategy is left at single"
    at: Path = (*path, "migManager", "config", "default")
    within = None
    if text is not None and text.spans is not None:
        at, within = text.place("migManager")
    return Violation(
        at,
        f"migManager.config.default {layout} makes MIG devices of several sizes, but {said}: "
        "the device plugin refuses such a node",
        help="set mig.strategy: mixed (pods then ask for nvidia.com/mig-<profile>), or pick a "
        "layout of one size (all-1g.10gb); a refused node offers no GPU at all",
        at="value",
        within=within,
    )
