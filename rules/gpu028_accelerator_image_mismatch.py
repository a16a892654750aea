"""Container built for one vendor's accelerator that requests another vendor's.

## What it does
Flags a container whose image reference says it is built for an accelerator that is not
NVIDIA's, while every accelerator it requests is another vendor's:

- Huawei Ascend NPUs: an image that says `ascend` or `mindie` (MindIE, vLLM Ascend,
  `ascendhub` images) holding `nvidia.com/gpu`, `amd.com/gpu`, ...;
- AMD GPUs: an image that says `rocm` (`rocm/vllm`, `rocm/pytorch`);
- AWS Neuron: an image that says `neuron` (`pytorch-inference-neuronx`);
- Intel Gaudi: an image that says `habana` or `gaudi`.

The requests are the container's `resources.limits` (and `requests`) names the registry
knows; a container that also requests its image's accelerator, or asks for devices through a
DRA claim, is not flagged, nor are GPU node agents (a DaemonSet, an agent of
`gpulint/data/agents.json`).

## Why it matters
The scheduler gives the pod the devices it asked for, which its program cannot drive: a
MindIE server on an NVIDIA GPU finds no NPU and stops, or reaches the node's NPUs through
host devices the scheduler never gave it, while the GPU it holds stays idle.

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
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, resource_lists

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


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.node_agent:
        return
    registry = ctx.registry
    for container in pod.containers:
        image = container.data.get("image")
        if not isinstance(image, str) or (container.resources or {}).get("claims"):
            continue
        reference = image.lower()
        built = next((v for v in IMAGE_VENDORS if any(w in reference for w in v[1])), None)
        if built is None:
            continue
        held: dict[str, tuple[Any, ...]] = {}
        for section, mapping in resource_lists(container):
            for name in mapping:
                entry = registry.get(name) if isinstance(name, str) else None
                if entry is not None and registry.is_accelerator(name):
                    held.setdefault(entry.hardware, (*container.resources_path, section, name))
        if not held or built[0] in held:
            continue
        path = next(iter(held.values()))
        name = path[-1]
        yield Violation(
            path,
            f"container {container.label} runs an image built for {built[2]} but holds {name}, "
            "which it cannot use",
            help=f"request the accelerator its image is built for (the devices of "
            f"{built[2]}), or run an image built for {name}",
            at="key",
        )
