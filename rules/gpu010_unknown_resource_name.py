"""GPU resource name that no device plugin advertises.

## What it does
Flags a container resource name of a known accelerator vendor's domain that is not in the
device registry. Two cases, by how sure it can be:

- **error**: the name is a likely slip for a registered one -- a typo (`nvidia.com/gpy`),
  a plural (`nvidia.com/gpus`), wrong case (`nvidia.com/GPU`), another separator, a key cut
  short or run on (`aliyun.com/gpu-memory` for `aliyun.com/gpu-mem`), an unknown MIG
  profile (`nvidia.com/mig-3g.30gb`), a misspelt vendor domain (`nvidai.com/gpu`,
  `intel.com/gpu`), a name without a domain (`gpu`) -- or a legacy name no node advertises
  any more (`alpha.kubernetes.io/nvidia-gpu`). It suggests the closest real name; for an
  unknown MIG profile, the profiles that GPUs offer with the same number of compute slices.
- **warning**: a plausible name of a registered vendor domain that is no slip
  (`nvidia.com/gpu-count`, a new resource of a vendor's plugin): gpulint's registry may be
  behind the device plugin. Add the name to the configuration's `devices:` and the warning
  goes away.

Names the repository's own device plugins are configured to advertise are known: a
time-slicing or MPS `rename` of the NVIDIA device plugin's configuration, HAMi's
`resourceCountName`, `resourceCoreName` and the other names of its device configuration or
chart values, when the run lints those files (docs/cluster.md).

Names of other domains are not this rule's business, and neither are DRA extended
resources: `deviceclass.resource.kubernetes.io/<class>` and any DeviceClass's
`spec.extendedResourceName` in the same file (KEP-5004) are served by claims, not plugins.

A suggestion of a name that another project advertises in a domain it shares with the
vendor (HAMi's `nvidia.com/gpucores` for `nvidia.com/vgpu-cores`) is no sure slip: the
name may be a third plugin's, so that finding is a warning that names both ways out.

Suggestions stay within the name's vendor domain: `amd.com/gpus` suggests `amd.com/gpu`,
never another vendor's name that happens to be spelt alike. They cross to another domain
only when the domain itself looks misspelt (`nvidai.com/gpu` suggests `nvidia.com/gpu`,
`habana.com/gaudi` suggests `habana.ai/gaudi`); when such a domain's local part matches no
name (`intel.com/gpu`), the message lists what that vendor's device plugins advertise.

## Why it matters
The scheduler only places a pod on a node that advertises every resource it asks for. No
node advertises a misspelt one, so the pod stays `Pending` forever with
`Insufficient nvidia.com/gpus`, and nothing in the API rejects it up front. A registry that
cannot know every plugin must not block a real resource, so a name it merely does not know
is a warning, never an error.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpus: 1   # GPU010
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
```

## Fix safety
Unsafe: renames the resource to the one real name it is a misspelling of (a single close
match, a legacy name's replacement, a MIG profile's `+` written as `.`); the pod then
schedules on other nodes than the name (wrongly) implied. No fix when no single name fits.

## Options
None. Add private or new device resources (`example.com/fpga`, an in-house sharing
scheme, a vendor's new name) to the registry in configuration:

```yaml
devices:
  - name: nvidia.com/gpu-count
```

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#device-and-sharing-resource-names
  (device and sharing resource names, MIG profile table)
- `gpulint/data/devices.json` (the registry)
- https://github.com/kubernetes/enhancements/tree/master/keps/sig-scheduling/5004-dra-extended-resource
  (DRA extended resources)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    PodSpec,
    Registry,
    RenameKey,
    Repair,
    RuleContext,
    Violation,
    container_entries,
)

CODE = "GPU010"
NAME = "unknown-gpu-resource-name"
SEVERITY = "error"
SCOPE = "pod"
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    registry = ctx.registry
    claims = ctx.claims
    for entry in container_entries(pod, ephemeral=True):
        name = entry.name
        if name in registry.resources or not registry.looks_like_accelerator(name):
            continue
        if registry.is_dra_extended(name) or (
            claims is not None and claims.extended_resource(name)
        ):
            continue  # a DRA extended resource: a claim serves it (KEP-5004)
        legacy = registry.legacy.get(name)
        if legacy is not None:
            yield Violation(
                entry.path,
                f"{name} is no longer advertised by any node, so the pod stays Pending; "
                f"use {legacy.replacement}. {legacy.note}",
                fix=_rename(entry.path, name, legacy.replacement, entry.container.resources),
            )
            continue
        if not registry.is_slip(name):
            domain = name.rpartition("/")[0]
            if domain and registry.has_domain(domain):
                yield Violation(
                    entry.path,
                    f"{name} is not in gpulint's device registry, though {domain} is a "
                    "known vendor domain: the registry may be behind the device plugin. "
                    "If your nodes advertise it, add it to the configuration "
                    f"(devices: [{{name: {name}}}])",
                    severity="warning",
                )
            continue
        suggestion = registry.suggest(name)
        mig = _mig_hint(name, registry)
        to = suggestion
        if mig is not None:
            hint = mig
            dotted = name.replace("+", ".")
            to = dotted if dotted in registry.resources else None
        elif suggestion is not None and suggestion.lower() == name.lower():
            hint = f"resource names are case-sensitive: write {suggestion}"
        elif suggestion is not None:
            family = _foreign_family(name, suggestion, registry)
            if family is not None:
                # Another project's name in a shared domain (HAMi's nvidia.com/gpucores for
                # vgpu-manager's nvidia.com/vgpu-cores): the name may be a third plugin's.
                yield Violation(
                    entry.path,
                    f"{name} is not in gpulint's device registry; it is close to "
                    f"{suggestion}, a {family} name, but other device plugins advertise "
                    f"names under {name.rpartition('/')[0]} too: if your nodes advertise "
                    f"it, add it to the configuration (devices: [{{name: {name}}}]); "
                    f"else did you mean {suggestion}?",
                    severity="warning",
                )
                continue
            hint = f"did you mean {suggestion}?"
        else:
            hint = _domain_hint(name, registry) or (
                "check the device plugin's documentation for the advertised name"
            )
        yield Violation(
            entry.path,
            f"{name} is not a resource any GPU device plugin advertises: no node can "
            f"satisfy it and the pod stays Pending forever; {hint}",
            fix=_rename(entry.path, name, to, entry.container.resources),
        )


def _foreign_family(name: str, suggestion: str, registry: Registry) -> str | None:
    """The family of ``suggestion`` when it is not that of its domain's own vendor (the
    domain's first registry name: nvidia.com/gpu's ``nvidia``) but another project's sharing
    its domain (HAMi's, vgpu-manager's), and ``name`` differs from it by more than case,
    separators or a plural ``s``; None for the vendor's own names and for sure slips."""
    entry = registry.resources.get(suggestion)
    if entry is None or _squashed(name) == _squashed(suggestion):
        return None
    domain = suggestion.rpartition("/")[0] + "/"
    owner = next((r for n, r in registry.resources.items() if n.startswith(domain)), None)
    if owner is None or owner.family == entry.family:
        return None
    return entry.family


