"""A field of a GPU operator's resource misspelt, misplaced, or unknown to every release.

## What it does
Checks the keys under `spec` of the NVIDIA GPU Operator's `ClusterPolicy` and `NVIDIADriver`
(`nvidia.com`), KubeRay's `RayCluster`, `RayJob`, `RayService` and `RayCronJob`
(`ray.io`), Kaiwo's `KaiwoJob`, `KaiwoService` (`kaiwo.silogen.ai`) and `KaiwoConfig`
(`config.kaiwo.silogen.ai`), Karpenter's `NodePool` (`karpenter.sh`, whose taints and
requirements decide where GPU pods land) and the k3s and RKE2 Helm controller's `HelmChart`
(`helm.cattle.io`, which installs the GPU Operator or the device plugin on such clusters)
against the fields their CustomResourceDefinitions declare, level by level
(`gpulint/data/operator-fields.json`: the union of the CRDs of every release of the operator
and of its newest commit, so a field an older release had still counts). It reports, at the
key:

- a near miss of a field of its own level: `migManager.config.defaut` for `default`,
  `devicePlugin.Config` for `config` (case, separators, a plural or singular, or a small edit
  of a name of five characters or more);
- a field of the level above written one level too deep
  (`driver.upgradePolicy.kernelModuleType`, a field of `driver`), or a field of exactly one
  level below written one level too high (`spec.mps`, a field of `devicePlugin`);
- any other key as `info`: no release read has it (`spec.managedClusterConfig` in a RayJob,
  a class of a Python SDK written as a field), assuming the cluster's operator is no newer
  than the last release read, which the message names.

The values handed to NVIDIA's GPU Operator chart and device plugin chart, to Intel's GPU
device plugin chart (`intel-device-plugins-gpu`), to the ROCm device plugin's (`amd-gpu`) and
to the GPU batch schedulers' (`kai-scheduler`, `volcano`) and to HAMi's (`hami`), are checked
the same way at their top level, against the values the chart has in any release
(`charts` in the same table: its `values.yaml` keys, the `.Values.<key>` its templates read
and the charts it depends on): in a Flux HelmRelease of one of these charts, an Argo CD source of it
(`helm.valuesObject`, or the `helm.values` text, the finding placed inside it), a k3s or
RKE2 `HelmChart` of it (the `valuesContent` text, as Argo CD's), a values file
that is plainly the GPU Operator's, a values file named for one of these charts
(`nvidia-device-plugin.yaml` whose keys are mostly the chart's, or `values/volcano.yaml` in a
folder of values whatever its keys; not a device plugin configuration file), and an umbrella
chart's values for one of them under its name (`nvidia-device-plugin:` at the top of a
chart's `values.yaml`, when most of the keys there, two at least, are that chart's; its
`enabled` is the dependency's condition, not judged). A near miss is a
warning (`dcgm-exporter` for `dcgmExporter`); any other key is `info`, naming the releases
read (`timeSlicing:` at the top of the operator's values: time-slicing is a ConfigMap that
`devicePlugin.config` names; `sharing:` at the top of the plugin's: it belongs in a
configuration under `config.map`). A device plugin configuration written straight under the
plugin chart's `config` (`config: {version: v1, sharing: {mps: ...}}`) is a warning at its
`sharing` (else its last configuration key): the chart reads `config.map`, `config.default`,
`config.name` and `config.fallbackStrategies` only, so the plugin runs without it. Helm drops
values a chart does not read without a word. So does the GPU Operator's chart with a
component's `config.data` (`devicePlugin`, `dcgmExporter`, `migManager`) unless
`config.create` is set beside it (the default is false): the chart makes no ConfigMap of the
data, and the component is pointed at a ConfigMap nobody created. That is a warning at `data`
in a HelmRelease without `valuesFrom` or an Argo CD source without `valueFiles`, `info` in a
values file (another may be layered on it). The ROCm chart's `dp` and `lbl` mappings, the KAI
Scheduler chart's components (`scheduler`, `binder`, ...), Volcano's `basic` and `custom`
and HAMi's `scheduler`, `devicePlugin` and `devices`, and the GPU Operator chart's
components but those a template hands on whole (`operator.runtimeClassName` for
`operator.runtimeClass`; not `daemonsets`, which becomes the ClusterPolicy's),
which their templates read key by key, are checked one level down too: a key no version has
there (`dp.tolerations`, `lbl.nodeSelector`: the chart reads `tolerations` and
`node_selector` at the top; `scheduler.tolerations` in KAI's, which takes every component's
from `global.tolerations`) is `info`, a near miss a warning (`custom.scheduler_toleration`
for Volcano's `custom.scheduler_tolerations`). A GPU Operator component's own `tolerations`,
`priorityClassName`, `nodeSelector`, `affinity` or `podSecurityContext` (`driver.tolerations`)
was read only by charts up to v1.7.1 (2021): from v1.8.0 every operand takes
`daemonsets.tolerations` and `daemonsets.priorityClassName`, and the operator places them by
node labels. That is a warning when the values are for a newer chart (a pinned version of
v1.8 or later, a HelmRelease that takes the newest, or a value only newer charts have, such as
`daemonsets` or `cdi`), `info` naming the assumption otherwise, and nothing under a pinned
older chart.

Levels the schema leaves open (a map such as `resources.limits`, a level that keeps unknown
fields) and pod templates (GPU024's) are not checked, nor keys that hold a template
placeholder. When the project holds the kind's own CustomResourceDefinition (a chart's
`crds/`) and it declares the key, the key is a field.

## Why it matters
A custom resource is pruned to its schema: the API server drops a field the CRD does not
declare, or, when the client asks for strict field validation (`kubectl apply` does),
refuses the object with `unknown field`. A dropped `migManager.config.default`
leaves the MIG manager on the operator's default layout (`all-disabled`), so the nodes never get
the MIG profiles the pods ask for; a dropped `devicePlugin.config` leaves time-slicing off; a
RayJob whose cluster is described under a field KubeRay does not have gets no Ray cluster and
no GPU worker. Nothing on the cluster says why.

## Example
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: gpu-cluster-policy
spec:
  migManager:
    enabled: true
    config:
      name: custom-mig-parted-config
      defaut: all-1g.10gb     # GPU049: did you mean default?
```

## Use instead
```yaml
  migManager:
    enabled: true
    config:
      name: custom-mig-parted-config
      default: all-1g.10gb
```

## Fix safety
Unsafe: a near miss of a field of its own level is renamed to that field in place, value and
comments kept; the operator then applies a setting it ignored before (MIG layouts change,
time-slicing turns on). No fix when the field is also written at that level, or when the key
belongs one level up or down, or is unknown (moving or removing it is left to the author).

## Options
None.

## References
- ray-project/kuberay `ray-operator/apis/ray/v1/raycluster_types.go`, `rayjob_types.go`,
  `rayservice_types.go` and their CRDs (`ray-operator/config/crd/bases/`)
- NVIDIA/gpu-operator `api/nvidia/v1/clusterpolicy_types.go`,
  `api/nvidia/v1alpha1/nvidiadriver_types.go` and their CRDs
  (`config/crd/bases/nvidia.com_clusterpolicies.yaml`,
  `config/crd/bases/nvidia.com_nvidiadrivers.yaml`); `python -m tests.operator_fields`
  regenerates the table from the operators' releases
- NVIDIA/gpu-operator `deployments/gpu-operator/values.yaml` and `templates/`, and
  NVIDIA/k8s-device-plugin `deployments/helm/nvidia-device-plugin/` (the charts' values)
- intel/helm-charts `charts/gpu-device-plugin/` (`intel-device-plugins-gpu`: its values in
  every commit that changed the chart)
- ROCm/k8s-device-plugin `helm/amd-gpu/` (`amd-gpu`: its values, and the keys its templates
  read under `dp` and `lbl`, in every commit that changed the chart)
- NVIDIA/KAI-Scheduler `deployments/kai-scheduler/` and volcano-sh/volcano
  `installer/helm/chart/volcano/` (their values and the keys their templates read, in every
  release); Project-HAMi/HAMi `charts/hami/` (in every commit that changed the chart)
- silogen/kaiwo `config/crd/bases/` (the KaiwoJob, KaiwoService and KaiwoConfig CRDs, in every
  release); kubernetes-sigs/karpenter `pkg/apis/crds/karpenter.sh_nodepools.yaml` (every
  release); k3s-io/helm-controller `pkg/crds/yaml/generated/helm.cattle.io_helmcharts.yaml`
  (every release that has it; older ones built the same fields in Go,
  `pkg/apis/helm.cattle.io/v1/types.go`)
- https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning
- https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gpulint.api import (
    K8sObject,
    OperatorValues,
    Path,
    RenameKey,
    Repair,
    RuleContext,
    Violation,
    chart_component_keys,
    chart_releases,
    chart_value_keys,
    chart_values_of,
    holds_placeholder,
    near_field,
    operator_fields,
    operator_releases,
)

CODE = "GPU049"
NAME = "misspelt-operator-field"
SEVERITY = "warning"
SCOPE = "object"
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, Any] = {}
#: Also run on a values file of the GPU Operator's chart (no object: its top-level keys).
READS_CHART_VALUES = True

#: Mappings of the object's data read at most (a ClusterPolicy holds a few hundred).
_BUDGET = 20_000


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None:
        return
    for handed in chart_values_of(obj):
        yield from _chart_values(handed)
        yield from _component_values(handed)
        if handed.chart == "gpu-operator":
            yield from _uncreated_configs(handed, _values_alone(obj))
            yield from _retired_component_values(handed, _chart_version(handed))
        elif handed.chart == "nvidia-device-plugin":
            yield from _inline_plugin_config(handed)
    tree = operator_fields()["kinds"].get(f"{obj.group}/{obj.kind}")
    spec = obj.data.get("spec")
    if not isinstance(tree, dict) or not isinstance(spec, Mapping):
        return
    # (data, its field tree, the tree of the level above, its path) — a stack, not recursion
    stack: list[tuple[Any, dict[str, Any], dict[str, Any] | None, Path]] = [
        (spec, tree, None, (*obj.path, "spec"))
    ]
    budget = _BUDGET
    while stack and budget > 0:
        data, fields, above, path = stack.pop()
        budget -= 1
        if isinstance(data, list):
            for index in range(len(data) - 1, -1, -1):
                stack.append((data[index], fields, above, (*path, index)))
            continue
        if not isinstance(data, Mapping):
            continue
        for key, value in data.items():
            if not isinstance(key, str):
                continue
            sub = fields.get(key)
            if sub is None:
                found = _diagnose(obj, ctx, key, data, fields, above, (*path, key))
                if found is not None:
                    yield found
            elif isinstance(sub, dict):
                stack.append((value, sub, fields, (*path, key)))


#: Where a setting that sits at the top of a chart's values belongs, by chart.
_HINTS = {
    "gpu-operator": "time-slicing and MPS are a ConfigMap that devicePlugin.config names",
    "nvidia-device-plugin": "time-slicing and MPS are a configuration under config.map",
    "intel-device-plugins-gpu": "the chart makes a GpuDevicePlugin of its values: "
    "nodeSelector and tolerations are its placement",
    "amd-gpu": "its DaemonSets take tolerations, node_selector and securityContext from the "
    "values' top level",
    "kai-scheduler": "every component takes tolerations, nodeSelector and affinity from global",
    "volcano": "each component's placement is a custom value: custom.scheduler_tolerations, "
    "custom.scheduler_ns (its node selector)",
    "hami": "each vendor's device settings are under devices.<vendor>, the resource names at "
    "the top",
}
#: The charts by the name a message gives them.
_TITLES = {
    "gpu-operator": "the GPU Operator's chart",
    "nvidia-device-plugin": "the device plugin's chart",
    "intel-device-plugins-gpu": "Intel's GPU device plugin chart",
    "amd-gpu": "the ROCm device plugin's chart",
    "kai-scheduler": "the KAI Scheduler's chart",
    "volcano": "Volcano's chart",
    "hami": "HAMi's chart",
}


def _chart_values(found: OperatorValues) -> Iterator[Violation]:
    """The top-level keys of a chart's values that the chart does not have."""
    known = chart_value_keys(found.chart)
    if not known:
        return
    if found.path[-1:] == (found.chart,):
        # An umbrella chart's values for its dependency: `enabled` is the dependency's
        # `condition` (Helm reads it to decide whether to install the chart at all).
        known = known | {"enabled"}
    components: dict[str, Any] = {}
    if found.chart == "gpu-operator":
        policy = operator_fields()["kinds"].get("nvidia.com/ClusterPolicy")
        components = policy if isinstance(policy, dict) else {}
    hint = f"write the setting where the chart reads it ({_HINTS.get(found.chart, '')})"

    def advise(key: str) -> tuple[str, str]:
        below = sorted(
            name
            for name, sub in components.items()
            if name in known and isinstance(sub, dict) and key in sub
        )
        return (f"; {key} is a value of {', '.join(below[:3])}" if below else ""), hint

    yield from _unknown_keys(found, found.data, known, "", advise)


