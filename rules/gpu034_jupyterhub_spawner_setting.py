"""A JupyterHub profile's GPU setting that KubeSpawner ignores or the API server rejects.

## What it does
Reads the settings of JupyterHub's Helm chart (zero-to-jupyterhub-k8s) from which KubeSpawner
makes each user's pod: the chart's `singleuser` values, KubeSpawner's own settings under
`hub.config.KubeSpawner` (applied after them; its `profile_list` replaces `profileList`), and
every profile entry's `kubespawner_override` (and each `profile_options` choice's), applied
over them as KubeSpawner applies them (a mapping merged key by key, `null` removing a key).
They are read in a values file of the chart (a file with no `apiVersion` and `kind` whose
top-level keys are the chart's, such as `config.yaml`, or the same under `jupyterhub:`) and
in the values a Flux `HelmRelease` (`spec.values`) or an Argo CD `Application`
(`helm.valuesObject`) hands the chart. It reports:

- a GPU or other accelerator under `extraResource.guarantees` or `extra_resource_guarantees`
  (the container's `requests`) with no limit for it in the settings the profile ends with:
  `error`, the API server rejects the pod (an extended resource needs a limit), so the
  spawn fails;
- a key of a `kubespawner_override` that is a pod or container field (`runtime_class_name`,
  `runtimeClassName`, `host_ipc`, `resources`) and no KubeSpawner setting: `warning`.
  KubeSpawner sets an unknown key as a plain attribute that nothing reads, so the pod never
  gets the field: a profile that means to run under NVIDIA's runtime does not;
- `NVIDIA_VISIBLE_DEVICES` set in `extraEnv` or a profile's `environment`: `info`, as GPU016
  judges it in a container. In a profile that holds GPUs, the device plugin sets the variable
  to the GPUs it gave the pod; where the manifest's value wins (the NVIDIA container
  toolkit's default `envvar` strategy), `"0"` puts every user of the profile on the node's
  first GPU, whichever GPU the scheduler gave them, and `all` shows them every GPU. In a
  profile that holds none, the NVIDIA runtime shows the pod GPUs the scheduler never gave it
  (assumed: the node's default runtime is NVIDIA's). `none`, `void` and an empty value are
  not reported.

Each place is reported once, with the profile it affects (a `singleuser` setting every
profile inherits: the profile holding the most GPUs). Values written as a string (a
ConfigMap's text, Argo CD's `values`, k3s's `valuesContent`) and settings made in Python
(`hub.extraConfig`) are not read.

## Why it matters
The chart's values never reach a linter as pods: KubeSpawner builds each pod when a user
starts a server. A profile the API server rejects fails only when someone picks it; a
setting KubeSpawner ignores fails silently; a hard-coded device list puts users on GPUs
they were not given, next to other users' work.

## Example
```yaml
singleuser:
  profileList:
    - display_name: "1 GPU"
      kubespawner_override:
        extra_resource_guarantees:
          nvidia.com/gpu: "1"   # GPU034: no limit
        runtime_class_name: nvidia   # GPU034: not a KubeSpawner setting
        environment:
          NVIDIA_VISIBLE_DEVICES: "0"   # GPU034 (info)
```

## Use instead
```yaml
singleuser:
  profileList:
    - display_name: "1 GPU"
      kubespawner_override:
        extra_resource_limits:
          nvidia.com/gpu: "1"
        extra_pod_config:
          runtimeClassName: nvidia
```

## Options
None.

## References
- https://z2jh.jupyter.org/en/stable/jupyterhub/customizing/user-environment.html
  (profiles and `kubespawner_override`)
- https://jupyterhub-kubespawner.readthedocs.io/en/latest/spawner.html
  (`extra_resource_limits`, `extra_resource_guarantees`, `extra_pod_config`, `profile_list`)
- https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
  (GPUs are specified in `limits`)
- https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
  (`NVIDIA_VISIBLE_DEVICES`)
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gpulint.api import (
    K8sObject,
    Path,
    RuleContext,
    Spawn,
    Violation,
    amount,
    chart_values,
    is_extended_resource,
    spawns,
)

CODE = "GPU034"
NAME = "jupyterhub-spawner-setting"
SEVERITY = "warning"
SCOPE = "object"
READS_CHART_VALUES = True

#: Values of NVIDIA_VISIBLE_DEVICES that give the pod no GPU.
NO_DEVICES = ("", "none", "void")


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    for values, path in chart_values(obj.data, obj.path):
        made = spawns(values, path)
        yield from _guarantees(made, ctx)
        yield from _strays(made)
        yield from _visible_devices(made, ctx)


def _accelerator(name: str, ctx: RuleContext) -> bool:
    return is_extended_resource(name) and ctx.registry.may_be_accelerator(name)


def _held(spawn: Spawn, ctx: RuleContext) -> tuple[Decimal, str]:
    """How many accelerators the spawn's limits hold (the largest entry) and which."""
    best, name = Decimal(0), ""
    for resource, setting in spawn.limits.items():
        held = amount(setting.value).value
        if held is not None and held > best and _accelerator(resource, ctx):
            best, name = held, resource
    return best, name


