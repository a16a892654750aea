"""A GPU-choosing variable (NVIDIA_, CUDA_ or HABANA_VISIBLE_DEVICES) against the device plugin.

## What it does
Looks at the `env` of each container (init containers and sidecars included) for the
variables that choose GPUs, written as a literal `value` (in a chart's values, also as a
mapping of variable to value, `env: {NVIDIA_VISIBLE_DEVICES: all}`, the form bjw-s
app-template renders into the list; there a container with no `resources` is found by
such a variable, and the values' `extraEnv`, `extraEnvVars` and a `deployment: {image,
env}` are the variables of the container whose `resources` they hold, with the GPU request
an enabled `gpu:` block of those values makes the chart write: docs/workloads.md):

- in a container that requests no GPU, `NVIDIA_VISIBLE_DEVICES` with any value but `none`,
  `void` or empty (`all`, `0`, a GPU UUID), and `CUDA_VISIBLE_DEVICES` naming a device (not
  empty or `-1`, which hide every GPU). The first is a warning when the pod runs under a
  RuntimeClass of NVIDIA's runtime (`nvidia`, `nvidia-cdi`, `nvidia-legacy`,
  `nvidia-experimental`, as GPU043 reads them; in a chart's values the nearest
  `runtimeClassName` above the container): that runtime reads the variable; or when the
  container is privileged and mounts the host's `/dev`, so that it sees every GPU of the
  node anyway. Otherwise it is `info`, saying it assumed the node's default runtime is
  NVIDIA's (the GPU Operator makes it so on the nodes it manages);
  under another runtime the variable gives no GPU;
- in a container that requests GPUs, `NVIDIA_VISIBLE_DEVICES` with any value (the device
  plugin sets it to what it allocated; `info`, as whether the manifest's value wins depends
  on the node's container toolkit: with its defaults it does, with CDI or the
  volume-mounts device-list strategy it does not), and `CUDA_VISIBLE_DEVICES` that names a
  GPU UUID, hides every GPU (empty, `-1`, or a first entry that is neither an index nor a
  UUID, such as `all`: CUDA stops reading the list there), names an index the container does
  not have (indices inside the container start at 0 for the first GPU it was given), or
  names fewer GPUs than the whole GPUs it holds;
- in a container that requests Gaudi devices (`habana.ai/gaudi`), `HABANA_VISIBLE_DEVICES`
  with any value (`info`, as for `NVIDIA_VISIBLE_DEVICES`: Habana's device plugin sets it to
  the devices it allocated, and the habana container runtime mounts the devices it names;
  whether the manifest's value wins depends on the node's runtime);
- in a privileged container that requests no GPU, ROCm's `HIP_VISIBLE_DEVICES` or
  `ROCR_VISIBLE_DEVICES` naming a device (`info`: a privileged container sees every AMD GPU
  of its node, and the variable picks one the scheduler never gave it; whether the node has
  AMD GPUs is assumed). Not privileged, the container sees no GPU to choose from; one that
  mounts device nodes itself (`/dev/dxg` under WSL, `/dev/kfd`) passes its GPU through by
  hand, on purpose.

A container that asks for a name of an accelerator vendor's domain that gpulint's registry
does not know (`nvidia.com/a100`: the National Research Platform's name for its A100s) may
hold a GPU under that name: it is not told "requests no GPU".

A variable the container takes through `envFrom: configMapRef` from a ConfigMap of its
file or of its project (docs/cluster.md, "Projects"; never another project's) is judged the
same, at the `configMapRef`'s name, with the ConfigMap's key as a related location
(`NVIDIA_VISIBLE_DEVICES: all` in the ConfigMap of a Jellyfin under `runtimeClassName:
nvidia` that requests no GPU), unless the container's `env` sets it again, or a later
`envFrom` Secret of the project holds that key (gpulint reads the names of a Secret's keys,
never their values); when a later `envFrom` source whose keys gpulint cannot see (a Secret
or a ConfigMap the project does not hold) may set it again, the finding is `info` at most
and says it assumed not.

A value that is not a string (`value: 0`) is rejected by the API server: GPU025 reports it,
and GPU016 leaves it. Values from `valueFrom`, template placeholders (`$(GPU_IDS)`,
`{{ .Values.gpus }}`) and
containers whose GPUs cannot be told (a DRA claim defined in another file) are skipped.
A container whose accelerators are all of another kind (TPU chips, Neuron, Gaudi,
Ascend devices) is not checked: the two variables choose no device of theirs, and
`CUDA_VISIBLE_DEVICES=""` there keeps a framework off CUDA on purpose. GPU node agents are
exempt: a DaemonSet, or a pod that runs a device plugin, exporter or
other agent of `gpulint/data/agents.json`, must see every GPU of its node.

## Why it matters
With the NVIDIA container runtime (the default runtime on most GPU nodes), the runtime
hands a container the GPUs its `NVIDIA_VISIBLE_DEVICES` names. The device plugin sets that
variable for the GPUs it allocated; a value in the manifest goes around it. A container that
asks for no GPU but sets `NVIDIA_VISIBLE_DEVICES=all` sees every GPU of the node, including
those the scheduler gave to other pods, and one that asks for one GPU but hard-codes `1`
can land on another pod's GPU (or see two). `CUDA_VISIBLE_DEVICES` only filters what the
container already sees: an index it does not have leaves CUDA with no device, and naming
fewer GPUs than requested leaves the rest idle but reserved.

## Example
```yaml
containers:
- name: preprocess
  image: nvcr.io/nvidia/pytorch:24.05-py3
  env:
  - name: NVIDIA_VISIBLE_DEVICES
    value: all                 # GPU016: no GPU requested
```

## Use instead
```yaml
containers:
- name: preprocess
  image: nvcr.io/nvidia/pytorch:24.05-py3
  resources:
    limits:
      nvidia.com/gpu: 1        # let the device plugin choose and set the variable
```
or `value: none` to keep a CUDA image that needs no GPU away from the node's GPUs.

## Options
None.

## References
- https://github.com/NVIDIA/k8s-device-plugin/issues/61 (requesting zero GPUs exposes all
  of them; `NVIDIA_VISIBLE_DEVICES=none` as the workaround)
- https://github.com/NVIDIA/k8s-device-plugin/issues/87 (every GPU of the node visible in a
  container with no GPU limit)
- https://github.com/NVIDIA/k8s-device-plugin/issues/1294 (`NVIDIA_VISIBLE_DEVICES: "1"`
  with `nvidia.com/gpu: 1`: the container sees two GPUs)
- NVIDIA container toolkit documentation, "Environment variables (OCI spec)"
  (`NVIDIA_VISIBLE_DEVICES`: `all`, `none`, `void`, indices, UUIDs)
- CUDA C Programming Guide, "CUDA Environment Variables" (`CUDA_VISIBLE_DEVICES`)
- HabanaAI/habanalabs-k8s-device-plugin `server.go` (Allocate sets `HABANA_VISIBLE_DEVICES`
  to the allocated devices)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    Container,
    FromConfigMap,
    PodSpec,
    RuleContext,
    Violation,
    container_gpu,
    env_entries,
    envfrom_configmaps,
    gpu_demand,
    is_placeholder,
    runs_nvidia_runtime,
    whole_gpu_count,
)

CODE = "GPU016"
NAME = "hard-coded-visible-devices"
SEVERITY = "warning"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
OPTIONS: dict[str, Any] = {}
#: A value that is not a string (``NVIDIA_VISIBLE_DEVICES: 0``) is rejected by the API server
#: first: GPU025's, at the same value.
YIELDS_TO = ("GPU025",)

NVIDIA = "NVIDIA_VISIBLE_DEVICES"
CUDA = "CUDA_VISIBLE_DEVICES"
#: NVIDIA_VISIBLE_DEVICES values that give the container no GPU.
_NO_DEVICES = {"", "none", "void"}
#: CUDA_VISIBLE_DEVICES values that hide every device.
_HIDDEN = {"", "-1"}
#: A GPU or MIG device named by UUID rather than index.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_UUID = r"(?i)^(GPU|MIG)-"
#: Kubernetes' own expansion of another variable, `$(VAR)`, anywhere in the value.
_EXPANSION = r"\$\(|\$\{"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.node_agent or not pod.containers:
        return
    demand = None
    agent: bool | None = None
    for container in pod.containers:
        if container.section == "ephemeralContainers":
            continue
        amd_said = False
        for index, item, origin in _variables(pod, container, ctx):
            if item.get("name") not in (NVIDIA, CUDA, HABANA, *AMD):
                continue
            if "valueFrom" in item:
                continue
            value = item.get("value", "")
            if isinstance(value, (dict, list, bool)):
                continue  # not a string: the API server rejects the pod (not this rule's)
            text = "" if value is None else str(value).strip()
            if is_placeholder(text) or re.search(_EXPANSION, text):
                continue
            if agent is None:
                from gpulint.api import find_agent  # rarely needed: imported then

                agent = find_agent(pod) is not None
            if agent:
                return
            if demand is None:
                demand = gpu_demand(pod, ctx.registry)
            gpu = container_gpu(container, demand, ctx.registry)
            if gpu is None:
                continue
            name = item["name"]
            place = _env_place(container, index, item)
            said = f"sets {name}={text or '(empty)'}" + _from(origin)
            related = origin.source.related(name) if origin is not None else ()
            if name == HABANA:
                # Habana's device plugin sets it to the Gaudi devices it allocated, and the
                # habana container runtime mounts the devices it names.
                if gpu and _holds(container, ctx, "habana"):
                    yield Violation(
                        place,
                        f"container {container.label} {said}: "
                        "Habana's device plugin sets this variable to the Gaudi devices it "
                        "allocated; a value in the manifest overrides that where the runtime "
                        "reads it from the environment: the container may get other pods' "
                        "devices, or not its own; remove it",
                        at="value" if "value" in item else "key",
                        severity="info",
                        related=related,
                    )
                continue
            everywhere = demand.operator_everywhere
            if gpu and not _cuda_devices(container, ctx, demand.operator, everywhere):
                continue  # TPU chips, Neuron or Gaudi devices: these variables pick none
            if name in AMD:
                # ROCm's variables choose among the devices the container sees: with no GPU
                # requested, only a privileged container sees any (all of the node's).
                if gpu or not container.privileged or text in _HIDDEN or amd_said:
                    continue
                if _mounts_devices(container):
                    continue  # it passes its device nodes through by hand, on purpose
                amd_said = True  # one cause: the first of the two variables is enough
                yield Violation(
                    place,
                    f"container {container.label} {said} and runs privileged but "
                    "requests no GPU: it uses one behind the scheduler's back; request the device "
                    "(resources.limits: {amd.com/gpu: 1}) and drop privileged (assumed: its "
                    "nodes have AMD GPUs; privileged, it sees every one of the node's)",
                    at="value" if "value" in item else "key",
                    severity="info",
                    related=related,
                )
                continue
            judged = _judged(name, text, bool(gpu), pod, container, ctx)
            if judged is None:
                continue
            problem, severity = _doubted(judged, origin, name)
            yield Violation(
                place,
                f"container {container.label} {said}: {problem}",
                at="value" if "value" in item else "key",
                severity=severity,
                related=related,
            )


def _variables(
    pod: PodSpec, container: Container, ctx: RuleContext
) -> Iterator[tuple[Any, dict[str, Any], FromConfigMap | None]]:
    """The container's variables: its ``env`` entries, then those it takes through
    ``envFrom`` from a ConfigMap of its file or project (``ctx.values``) and does not set
    again in ``env``, as entries with the ConfigMap's value."""
    for index, item in env_entries(container):
        yield index, item, None
    if pod.location != "pod" or "envFrom" not in container.data:
        return
    for origin in envfrom_configmaps(container, pod.obj.root.ref.namespace, ctx.values):
        if origin.name in WATCHED:
            yield origin, {"name": origin.name, "value": origin.source.value}, origin