def _unknown_keys(
    found: OperatorValues,
    values: Mapping[Any, Any],
    known: frozenset[str],
    component: str,
    advise: Callable[[str], tuple[str, str]],
) -> Iterator[Violation]:
    """The keys of ``values`` (the chart's values, or its ``component`` mapping) that are not
    in ``known``: a near miss is a warning with a rename, any other key ``info``;
    ``advise(key)`` gives what the message adds and where the help sends the setting."""
    title = _TITLES.get(found.chart, found.chart)
    text = found.spans is not None
    where = found.text_prefix
    dotted = f"{component}." if component else ""
    for key in values:
        if not isinstance(key, str) or key in known or holds_placeholder(key):
            continue
        at, within = found.place(component or key)
        if component and not text:
            at = (*at, key)
        head = f"{where}{dotted}{key} is not a value of {title}, so Helm ignores it"
        near = near_field(key, known)
        if near is not None:
            fix = None
            if near not in values and not text:
                fix = Repair(f"rename `{key}` to `{near}`", (RenameKey(at, near),), "unsafe")
            yield Violation(
                at,
                f"{head}: did you mean {dotted}{near}?",
                help=f"rename it to {near}",
                at="value" if text else "key",
                fix=fix,
                within=within,
            )
            continue
        also, where_to = advise(key)
        first, last = chart_releases(found.chart)
        releases = f"no release from {first} to {last} reads it"
        yield Violation(
            at,
            f"{head}{also}" if also else f"{head} ({releases})",
            help=f"{where_to}, or remove it ({f'{releases}; ' if also else ''}assumed: your "
            f"chart is no newer than {last})",
            at="value" if text else "key",
            severity="info",
            within=within,
        )


