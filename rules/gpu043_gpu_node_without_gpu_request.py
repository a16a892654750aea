"""Pod on GPU nodes, under the NVIDIA runtime or on a CUDA image that requests no GPU.

## What it does
Flags a pod that requests no accelerator yet selects GPU nodes: a `nodeSelector` on a GPU
node label, or a required node affinity whose every term asks for one (`In`, `Exists`, or
`Gt` on a GPU count). The GPU labels are those of NVIDIA's GPU Feature Discovery
(`nvidia.com/gpu.present`, `nvidia.com/gpu.product`, any `nvidia.com/gpu.*`), Node Feature
Discovery's NVIDIA PCI label (`feature.node.kubernetes.io/pci-10de.present`), GKE
(`cloud.google.com/gke-accelerator`), EKS (`k8s.amazonaws.com/accelerator`), Karpenter and
EKS Auto Mode (`karpenter.k8s.aws/instance-gpu-*`, `eks.amazonaws.com/instance-gpu-*`,
`karpenter.azure.com/sku-gpu-*`), AMD's node labeller (`amd.com/gpu.*`,
`beta.amd.com/gpu.*`) and the common `accelerator` label; a `nodeSelector` label of the
cluster's own whose key or value has "gpu" as a word (a lab's `gputype: gpu-02`, `gpu:
"true"`, `node-type: gpu`; not one that says `non-gpu`, `no_gpu` or `cpu`) too, at `info`
whatever the signs below: whether it marks GPU
nodes is the cluster's, and the finding says what it assumed. A selector that rules GPUs out
(`instance-gpu-count: "0"`, `NotIn`, `DoesNotExist`, `gpu.present: "false"`) is not a GPU
selector. Alibaba Cloud ECI's pod annotations that ask for a GPU instance select GPU nodes
too: `k8s.aliyun.com/eci-use-specs` when every type it lists is of a GPU family (`ecs.gn6i-…`,
`ecs.gn7i-…`, `ecs.ebmgn…`, `ecs.sgn…`, `ecs.vgn…`), and `k8s.aliyun.com/eci-gpu-type`: on
the signs of GPU use below the finding is `info`, saying what it assumed (that ECI gives a
container the instance's GPUs only through its `nvidia.com/gpu` limit, as Alibaba's ECI
examples write it). A
`nodeSelector` whose every label is one of a node pool of the project (an eksctl
node group's `labels`, a Karpenter NodePool's template labels) or of the described cluster
(`node-pools:`, docs/cluster.md), when every pool it matches has GPU nodes, selects GPU
nodes too (`node-type: gpu-inference` of a `g5.xlarge` node group). The finding is at the
selector's key, and names the resource to request (the chip's own on an Ascend node:
`accelerator: huawei-Ascend910` asks for `huawei.com/Ascend910`). It is a warning when a
container runs an image built for GPUs (a CUDA image, a reference that says `cuda`, `gpu`,
`rocm`, `tensorrt`, `triton` or `nvidia` or names a PyTorch CUDA build such as `cu121`, Text
Embeddings Inference but for its `cpu-` tags), starts a GPU engine or launcher
(`gpulint/data/engines.json`) or `nvidia-smi`, passes an option that turns on CUDA or sets a
variable that switches it onto the GPU (`USE_GPU=true`, below): a workload that would use
the GPU it forgot to request. A pod that runs nothing known to use a GPU is meant to run on
those nodes (a node-local proxy, a serving system's controller) and is not flagged.

With the option `images: true`, also flags a container built on an NVIDIA CUDA image
(`nvidia/cuda`, `nvcr.io/nvidia/cuda`, `nvcr.io/nvidia/pytorch`, `tritonserver`,
`tensorflow`, `tensorrt`, ...) that does not set `NVIDIA_VISIBLE_DEVICES`, in a pod that
requests no accelerator. That half is off by default: a CUDA image also runs CPU steps
(data preparation, a client) on purpose.

Not flagged: node agents (DaemonSets, and pods that run an agent of `gpulint/data/agents.json`:
device plugins, DCGM exporter, feature discovery) and other GPU infrastructure of that table,
recognised by name, image or command line (an MPS control daemon started with
`nvidia-cuda-mps-control`, a Job that sets every GPU's compute or persistence mode with
`nvidia-smi -c` / `nvidia-smi -pm`, which must see the node's GPUs without holding one); a
pod that gets GPUs another way (a DRA claim for a GPU device class or one defined elsewhere,
a sharing resource such as `aliyun.com/gpu-mem` or HAMi's `nvidia.com/gpumem`, a MIG
resource, KAI Scheduler's `gpu-fraction` / `gpu-memory` pod annotations, a Spark driver or
executor whose GPUs Spark asks for, a name of an accelerator vendor's domain that the
registry does not list, such as `nvidia.com/a100`, a cluster's own name for its A100s: it may
be a GPU, and `devices: [{name: nvidia.com/a100}]` says it is; a resource name a template
fills in, `${MIG_RESOURCE}: "1"`); a pod whose container sets
`NVIDIA_VISIBLE_DEVICES`
to `none` or `void` (it means to run without GPUs) or to anything else (GPU016 reports
that).

A pod that runs under the NVIDIA container runtime (`runtimeClassName: nvidia`, or the GPU
Operator's `nvidia-cdi` / `nvidia-legacy`, k3s's `nvidia-experimental`) and requests no GPU is
flagged at its `runtimeClassName`: as a warning when a container runs a CUDA image (which sets
`NVIDIA_VISIBLE_DEVICES=all`, so the runtime hands it every GPU of the node), as `info` when a
container starts a GPU engine or launcher (`gpulint/data/engines.json`: vLLM, torchrun, ...; a
KubeRay group's first container, where KubeRay runs `ray start`, which counts the GPUs it sees;
not an engine told to use none, `ray start --num-gpus=0` or a group's `rayStartParams:
{num-gpus: "0"}`, whose image's name is then no sign of GPU use either) from another image,
whose environment gpulint cannot see, or shows the signs of GPU use a GPU node selector is
judged by: an image reference built for GPUs (`kokoro-fastapi-gpu`, `speaches:latest-cuda`,
`scrypted:nvidia`, `localai:…-cuda-12`), an option that turns on a CUDA backend (`--use-cuda`,
`--use_cuda true`, `--device cuda:0`; not `--use_cuda false`), llama.cpp's GPU offload of more
than 0 model layers (`-ngl 99`, `--n-gpu-layers 35`, `--gpu-layers all`, or
`LLAMA_ARG_N_GPU_LAYERS`; not `-ngl 0`), or a variable that switches the program onto the GPU:
a switch (`USE_GPU`, `ENABLE_GPU`, `GPU_ENABLED`, `USE_CUDA`, `CUDA_ENABLED`, also prefixed as
in `WHISPER_USE_GPU`) set to `true`, `1`, `yes`, `on`, `cuda` or `gpu`, the CUDA toolkit's path
for the program to load (`CUDA_HOME`, `CUDA_PATH` set to a path), or a variable naming the
device it runs on (`DEVICE`, `TORCH_DEVICE`, `TRANSCRIBE_DEVICE`, ...) set to `cuda`, `cuda:0`,
`gpu`, `rocm` or `hip`; in a list or a chart's `env` mapping. Not `USE_GPU=false` or `0`, a
device `cpu`, a list of device indices (`CUDA_VISIBLE_DEVICES=0`, GPU016's), nor any of them in
a container that also says it keeps to the CPU (`FORCE_CPU=true`, `CPU_ONLY=1`, `USE_CPU=true`,
a device variable set to `cpu`); variables a container takes through `envFrom` from a ConfigMap
of its file or project count as its own (and an `NVIDIA_VISIBLE_DEVICES` among them is
GPU016's). The `info` says what it assumed: that the image sets `NVIDIA_VISIBLE_DEVICES=all`,
as CUDA images do. Node agents, GPU infrastructure and a container that sets
`NVIDIA_VISIBLE_DEVICES` are not flagged, as above. A pod that selects GPU nodes is a warning
on the same signs; `info` when a container asks for 0 of an accelerator in so many words
(`nvidia.com/gpu: "0"`) and the only signs are its image's name or a variable: it says it runs
without one, and whether its image takes the node's GPUs anyway is the image's (the finding
says what it assumed).

Under the NVIDIA runtime, a media server that transcodes or infers on any GPU it sees
(Immich's server and machine learning, Jellyfin, Plex, Emby, Tdarr, Frigate, Unmanic,
HandBrake: the last part of the image's repository, `MEDIA_SERVERS`; not their companions,
`plex-meta-manager`, `jellyseerr`) with no GPU request is `info` too: the runtime class was
chosen for a GPU it then does not get (or gets every GPU of the node, where its image sets
`NVIDIA_VISIBLE_DEVICES`). Not when the runtime class is app-template's `defaultPodOptions`
of values with several controllers, one of which holds the GPU it is for, nor when a container
takes variables through `envFrom` (they may set `NVIDIA_VISIBLE_DEVICES`).

A pod whose preferred node affinity asks for GPU nodes (a term with a positive weight whose
expressions name a GPU node label, as above) and shows the same signs of GPU use (a CUDA
image, Ollama's, a server built for GPUs only, `nvidia-smi`, an option or variable that
turns on the GPU; not a launcher such as Ray, whose head may run without a GPU) but requests
no GPU is `info` at that term's key, in Kubernetes' own workloads and charts' values (an
operator's template may get its GPUs from another field): it is meant to use a GPU where it
lands on one (a request commented out "for CPU fallback"), which it then uses unscheduled or
not at all; a preferred term also lets it run on other nodes, hence information. A pod that
prefers GPU nodes and runs nothing known to use one is not flagged.

In a chart's values (bjw-s app-template's form: a `containers` mapping of names to
containers, docs/workloads.md), a container's pod options are the nearest above it: its
controller's `pod:`, else the values' `defaultPodOptions:`, else a `runtimeClassName` or
`nodeSelector` written beside the containers; they are judged as a pod's, the controller's
containers as one pod (one that holds a GPU holds it for the pod), and a `type: daemonset`
controller as a node agent. The image reference is `repository:tag`. Ollama's image
(`ollama/ollama`) and Jellyfin's official one (`jellyfin/jellyfin`) set
`NVIDIA_VISIBLE_DEVICES=all` as the CUDA images do (their Dockerfiles), so either under
`runtimeClassName: nvidia` with no GPU request is a warning.

A container that mounts the host's accelerator device nodes from a `hostPath` volume
(`/dev/dri`, `/dev/dri/renderD128`, `/dev/kfd`, `/dev/nvidia0`, `/dev/accel/accel0`,
`/dev/davinci0`, `/dev/neuron0`, `/dev/cambricon_dev0`; in a chart's values an
app-template `persistence` item `{type: hostPath, hostPath: /dev/dri}`, mounted into every
container or into those its `advancedMounts` name, or a pod volume in `extraVolumes`), in
a pod that requests no GPU, is `info` at the host path: it uses a GPU the scheduler never
gave it, usually privileged for it (the finding says so). The pod may land on a node
without the device, and the device plugin may give the same GPU to another pod. The help
names the resource to request (`gpu.intel.com/i915` or `amd.com/gpu` for `/dev/dri`,
`amd.com/gpu` for `/dev/kfd`, `nvidia.com/gpu`, ...) and says what it assumed: that a
device plugin serves those devices on its nodes. A chart container with no `resources`
is found by those mounts. Not flagged: node agents and GPU infrastructure (a device
plugin's DaemonSet mounts `/dev/dri` to serve it), a pod that requests a GPU or uses a
DRA claim (a chart container's `resources.claims`), and WSL's `/dev/dxg`, which no device
plugin serves (GPU016 leaves it too).

A pod that says nothing of its node (no GPU selector, no NVIDIA runtime class) and requests no
GPU, in which a container built for GPUs (its image reference says `cuda`, `gpu`, `nvidia`,
...) runs a GPU check, is `info` at the check: `nvidia-smi`, the CUDA samples' `deviceQuery`,
`bandwidthTest` or `vectorAdd`, code that asks `torch.cuda.` or
`tf.config.list_physical_devices(` for GPUs, or NVIDIA's `k8s/cuda-sample` image or Kubernetes'
`cuda-vector-add` run as they are. Such a pod is a GPU test that forgot its request: the device
plugin gives it no GPU, so it finds none, or, on a node whose default runtime is NVIDIA's, it
sees every GPU of the node unscheduled. It is `info` because gpulint cannot see the node's
runtime, and the finding says it assumed the check is meant to use a GPU. A GPU image that runs
anything else (a build with `nvcc`, a CPU step) and a GPU check in an image not built for GPUs
are not flagged.

A pod that says nothing of its node and requests no GPU, in one of Kubernetes' own workloads
(a Pod, Deployment, StatefulSet, Job: an operator's template such as a KServe ServingRuntime
gets its request from another object) or a KServe InferenceService whose predictor writes its
own containers (no serving runtime supplies them), in which a container runs a server built
for GPUs only, is `info` at what starts it: an NVIDIA NIM image run with its own entrypoint
(NIMs require an NVIDIA GPU; not with a `command`, nor with `args` that start with a program,
`args: [sleep, 1000s]`, which the image's entrypoint runs instead of the NIM), vLLM, SGLang
or TensorRT-LLM started by the command line or by the image's entrypoint (no `command` of
its own), or any program told vLLM's
`--gpu-memory-utilization` (`--gpu_memory_utilization`), the share of GPU memory to take,
whatever its image is named (a private `serving/vllm` build). Not when the image or command
line says CPU or another accelerator (`--device cpu`, a variable `*_DEVICE` set to `cpu`, an
image reference that says `cpu`, `neuron`, `tpu`, `xpu`, `hpu`, `gaudi`, `ascend` or
`openvino`), nor for vLLM's subcommands that run no engine (`vllm launch render`, which
renders prompts and tokens on the CPU; the clients `vllm chat`, `vllm complete` and `vllm
bench serve`; `vllm collect-env`). Without a GPU such a server finds none and stops; on a node
whose default runtime is NVIDIA's it uses the node's GPUs unscheduled. A NIM or one of those
engines is also a sign of GPU use for a pod on GPU nodes, as above.

A distributed program whose collectives run on NCCL, which runs on GPUs only, in a pod that
requests no GPU, is `info` at the command item that says so, whatever its image: an option
that chooses the backend (`--backend nccl`, as the Kubeflow PyTorchJob examples pass it,
`--dist-backend nccl`, `--ddp_backend nccl`, `--distributed-backend nccl`) or code that
starts a process group on it (`dist.init_process_group("nccl")`,
`init_process_group(backend="nccl")`). PyTorch's NCCL process group stops at start-up when
it finds no GPU. It is `info` because a GPU may reach the pod from outside the manifest (a
namespace's LimitRange default, a webhook, a node whose default runtime is NVIDIA's); the
finding says so. A container that also names `gloo` picks its backend at run time and is
not flagged. The same options are a sign of GPU use for a pod on GPU nodes or under the
NVIDIA runtime, as above. (The count of processes against the GPUs held is GPU041's, which
leaves containers without GPUs alone: a launcher on CPUs with gloo is no mistake.)

## Why it matters
The device plugin hands out GPUs only to containers that request them. A pod that selects
GPU nodes but requests none takes the CPU and memory of a GPU node without holding a GPU,
and, where the NVIDIA runtime is the node's default, a CUDA image (which sets
`NVIDIA_VISIBLE_DEVICES=all` itself) sees every GPU of the node, including those the
scheduler gave to other pods. Usually the request was simply forgotten: the job then either
squats on a GPU node or competes with the GPU's real owner.

## Example
```yaml
kind: Job
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.present: "true"   # GPU043: no GPU requested
      containers:
      - name: train
        image: nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04
```

## Use instead
```yaml
      containers:
      - name: train
        image: nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04
        resources:
          limits:
            nvidia.com/gpu: 1
```
or drop the node selector for a step that needs no GPU.

## Options
`images`: also flag containers built on a CUDA image that request no GPU and leave
`NVIDIA_VISIBLE_DEVICES` unset (default false).

## References
- https://github.com/NVIDIA/k8s-device-plugin/issues/61 (a container that requests no GPU
  sees all of them; `NVIDIA_VISIBLE_DEVICES=none`)
- https://github.com/intel/intel-device-plugins-for-kubernetes/blob/main/cmd/gpu_plugin/README.md
  (`gpu.intel.com/i915` hands a container `/dev/dri` nodes)
- https://github.com/ROCm/k8s-device-plugin (`amd.com/gpu`: `/dev/kfd` and `/dev/dri`)
- https://github.com/ollama/ollama/blob/main/Dockerfile (`ENV NVIDIA_VISIBLE_DEVICES=all`)
- https://github.com/jellyfin/jellyfin-packaging/blob/master/docker/Dockerfile
  (`ENV NVIDIA_VISIBLE_DEVICES="all"`)
- https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md (`-ngl`,
  `--gpu-layers`, `--n-gpu-layers`, `LLAMA_ARG_N_GPU_LAYERS`: layers stored in VRAM)
- https://bjw-s-labs.github.io/helm-charts/docs/common-library/ (app-template's
  `controllers`, `defaultPodOptions`, `persistence` with `advancedMounts`)
- https://github.com/NVIDIA/k8s-device-plugin#running-gpu-jobs (request GPUs through
  `resources.limits`)
- https://github.com/NVIDIA/k8s-device-plugin/blob/main/docs/gpu-feature-discovery/README.md
  (the `nvidia.com/gpu.*` labels)
- https://cloud.google.com/kubernetes-engine/docs/how-to/gpus (`cloud.google.com/gke-accelerator`)
- https://karpenter.sh/docs/reference/instance-types/ (`karpenter.k8s.aws/instance-gpu-*`)
- https://www.alibabacloud.com/help/en/ecs/user-guide/gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1
  (Alibaba Cloud's GPU instance families, for ECI's `eci-use-specs`)
- https://github.com/NVIDIA/KAI-Scheduler/tree/main/docs/gpu-sharing (`gpu-fraction`,
  `gpu-memory` annotations)
- https://gitlab.com/nvidia/container-images/cuda (the CUDA images set
  `NVIDIA_VISIBLE_DEVICES=all`)
- https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
  (the `nvidia` RuntimeClass; a pod that uses it without requesting a GPU gets every GPU)
- https://docs.k3s.io/advanced#nvidia-container-runtime-support (`runtimeClassName: nvidia`)
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import (
    NVIDIA_CUDA_IMAGES,
    Container,
    Path,
    PodSpec,
    RuleContext,
    Violation,
    accelerator_entries,
    chart_pod_options,
    expression_key_path,
    gpu_demand,
    gpu_label_resource,
    gpu_pool_selected,
    host_gpu_device,
    host_gpu_mounts,
    image_reference,
    kuberay_pod,
    label_says_yes,
    nvidia_runtime_class,
    required_node_terms,
    shares_by_annotation,
    spark_asks_for_gpus,
    value_at,
)

CODE = "GPU043"
NAME = "gpu-node-without-gpu-request"
SEVERITY = "warning"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: the GPU request is often in another file than the selector
OPTIONS: dict[str, Any] = {
    "images": {
        "type": "boolean",
        "description": (
            "Also flag containers built on an NVIDIA CUDA image that request no GPU and leave "
            "NVIDIA_VISIBLE_DEVICES unset."
        ),
        "default": False,
    },
}

#: NVIDIA's CUDA images (gpulint.api), which set NVIDIA_VISIBLE_DEVICES=all.
CUDA_IMAGES = NVIDIA_CUDA_IMAGES
#: Other images whose own environment sets NVIDIA_VISIBLE_DEVICES=all, as the CUDA images
#: do: Ollama's (ollama/ollama Dockerfile, final stage: ``ENV NVIDIA_VISIBLE_DEVICES=all``)
#: and Jellyfin's official image (jellyfin/jellyfin-packaging docker/Dockerfile: ``ENV
#: NVIDIA_VISIBLE_DEVICES="all"``; not linuxserver's, which leaves it unset).
VISIBLE_ALL_IMAGES = ("ollama/ollama", "jellyfin/jellyfin")
NVIDIA = "NVIDIA_VISIBLE_DEVICES"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.node_agent:
        return
    custom = False  # the selector is a label of the cluster's own (_custom_selector)
    if pod.location == "pod":
        selected = (
            _gpu_selector(pod.spec, pod.path) or _pool_selector(pod, ctx) or _eci_selector(pod)
        )
        if selected is None:
            selected = _custom_selector(pod.spec, pod.path)
            custom = selected is not None
        selected = selected or _preferred_selector(pod.spec, pod.path)
        runtime = nvidia_runtime_class(pod.spec, pod.path)
        containers = [c for c in pod.containers if c.section != "ephemeralContainers"]
        shared = False
    elif pod.location == "resources" and _chart_container(pod):
        options = chart_pod_options(pod, pod.containers[0], _CHART_POD_FIELDS)
        selected = _chart_selector(options)
        runtime = (
            nvidia_runtime_class(*options["runtimeClassName"])
            if "runtimeClassName" in options
            else None
        )
        controller = _chart_controller(pod)
        if isinstance(controller, Mapping) and str(controller.get("type")).lower() == "daemonset":
            return  # a node agent, as a DaemonSet's pods are
        if _controller_holds_gpu(pod, ctx, controller):
            return  # the pod is the controller's: another of its containers holds a GPU
        shared = runtime is not None and _shared_runtime(pod, runtime[1])
        containers = [_with_image_reference(c) for c in pod.containers]
        pod = PodSpec(pod.obj, pod.path, {}, containers, "resources", found_by=pod.found_by)
    else:
        return
    found = list(_findings(pod, ctx, selected, runtime, containers, shared, custom))
    yield from found
    if not found:
        yield from _host_device_findings(pod, ctx, containers)


def _findings(
    pod: PodSpec,
    ctx: RuleContext,
    selected: tuple[tuple[Any, ...], str, str] | None,
    runtime: tuple[str, tuple[Any, ...]] | None,
    containers: list[Container],
    shared: bool = False,
    custom: bool = False,
) -> Iterator[Violation]:
    images = ctx.options.get("images", False) is True
    probe = nccl = server = None
    if selected is None and runtime is None:
        probe = _probe(containers)
        nccl = _nccl(containers) if probe is None else None
        if probe is None and nccl is None and _as_written(pod, ctx):
            # Reading command lines for a server costs more than asking for the GPU request:
            # only a pod without one is read (the check below then repeats, cheaply).
            if not images and not _requests_no_gpu(pod, ctx):
                return
            server = _server(containers)
        if probe is None and nccl is None and server is None and not images:
            return
    extra = _from_configmaps(pod, ctx, containers)
    if not containers or any(_sets_visible_devices(c, extra) for c in containers):
        return  # `none`/`void`: meant to run without GPUs; any other value: GPU016's
    if not _requests_no_gpu(pod, ctx):
        return  # a GPU pod, or a DRA claim defined elsewhere that may well be a GPU
    from gpulint.api import image_repository

    cuda = [
        c
        for c in containers
        if isinstance(c.data.get("image"), str) and _cuda_image(image_repository(c.data["image"]))
    ]
    if selected is None and runtime is not None:
        ray = kuberay_pod(pod.obj) and not _ray_start_no_gpus(pod)
        yield from _runtime_findings(runtime[1], cuda, containers, extra, ray, shared)
        return
    if probe is not None:
        yield _probe_finding(*probe)
        if not images:
            return
        cuda = [c for c in cuda if c is not probe[0]]  # said once, by the probe's finding
    if nccl is not None:
        yield _nccl_finding(*nccl)
        if not images:
            return
        cuda = [c for c in cuda if c is not nccl[0]]  # said once, by the NCCL finding
    if server is not None:
        yield _server_finding(*server)
        if not images:
            return
        cuda = [c for c in cuda if c is not server[0]]  # said once, by the server's finding
    if selected is not None:
        # Nothing in it known to use a GPU: it is meant to run there (a node-local proxy, a
        # serving system's controller), not a GPU job that forgot its request.
        zero = any(e.amount.value == 0 for e in accelerator_entries(pod, ctx.registry))
        yield from _selected_finding(pod, selected, cuda, containers, extra, zero, custom)
        return
    for container in cuda:
        yield Violation(
            (*container.path, "image"),
            f"container {container.label} runs a CUDA image, which sets {NVIDIA}=all, but the "
            "pod requests no GPU: it sees other pods' GPUs on a GPU node; request the device "
            "(resources.limits: {nvidia.com/gpu: 1}), or set "
            f"{NVIDIA}=none if it needs none",
            at="value",
        )


def _selected_finding(
    pod: PodSpec,
    selected: tuple[tuple[Any, ...], str, str],
    cuda: list[Container],
    containers: list[Container],
    extra: Mapping[str, list[tuple[str, str]]],
    zero: bool = False,
    custom: bool = False,
) -> Iterator[Violation]:
    """A pod that selects (or prefers) GPU nodes and requests no GPU: reported when it shows
    it means to use one. ``zero``: a container asks for 0 of an accelerator in so many
    words; on signs of GPU use alone (an image named for GPUs, a switch) that makes the
    finding ``info``: the pod says it runs without one. ``custom``: the selector is a label
    of the cluster's own (``info``: whether it marks GPU nodes is the cluster's)."""
    where, label, resource = selected
    also = ""
    if cuda:
        also = f", and container {cuda[0].label}'s CUDA image sets {NVIDIA}=all"
    preferred = _PREFERRED_FIELD in where
    engine = None if cuda else _engine(containers)
    if preferred and engine is not None and engine[1] not in _PREFERRED_SIGNS:
        engine = None  # a launcher (a Ray head) may well run without a GPU
    use = None
    if not cuda and engine is None:
        # A container whose engine is told to use no GPU (a Ray head's `--num-gpus=0`) shows
        # no GPU use by its image's name either.
        use = gpu_use([c for c in containers if not _engine_told_none(c)], extra)
    if preferred and pod.obj.group not in _PLAIN_GROUPS and pod.location == "pod":
        return  # an operator's template: its GPUs may be asked for elsewhere
    if cuda or engine is not None or use is not None:
        if engine is not None:
            also = f", and container {engine[0]} starts {engine[1]}, which uses GPUs"
        elif use is not None and not use[2]:
            also = f", and container {use[0]} {use[1]}"
        weak = zero and not cuda and engine is None
        eci = _ECI_SPECS in where or _ECI_GPU_TYPE in where
        yield Violation(
            where,
            f"the pod {'prefers' if preferred else 'selects'} GPU nodes ({label}) but "
            f"requests no GPU{also}",
            severity="info" if preferred or weak or eci or custom else None,
            help=f"request the device (resources.limits: {{{resource}: 1}}), or drop the "
            "selector if it needs none (else it takes a GPU node's CPU and memory without "
            "a GPU"
            + (
                ", and sees the node's GPUs where the NVIDIA runtime is the default)"
                if cuda
                else ")"
            )
            + ("; assumed: it is meant to use a GPU where it lands on one" if preferred else "")
            + (
                "; assumed: it uses the GPU although it asks for 0"
                if weak and not preferred
                else ""
            )
            + (
                "; assumed: ECI gives a container the instance's GPUs only through its "
                "nvidia.com/gpu limit"
                if eci
                else ""
            )
            + (
                f"; assumed: the cluster's label {where[-1]} marks GPU nodes (a `node-pools:` "
                "entry with that label and its GPUs in .gpulint.yaml makes it certain)"
                if custom
                else ""
            ),
        )
        return


#: The groups of Kubernetes' own workloads (Pod, Deployment, StatefulSet, Job, ...): an
#: operator's pod template (a KServe ServingRuntime, a Ray head) may get its GPU request from
#: another object, so only these are judged by the server they start.
_PLAIN_GROUPS = frozenset({"", "apps", "batch"})
#: Engines that serve on GPUs only in their usual builds (engines.json): a pod that starts
#: one and holds no GPU finds none (``Failed to infer device type``), unless the build or
#: the command line says CPU.
GPU_ONLY_ENGINES = frozenset({"vLLM", "SGLang", "TensorRT-LLM", "Triton TensorRT-LLM backend"})
#: vLLM's option of the share of GPU memory it takes (``--gpu-memory-utilization 0.9``; the
#: underscore form is KServe's and older vLLM's): a program told it serves on a GPU, whatever
#: its image is named (``registry.local/serving/vllm:0.0.23``).
GPU_MEMORY = frozenset({"--gpu-memory-utilization", "--gpu_memory_utilization"})
#: Images of servers built for NVIDIA GPUs only: NVIDIA NIM microservices
#: (docs.nvidia.com/nim: each NIM "requires an NVIDIA GPU"), run with their own entrypoint.
GPU_ONLY_IMAGES = ("nvcr.io/nim/",)
#: Words of an image reference that say it is built for another device than a GPU.
_OTHER_DEVICE_WORDS = ("cpu", "neuron", "tpu", "xpu", "hpu", "gaudi", "ascend", "openvino")


def _server(containers: list[Container]) -> tuple[Container, Any, str] | None:
    """The first container that starts a server built for GPUs only: an engine of
    :data:`GPU_ONLY_ENGINES` started by its command line, or by its image's entrypoint (no
    ``command`` of its own), or an image of :data:`GPU_ONLY_IMAGES` run as it is; not when
    its image or command line says CPU or another accelerator (``--device cpu``,
    ``VLLM_TARGET_DEVICE=cpu``, a ``-cpu`` image)."""
    from gpulint.api import (
        command_words,
        find_engine,
        literal_env,
        may_start_engine,
        started_by_command,
    )

    for container in containers:
        image = container.data.get("image")
        if container.section != "containers" or not isinstance(image, str):
            continue
        reference = image.lower()
        if any(word in reference for word in _OTHER_DEVICE_WORDS):
            continue
        env = literal_env(container)
        if any("cpu" in str(v).lower() for k, v in env.items() if k.endswith("_DEVICE")):
            continue
        own_command = bool(container.data.get("command"))
        if reference.startswith(GPU_ONLY_IMAGES) and not own_command and not _runs_args(container):
            return container, (*container.path, "image"), "an NVIDIA NIM, which runs on GPUs only"
        told = _told_gpu_memory(container)
        if not may_start_engine(container) and not told:
            continue
        words = command_words(container, {})
        if _says_cpu([w.text for w in words]):
            continue
        started = find_engine(container, words)
        if started is None:
            memory = next((w for w in words if w.text.partition("=")[0] in GPU_MEMORY), None)
            if memory is not None:  # a vLLM server under another image or entrypoint
                return container, memory.path, f"a server told {memory.text}, which serves on GPUs"
            continue
        if started.engine.name not in GPU_ONLY_ENGINES:
            continue
        if started.own is started.words and own_command:
            continue  # found by its image only, running a command of its own (a proxy)
        if started.own is not started.words and not started_by_command(started):
            continue  # its name as another program's word: `pkill -f vllm`, `grep vllm`
        if _client_command([w.text for w in started.own]):
            continue  # `vllm launch render`, `vllm chat`: no engine on a GPU
        where = started.own[0].path if started.own else (*container.path, "image")
        return container, where, f"{started.engine.name}, which serves on GPUs"
    return None


#: vLLM's subcommands that run no engine (vLLM's CLI: ``chat`` and ``complete`` talk to a
#: server, ``launch render`` renders prompts and tokens on the CPU, ``collect-env`` reports,
#: ``bench serve`` loads a server from outside).
VLLM_CLIENT_COMMANDS = frozenset({"chat", "complete", "launch", "collect-env"})


def _client_command(words: list[str]) -> bool:
    """The engine's own words are a vLLM subcommand of :data:`VLLM_CLIENT_COMMANDS`, or
    ``bench serve``."""
    if len(words) < 2 or words[0].rsplit("/", 1)[-1] != "vllm":
        return False
    if words[1] in VLLM_CLIENT_COMMANDS:
        return True
    return words[1:3] == ["bench", "serve"]


def _told_gpu_memory(container: Container) -> bool:
    """An item of the container's ``command`` or ``args`` starts with an option of
    :data:`GPU_MEMORY`."""
    return any(
        isinstance(item, str) and item.strip().partition("=")[0] in GPU_MEMORY
        for field in ("command", "args")
        for item in (container.data.get(field) or ())
    )


def _as_written(pod: PodSpec, ctx: RuleContext) -> bool:
    """The pod's containers are as the scheduler sees them: a pod of Kubernetes' own
    workloads (:data:`_PLAIN_GROUPS`), or a KServe InferenceService predictor that writes
    its own containers (no serving runtime supplies them)."""
    if pod.obj.group in _PLAIN_GROUPS:
        return True
    return (
        pod.obj.root.kind == "InferenceService"
        and pod.location == "pod"
        and not gpu_demand(pod, ctx.registry, ctx.claims).supplied
    )


def _says_cpu(texts: list[str]) -> bool:
    """A command line that puts the engine on the CPU: ``--device cpu``, ``--device=cpu``."""
    for i, text in enumerate(texts):
        name, _, value = text.partition("=")
        if name == "--device" and (value or (texts[i + 1] if i + 1 < len(texts) else "")) == "cpu":
            return True
    return False


def _server_finding(container: Container, where: Any, what: str) -> Violation:
    """A GPU server in a pod that requests no GPU and says nothing of its node: info, since
    where the NVIDIA runtime is the node's default it may see every GPU unscheduled."""
    return Violation(
        where,
        f"container {container.label} runs {what}, but the pod requests no GPU and selects no "
        "GPU node",
        help="request the device (resources.limits: {nvidia.com/gpu: 1}); else it finds no GPU "
        "and stops, or uses the GPUs of a node whose default runtime is NVIDIA's unscheduled "
        "(assumed: a GPU build; a CPU build says so with --device cpu or a cpu image)",
        at="value",
        severity="info",
    )