def _doubted(
    judged: tuple[str, str | None], origin: FromConfigMap | None, name: str
) -> tuple[str, str | None]:
    """A finding on a variable that a later ``envFrom`` source gpulint cannot read (a
    Secret) may replace is ``info`` at most, saying what it assumed."""
    problem, severity = judged
    if origin is None or not origin.doubtful or severity == "info":
        return problem, severity
    return (
        problem + " (assumed: the later envFrom sources, whose keys gpulint cannot see, do "
        f"not set {name} again)",
        "info",
    )


def _from(origin: FromConfigMap | None) -> str:
    """Where a variable taken from a ConfigMap comes from, for the message."""
    if origin is None:
        return ""
    return f" from ConfigMap {origin.source.configmap}"


def _judged(
    name: str, text: str, gpu: bool, pod: PodSpec, container: Container, ctx: RuleContext
) -> tuple[str, str | None] | None:
    """What is wrong with ``name=text`` in ``container``, and the finding's severity (None:
    the rule's): beside a GPU request what NVIDIA_VISIBLE_DEVICES does depends on the node's
    toolkit, without one on the NVIDIA runtime running the container, which only a runtime
    class shows."""
    problem = _with_gpu(name, text, container, ctx) if gpu else _without_gpu(name, text)
    if problem is None:
        return None
    if name != NVIDIA:
        return problem, None
    if gpu:
        return problem, "info"
    if runs_nvidia_runtime(pod, container) or _sees_host_gpus(container):
        return problem, None
    return (
        problem + " (assumed: the node's default runtime is NVIDIA's, as the GPU Operator "
        "makes it; under another the variable gives no GPU)",
        "info",
    )


