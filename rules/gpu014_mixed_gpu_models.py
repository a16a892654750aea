"""Container mixes MIG instances with full GPUs, or MIG profiles of different GPU models.

## What it does
Flags a container that asks for a MIG instance (`nvidia.com/mig-<profile>`) together with a
full GPU (`nvidia.com/gpu`), or for MIG profiles that no single GPU model offers together:
`nvidia.com/mig-1g.5gb` exists only on 40 GB A100/A800 GPUs and `nvidia.com/mig-2g.20gb` only
on 80 GB A100/A800/H100/H800 ones, so asking for both needs two GPU models. The registry's MIG
table says which models offer each profile. A resource written `null` asks for nothing a node
gives (GPU006's finding; in a Kustomize strategic-merge patch, the key's deletion, as when
an overlay swaps the whole GPU for a MIG instance) and is not counted.

## Why it matters
GPU nodes are homogeneous: a node that offers profiles of two GPU models does not exist, so
the pod stays Pending. A full GPU and a MIG instance can only come from a node where some
GPUs are partitioned and others not, which MIG configurations rarely produce; and CUDA cannot
use a MIG instance together with another device in one process. Either way the container does
not get the devices it was written for.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
    nvidia.com/mig-1g.5gb: 1   # GPU014
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/mig-3g.20gb: 1   # one instance of one model, sized for the job
```

## Options
None. MIG profiles and their models come from the registry (`mig.models`).

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#mig-profiles
  (MIG profiles per GPU model, mig-parted default config)
- NVIDIA MIG user guide ("CUDA applications ... can only enumerate a single MIG instance")
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, ResourceEntry, RuleContext, Violation, accelerator_entries

CODE = "GPU014"
NAME = "mixed-gpu-models"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

FULL_GPU = "nvidia.com/gpu"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    by_container: dict[int, list[ResourceEntry]] = {}
    for entry in accelerator_entries(pod, ctx.registry):
        if entry.devices_asked:
            by_container.setdefault(id(entry.container), []).append(entry)
    for entries in by_container.values():
        yield from _check_container(entries, ctx)


def _check_container(entries: list[ResourceEntry], ctx: RuleContext) -> Iterator[Violation]:
    seen: set[str] = set()
    full_gpu: str | None = None
    first_mig: str | None = None
    models: frozenset[str] = frozenset()
    for entry in entries:
        name = entry.name
        resource = ctx.registry.get(name)
        if name in seen or resource is None:
            continue
        seen.add(name)
        if name == FULL_GPU:
            full_gpu = name
            if first_mig is not None:
                yield Violation(
                    entry.path, f"{name} is asked for beside the MIG instance {first_mig}: {_MIXED}"
                )
        elif resource.kind != "mig":
            continue
        elif first_mig is None:
            first_mig, models = name, resource.mig_models
            if full_gpu is not None:
                yield Violation(
                    entry.path,
                    f"{name} is a MIG instance asked for beside a full {full_gpu}: {_MIXED}",
                )
        elif models & resource.mig_models:
            models = models & resource.mig_models
        else:
            yield Violation(
                entry.path,
                f"{name} and {first_mig} are MIG profiles of different GPU models: no node "
                "offers both, so the pod stays Pending",
                help=f"pick profiles of one GPU model ({_models(resource.mig_models)} vs "
                f"{_models(models)})",
            )


_MIXED = (
    "CUDA cannot use both in one process; ask for MIG instances or full GPUs, not both (a "
    "node needs partitioned and unpartitioned GPUs for the pod)"
)


def _models(models: frozenset[str]) -> str:
    names = sorted(models)
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