#: What the device plugin's chart reads of its ``config`` value (templates/_helpers.tpl and
#: the daemonsets: ``.Values.config.map``, ``.default``, ``.name``, ``.fallbackStrategies``).
_PLUGIN_CONFIG_VALUES = frozenset({"map", "default", "name", "fallbackStrategies"})
#: The top-level keys of a device plugin configuration file (config v1: ``version``,
#: ``flags``, ``resources``, ``sharing``, ``imex``).
_PLUGIN_CONFIG_KEYS = ("version", "flags", "resources", "sharing", "imex")


def _inline_plugin_config(found: OperatorValues) -> Iterator[Violation]:
    """A device plugin configuration written straight under the device plugin chart's
    ``config`` value (``config: {version: v1, sharing: ...}``), where the chart reads a
    configuration only as an entry of ``config.map`` (or a ConfigMap ``config.name``
    names): Helm drops it, and the plugin runs without it."""
    config = found.data.get("config")
    if not isinstance(config, Mapping):
        return
    keys = [k for k in _PLUGIN_CONFIG_KEYS if k in config and k not in _PLUGIN_CONFIG_VALUES]
    if not keys:
        return
    at, within = found.place("config")
    if found.spans is None:
        at = (*at, keys[-1] if "sharing" not in keys else "sharing")
    shown = "sharing" if "sharing" in keys else keys[-1]
    where = found.text_prefix
    yield Violation(
        at,
        f"{where}config.{shown} is a device plugin configuration written under config, which "
        "the device plugin's chart reads only as an entry of config.map: Helm ignores it",
        help="move it under config.map with a name (config: {map: {default: {version: v1, "
        "...}}}), else the plugin runs without it (no time-slicing or MPS)",
        at="value" if found.spans is not None else "key",
        severity="warning",
        within=within,
    )