#: ROCm's device variables (ROCm documentation, "GPU isolation techniques").
AMD = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES")
#: The Gaudi devices the habana container runtime mounts; HabanaAI/habanalabs-k8s-device-plugin
#: ``server.go`` (Allocate) sets it to the devices it allocated.
HABANA = "HABANA_VISIBLE_DEVICES"
#: The variables this rule judges.
WATCHED = frozenset({"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", HABANA, *AMD})


def _holds(container: Container, ctx: RuleContext, hardware: str) -> bool:
    """Does the container request a device of ``hardware`` (``habana``) by resource name?"""
    from gpulint.api import resource_lists

    for _, mapping in resource_lists(container):
        for name in mapping:
            resource = ctx.registry.get(name)
            if resource is not None and resource.hardware == hardware:
                return True
    return False


def _sees_host_gpus(container: Container) -> bool:
    """A privileged container that mounts the host's ``/dev`` (or its NVIDIA device nodes)
    sees every GPU of its node, whatever runtime runs it."""
    mounts = container.data.get("volumeMounts")
    return container.privileged and any(
        isinstance(m, dict)
        and isinstance(m.get("mountPath"), str)
        and (m["mountPath"].rstrip("/") == "/dev" or m["mountPath"].startswith("/dev/nvidia"))
        for m in (mounts if isinstance(mounts, list) else ())
    )


