"""Pod specs and resource requirements found by their shape, in kinds the workload table lacks.

A table of kinds can never keep up with the operators people install, so an object whose API
group and kind have no row (docs/domain.md#where-pod-specs-live) is searched for the two
shapes Kubernetes' own types give away:

* **a pod spec** -- a mapping whose ``containers`` is a non-empty list of containers. A
  container is a mapping with a ``name`` that is a DNS label or a non-empty ``image``, and
  most of whose keys are ``core/v1 Container`` fields (so a misspelt field or two does not
  hide a pod, but a list of anything else with a ``name`` is not taken for containers).
  When the mapping is a PodTemplateSpec's ``spec``, the template around it is the pod's
  template (labels, annotations), as for a row's pattern;
* **a bare ResourceRequirements** -- a mapping whose only keys are ``limits``, ``requests``
  and ``claims``, with a ``limits`` or ``requests`` mapping of resource names to scalars
  (NIMService ``spec.resources``), or a list item holding ``limits`` / ``requests`` beside
  its own fields (llmaz flavors: ``{name, limits, nodeSelector}``). Under a key named
  ``resources`` one foreign key beside them is a slip, not another type: a chart's values
  with a probe's ``startup:`` written under a container's ``resources:`` (bjw-s
  app-template) still hold that container's requirements, and GPU024 reports the key;
* **a chart's container with no resources** -- in a ``containers`` mapping of names to
  containers (app-template's form), a mapping with an ``image`` and an ``env`` that sets a
  variable choosing accelerator devices (``NVIDIA_VISIBLE_DEVICES``,
  ``HIP_VISIBLE_DEVICES``, ...): a ROCm ComfyUI written without ``resources`` uses a GPU
  all the same, and GPU016 judges its variable as any container's. In an object whose
  values mount the host's GPU device nodes (``hostPath: /dev/dri``, :data:`HOST_GPU_DEVICES`),
  every such mapping with an ``image`` is a container: a privileged Jellyfin with the
  host's ``/dev/dri`` and no ``resources`` uses a GPU, and GPU043 judges its mounts;
* **a chart values' GPU block** -- an enabled ``gpu:`` mapping (``{enabled: true, type:
  nvidia, number: 1}``, the Ollama chart's convention) is the request the chart writes into
  the container whose ``resources`` the nearest enclosing values hold
  (``PodSpec.operator_gpus``, :func:`chart_block_gpus`).
* **a vLLM production stack model** -- each item of ``servingEngineSpec.modelSpec`` with a
  ``repository`` (vllm-project/production-stack's chart: one Deployment a model) is the pod
  the chart makes of it (:func:`is_model_spec`): its ``vllm`` container, with the item's
  ``env`` and ``resources`` (else the GPUs of ``requestGPU``, ``requestGPUType`` or
  ``nvidia.com/gpu``, as ``PodSpec.operator_gpus``), its ``initContainer``, and the
  ``servingEngineSpec``'s tolerations and ``runtimeClassName``.

What is not a pod, on purpose:

* nothing under ``metadata`` (anywhere) or the object's own ``status``;
* nothing under the keys policy engines and patch tools use for partial or pattern
  objects (``pattern``, ``anyPattern``, ``patchStrategicMerge``, ``patches``, ...): a
  Kyverno rule's ``pattern: {spec: {containers: [...]}}`` describes pods, it is none;
* an object's ``spec`` itself, even when it holds only ``limits`` (a Karpenter NodePool's
  limits are a pool's, not a pod's);
* a resource list of storage alone (a PersistentVolumeClaim's ``resources``): only a
  list naming a compute resource (``cpu``, ``memory``, ``ephemeral-storage``,
  ``hugepages-*``) or an extended one (``vendor.example/name``) is a container's;
* nothing inside a pod spec or resource requirements already found (they do not nest).

Known kinds keep their exact rows: this search runs only for objects the table does not
know (nor lists under ``not_workloads``, kinds whose API types hold no pod), and every pod
it finds says so (``PodSpec.found_by == "shape"``, shown by ``gpulint inspect``).
tests/test_shapes.py runs it over the whole real corpus and over every object of a known
kind, where it must find nothing the table does not.
"""

