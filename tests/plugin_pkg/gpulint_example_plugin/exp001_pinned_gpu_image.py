"""GPU container image is not pinned.

## What it does
Flags a container that requests a GPU and runs an image without a tag, with the `latest`
tag, or (with `require_digest`) without an `@sha256:` digest.

## Why it matters
CUDA images must match the node's driver. A floating tag can pull a newer CUDA than the
driver supports, and the job fails at start-up on some nodes only.

## Example
```yaml
containers:
- name: train
  image: nvcr.io/nvidia/pytorch:latest   # EXP001
```

## Use instead
```yaml
containers:
- name: train
  image: nvcr.io/nvidia/pytorch:24.05-py3
```

## Options
`require_digest` (boolean, default false): also require an image digest.

## References
- https://docs.nvidia.com/deploy/cuda-compatibility/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, accelerator_entries

CODE = "EXP001"
NAME = "unpinned-gpu-image"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {
    "require_digest": {
        "type": "boolean",
        "default": False,
        "description": "Also require an @sha256: digest.",
    }
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    gpu_containers = {id(e.container) for e in accelerator_entries(pod, ctx.registry)}
    for container in pod.containers:
        image = container.data.get("image")
        if id(container) not in gpu_containers or not isinstance(image, str):
            continue
        name = image.rsplit("/", 1)[-1]
        if ctx.options.get("require_digest") and "@sha256:" not in image:
            why = "has no @sha256: digest"
        elif "@" in name:
            continue
        elif ":" not in name:
            why = "has no tag"
        elif name.endswith(":latest"):
            why = "uses the latest tag"
        else:
            continue
        yield Violation(
            (*container.path, "image"),
            f"GPU container image {image} {why}: pin the CUDA image so it matches the node driver",
            at="value",
        )