def _component_values(found: OperatorValues) -> Iterator[Violation]:
    """The keys under a top-level mapping of a chart's values that its templates read key by
    key (``chart_component_keys``: the ROCm chart's ``dp`` and ``lbl``) and that no version
    of the chart has there."""
    top = chart_value_keys(found.chart)
    hint = f"write the setting where the chart reads it ({_HINTS.get(found.chart, '')})"

    def advise(key: str) -> tuple[str, str]:
        if key in top:
            return "", f"write it at the values' top level, where the chart reads {key}"
        return "", hint

    for component, known in chart_component_keys(found.chart).items():
        values = found.data.get(component)
        if isinstance(values, Mapping):
            yield from _unknown_keys(found, values, known, component, advise)


#: The GPU Operator chart's components whose ``config`` the chart makes a ConfigMap of only
#: with ``config.create`` (templates/plugin_config.yaml, dcgm_exporter_config.yaml,
#: mig_config.yaml: ``if and .config.create (not (empty .config.data))``).
_CREATED_CONFIGS = ("devicePlugin", "dcgmExporter", "migManager")


def _values_alone(obj: K8sObject) -> bool:
    """Whether the values an object hands the chart are all it gets: a Flux HelmRelease
    without ``valuesFrom``, an Argo CD Application none of whose sources names
    ``valueFiles`` (a values file may be layered with others: not alone)."""
    spec = obj.data.get("spec")
    if not isinstance(spec, Mapping):
        return False
    if obj.kind == "HelmRelease":
        return not spec.get("valuesFrom")
    if obj.kind == "Application":
        sources = [spec.get("source"), *(spec.get("sources") or [])]
        helm = [s.get("helm") for s in sources if isinstance(s, Mapping)]
        return not any(isinstance(h, Mapping) and h.get("valueFiles") for h in helm)
    return False