#: Words of an image reference (repository and tag, lower case) that say it is built for
#: GPUs: ``pytorch-notebook:cuda12``, ``rocm/pytorch``, ``tritonserver``, ``-gpu``.
GPU_IMAGE_WORDS = ("cuda", "gpu", "rocm", "tensorrt", "triton", "nvidia")
#: PyTorch's name of a CUDA build (``cu118``, ``cu121``, ``cu128``: its wheels' local
#: version), as images built on them tag themselves (``yanwk/comfyui-boot:cu121``).
CUDA_WHEEL_TAG = r"(?<![a-z0-9])cu1[0-9]{2}(?![0-9])"
#: GPU serving images whose plain tags are the GPU build (the CPU build is tagged ``cpu-``):
#: Hugging Face Text Embeddings Inference.
GPU_BY_DEFAULT = ("huggingface/text-embeddings-inference",)


def _runs_args(container: Container) -> bool:
    """Do the container's arguments start with a program (``args: [sleep, 1000s]``)? A NIM
    image's entrypoint runs them instead of the NIM's server."""
    args = container.data.get("args")
    return isinstance(args, list) and bool(args) and not str(args[0]).startswith("-")


def _gpu_image(container: Container) -> bool:
    """The container's image is built for GPUs (:data:`GPU_IMAGE_WORDS`,
    :data:`GPU_BY_DEFAULT`)."""
    from gpulint.api import image_repository, image_tag

    image = container.data.get("image")
    if not isinstance(image, str):
        return False
    reference = image.lower()
    if any(word in reference for word in GPU_IMAGE_WORDS):
        return True
    if re.search(CUDA_WHEEL_TAG, reference.rsplit("/", 1)[-1]):
        return True
    repository = image_repository(image)
    return repository in GPU_BY_DEFAULT and not image_tag(image).startswith("cpu")