from __future__ import annotations

import re
from typing import Any

from gpulint.k8s.objects import (
    Container,
    K8sObject,
    Made,
    PodSpec,
    containers_of,
    image_reference,
    value_at,
)
from gpulint.model import Path

#: core/v1 Container's fields (k8s.io/api core/v1 types.go, type Container).
CONTAINER_FIELDS = frozenset(
    {
        "name",
        "image",
        "command",
        "args",
        "workingDir",
        "ports",
        "envFrom",
        "env",
        "resources",
        "resizePolicy",
        "restartPolicy",
        "restartPolicyRules",
        "volumeMounts",
        "volumeDevices",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "lifecycle",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "imagePullPolicy",
        "securityContext",
        "stdin",
        "stdinOnce",
        "tty",
    }
)

#: Keys whose values describe objects without being them: object metadata, and the
#: patterns and patches of policy engines (Kyverno) and patch tools (Kustomize).
SKIPPED_KEYS = frozenset(
    {
        "metadata",
        "pattern",
        "anyPattern",
        "patchStrategicMerge",
        "patchesStrategicMerge",
        "patchesJson6902",
        "patches",
        "patch",
    }
)

#: Keys of a ResourceRequirements (core/v1 ResourceRequirements).
REQUIREMENT_KEYS = frozenset({"limits", "requests", "claims"})

#: Deeper than any real object; the loader's nesting bound keeps inputs far shallower.
MAX_DEPTH = 64

#: A container name and a resource name as the API server checks them.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_RESOURCE_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_COMPUTE = ("cpu", "memory", "ephemeral-storage")


def is_container(item: Any) -> bool:
    """A mapping that reads as a core/v1 Container (see the module docstring)."""
    if not isinstance(item, dict) or not item:
        return False
    name, image = item.get("name"), item.get("image")
    named = isinstance(name, str) and bool(re.match(_DNS_LABEL, name))
    if not named and not (isinstance(image, str) and image.strip()):
        return False
    known = sum(1 for key in item if key in CONTAINER_FIELDS)
    return known * 2 > len(item)


def is_pod_spec(data: Any) -> bool:
    """A mapping with a non-empty ``containers`` list of containers."""
    if not isinstance(data, dict):
        return False
    containers = data.get("containers")
    return isinstance(containers, list) and bool(containers) and all(map(is_container, containers))


def is_resource_list(value: Any) -> bool:
    """A non-empty mapping of resource names to scalars naming a compute or extended resource."""
    if not isinstance(value, dict) or not value:
        return False
    compute = False
    for name, amount in value.items():
        if not isinstance(name, str) or not re.match(_RESOURCE_NAME, name):
            return False
        if isinstance(amount, (dict, list)):
            return False
        if name in _COMPUTE or name.startswith("hugepages-") or "/" in name:
            compute = True
    return compute


def is_requirements(data: Any, key: Any = None) -> bool:
    """A bare ResourceRequirements: only ``limits`` / ``requests`` / ``claims``, with at
    least one resource list; under a key named ``resources``, one other key may be beside
    them (a slip GPU024 reports)."""
    if not isinstance(data, dict) or not data:
        return False
    foreign = len(data.keys() - REQUIREMENT_KEYS)
    if foreign > (1 if key == "resources" else 0):
        return False
    return is_resource_list(data.get("limits")) or is_resource_list(data.get("requests"))


#: Variables that choose a container's accelerator devices (NVIDIA's container toolkit,
#: CUDA, AMD's ROCm and HIP).
DEVICE_VARIABLES = frozenset(
    {
        "NVIDIA_VISIBLE_DEVICES",
        "CUDA_VISIBLE_DEVICES",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
    }
)


