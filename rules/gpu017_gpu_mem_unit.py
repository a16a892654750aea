"""aliyun.com/gpu-mem written in the wrong unit.

## What it does
Flags an `aliyun.com/gpu-mem` value that cannot mean what its author meant. The resource is
a count of GiB of GPU memory (the gpushare device plugin's default, and ACK's), so:

- a value written with a suffix (`"10G"`, `"8Gi"`, `4096Mi`) is an error: Kubernetes reads
  `10G` as ten thousand million units, more memory than any GPU has in any unit, and the
  pod can never be scheduled;
- a plain number larger than any GPU's memory in GiB (above `max_gib`, default 288) is a
  warning: it looks like MiB (`3000` for 3 GB, `16276` copied from `nvidia-smi`) and asks
  for thousands of GiB on one GPU. The unit is a premise: when neither the configuration
  (`memory_unit`) nor the repository's own gpushare plugin says it, the finding is **info**
  and says it assumed the plugin's default, GiB (many clusters run `--memory-unit=MiB`).

With `memory_unit: MiB` (a device plugin run with `--memory-unit=MiB`) values above
`max_gib` GiB written in MiB are flagged, suffixes stay errors, and a count under 256 MiB is
a warning: less than a CUDA context needs, a GiB count left from an example (`3`).

When `memory_unit` is not configured and the run lints the repository's own gpushare device
plugin (a file naming `gpushare` whose arguments hold `--memory-unit=MiB` or `GiB`), that
unit is used, and the finding names the plugin's line (a `related` place of kind
`evidence`); two plugins that disagree leave the default.

## Why it matters
The scheduler extender places the pod on one GPU with that much free memory. Asked for
3000 GiB it finds none and the pod stays Pending with `Insufficient GPU Memory in one
device`, although the author wanted about 3 GB. A suffixed value never fits anywhere.

## Example
```yaml
resources:
  limits:
    aliyun.com/gpu-mem: 3000     # GPU017 (warning): MiB on a GiB resource
    # aliyun.com/gpu-mem: "10G"  # GPU017 (error): a suffix multiplies the count
```

## Use instead
```yaml
resources:
  limits:
    aliyun.com/gpu-mem: 3        # GiB of GPU memory
```

## Options
`memory_unit` (`GiB` or `MiB`, default `GiB`): the unit your gpushare device plugin
advertises (`--memory-unit`). `max_gib` (integer, default 288, the memory of the largest
single GPU sold): a value above this many GiB is taken as written in the wrong unit.

## References
- https://github.com/AliyunContainerService/gpushare-scheduler-extender/issues/217 (`3000`
  under a GiB unit: "Insufficient GPU Memory in one device"; `3` worked)
- https://github.com/AliyunContainerService/gpushare-scheduler-extender/issues/11
  (`aliyun.com/gpu-mem: "10G"`)
- https://github.com/AliyunContainerService/gpushare-scheduler-extender/issues/16 (the value
  is whole GiB, not MiB; `--memory-unit=MiB` changes it)
- AliyunContainerService/gpushare-device-plugin `cmd/nvidia/main.go` (`--memory-unit`,
  default GiB)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from gpulint.api import (
    PodSpec,
    Related,
    RuleContext,
    Violation,
    container_entries,
    format_amount,
    is_integer,
    show_value,
)

CODE = "GPU017"
NAME = "gpu-mem-wrong-unit"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {
    "memory_unit": {
        "enum": ["GiB", "MiB"],
        "description": "The unit the gpushare device plugin advertises (--memory-unit).",
        "default": "GiB",
    },
    "max_gib": {
        "type": "integer",
        "minimum": 1,
        "description": "GiB of memory of the largest single GPU; larger values are flagged.",
        "default": 288,
    },
}

RESOURCE = "aliyun.com/gpu-mem"


#: The least GPU memory a container can use, in MiB: a CUDA context alone takes a few
#: hundred MiB, so a smaller count under MiB is a GiB count left from an example.
MIN_MIB = 256


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    unit = ctx.options.get("memory_unit", "GiB")
    # The repository's own gpushare device plugin may say the unit, at a place: the run's
    # registry learned it (gpulint.cluster.deviceplugins).
    why, related = "", cast("tuple[Related, ...]", ())
    learned = ctx.registry.get(RESOURCE)
    if learned is not None and learned.setting.startswith("--memory-unit="):
        unit = learned.setting.partition("=")[2]
        why = f" (the gpushare device plugin runs with {learned.setting}, {learned.said})"
        related = learned.evidence()
    max_gib = int(ctx.options.get("max_gib", 288))
    limit = max_gib * (1024 if unit == "MiB" else 1)
    for entry in container_entries(pod):
        if entry.name != RESOURCE:
            continue
        value = entry.amount.value
        if value is None or value <= 0 or not is_integer(value):
            continue  # GPU004/GPU005/GPU006/GPU007 report those
        shown = show_value(entry.value)
        if isinstance(entry.value, str) and not entry.value.strip().isdigit():
            # A suffix (`10G`, `8Gi`, `4096Mi`): the count is multiplied by it.
            yield Violation(
                entry.path,
                f"{RESOURCE}: {shown} is a count of {unit}, not a size: the suffix makes it "
                f"{format_amount(value)} {unit}, more than any GPU has",
                help=f"write the number of {unit} alone (for example "
                f"{RESOURCE}: {_suggest(entry.value, unit)})",
                at="value",
                severity="error",
            )
        elif unit == "MiB" and value < MIN_MIB:
            yield Violation(
                entry.path,
                f"{RESOURCE}: {shown} asks for {shown} MiB of GPU memory{why}, less than a "
                f"CUDA context needs: the program fails to start on the GPU; if you meant "
                f"{shown} GiB, write {RESOURCE}: {int(value) * 1024}",
                at="value",
                related=related,
            )
        elif value > limit:
            if unit == "GiB" and value < 10**9:  # a plausible MiB count, not a hostile one
                advice = (
                    f"if you meant {shown} MiB, write {RESOURCE}: {max(1, round(value / 1024))}; "
                    "if your device plugin runs with --memory-unit=MiB, set this rule's "
                    "memory_unit: MiB"
                )
            else:
                advice = "check the value, or this rule's max_gib if your GPUs are larger"
            # The unit is the plugin's default unless configured or said by the repository's
            # own plugin: a premise gpulint cannot verify is info, saying what it assumed.
            assumed = not why and "memory_unit" not in ctx.configured
            if assumed:
                advice += " (assumed: the gpushare device plugin's default unit, GiB)"
            yield Violation(
                entry.path,
                f"{RESOURCE}: {shown} asks for {shown} {unit} of memory on one GPU{why}, more "
                f"than the largest GPU has ({max_gib} GiB): the pod stays Pending",
                help=advice,
                at="value",
                related=related,
                severity="info" if assumed else None,
            )


def _suggest(text: str, unit: str) -> str:
    """The number the author meant: ``"10G"`` -> ``10`` GiB, ``"4096Mi"`` -> ``4`` GiB (or
    ``4096`` MiB). A decimal suffix is read as its binary one: ``10G`` was meant as 10 GiB."""
    import re

    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTP])i?\s*", text)
    if match is None:
        return "<n>"
    number = float(match.group(1))
    power = "KMGTP".index(match.group(2)) - (2 if unit == "GiB" else 1)
    return str(max(1, round(number * 1024**power)))