def _pool_selector(pod: PodSpec, ctx: RuleContext) -> tuple[tuple[Any, ...], str, str] | None:
    """The pod's ``nodeSelector`` when it picks GPU node pools of the project or the described
    cluster (:func:`gpu_pool_selected`): where, how the message names it, what to request."""
    pool = gpu_pool_selected(pod, ctx.evidence, ctx.cluster, ctx.registry)
    if pool is None:
        return None
    key, value = next(iter(pod.spec["nodeSelector"].items()))
    return (*pod.path, "nodeSelector", key), f"{key}: {value} of {pool.name}", pool.resource


#: Alibaba Cloud ECI's pod annotations that put a pod on a GPU-accelerated instance: the
#: instance types to use (``ecs.gn6i-c4g1.xlarge,...``) and the GPU type (``T4``).
_ECI_SPECS = "k8s.aliyun.com/eci-use-specs"
_ECI_GPU_TYPE = "k8s.aliyun.com/eci-gpu-type"
#: Alibaba Cloud's GPU instance families: gn (GPU), ebmgn (bare metal), sgn and vgn (vGPU).
_ALIBABA_GPU_FAMILY = r"ecs\.(?:ebm|s|v)?gn[0-9]"


def _eci_selector(pod: PodSpec) -> tuple[tuple[Any, ...], str, str] | None:
    """The pod's ECI annotation that asks Alibaba Cloud for a GPU instance (every type of
    ``k8s.aliyun.com/eci-use-specs`` a GPU type, or ``k8s.aliyun.com/eci-gpu-type``): where,
    how the message names it, what to request (assumed: ECI hands a container the instance's
    GPUs only through its ``nvidia.com/gpu`` limit)."""
    meta, base = pod.pod_metadata()
    if meta is None or base is None:
        return None
    annotations = meta.get("annotations")
    if not isinstance(annotations, Mapping):
        return None
    gpu_type = annotations.get(_ECI_GPU_TYPE)
    if isinstance(gpu_type, str) and gpu_type.strip():
        where = (*base, "annotations", _ECI_GPU_TYPE)
        return where, f"annotation {_ECI_GPU_TYPE}: {gpu_type.strip()}", "nvidia.com/gpu"
    specs = annotations.get(_ECI_SPECS)
    if not isinstance(specs, str):
        return None
    types = [t.strip() for t in specs.split(",") if t.strip()]
    if not types or not all(re.match(_ALIBABA_GPU_FAMILY, t) for t in types):
        return None
    shown = types[0] + (", ..." if len(types) > 1 else "")
    return (*base, "annotations", _ECI_SPECS), f"annotation {_ECI_SPECS}: {shown}", "nvidia.com/gpu"