def is_chart_gpu_container(data: Any, host_devices: bool = False) -> bool:
    """A chart's container with no ``resources`` that sets a device variable: a mapping
    with an ``image`` (a reference, or app-template's ``{repository, tag}``) and an ``env``
    (a list of entries or a mapping) naming one of :data:`DEVICE_VARIABLES`; or any such
    mapping with an image when the chart's values mount the host's GPU device nodes
    (``host_devices``: :func:`host_gpu_mounts`)."""
    if not isinstance(data, dict) or "resources" in data:
        return False
    image = data.get("image")
    if not (isinstance(image, str) and image.strip()) and not (
        isinstance(image, dict) and isinstance(image.get("repository"), str)
    ):
        return False
    if host_devices:
        return True
    env = data.get("env")
    if isinstance(env, dict):
        return not DEVICE_VARIABLES.isdisjoint(env)
    if isinstance(env, list):
        return any(isinstance(e, dict) and e.get("name") in DEVICE_VARIABLES for e in env)
    return False


#: The host's accelerator device nodes, which a device plugin hands to the containers that
#: request its resource (path globs; the resource to request): the DRM nodes of Intel and
#: AMD GPUs (``/dev/dri``, ``/dev/dri/renderD128``; intel/intel-device-plugins-for-kubernetes,
#: ROCm/k8s-device-plugin), AMD's compute interface (``/dev/kfd``), NVIDIA's
#: (``/dev/nvidia0``, ``/dev/nvidiactl``, ``/dev/nvidia-uvm``), the kernel's compute
#: accelerator nodes (``/dev/accel/accel0``: Gaudi, Intel NPU), Ascend's (``/dev/davinci0``,
#: Ascend/ascend-device-plugin), AWS Neuron's (``/dev/neuron0``) and Cambricon's
#: (``/dev/cambricon_dev0``). Not WSL's ``/dev/dxg``, which no device plugin serves.
HOST_GPU_DEVICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("/dev/dri", ("gpu.intel.com/i915", "amd.com/gpu")),
    ("/dev/dri/*", ("gpu.intel.com/i915", "amd.com/gpu")),
    ("/dev/kfd", ("amd.com/gpu",)),
    ("/dev/nvidia*", ("nvidia.com/gpu",)),
    ("/dev/accel", ("habana.ai/gaudi", "npu.intel.com/accel")),
    ("/dev/accel/*", ("habana.ai/gaudi", "npu.intel.com/accel")),
    ("/dev/davinci*", ("huawei.com/Ascend910",)),
    ("/dev/neuron*", ("aws.amazon.com/neuron",)),
    ("/dev/cambricon*", ("cambricon.com/mlu",)),
)


def host_gpu_device(path: Any) -> tuple[str, ...] | None:
    """The resources that serve host device path ``path`` (:data:`HOST_GPU_DEVICES`; a
    pattern's ``*`` is any rest), or None when it is no accelerator's device node."""
    if not isinstance(path, str) or not path.startswith("/dev/"):
        return None
    text = path.strip().rstrip("/")
    for pattern, resource in HOST_GPU_DEVICES:
        if text == pattern or (pattern.endswith("*") and text.startswith(pattern[:-1])):
            return resource
    return None