def _mounts_devices(container: Container) -> bool:
    """Does the container mount device nodes itself (``/dev/dxg``, ``/dev/kfd``; not
    ``/dev/shm``)? A GPU passed through by hand, where no device plugin serves it (WSL)."""
    mounts = container.data.get("volumeMounts")
    return isinstance(mounts, list) and any(
        isinstance(m, dict)
        and isinstance(m.get("mountPath"), str)
        and m["mountPath"].startswith("/dev/")
        and not m["mountPath"].startswith("/dev/shm")
        for m in mounts
    )


def _env_place(container: Container, index: Any, item: dict[str, Any]) -> tuple[Any, ...]:
    if isinstance(index, FromConfigMap):  # through envFrom: at the ConfigMap's name
        return index.source.path
    if isinstance(index, tuple):  # elsewhere in a chart's values (extraEnv, deployment.env)
        if isinstance(index[-1], str):
            return (*container.path, *index)
        return (*container.path, *index, "value" if "value" in item else "name")
    if isinstance(index, str):  # a chart's env mapping: the variable's own key
        return (*container.path, "env", index)
    return (*container.path, "env", index, "value" if "value" in item else "name")


def _without_gpu(name: str, text: str) -> str | None:
    if name == NVIDIA:
        if text.lower() in _NO_DEVICES:
            return None
        return (
            "it requests no GPU, yet sees the node's GPUs, other pods' too; request the GPUs it "
            "needs (the device plugin then sets the variable), or write value: none"
        )
    if text in _HIDDEN:
        return None
    return (
        "it requests no GPU, so CUDA has none to select (or uses another pod's); request the "
        "GPUs it needs, or remove the variable"
    )