def _engine(containers: list[Container]) -> tuple[str, str] | None:
    """The first container that starts a GPU engine or launcher (``engines.json``), runs
    ``nvidia-smi`` or an NVIDIA NIM, and what it starts."""
    from gpulint.api import command_words, find_engine, may_start_engine

    for container in containers:
        image = container.data.get("image")
        if isinstance(image, str) and image.lower().startswith(GPU_ONLY_IMAGES):
            return container.label, "an NVIDIA NIM"
        if any(w.text.rsplit("/", 1)[-1] == "nvidia-smi" for w in command_words(container, {})):
            return container.label, "nvidia-smi"
        if may_start_engine(container):
            started = find_engine(container, command_words(container, {}))
            if started is not None and not _told_no_gpus(started):
                return container.label, started.engine.name
    return None


def _engine_told_none(container: Container) -> bool:
    """The container starts an engine whose own command gives its device count as 0."""
    from gpulint.api import command_words, find_engine, may_start_engine

    if not may_start_engine(container):
        return False
    started = find_engine(container, command_words(container, {}))
    return started is not None and _told_no_gpus(started)


def _told_no_gpus(started: Any) -> bool:
    """The engine's own command gives its device count as 0 (``ray start --num-gpus=0``, a
    Ray head meant to schedule no GPU work): it uses none of the GPUs it sees."""
    from gpulint.api import flag_text

    for factor in started.engine.factors:
        given = flag_text(started.own, factor.flags)
        if given is not None and given[0].strip().strip("'\"") == "0":
            return True
    return False