def _squashed(name: str) -> str:
    """``nvidia.com/vgpu_Core`` -> ``vgpucore``: the local part without case, separators and
    a plural ``s``."""
    return re.sub(r"[-_.]", "", name.rpartition("/")[2].lower()).removesuffix("s")


def _rename(path: tuple[Any, ...], name: str, to: str | None, resources: Any) -> Repair | None:
    """Rename the resource, unless its section already holds the name it would get."""
    if to is None:
        return None
    section = resources.get(path[-2]) if isinstance(resources, dict) else None
    if not isinstance(section, dict) or to in section or "/" not in to:
        return None
    return Repair(f"rename {name} to {to}", (RenameKey(path, to),), "unsafe")


def _domain_hint(name: str, registry: Registry) -> str | None:
    """For a misspelt vendor domain with no close local part, that vendor's resource names."""
    domain, slash, _ = name.rpartition("/")
    if not slash or registry.has_domain(domain):
        return None
    for close in registry.close_domains(domain):
        names = registry.domain_names(close)
        if names:
            shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
            return f"the {close} device plugins advertise {shown}"
    return None


# Patterns, compiled on first use (docs/architecture.md): only unknown MIG names need them.
_MIG_NAME = r"^nvidia\.com/mig-(\d+)g\."
_MIG_MEMORY = r"^(\d+)g\.(\d+)gb"


def _mig_hint(name: str, registry: Registry) -> str | None:
    """For an unknown MIG profile, the profiles GPUs do offer with as many compute slices."""
    match = re.match(_MIG_NAME, name)
    if match is None:
        return None
    dotted = name.replace("+", ".")
    if dotted in registry.resources:
        return f"the device plugin advertises the profile's '+' as '.': write {dotted}"
    slices = match.group(1)
    prefix = f"nvidia.com/mig-{slices}g."
    profiles = [
        r.name.removeprefix("nvidia.com/mig-")
        for r in registry.resources.values()
        if r.kind == "mig" and r.name.startswith(prefix)
    ]
    if not profiles:
        return None

    def order(profile: str) -> tuple[int, str]:
        memory = re.match(_MIG_MEMORY, profile)
        return (int(memory.group(2)) if memory else 0, profile)

    shown = ", ".join(sorted(profiles, key=order))
    return f"no GPU offers that MIG profile; the {slices}g profiles are {shown}"