def host_gpu_mounts(data: Any, base: Path = ()) -> list[tuple[Path, str, tuple[str, ...], Any]]:
    """The ``hostPath`` volumes of GPU device nodes anywhere in a chart's values (``data``,
    at ``base``), in document order: a pod volume's ``hostPath: {path: /dev/dri}`` or
    app-template's ``{type: hostPath, hostPath: /dev/dri}`` (not one with ``enabled:
    false``, nor under ``metadata``). Each: where the path is written, the path, the
    resources that serve it (:func:`host_gpu_device`) and the mapping that holds it."""
    found: list[tuple[Path, str, tuple[str, ...], Any]] = []
    stack: list[tuple[Any, Path, int]] = [(data, base, 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, list):
            items: Any = enumerate(node)
        elif isinstance(node, dict):
            host = node.get("hostPath")
            device = host.get("path") if isinstance(host, dict) else host
            resource = host_gpu_device(device) if node.get("enabled") is not False else None
            if resource is not None:
                where = (
                    (*path, "hostPath", "path") if isinstance(host, dict) else (*path, "hostPath")
                )
                found.append((where, str(device).strip(), resource, node))
                continue
            items = node.items()
        else:
            continue
        if depth < MAX_DEPTH:
            for key, value in items:
                if key != "metadata" and isinstance(value, (dict, list)):
                    stack.append((value, (*path, key), depth + 1))
    found.reverse()
    return found


def holds_requirements(item: Any) -> bool:
    """A list item holding ``limits`` / ``requests`` beside fields of its own (llmaz flavors)."""
    if not isinstance(item, dict) or "containers" in item:
        return False
    return is_resource_list(item.get("limits")) or is_resource_list(item.get("requests"))


def find_pod_specs(obj: K8sObject, node_agent: bool = False) -> list[PodSpec]:
    """The pod specs and bare resource requirements of ``obj``, found by shape, in
    document order."""
    found: list[PodSpec] = []
    data = obj.data
    host: list[bool] = []  # whether the object mounts host GPU devices, once asked
    for key, value in data.items():
        if key in ("status", *SKIPPED_KEYS):
            continue
        _walk(obj, value, (*obj.path, key), data, 1, node_agent, found, host)
    _chart_gpus(obj, found, node_agent)
    return found


#: A chart values' ``gpu:`` block, by its ``type``: the key that overrides the resource
#: name, and the name the chart writes without it (otwld/ollama-helm
#: ``templates/deployment.yaml``: ``ollama.gpu.nvidiaResource`` default ``nvidia.com/gpu``,
#: ``amd.com/gpu`` for ``type: amd``, no type is NVIDIA; llama.cpp server charts add
#: ``amdResource`` and ``intelResource``, ``gpu.intel.com/i915``).
CHART_GPU_TYPES = {
    "nvidia": ("nvidiaResource", "nvidia.com/gpu"),
    "amd": ("amdResource", "amd.com/gpu"),
    "intel": ("intelResource", "gpu.intel.com/i915"),
}


def chart_gpu_blocks(data: Any, base: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The ``gpu:`` mappings with ``enabled: true`` anywhere in a chart's values (``data``,
    at ``base``; not under metadata nor the keys of :data:`SKIPPED_KEYS`), in document order."""
    found: list[tuple[Path, dict[str, Any]]] = []
    stack: list[tuple[Any, Path, int]] = [(data, base, 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, dict):
            block = node.get("gpu")
            if isinstance(block, dict) and block.get("enabled") is True:
                found.append(((*path, "gpu"), block))
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if depth < MAX_DEPTH:
            for key, value in items:
                if key not in SKIPPED_KEYS and key != "gpu" and isinstance(value, (dict, list)):
                    stack.append((value, (*path, key), depth + 1))
    found.reverse()
    return found


def chart_block_gpus(block: dict[str, Any], path: Path) -> list[tuple[str, Path]]:
    """The accelerators a chart writes into its container for an enabled ``gpu:`` block at
    ``path``: ``(resource name, where the amount is written)``. ``number`` (or ``count``)
    devices, 1 when absent, of the type's resource (:data:`CHART_GPU_TYPES`); NVIDIA MIG
    devices of ``mig.devices`` when ``mig.enabled``; none for an explicit zero, a type it
    does not know (``vulkan``) or a DRA claim (``draEnabled``)."""
    if block.get("draEnabled") is True:
        return []
    kind = block.get("type") or "nvidia"
    if not isinstance(kind, str) or kind.lower() not in CHART_GPU_TYPES:
        return []
    kind = kind.lower()
    mig = block.get("mig")
    if kind == "nvidia" and isinstance(mig, dict) and mig.get("enabled") is True:
        devices = mig.get("devices")
        return [
            (f"nvidia.com/mig-{name}", (*path, "mig", "devices", name))
            for name, amount in (devices.items() if isinstance(devices, dict) else ())
            if isinstance(name, str) and amount not in (0, "0")
        ]
    field, default = CHART_GPU_TYPES[kind]
    name = block.get(field)
    name = name.strip() if isinstance(name, str) and name.strip() else default
    key = next((k for k in ("number", "count") if k in block), None)
    if key is not None and block[key] in (0, "0"):
        return []
    return [(name, (*path, key or "enabled"))]


def _chart_gpus(obj: K8sObject, found: list[PodSpec], node_agent: bool) -> None:
    """Give a chart's container the accelerators its values' ``gpu:`` blocks turn on: each
    block belongs to the container whose ``resources`` the nearest enclosing values mapping
    holds (``ollama.gpu`` and ``resources`` of one values), as the chart writes it there.
    A block with no such container belongs to the nearest enclosing values mapping with an
    ``image``, or to the values that hold it as ``ollama.gpu`` (the Ollama chart's values with
    no ``resources``: the chart writes the request all the same), which becomes a container
    of its own, appended to ``found``."""
    holders = {
        pod.containers[0].path: pod
        for pod in found
        if pod.location == "resources"
        and len(pod.containers) == 1
        and pod.containers[0].section == "resources"
        and pod.containers[0].resources_key == "resources"
    }
    taken = {pod.path for pod in found}
    for path, block in chart_gpu_blocks(obj.data, obj.path):
        owner = path[:-1]
        pod = next(
            (holders[owner[:cut]] for cut in range(len(owner), 0, -1) if owner[:cut] in holders),
            None,
        )
        if pod is None:
            pod = _image_holder(obj, owner, taken, node_agent)
            if pod is None:
                continue
            holders[pod.containers[0].path] = pod
            found.append(pod)
        pod.operator_gpus = (*pod.operator_gpus, *chart_block_gpus(block, path))


def _image_holder(
    obj: K8sObject, owner: Path, taken: set[Path], node_agent: bool
) -> PodSpec | None:
    """A container for the values mapping at ``owner`` or the nearest above it that holds
    an ``image`` (a reference, ``{repository, tag}`` or a subchart's ``{tag}``) or holds the
    block's ``ollama`` mapping, not inside a pod spec already found (``taken``), nor a
    Kubernetes object itself (a values file's top is its chart's values)."""
    chain: list[tuple[Path, Any]] = []
    node: Any = obj.data
    if "apiVersion" not in node and "kind" not in node:
        chain.append((obj.path, node))  # a values file: its top is the chart's own values
    for depth, key in enumerate(owner[len(obj.path) :]):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
        chain.append((owner[: len(obj.path) + depth + 1], node))
    for at, mapping in reversed(chain):
        if any(at[:cut] in taken for cut in range(1, len(at) + 1)):
            return None
        if isinstance(mapping, dict) and (
            image_reference(mapping.get("image")) is not None
            or (at == owner[:-1] and owner[-1] == "ollama")
        ):
            name = at[-1] if at else owner[-1] if owner else None
            name = name if isinstance(name, str) else None
            container = Container(name, at, mapping, "resources", False, "resources")
            return _resources(obj, at, container, node_agent)
    return None


def _walk(
    obj: K8sObject,
    data: Any,
    path: Path,
    holder: Any,
    depth: int,
    node_agent: bool,
    found: list[PodSpec],
    host: list[bool],
) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(data, dict):
        key = path[-1]
        if is_pod_spec(data):
            found.append(_pod(obj, path, data, node_agent))
            return
        if (
            isinstance(key, str)
            and len(path) > 1
            and path[-2] == "containers"
            and isinstance(holder, dict)
            and (is_chart_gpu_container(data) or _host_chart_container(obj, data, host))
        ):
            container = Container(key, path, data, "resources", False, "resources")
            found.append(_resources(obj, path, container, node_agent))
            return
        if isinstance(key, str) and depth > 1 and is_requirements(data, key):
            container = Container(None, path[:-1], holder, "resources", False, key)
            found.append(_resources(obj, path, container, node_agent))
            return
        if isinstance(key, int) and is_model_spec(data, path):
            found.append(_model_spec_pod(obj, path, data, node_agent))
            return
        if isinstance(key, int) and holds_requirements(data):
            name = data.get("name")
            label = name if isinstance(name, str) else None
            container = Container(label, path, data, "resources", False, "")
            found.append(_resources(obj, path, container, node_agent))
            return
        for child, value in data.items():
            if child in SKIPPED_KEYS or not isinstance(value, (dict, list)):
                continue
            _walk(obj, value, (*path, child), data, depth + 1, node_agent, found, host)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            if isinstance(value, (dict, list)):
                _walk(obj, value, (*path, index), data, depth + 1, node_agent, found, host)


def _host_chart_container(obj: K8sObject, data: Any, host: list[bool]) -> bool:
    """A chart's container with an image and no resources in an object whose values mount
    the host's GPU device nodes (searched once per object, when first asked)."""
    if not is_chart_gpu_container(data, host_devices=True):
        return False
    if not host:
        host.append(bool(host_gpu_mounts(obj.data)))
    return host[0]


def is_model_spec(data: Any, path: Path) -> bool:
    """An item of a vLLM production stack's ``servingEngineSpec.modelSpec`` list that the
    chart makes a Deployment of: a mapping with a ``repository`` (the engine's image) and no
    ``raySpec`` (that model runs as a RayCluster). vllm-project/production-stack
    ``helm/templates/deployment-vllm-multi.yaml``."""
    return (
        len(path) > 2
        and path[-2] == "modelSpec"
        and path[-3] == "servingEngineSpec"
        and isinstance(data, dict)
        and isinstance(data.get("repository"), str)
        and "raySpec" not in data
    )


def _model_spec_pod(obj: K8sObject, path: Path, data: dict[str, Any], node_agent: bool) -> PodSpec:
    """The pod the production stack's chart makes of model ``data`` at ``path``: the item is
    its ``vllm`` container (``env``, ``resources``; the item's ``extraVolumeMounts`` are not
    its ``volumeMounts``), its ``initContainer`` an init container; with no ``resources``
    the chart writes ``requestGPU`` devices of ``requestGPUType`` (``nvidia.com/gpu``) into
    the container's requests and limits (``_helpers.tpl`` ``chart.resources``). The
    ``servingEngineSpec`` above gives every model's pod its ``tolerations`` and
    ``runtimeClassName`` (found by :func:`gpulint.k8s.podoptions.chart_pod_options`)."""
    name = data.get("name")
    # The GPUs of requestGPU are the container's own (the operator's amount is under its
    # path: gpulint.k8s.resources.container_gpu).
    containers = [Container(name if isinstance(name, str) else None, path, data, "containers")]
    init = data.get("initContainer")
    if isinstance(init, dict):
        label = init.get("name")
        at = (*path, "initContainer")
        containers.append(
            Container(label if isinstance(label, str) else None, at, init, "initContainers")
        )
    pod = PodSpec(obj, path, {}, containers, "resources", node_agent, found_by="shape")
    engine = value_at(obj.doc.data, path[:-2])
    if isinstance(engine, dict) and isinstance(engine.get("tolerations"), list):
        pod.inherited["tolerations"] = (*path[:-2], "tolerations")
    requested = _request_gpu(data)
    if requested is not None:
        pod.operator_gpus = ((requested[1], (*path, "requestGPU")),)
    containers[0].made = _model_spec_made(path, data, requested)
    return pod


def _request_gpu(data: dict[str, Any]) -> tuple[int | None, str] | None:
    """The devices a model's ``requestGPU`` asks for, when it gives no ``resources``: their
    count (None for a number that is not a whole count: ``"0.5"``) and ``requestGPUType``
    (``nvidia.com/gpu`` when not given); None when it asks for none."""
    if isinstance(data.get("resources"), dict):
        return None
    gpus = data.get("requestGPU")
    if not isinstance(gpus, (int, float, str)) or isinstance(gpus, bool):
        return None
    try:
        value = float(gpus)
    except ValueError:
        return None
    if not value > 0:
        return None
    kind = data.get("requestGPUType")
    resource = kind.strip() if isinstance(kind, str) and kind.strip() else "nvidia.com/gpu"
    return (int(value) if value.is_integer() and value < 2**31 else None), resource


#: The options ``deployment-vllm-multi.yaml`` writes for keys of a model's ``vllmConfig``
#: (vllm-project/production-stack ``helm/templates``), each followed by the key's value.
_VLLM_CONFIG_FLAGS = {
    "maxModelLen": "--max-model-len",
    "dtype": "--dtype",
    "tensorParallelSize": "--tensor-parallel-size",
    "maxNumSeqs": "--max-num-seqs",
    "gpuMemoryUtilization": "--gpu_memory_utilization",
    "maxLoras": "--max_loras",
}


def _model_spec_made(
    path: Path, data: dict[str, Any], requested: tuple[int | None, str] | None
) -> Made:
    """What the production stack's chart writes into a model's ``vllm`` container: the
    command ``vllm serve MODEL`` with an option for each of ``_VLLM_CONFIG_FLAGS``, then
    ``vllmConfig.extraArgs`` one argument each (quoted: a word with a space stays one
    argument); the whole ``requestGPU`` devices it requests (``requested``, by
    :func:`_request_gpu`); and the memory emptyDir it mounts at /dev/shm when ``vllmConfig`` has
    ``tensorParallelSize`` (of ``shmSize``, 20Gi by default). A mount at /dev/shm among
    the model's ``extraVolumeMounts`` is the model's own (not judged)."""
    argv: list[tuple[str, Path]] = [("vllm", (*path, "repository")), ("serve", path)]
    model = data.get("modelURL")
    if isinstance(model, str):
        argv.append((model, (*path, "modelURL")))
    config = data.get("vllmConfig")
    config = config if isinstance(config, dict) else {}
    at = (*path, "vllmConfig")
    for key, flag in _VLLM_CONFIG_FLAGS.items():
        value = config.get(key)
        if key in config and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            argv += [(flag, (*at, key)), (str(value), (*at, key))]
    extra = config.get("extraArgs")
    for i, item in enumerate(extra if isinstance(extra, list) else ()):
        if isinstance(item, (str, int, float)) and not isinstance(item, bool):
            argv.append((str(item), (*at, "extraArgs", i)))
    gpus: tuple[int, str, Path] | None = None
    if requested is not None and requested[0] is not None:
        gpus = (requested[0], requested[1], (*path, "requestGPU"))
    mounts = data.get("extraVolumeMounts")
    own = any(
        isinstance(m, dict) and str(m.get("mountPath", "")).rstrip("/") == "/dev/shm"
        for m in (mounts if isinstance(mounts, list) else ())
    )
    shm = None if own else "tensorParallelSize" in config
    return Made(tuple(argv), gpus, shm)


def _pod(obj: K8sObject, path: Path, spec: dict[str, Any], node_agent: bool) -> PodSpec:
    return PodSpec(obj, path, spec, containers_of(spec, path), "pod", node_agent, found_by="shape")


def _resources(obj: K8sObject, path: Path, container: Container, node_agent: bool) -> PodSpec:
    return PodSpec(obj, path, {}, [container], "resources", node_agent, found_by="shape")