def _ray_start_no_gpus(pod: PodSpec) -> bool:
    """A KubeRay group whose ``rayStartParams`` give ``num-gpus`` as 0: KubeRay's ``ray
    start`` then schedules no GPU work there."""
    from gpulint.api import value_at

    relative = tuple(pod.path[len(pod.obj.path) :])
    if len(relative) < 2 or relative[-2:] != ("template", "spec"):
        return False
    params = value_at(pod.obj.data, (*relative[:-2], "rayStartParams"))
    if not isinstance(params, Mapping):
        return False
    return str(params.get("num-gpus", "")).strip() == "0"


#: Programs that only report or test the GPUs they are given: NVIDIA's System Management
#: Interface and the CUDA samples' device checks (NVIDIA/cuda-samples: deviceQuery,
#: bandwidthTest, vectorAdd).
GPU_PROBES = frozenset({"nvidia-smi", "deviceQuery", "bandwidthTest", "vectorAdd"})
#: Code, in a command line, that asks a framework for its GPUs (``python -c "import torch;
#: print(torch.cuda.is_available())"``).
GPU_PROBE_CODE = ("torch.cuda.", "tf.config.list_physical_devices(")
#: Images whose own entrypoint is a GPU test: NVIDIA's CUDA sample images
#: (``nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0``, the device plugin's README) and
#: Kubernetes' own (``registry.k8s.io/cuda-vector-add:v0.1``, formerly ``k8s.gcr.io``, the
#: "Schedule GPUs" task's example, and its Docker Hub mirror).
GPU_PROBE_IMAGES = (
    "nvidia/k8s/cuda-sample",
    "cuda-vector-add",
    "mirrorgooglecontainers/cuda-vector-add",
)


def _probe(containers: list[Container]) -> tuple[Container, Any, str] | None:
    """The first container built for GPUs (:func:`_gpu_image`) that runs a GPU test or
    report (:data:`GPU_PROBES`, :data:`GPU_PROBE_CODE`, :data:`GPU_PROBE_IMAGES`): the
    container, where (the command's item, else the image) and what it runs. A GPU image
    that runs anything else (a build, a CPU step) is no evidence it needs a GPU."""
    from gpulint.api import command_words, image_repository

    for container in containers:
        if container.section == "ephemeralContainers" or not _gpu_image(container):
            continue
        words = command_words(container, {})
        for word in words:
            text = word.text.strip("\"'();&|")
            if text.rsplit("/", 1)[-1] in GPU_PROBES:
                return container, word.path, text.rsplit("/", 1)[-1]
            code = next((c for c in GPU_PROBE_CODE if c in word.text), None)
            if code is not None:
                return container, word.path, code.rstrip(".(")
        if not words and image_repository(container.data["image"]) in GPU_PROBE_IMAGES:
            return container, (*container.path, "image"), "its image's CUDA sample"
    return None


def _probe_finding(container: Container, where: Any, what: str) -> Violation:
    """A GPU test in a pod that requests no GPU and says nothing of its node: info, since
    where the NVIDIA runtime is the node's default it sees every GPU unscheduled."""
    return Violation(
        where,
        f"container {container.label} runs {what}, a GPU check, but the pod requests no GPU "
        "and selects no GPU node",
        help="request the device (resources.limits: {nvidia.com/gpu: 1}); else it finds no "
        "GPU, or every GPU of a node whose default runtime is NVIDIA's "
        f"(assumed: {what} is meant to use a GPU; set {NVIDIA}=none if it is not)",
        at="value",
        severity="info",
    )


#: Options (without dashes, lower case, ``_`` as ``-``) that choose the collective backend of
#: a distributed PyTorch program: the Kubeflow examples' ``--backend nccl``, the ImageNet
#: example's ``--dist-backend nccl``, Hugging Face Trainer's ``--ddp_backend nccl``,
#: Megatron's ``--distributed-backend nccl``.
BACKEND_OPTIONS = frozenset({"backend", "dist-backend", "ddp-backend", "distributed-backend"})
#: Code that starts a process group on NCCL: ``dist.init_process_group("nccl")``,
#: ``init_process_group(backend='nccl', ...)`` (a pattern, searched in each command item).
_NCCL_CODE = r"""init_process_group\(\s*(?:backend\s*=\s*)?["']nccl["']"""


def _backend_option(words: list[str]) -> str | None:
    """The option of ``words`` that chooses the NCCL backend, as written, if one does."""
    for i, word in enumerate(words):
        if not word.startswith("-"):
            continue
        name, eq, value = word.lstrip("-").partition("=")
        following = value if eq else (words[i + 1] if i + 1 < len(words) else "")
        if name.lower().replace("_", "-") in BACKEND_OPTIONS and following.lower() == "nccl":
            return word if eq else f"{word} {following}"
    return None


def _nccl(containers: list[Container]) -> tuple[Container, Any, str] | None:
    """The first container whose program runs its collectives on NCCL, which runs on GPUs
    only (PyTorch's ``ProcessGroupNCCL`` stops at start-up with no GPU): an option that
    chooses the backend (:data:`BACKEND_OPTIONS`) or code that starts a process group on it
    (:data:`_NCCL_CODE`). The container, the command item that says so, and what it says.
    A container that also names ``gloo`` picks its backend at run time (``"nccl" if
    torch.cuda.is_available() else "gloo"``) and is no evidence."""
    from gpulint.api import command_words

    for container in containers:
        if container.section == "ephemeralContainers":
            continue
        items = [
            (field, i, str(item))
            for field in ("command", "args")
            if isinstance(container.data.get(field), list)
            for i, item in enumerate(container.data[field])
            if isinstance(item, (str, int)) and not isinstance(item, bool)
        ]
        lowered = [text.lower() for _, _, text in items]
        if not any("nccl" in t for t in lowered) or any("gloo" in t for t in lowered):
            continue  # most command lines name neither: never split into words
        for field, i, text in items:
            if re.search(_NCCL_CODE, text):
                return container, (*container.path, field, i), "init_process_group"
        words = command_words(container, {})
        option = _backend_option([w.text.strip("\"'") for w in words])
        if option is not None:
            path = next(w.path for w in words if w.text.strip("\"'") == option.split()[0])
            return container, path, option
    return None


def _nccl_finding(container: Container, where: Any, what: str) -> Violation:
    """A program on NCCL in a pod that requests no GPU and says nothing of its node: info,
    since a GPU may reach it from outside the manifest (a namespace's LimitRange default,
    a webhook, a node whose default runtime is NVIDIA's)."""
    return Violation(
        where,
        f"container {container.label} uses NCCL ({what}), which runs on GPUs only, but the "
        "pod requests no GPU",
        help="request the device (resources.limits: {nvidia.com/gpu: 1}), or use the gloo "
        "backend on CPUs (else the process group fails at start-up with no GPU found; "
        "assumed: nothing outside the manifest gives the pod a GPU)",
        at="value",
        severity="info",
    )


