"""Container built for one vendor's accelerator that requests another vendor's.

## What it does
Flags a container whose image reference says it is built for an accelerator that is not
NVIDIA's, while every accelerator it requests is another vendor's:

- Huawei Ascend NPUs: an image that says `ascend` or `mindie` (MindIE, vLLM Ascend,
  `ascendhub` images) holding `nvidia.com/gpu`, `amd.com/gpu`, ...;
- AMD GPUs: an image that says `rocm` (`rocm/vllm`, `rocm/pytorch`);
- AWS Neuron: an image that says `neuron` (`pytorch-inference-neuronx`);
- Intel Gaudi: an image that says `habana` or `gaudi`;

and the other way round, a CUDA build holding only devices no CUDA program can drive (AMD,
Intel and Gaudi GPUs, Neuron, Ascend, TPU): an image that says `cuda`
(`pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime`, `localai:…-cuda-12`), NVIDIA's CUDA and
NGC images, and engines published as a CUDA build with their other builds under other names
(`vllm/vllm-openai`, `lmsysorg/sglang`, Text Generation Inference), unless
the reference says it is another build (`rocm`, `xpu`, `intel`, `cpu`, ...). GPUs whose
toolkits take CUDA programs (Iluvatar, MetaX, Moore Threads, Hygon) are not held against it.

A program whose accelerator builds are tags of their own, the plain version tag being its
CPU build (Immich's machine learning: `-cuda`, `-rocm`, `-openvino`, `-armnn`, `-rknn`),
is flagged when its CPU build (`v3.1.0`, `release`, a digest after the version) holds an
accelerator or a DRA claim: the device stays idle.

The image is the container's reference, or a chart's values `{repository, tag}` (a
subchart's `{tag}` alone). The requests are the container's `resources.limits` (and
`requests`) names the registry knows, and what a chart's values' GPU block asks for (the
Ollama chart's `ollama.gpu: {enabled: true, type: nvidia}`, with or without `resources`);
a container that also requests its image's accelerator, or asks for devices through a
DRA claim, is not flagged, nor are GPU node agents (a DaemonSet, an agent of
`gpulint/data/agents.json`).

## Why it matters
The scheduler gives the pod the devices it asked for, which its program cannot drive: a
MindIE server on an NVIDIA GPU finds no NPU and stops, or reaches the node's NPUs through
host devices the scheduler never gave it, while the GPU it holds stays idle; vLLM's CUDA
build on eight MI300X finds no GPU; Ollama's ROCm build under an NVIDIA request runs on the
CPU.

## Example
```yaml
containers:
- name: mindie
  image: swr.cn-south-1.myhuaweicloud.com/ascendhub/mindie:2.0.RC2-800I-A2-py311
  resources:
    limits:
      nvidia.com/gpu: 8   # GPU028: an Ascend image
```

## Use instead
```yaml
    limits:
      huawei.com/Ascend910: 8
```

## Options
None.

## References
- Huawei Ascend device plugin (`huawei.com/Ascend910`, `huawei.com/Ascend310P`):
  https://gitee.com/ascend/ascend-device-plugin
- ROCm/k8s-device-plugin (`amd.com/gpu`), aws-neuron/aws-neuron-sdk (`aws.amazon.com/neuron`),
  HabanaAI/habanalabs-k8s-device-plugin (`habana.ai/gaudi`)
- Immich documentation, "Hardware-Accelerated Machine Learning" (the `-cuda`, `-rocm`,
  `-openvino`, `-armnn` and `-rknn` images of `immich-machine-learning`)
- vLLM's images (`vllm/vllm-openai` CUDA, `rocm/vllm` ROCm):
  https://docs.vllm.ai/en/latest/deployment/docker.html
- Ollama's AMD image (`ollama/ollama:rocm`): https://github.com/ollama/ollama/blob/main/docs/docker.md
  (the default image also has a Vulkan backend since 0.12: not held to CUDA)
- otwld/ollama-helm `values.yaml` (`ollama.gpu.type`, `ollama.gpu.number`)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    NVIDIA_CUDA_IMAGES,
    Container,
    PodSpec,
    RuleContext,
    Violation,
    image_reference,
    image_repository,
    image_tag,
    resource_lists,
)

CODE = "GPU028"
NAME = "accelerator-image-mismatch"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

#: Words of an image reference that say which accelerator it is built for: the registry's
#: ``hardware`` of that accelerator, the words, and how a message names it.
IMAGE_VENDORS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("huawei-ascend", ("ascend", "mindie"), "Huawei Ascend NPUs"),
    ("amd", ("rocm",), "AMD GPUs (ROCm)"),
    ("aws-neuron", ("neuron",), "AWS Neuron devices"),
    ("habana", ("habana", "gaudi"), "Intel Gaudi devices"),
)

#: Images built for NVIDIA's CUDA alone (repository, without registry host, tag or digest):
#: NVIDIA's CUDA and NGC framework images (gpulint.api), TensorRT-LLM's, and engines whose
#: other builds are separate repositories or tags that say so (vLLM: ``vllm/vllm-openai``
#: is the CUDA build, ROCm's are ``rocm/vllm`` and ``…-rocm`` tags; SGLang:
#: ``lmsysorg/sglang`` tags that say ``rocm`` or ``xpu`` are the others; Text Generation
#: Inference: ``-rocm``, ``-intel`` tags). Not ``ollama/ollama``: since 0.12 it carries a
#: Vulkan backend for Intel and AMD GPUs too.
CUDA_IMAGES = (
    *NVIDIA_CUDA_IMAGES,
    "nvidia/tensorrt-llm/release",
    "vllm/vllm-openai",
    "lmsysorg/sglang",
    "huggingface/text-generation-inference",
)

#: Words of a reference that say it is not the CUDA build (checked before ``cuda`` and
#: :data:`CUDA_IMAGES`): another vendor's stack, or the CPU's.
NOT_CUDA = frozenset(
    {
        "rocm",
        "hip",
        "xpu",
        "ipex",
        "intel",
        "oneapi",
        "sycl",
        "openvino",
        "vulkan",
        "habana",
        "gaudi",
        "neuron",
        "ascend",
        "mindie",
        "npu",
        "tpu",
        "cpu",
        "metal",
        "musa",
        "maca",
        "corex",
        "dtk",
        "cann",
    }
)

#: The accelerators a CUDA build cannot drive (registry ``hardware``): vendors whose stack
#: is not CUDA-compatible. Chinese GPUs with CUDA-compatible toolkits (Iluvatar CoreX,
#: MetaX MACA, Moore Threads MUSA, Hygon DTK) are left out.
NOT_CUDA_HARDWARE = frozenset(
    {"amd", "intel", "habana", "aws-neuron", "huawei-ascend", "google-tpu"}
)


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.node_agent:
        return
    registry = ctx.registry
    for container in pod.containers:
        reference = image_reference(container.data.get("image"))
        if reference is not None and (found := _cpu_build(container, reference, ctx)):
            yield found
            continue
        if reference is None or (container.resources or {}).get("claims"):
            continue
        reference = reference.lower()
        built = _built_for(reference)
        if built is None:
            continue
        # Each held accelerator's hardware -> (where its amount is written, its name).
        held: dict[str, tuple[tuple[Any, ...], str]] = {}
        for section, mapping in resource_lists(container):
            for name in mapping:
                entry = registry.get(name) if isinstance(name, str) else None
                if entry is not None and registry.is_accelerator(name):
                    where = (*container.resources_path, section, name)
                    held.setdefault(entry.hardware, (where, name))
        if len(pod.containers) == 1:  # a chart's GPU block is its one container's
            for name, where in pod.operator_gpus:
                entry = registry.get(name)
                if entry is not None and registry.is_accelerator(name):
                    held.setdefault(entry.hardware, (where, name))
        if not held or built[0] in held:
            continue
        if built[0] == "nvidia" and not set(held) <= NOT_CUDA_HARDWARE:
            continue
        path, name = next(iter(held.values()))
        yield Violation(
            path,
            f"container {container.label} runs an image built for {built[2]} but holds {name}, "
            "which it cannot use",
            help=f"request the accelerator its image is built for (the devices of "
            f"{built[2]}), or run an image built for {name}",
            at="key",
        )


#: Programs whose GPU builds are tags of their own, the plain tag being the CPU build: the
#: repository (without registry host) -> the program's name and the tag suffixes of its
#: accelerator builds (Immich's docs, "Hardware-Accelerated Machine Learning": the
#: ``-cuda``, ``-rocm``, ``-openvino``, ``-armnn`` and ``-rknn`` images).
CPU_BUILDS = {
    "immich-app/immich-machine-learning": (
        "Immich machine learning",
        ("cuda", "rocm", "openvino", "armnn", "rknn"),
    ),
}


def _cpu_build(container: Container, reference: str, ctx: RuleContext) -> Violation | None:
    """A container that runs the CPU build of a program of :data:`CPU_BUILDS` (a version
    tag without an accelerator suffix) while it holds an accelerator or a DRA claim: the
    device stays idle."""
    row = CPU_BUILDS.get(image_repository(reference))
    if row is None:
        return None
    tag = image_tag(reference)
    if not re.fullmatch(r"v?[0-9]+(?:\.[0-9]+)*|release|latest", tag):
        return None  # an accelerator build, a template, or no tag: not known to be the CPU's
    program, builds = row
    where, name = next(
        (
            ((*container.resources_path, section, key), key)
            for section, mapping in resource_lists(container)
            for key in mapping
            if isinstance(key, str) and ctx.registry.is_accelerator(key)
        ),
        (None, ""),
    )
    claims = (container.resources or {}).get("claims")
    if where is None and isinstance(claims, list) and claims:
        where, name = (*container.resources_path, "claims"), "a DRA claim"
    if where is None:
        return None
    return Violation(
        where,
        f"container {container.label} runs {program}'s CPU build (tag {tag}) but holds {name}, "
        "which it never uses",
        help=f"run the build for its accelerator (a tag ending -{', -'.join(builds)}), or "
        "drop the request",
        at="key",
    )


def _built_for(reference: str) -> tuple[str, tuple[str, ...], str] | None:
    """The accelerator ``reference`` (lower case) is built for, as a row of
    :data:`IMAGE_VENDORS` (NVIDIA's CUDA: a ``cuda`` word or :data:`CUDA_IMAGES`), or None."""
    built = next((v for v in IMAGE_VENDORS if any(w in reference for w in v[1])), None)
    if built is not None:
        return built
    if not NOT_CUDA.isdisjoint(re.split(r"[^a-z0-9]+", reference)):
        return None
    if "cuda" in reference or image_repository(reference) in CUDA_IMAGES:
        return ("nvidia", ("cuda",), "NVIDIA GPUs (CUDA)")
    return None