#: Accelerator vendors whose devices the two variables choose: NVIDIA's (the container
#: toolkit, CUDA) and AMD's (HIP honours CUDA_VISIBLE_DEVICES as HIP_VISIBLE_DEVICES).
CUDA_HARDWARE = ("nvidia", "amd")


def _cuda_devices(
    container: Container,
    ctx: RuleContext,
    operated: tuple[tuple[str, Any], ...] = (),
    everywhere: bool = False,
) -> bool:
    """Does the container hold a device the variables choose (or one of unknown vendor)?
    ``operated``: the accelerators written for it elsewhere (a chart values' ``gpu:``
    block, under the values the container is found in; with ``everywhere``, every one of
    them: Kaiwo writes its GPUs into each container)."""
    from gpulint.api import resource_lists

    given = [n for n, at in operated if everywhere or at[: len(container.path)] == container.path]
    for _, mapping in [*resource_lists(container), ("", dict.fromkeys(given))]:
        for name in mapping:
            if not ctx.registry.is_accelerator(name):
                if ctx.registry.looks_like_accelerator(name):
                    return True  # a look-alike name: its vendor is not known
                continue
            resource = ctx.registry.get(name)
            if resource is None or resource.hardware in CUDA_HARDWARE:
                return True
    return bool((container.resources or {}).get("claims"))  # DRA: any vendor


def _with_gpu(name: str, text: str, container: Container, ctx: RuleContext) -> str | None:
    if name == NVIDIA:
        return (
            "the device plugin sets this variable to the GPUs it allocated; where the node's "
            "container toolkit reads it from the environment (its default, "
            "accept-nvidia-visible-devices-envvar-when-unprivileged, without CDI or volume "
            "mounts) a value in the manifest overrides that: the container may see GPUs of "
            "other pods, or not its own; remove it"
        )
    if text in _HIDDEN:
        return "this hides every GPU the container requested; remove it, or the GPU request"
    devices = [d.strip() for d in text.split(",") if d.strip()]
    first = devices[0] if devices else ""
    if first and not (re.match(_UUID, first) or (first.isascii() and first.isdigit())):
        return (
            f"CUDA reads device indices or UUIDs, not {first}: it sees no GPU, and the "
            "requested ones stay idle; remove the variable (the container sees only its own "
            "GPUs anyway)"
        )
    if any(re.match(_UUID, d) for d in devices):
        return (
            "a GPU named by UUID is one physical device of one node, not the one the device "
            "plugin allocates; remove it (inside the container its GPUs are 0, 1, ...)"
        )
    count = whole_gpu_count(container, ctx.registry)
    if count is None or not all(d.isascii() and d.isdigit() and len(d) <= 6 for d in devices):
        return None
    beyond = [d for d in devices if int(d) >= count]
    if beyond:
        return (
            f"the container holds {count} GPU{'s' if count != 1 else ''}, numbered 0 to "
            f"{count - 1} inside it, so index {beyond[0]} selects no device; remove the variable"
        )
    if len(set(devices)) < count:
        return (
            f"it names {len(set(devices))} of the {count} GPUs the container holds: the others "
            "stay reserved and idle; remove the variable, or request fewer GPUs"
        )
    return None