def _requests_no_gpu(pod: PodSpec, ctx: RuleContext) -> bool:
    """The pod asks for no accelerator, shares none by annotation, is no Spark pod whose GPUs
    Spark asks for, and runs no GPU node agent or infrastructure of ``agents.json``."""
    from gpulint.api import find_agent  # rarely needed: imported then

    if any(_claims(c) for c in pod.containers):
        return False  # a chart's container that uses a DRA claim of its pod options
    return (
        gpu_demand(pod, ctx.registry, ctx.claims).cpu
        and not spark_asks_for_gpus(pod)
        and not shares_by_annotation(pod)
        and find_agent(pod) is None
    )


def _claims(container: Container) -> bool:
    resources = container.data.get(container.resources_key or "resources")
    return isinstance(resources, Mapping) and bool(resources.get("claims"))


#: The pod spec fields GPU043 reads from a chart's values (``chart_pod_options``).
_CHART_POD_FIELDS = ("runtimeClassName", "nodeSelector", "affinity")


def _chart_container(pod: PodSpec) -> bool:
    """A chart's container (app-template's form: a mapping with an image in a ``containers``
    mapping of names to containers), found by its ``resources`` or its device variable."""
    if len(pod.containers) != 1:
        return False
    container = pod.containers[0]
    return (
        len(container.path) > 1
        and container.path[-2] == "containers"
        and _image_reference(container) is not None
    )


def _image_reference(container: Container) -> str | None:
    """The container's image reference: the string, or a chart's ``{repository, tag}``."""
    image = container.data.get("image")
    if isinstance(image, dict) and not isinstance(image.get("repository"), str):
        return None  # a tag alone names no image to judge
    return image_reference(image)


def _with_image_reference(container: Container) -> Container:
    """The container with its image as one reference, as a pod's container writes it."""
    reference = _image_reference(container)
    if reference is None or reference == container.data.get("image"):
        return container
    data = {**container.data, "image": reference}
    label = container.label
    return Container(
        label, container.path, data, container.section, container.sidecar, container.resources_key
    )


def _chart_controller(pod: PodSpec) -> Any:
    """The mapping that holds a chart container's ``containers`` mapping (app-template's
    controller), or None."""
    node: Any = pod.obj.data
    for key in pod.containers[0].path[len(pod.obj.path) : -2]:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _shared_runtime(pod: PodSpec, where: Path) -> bool:
    """Whether a chart container's runtime class (at ``where``) is a default the values give
    every controller (app-template's ``defaultPodOptions``), not its controller's own, in
    values of several controllers: the class is for the one that holds the GPU."""
    controller = pod.containers[0].path[:-2]
    if tuple(where[: len(controller)]) == tuple(controller):
        return False
    controllers = value_at(pod.obj.doc.data, controller[:-1])
    return isinstance(controllers, Mapping) and len(controllers) > 1


def _controller_holds_gpu(pod: PodSpec, ctx: RuleContext, node: Any) -> bool:
    """Whether a container of a chart container's controller (``node``; app-template's
    form: its ``containers`` and ``initContainers`` mappings) requests an accelerator or a
    DRA claim: the controller is one pod, and each of its containers is found alone."""
    container = pod.containers[0]
    if not isinstance(node, Mapping):
        return False
    # Each container of the controller asks (one pod spec each): answered once an object.
    key = ("GPU043 controller", id(node))
    known = pod.obj.memo.get(key)
    if known is not None and known[0] is ctx.registry:
        held: bool = known[1]
        return held
    members: list[Container] = []
    for section in ("containers", "initContainers"):
        group = node.get(section)
        for name, data in group.items() if isinstance(group, Mapping) else ():
            if isinstance(data, dict):
                path = (*container.path[:-2], section, name)
                members.append(Container(str(name), path, data, "resources"))
    whole = PodSpec(pod.obj, pod.path, {}, members, "resources", found_by=pod.found_by)
    held = any(_claims(c) for c in members) or (
        bool(members) and not gpu_demand(whole, ctx.registry, ctx.claims).cpu
    )
    pod.obj.memo[key] = (ctx.registry, held)  # ``node`` is the object's: its id stays its
    return held


def _chart_selector(
    options: dict[str, tuple[Mapping[str, Any], Path]],
) -> tuple[tuple[Any, ...], str, str] | None:
    for field in ("nodeSelector", "affinity"):
        if field in options:
            holder, path = options[field]
            found = _gpu_selector({field: holder[field]}, path)
            if found is not None:
                return found
    if "affinity" in options:
        holder, path = options["affinity"]
        return _preferred_selector({"affinity": holder["affinity"]}, path)
    return None


def _runtime_findings(
    where: Path,
    cuda: list[Container],
    containers: list[Container],
    extra: Mapping[str, list[tuple[str, str]]],
    ray: bool = False,
    shared: bool = False,
) -> Iterator[Violation]:
    """A pod that runs under the NVIDIA runtime and holds no GPU: certain (a warning) for a
    CUDA image, which sets NVIDIA_VISIBLE_DEVICES=all; for a GPU engine in another image it
    depends on that image (info). A KubeRay group's pod (``ray``) starts Ray in its first
    container, whatever its command says. A media server of :data:`MEDIA_SERVERS` is
    ``info`` too, unless the runtime is a chart's default for every controller and another
    controller of the release holds one (``shared``)."""
    if cuda:
        yield Violation(
            where,
            "the pod runs under the NVIDIA runtime but requests "
            f"no GPU, and container {cuda[0].label}'s CUDA image sets {NVIDIA}=all",
            help="request the device (resources.limits: {nvidia.com/gpu: 1}), or set "
            f"{NVIDIA}=none if it needs none (else the runtime gives it every GPU of the node, "
            "other pods' too)",
            at="value",
        )
        return
    engine = _engine(containers)
    if engine is None and ray and containers:
        engine = (containers[0].label, "Ray (KubeRay's ray start), which detects the GPUs it sees")
    if engine is not None:
        yield Violation(
            where,
            "the pod runs under the NVIDIA runtime and container "
            f"{engine[0]} starts {engine[1]}, but the pod requests no GPU",
            help="request the device (resources.limits: {nvidia.com/gpu: 1}), or set "
            f"{NVIDIA}=none if it needs none (if its image sets {NVIDIA}=all, as CUDA images "
            "do, the runtime gives it every GPU of the node)",
            at="value",
            severity="info",
        )
        return
    use = gpu_use(containers, extra)
    if use is not None:
        yield Violation(
            where,
            "the pod runs under the NVIDIA runtime and container "
            f"{use[0]} {use[1]}, but the pod requests no GPU",
            help="request the device (resources.limits: {nvidia.com/gpu: 1}), or set "
            f"{NVIDIA}=none if it needs none (the runtime gives it the GPUs its {NVIDIA} "
            f"names; assumed: its image sets {NVIDIA}=all, as CUDA images do)",
            at="value",
            severity="info",
        )
        return
    media = None if shared else _media_server(containers)
    if media is not None:
        yield Violation(
            where,
            f"the pod runs under the NVIDIA runtime and container {media[0]} runs {media[1]}, "
            "which transcodes or infers on a GPU it sees, but the pod requests no GPU",
            help="request the device (resources.limits: {nvidia.com/gpu: 1}), or drop "
            f"runtimeClassName if it needs none (else it sees no GPU, or every GPU of the "
            f"node if its image sets {NVIDIA})",
            at="value",
            severity="info",
        )


#: Programs that use an NVIDIA GPU whenever one is visible to them (hardware transcoding,
#: on-device inference), by the last part of their image's repository: under the NVIDIA
#: runtime with no request they were meant to have one (not their companions:
#: ``plex-meta-manager``, ``jellyseerr``).
MEDIA_SERVERS = {
    "immich-server": "Immich's server",
    "immich-machine-learning": "Immich's machine learning",
    "jellyfin": "Jellyfin",
    "plex": "Plex",
    "pms-docker": "Plex",
    "plex-media-server": "Plex",
    "emby": "Emby",
    "embyserver": "Emby",
    "tdarr": "Tdarr",
    "tdarr_node": "Tdarr",
    "frigate": "Frigate",
    "unmanic": "Unmanic",
    "handbrake": "HandBrake",
}


def _media_server(containers: list[Container]) -> tuple[str, str] | None:
    """The first container that runs a program of :data:`MEDIA_SERVERS`, and its name; None
    when a container takes variables through ``envFrom`` (they may set
    ``NVIDIA_VISIBLE_DEVICES``: GPU016's, once known)."""
    from gpulint.api import image_repository

    if any(c.data.get("envFrom") for c in containers):
        return None
    for container in containers:
        image = container.data.get("image")
        if not isinstance(image, str):
            continue
        name = MEDIA_SERVERS.get(image_repository(image).rsplit("/", 1)[-1].lower())
        if name is not None:
            return container.label, name
    return None