def _uncreated_configs(found: OperatorValues, alone: bool) -> Iterator[Violation]:
    """A component's ``config.data`` written without ``config.create`` set: the chart makes
    no ConfigMap of it (``info`` when other values may reach the chart: ``alone`` False)."""
    for component in _CREATED_CONFIGS:
        part = found.data.get(component)
        config = part.get("config") if isinstance(part, Mapping) else None
        if not isinstance(config, Mapping) or not config.get("data"):
            continue
        create = config.get("create")
        # Go templates take any non-empty string as true ("false" too), and a number but 0.
        if create not in (None, False, 0, ""):
            continue
        name = config.get("name")
        named = f"ConfigMap {name}" if isinstance(name, str) and name else "ConfigMap"
        at, within = found.place(component)
        if found.spans is None:
            at = (*found.path, component, "config", "data")
        yield Violation(
            at,
            f"{component}.config.data is ignored: the GPU Operator's chart makes the {named[:40]} "
            "only with config.create: true (default false)",
            help=f"write create: true beside it, or create the {named} yourself"
            + ("" if alone else " (assumed: no other values file or source sets create)"),
            at="key" if found.spans is None else "value",
            severity="warning" if alone else "info",
            within=within,
        )


#: Placement values the GPU Operator's chart read per component up to v1.7.1 (2021-06) and
#: no release since: from v1.8.0 every operand DaemonSet takes ``daemonsets.tolerations``
#: and ``daemonsets.priorityClassName``, and is placed by the operator's node labels
#: (``nvidia.com/gpu.deploy.<operand>``). Read from ``deployments/gpu-operator/values.yaml``
#: of every release (1.4.0..v1.7.1 against v1.8.0..v26.7.0).
_RETIRED_COMPONENTS = (
    "driver",
    "toolkit",
    "devicePlugin",
    "dcgmExporter",
    "gfd",
    "validator",
    "migManager",
)
_RETIRED_KEYS = {
    "tolerations": "daemonsets.tolerations",
    "priorityClassName": "daemonsets.priorityClassName",
    "affinity": "",
    "nodeSelector": "",
    "podSecurityContext": "",
}
#: Top-level values the chart has only from v1.8.0 on: values holding one are for a newer
#: chart than v1.7.1.
_SINCE_1_8 = frozenset(
    {
        "ccManager",
        "cdi",
        "clusterPolicy",
        "daemonsets",
        "dcgm",
        "draDriver",
        "extraObjects",
        "gdrcopy",
        "gds",
        "gpuCluster",
        "hostPaths",
        "kataManager",
        "kataSandboxDevicePlugin",
        "nodeStatusExporter",
        "psa",
        "sandboxDevicePlugin",
        "sandboxWorkloads",
        "vfioManager",
        "vgpuDeviceManager",
        "vgpuManager",
    }
)