def _guarantees(made: list[Spawn], ctx: RuleContext) -> Iterator[Violation]:
    seen: set[Path] = set()
    for spawn in made:
        for resource, setting in spawn.guarantees.items():
            if setting.path in seen or resource in spawn.limits:
                continue
            asked = amount(setting.value).value
            if asked is None or asked <= 0 or not _accelerator(resource, ctx):
                continue
            seen.add(setting.path)
            yield Violation(
                setting.path,
                f"{resource} is guaranteed (requested) with no limit in {_where(spawn)}: the "
                "API server rejects the pod, as an extended resource needs a limit",
                severity="error",
                help="set it under extra_resource_limits (extraResource.limits) instead",
            )


def _strays(made: list[Spawn]) -> Iterator[Violation]:
    seen: set[Path] = set()
    for spawn in made:
        for key, path, field, level in spawn.strays:
            if path in seen:
                continue
            seen.add(path)
            extra = "extra_pod_config" if level == "pod" else "extra_container_config"
            if field == "resources":
                fix = "write limits under extra_resource_limits (or mem_limit, cpu_limit)"
            else:
                fix = f"set `{field}` under {extra}"
            yield Violation(
                path,
                f"`{key}` is not a KubeSpawner setting: KubeSpawner ignores it, so the pod "
                f"of {_where(spawn)} never gets the {level} field `{field}`",
                help=fix,
            )


def _visible_devices(made: list[Spawn], ctx: RuleContext) -> Iterator[Violation]:
    chosen: dict[Path, tuple[Decimal, str, Spawn, str]] = {}
    for spawn in made:
        setting = spawn.env.get("NVIDIA_VISIBLE_DEVICES")
        if setting is None or not isinstance(setting.value, str):
            continue  # a number is GPU025's kind of mistake; a mapping is valueFrom
        value = setting.value.strip()
        if value.lower() in NO_DEVICES or "{{" in value or "$(" in value:
            continue
        held, resource = _held(spawn, ctx)
        before = chosen.get(setting.path)
        if before is None or held > before[0]:
            chosen[setting.path] = (held, resource, spawn, value)
    for path, (held, resource, spawn, value) in chosen.items():
        if held > 0:
            if value.lower() == "all":
                given = "every GPU of the node"
            else:
                given = f"GPU {value}" if "," not in value else f"GPUs {value}"
            message = (
                f"{_where(spawn)} holds {held} {resource} and sets NVIDIA_VISIBLE_DEVICES="
                f"{value}: where this value wins over the device plugin's, users get {given}"
            )
            help_ = "leave NVIDIA_VISIBLE_DEVICES to the device plugin"
        else:
            message = (
                f"{_where(spawn)} holds no GPU and sets NVIDIA_VISIBLE_DEVICES={value}: "
                "under NVIDIA's runtime the pod sees GPUs the scheduler never gave it"
            )
            help_ = "request the GPUs in extra_resource_limits, or set the variable to none"
        yield Violation(path, message, at="value", severity="info", help=help_)


def _where(spawn: Spawn) -> str:
    name = spawn.name if len(spawn.name) <= 40 else spawn.name[:39] + "\u2026"
    return "singleuser" if spawn.name == "singleuser" else f"profile '{name}'"