#: Option names (without dashes, lower case, ``_`` as ``-``) that turn a program's CUDA
#: backend on: ``--use-cuda``, ``--use_cuda true``, ``--cuda``, ``--enable-cuda``.
CUDA_OPTIONS = frozenset({"cuda", "use-cuda", "enable-cuda", "with-cuda"})
#: Values of a device option or variable that name a GPU backend (``--device cuda:0``,
#: ``TRANSCRIBE_DEVICE=cuda``).
GPU_DEVICES = ("cuda", "gpu", "rocm", "hip")
#: Option names (as in :data:`CUDA_OPTIONS`) of llama.cpp's GPU offload: the number of
#: model layers to keep in GPU memory (``-ngl 99``, ``--n-gpu-layers 35``, ``--gpu-layers
#: all``; llama.cpp's tools/server/README.md). More than 0 layers offloads to the GPU.
GPU_LAYER_OPTIONS = frozenset({"ngl", "gpu-layers", "n-gpu-layers"})
#: Values that say no.
_NO = frozenset({"false", "0", "no", "off", "none"})
#: Values of a switch variable that turn it on.
_YES = frozenset({"true", "1", "yes", "on", "cuda", "gpu"})

#: Environment variables that switch a program onto the GPU or the CPU, as real projects
#: write them (name patterns, upper case, ``fnmatch``; the value that counts): a boolean
#: switch (``USE_GPU=true``, ``ENABLE_GPU=1``, ``GPU_ENABLED=yes``, ``USE_CUDA=on``;
#: prefixed: ``WHISPER_USE_GPU=true``) or a variable naming the device a program runs on
#: (``DEVICE=cuda``, ``TORCH_DEVICE=cuda:0``, ``WHISPER__INFERENCE_DEVICE=cuda``,
#: ``TRANSCRIBE_DEVICE=gpu``; not a list of device indices such as
#: ``CUDA_VISIBLE_DEVICES=0``, which is GPU016's). ``"gpu"`` rows are signs of GPU use;
#: ``"cpu"`` rows say the program keeps to the CPU (``FORCE_CPU=true``, ``CPU_ONLY=1``),
#: and a container that sets one shows no GPU use by its variables.
ENV_SWITCHES: tuple[tuple[str, str, str], ...] = (
    # (name pattern, what a matching value means, how the value is read)
    ("USE_GPU", "gpu", "switch"),
    ("*_USE_GPU", "gpu", "switch"),
    ("USE_GPUS", "gpu", "switch"),
    ("ENABLE_GPU", "gpu", "switch"),
    ("*_ENABLE_GPU", "gpu", "switch"),
    ("GPU_ENABLED", "gpu", "switch"),
    ("*_GPU_ENABLED", "gpu", "switch"),
    ("GPU_ENABLE", "gpu", "switch"),
    ("USE_CUDA", "gpu", "switch"),
    ("*_USE_CUDA", "gpu", "switch"),
    ("ENABLE_CUDA", "gpu", "switch"),
    ("CUDA_ENABLED", "gpu", "switch"),
    # Where the CUDA toolkit is, for the program to load or build against it (DeepEP's
    # and NVSHMEM's tests, PyTorch extensions): a path, any non-empty one.
    ("CUDA_HOME", "gpu", "path"),
    # llama.cpp's server reads its options from LLAMA_ARG_* variables: the GPU offload
    # (``-ngl``) from LLAMA_ARG_N_GPU_LAYERS (tools/server/README.md), a count of layers.
    ("LLAMA_ARG_N_GPU_LAYERS", "gpu", "layers"),
    ("CUDA_PATH", "gpu", "path"),
    ("*DEVICE", "gpu", "device"),
    ("*DEVICES", "gpu", "device"),
    ("FORCE_CPU", "cpu", "switch"),
    ("*_FORCE_CPU", "cpu", "switch"),
    ("USE_CPU", "cpu", "switch"),
    ("*_USE_CPU", "cpu", "switch"),
    ("CPU_ONLY", "cpu", "switch"),
    ("*_CPU_ONLY", "cpu", "switch"),
)


def _device_value(value: str) -> bool:
    word = value.strip().strip("\"'").lower()
    return any(word == d or word.startswith(d + ":") for d in GPU_DEVICES)


def _env_switch(name: str, value: str) -> str | None:
    """What variable ``name`` set to ``value`` says (:data:`ENV_SWITCHES`): ``"gpu"``,
    ``"cpu"``, or None (no switch, or one turned off)."""
    upper = name.upper()
    word = value.strip().strip("\"'").lower()
    for pattern, means, read in ENV_SWITCHES:
        if not fnmatch.fnmatchcase(upper, pattern):
            continue
        if read == "device" and _device_value(word):
            return means
        if read == "device" and word == "cpu":
            return "cpu"  # the program is told to run on the CPU
        if read == "switch" and word in _YES:
            return means
        if read == "path" and word.startswith("/"):
            return means
        if read == "layers" and _offloads(word):
            return means
    return None


def _offloads(value: str) -> bool:
    """A count of model layers to offload to the GPU (:data:`GPU_LAYER_OPTIONS`) that
    offloads some: a whole number above 0, or ``all``."""
    word = value.strip().strip("\"'").lower()
    return word == "all" or (word.isdigit() and int(word) > 0)


def _env_signs(
    container: Container, extra: tuple[tuple[str, str], ...] = ()
) -> tuple[str, str] | None:
    """The first variable of the container that switches it onto the GPU, and its value;
    None when none does, or when another of its variables keeps it on the CPU. ``extra``:
    the variables it takes from its project's ConfigMaps (:func:`_from_configmaps`)."""
    from gpulint.api import env_entries

    found: tuple[str, str] | None = None
    items = [item for _, item in env_entries(container)]
    items += [{"name": name, "value": value} for name, value in extra]
    for item in items:
        var, setting = item.get("name"), item.get("value")
        if container.section == "resources" and isinstance(setting, (bool, int)):
            setting = str(setting).lower()  # a chart's env mapping: the chart quotes it
        if not isinstance(var, str) or not isinstance(setting, str):
            continue
        means = _env_switch(var, setting)
        if means == "cpu":
            return None
        if means == "gpu" and found is None:
            found = var, setting.strip()
    return found


def gpu_use(
    containers: list[Container], extra: Mapping[str, list[tuple[str, str]]] | None = None
) -> tuple[str, str, bool] | None:
    """The first container that shows it means to use a GPU, what shows it in words, and
    whether that is only its image's name: an image reference built for GPUs
    (:func:`_gpu_image`: ``kokoro-fastapi-gpu``, ``speaches:latest-cuda``), an option that
    turns on a CUDA backend (:data:`CUDA_OPTIONS`; ``--device cuda``), or an environment
    variable that switches it onto the GPU (:data:`ENV_SWITCHES`: ``USE_GPU=true``,
    ``TRANSCRIBE_DEVICE=cuda``; a list or a chart's mapping)."""
    from gpulint.api import command_words

    for container in containers:
        if container.section == "ephemeralContainers":
            continue
        if _gpu_image(container):
            return container.label, f"runs {container.data['image']}, an image built for GPUs", True
        words = [w.text.strip("\"'") for w in command_words(container, {})]
        for i, word in enumerate(words):
            if not word.startswith("-"):
                continue
            name, eq, value = word.lstrip("-").partition("=")
            name = name.lower().replace("_", "-")
            following = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            if name in CUDA_OPTIONS and (
                not following or following.startswith("-") or following.lower() not in _NO
            ):
                return container.label, f"passes {word}", False
            if name in ("device", "devices") and _device_value(following):
                return container.label, f"passes {word if eq else f'{word} {following}'}", False
            if name in GPU_LAYER_OPTIONS and _offloads(following):
                return container.label, f"passes {word if eq else f'{word} {following}'}", False
        nccl = _nccl([container])
        if nccl is not None:
            return container.label, f"uses NCCL ({nccl[2]})", False
        switch = _env_signs(container, tuple((extra or {}).get(container.label, ())))
        if switch is not None:
            return container.label, f"sets {switch[0]}={switch[1]}", False
    return None


def _gpu_selector(spec: Mapping[str, Any], base: Path) -> tuple[tuple[Any, ...], str, str] | None:
    """Where pod spec ``spec`` (at ``base``) asks for GPU nodes: (path of the label key,
    what it says, resource)."""
    selector = spec.get("nodeSelector")
    if isinstance(selector, Mapping):
        for key, value in selector.items():
            resource = gpu_label_resource(str(key), value)
            if resource is not None and label_says_yes(value):
                return (*base, "nodeSelector", key), f"nodeSelector {key}: {value}", resource
    terms = required_node_terms(dict(spec))
    if not terms:
        return None
    first: tuple[tuple[Any, ...], str, str] | None = None
    for t, term in enumerate(terms):
        found = _gpu_expression(term)
        if found is None:
            return None  # this term lets the pod onto nodes without the label
        if first is None:
            e, key, resource = found
            path = expression_key_path(base, t, e)
            first = path, f"node affinity on {key}", resource
    return first


#: A label of a cluster's own that names GPUs (``gputype: gpu-02``, ``gpu: "true"``,
#: ``node-type: gpu``): "gpu" as a word of the key or of the value.
_CUSTOM_GPU = r"(?:^|[^a-z])gpus?(?:[^a-z]|type|$)"
#: Such a label's words that rule GPUs out (``non-gpu``, ``no_gpu``, ``cpu``).
_NOT_GPU = r"(?:^|[^a-z])(?:no|non|not|without)[-_ ]?gpu|(?:^|[^a-z])cpu(?:[^a-z]|$)"