def _chart_version(found: OperatorValues) -> tuple[int, ...] | None:
    """The chart release the values are handed to, as its first two numbers; ``()`` for a
    HelmRelease that pins none (Flux takes the newest); None when not known (a range, a values
    file)."""
    if found.version is None:
        return None
    if found.version == "":
        return ()
    parts = found.version.strip().removeprefix("v").split(".")
    if len(parts) < 2 or not all(part.isdigit() for part in parts[:2]):
        return None
    return tuple(int(part) for part in parts[:2])


def _retired_component_values(
    found: OperatorValues, version: tuple[int, ...] | None
) -> Iterator[Violation]:
    """A GPU Operator component's own ``tolerations`` (``affinity``, ``nodeSelector``,
    ``priorityClassName``, ``podSecurityContext``), which the chart read only up to v1.7.1:
    a warning when the values are for a newer chart (a pinned v1.8 or later, Flux's newest,
    or a value only newer charts have), ``info`` naming the assumption otherwise."""
    if version is not None and version and version < (1, 8):
        return
    newer = version is not None or any(key in _SINCE_1_8 for key in found.data)
    for component in _RETIRED_COMPONENTS:
        part = found.data.get(component)
        if not isinstance(part, Mapping):
            continue
        for key, instead in _RETIRED_KEYS.items():
            if key not in part:
                continue
            at, within = found.place(component)
            if found.spans is None:
                at = (*found.path, component, key)
            where = (
                f"write it under {instead}, which every operand DaemonSet takes"
                if instead
                else (
                    "the operator places its DaemonSets by node labels "
                    f"(nvidia.com/gpu.deploy.*): remove {component}.{key}"
                )
            )
            yield Violation(
                at,
                f"{component}.{key} is read by the GPU Operator's chart only up to v1.7.1 (2021): "
                "later releases ignore it",
                help=where + ("" if newer else " (assumed: your chart is v1.8.0 or newer)"),
                at="key" if found.spans is None else "value",
                severity="warning" if newer else "info",
                within=within,
            )


def _diagnose(
    obj: K8sObject,
    ctx: RuleContext,
    key: str,
    data: Mapping[Any, Any],
    fields: dict[str, Any],
    above: dict[str, Any] | None,
    path: Path,
) -> Violation | None:
    if holds_placeholder(key):
        return None
    relative = path[len(obj.path) :]
    if ctx.crds is not None and ctx.crds.declares(obj.group, obj.version, obj.kind, relative):
        return None
    dotted = ".".join(step for step in relative if isinstance(step, str))
    head = f"{dotted[-60:]} is not a field of {obj.kind}, so the API server drops it"
    strict = "; kubectl apply (strict field validation) refuses it as it is"
    near = near_field(key, fields)
    if near is not None:
        fix = None
        if near not in data:
            fix = Repair(f"rename `{key}` to `{near}`", (RenameKey(path, near),), "unsafe")
        return Violation(
            path,
            f"{head}: did you mean {near}?",
            help=f"rename it to {near}{strict}",
            at="key",
            fix=fix,
        )
    if above is not None and key in above:
        # the level's own path less its key (and the index of a list item)
        parent = ".".join([step for step in relative[:-1] if isinstance(step, str)][:-1])
        return Violation(
            path,
            f"{head}: {key} is a field of {parent}, one level up",
            help=f"move it to {parent}{strict}",
            at="key",
        )
    below = [name for name, sub in fields.items() if isinstance(sub, dict) and key in sub]
    if len(below) == 1:
        where = ".".join(step for step in (*relative[:-1], below[0]) if isinstance(step, str))
        return Violation(
            path,
            f"{head}: {key} is a field of {where}, one level down",
            help=f"move it under {below[0]}{strict}",
            at="key",
        )
    operator, first, last = operator_releases(f"{obj.group}/{obj.kind}")
    return Violation(
        path,
        f"{head} (no {operator} release from {first} to {last} has it)",
        help=f"remove it or write the field meant{strict} (assumed: yours is no newer than {last})",
        at="key",
        severity="info",
    )