def _custom_selector(
    spec: Mapping[str, Any], base: Path
) -> tuple[tuple[Any, ...], str, str] | None:
    """A ``nodeSelector`` label of the cluster's own whose key or value names GPUs (a lab's
    ``gputype: gpu-02``): where it is, what it says, the resource to request. Whether the
    label marks GPU nodes is the cluster's: the finding is ``info`` (``_selected_finding``)."""
    selector = spec.get("nodeSelector")
    if not isinstance(selector, Mapping):
        return None
    for key, value in selector.items():
        if not label_says_yes(value) or gpu_label_resource(str(key), value) is not None:
            continue
        words = f"{key}".lower(), f"{value}".lower()
        if any(re.search(_NOT_GPU, w) for w in words):
            continue  # `node-type: non-gpu`, `pool: cpu-only`: the label rules GPUs out
        if any(re.search(_CUSTOM_GPU, w) for w in words):
            return (*base, "nodeSelector", key), f"nodeSelector {key}: {value}", "nvidia.com/gpu"
    return None


def _preferred_selector(
    spec: Mapping[str, Any], base: Path
) -> tuple[tuple[Any, ...], str, str] | None:
    """The first term of ``spec``'s preferred node affinity, with a positive weight, that asks
    for a GPU node label: (path of its key, what it says, resource)."""
    affinity = spec.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, Mapping) else None
    terms = node.get(_PREFERRED_FIELD) if isinstance(node, Mapping) else None
    for t, term in enumerate(terms if isinstance(terms, list) else ()):
        if not isinstance(term, Mapping) or not _positive(term.get("weight")):
            continue
        found = _gpu_expression(term.get("preference"))
        if found is not None:
            e, key, resource = found
            path = (
                *base,
                "affinity",
                "nodeAffinity",
                _PREFERRED_FIELD,
                t,
                "preference",
                "matchExpressions",
                e,
                "key",
            )
            return path, key, resource
    return None


_PREFERRED_FIELD = "preferredDuringSchedulingIgnoredDuringExecution"
#: What a container starts that tells a pod preferring GPU nodes means to use one: servers
#: built for GPUs only, NVIDIA NIM and nvidia-smi (a launcher such as Ray is not).
_PREFERRED_SIGNS = GPU_ONLY_ENGINES | {"an NVIDIA NIM", "nvidia-smi"}


def _positive(weight: Any) -> bool:
    return isinstance(weight, int) and not isinstance(weight, bool) and weight > 0


def _gpu_expression(term: Any) -> tuple[int, str, str] | None:
    exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
    for e, expr in enumerate(exprs if isinstance(exprs, list) else ()):
        if not isinstance(expr, Mapping) or not isinstance(expr.get("key"), str):
            continue
        values = expr.get("values")
        values = values if isinstance(values, list) else []
        resource = gpu_label_resource(expr["key"], values[0] if values else None)
        if resource is None:
            continue
        operator = expr.get("operator")
        if operator == "Exists" and expr["key"] != "accelerator":
            return e, expr["key"], resource
        if operator == "In" and values and all(label_says_yes(v) for v in values):
            return e, expr["key"], resource
        gt = _number(values[0]) if operator == "Gt" and values else None
        if gt is not None and gt >= 0 and expr["key"].endswith("-count"):
            return e, expr["key"], resource
    return None


def _number(value: Any) -> float | None:
    try:
        return float(str(value))
    except ValueError:
        return None


def _cuda_image(repository: str) -> bool:
    return any(
        fnmatch.fnmatchcase(repository.lower(), pattern) or repository.lower() == pattern
        for pattern in (*CUDA_IMAGES, *VISIBLE_ALL_IMAGES)
    )


def _sets_visible_devices(container: Container, extra: Mapping[str, list[tuple[str, str]]]) -> bool:
    from gpulint.api import env_entries

    if any(name == NVIDIA for name, _ in extra.get(container.label, ())):
        return True  # from a ConfigMap of the project, through envFrom
    return any(item.get("name") == NVIDIA for _, item in env_entries(container))


def _from_configmaps(
    pod: PodSpec, ctx: RuleContext, containers: list[Container]
) -> dict[str, list[tuple[str, str]]]:
    """The variables each container (by label) takes through ``envFrom`` from a ConfigMap
    of its file or project, with their values (gpulint.k8s.envvalues)."""
    from gpulint.api import envfrom_configmaps

    if pod.location != "pod":
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    for container in containers:
        if "envFrom" not in container.data:
            continue
        found = envfrom_configmaps(container, pod.obj.root.ref.namespace, ctx.values)
        out[container.label] = [(f.name, f.source.value or "") for f in found]
    return out


def _host_device_findings(
    pod: PodSpec, ctx: RuleContext, containers: list[Container]
) -> Iterator[Violation]:
    """A container that mounts the host's GPU device nodes from a ``hostPath`` volume in a
    pod that requests no GPU: it uses a GPU the scheduler never gave it (info: whether a
    device plugin serves those devices on its nodes is not known)."""
    if pod.location == "pod":
        mounts = _pod_host_devices(pod)
        index = _mount_index(mounts)
    else:
        mounts, index = _chart_host_devices(pod)
    if not mounts or not _requests_no_gpu(pod, ctx):
        return
    for container in containers:
        found = [index[k] for k in _mount_keys(container) if k in index]
        if not found:
            continue
        where, device, resource, _ = mounts[min(found)]
        privileged = container.privileged
        yield Violation(
            where,
            f"container {container.label} mounts the host's GPU device {device}"
            + (" and runs privileged" if privileged else "")
            + " but the pod requests no GPU",
            help="request the device (resources.limits: "
            + " or ".join(f"{{{r}: 1}}" for r in resource)
            + ") and drop the hostPath volume (else the pod may land on a node without "
            "the device, and the device plugin may give the same GPU to another pod; "
            "assumed: a device plugin serves these devices on its nodes)",
            at="value",
            severity="info",
        )
        return  # one cause: the first device of the first container that mounts it


def _mount_index(
    mounts: list[tuple[Path, str, tuple[str, ...], set[Any] | None]],
) -> dict[Any, int]:
    """Who mounts what: each name of :func:`_mount_keys` (``"all"``: every container) to the
    first of ``mounts`` it mounts."""
    index: dict[Any, int] = {}
    for order, (_, _, _, names) in enumerate(mounts):
        for name in ("all",) if names is None else names:
            index.setdefault(name, order)
    return index


def _mount_keys(container: Container) -> list[Any]:
    """The names a device mount may reach the container by: every container (``"all"``),
    a pod volume it mounts (``("volume", name)``), or a chart's container by its controller
    and name (``("container", controller, name)``, app-template's ``advancedMounts``)."""
    keys: list[Any] = ["all"]
    mounts = container.data.get("volumeMounts")
    for mount in mounts if isinstance(mounts, list) else ():
        if isinstance(mount, Mapping) and isinstance(mount.get("name"), str):
            keys.append(("volume", mount["name"]))
    path = [k for k in container.path if isinstance(k, str)]
    if "controllers" in path[:-1]:
        at = path.index("controllers")
        if at + 1 < len(path):
            keys.append(("container", path[at + 1], path[-1]))
    return keys


def _pod_host_devices(pod: PodSpec) -> list[tuple[Path, str, tuple[str, ...], set[Any] | None]]:
    """The pod's ``hostPath`` volumes of GPU device nodes: where the path is written, the
    path, the resource that serves it, and the volume's name (the containers that mount it)."""
    volumes = pod.spec.get("volumes")
    out: list[tuple[Path, str, tuple[str, ...], set[Any] | None]] = []
    for index, volume in enumerate(volumes if isinstance(volumes, list) else ()):
        host = volume.get("hostPath") if isinstance(volume, Mapping) else None
        path = host.get("path") if isinstance(host, Mapping) else None
        resource = host_gpu_device(path)
        if resource is not None:
            where = (*pod.path, "volumes", index, "hostPath", "path")
            out.append((where, str(path).strip(), resource, {("volume", volume.get("name"))}))
    return out


def _chart_host_devices(
    pod: PodSpec,
) -> tuple[list[tuple[Path, str, tuple[str, ...], set[Any] | None]], dict[Any, int]]:
    """A chart's ``hostPath`` volumes of GPU device nodes anywhere in its values
    (:func:`host_gpu_mounts`: ``extraVolumes: [{hostPath: {path: /dev/dri}}]``, an
    app-template persistence item ``{type: hostPath, hostPath: /dev/dri}``), with the
    containers its ``advancedMounts`` name (None: mounted in every container)."""
    # Each container of the values asks (one pod spec each): searched once an object.
    memo = pod.obj.memo
    if "GPU043 host devices" not in memo:
        found = [
            (where, device, resource, _advanced_mounts(item))
            for where, device, resource, item in host_gpu_mounts(pod.obj.data, pod.obj.path)
        ]
        memo["GPU043 host devices"] = found, _mount_index(found)
    cached: tuple[list[tuple[Path, str, tuple[str, ...], set[Any] | None]], dict[Any, int]]
    cached = memo["GPU043 host devices"]
    return cached


def _advanced_mounts(item: Mapping[str, Any]) -> set[Any] | None:
    """The containers an app-template persistence item mounts into when it names them
    (``advancedMounts: {controller: {container: [...]}}``, without ``globalMounts``)."""
    advanced = item.get("advancedMounts")
    if not isinstance(advanced, Mapping) or item.get("globalMounts"):
        return None
    names: set[Any] = set()
    for controller, per in advanced.items():
        for container in per if isinstance(per, Mapping) else ():
            names.add(("container", controller, container))
    return names
