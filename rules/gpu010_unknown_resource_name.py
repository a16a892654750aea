"""GPU resource name that no device plugin advertises.

## What it does
Flags a container resource name of a known accelerator vendor's domain that is not in the
device registry. Two cases, by how sure it can be:

- **error** only when the name is certainly wrong: a likely slip for a registered one -- a
  typo (`nvidia.com/gpy`), a plural (`nvidia.com/gpus`), wrong case (`nvidia.com/GPU`),
  another separator, a key cut short or run on (`aliyun.com/gpu-memory` for
  `aliyun.com/gpu-mem`), a MIG profile's `+` kept (`nvidia.com/mig-1g.10gb+me`), a
  misspelt vendor domain (`nvidai.com/gpu`, `intel.com/gpu`: one slip in the domain, or
  the vendor's own label under another suffix), a name without a domain
  (`gpu`; not in a chart's values, whose chart may read it as a setting of its own and
  write `nvidia.com/gpu`: a chart that copies it as written fails at install, loudly) -- or
  a name no node advertises any more (`alpha.kubernetes.io/nvidia-gpu`,
  removed from Kubernetes). It suggests the closest real name.
- **error** too when the project's own NVIDIA device plugin configuration is in the run and
  the name, a near miss of one it advertises, is none of them (`nvidia.com/gpu-all`, a CDI
  device name of the plugin's `cdiDeviceList` pasted as a resource, beside a configuration
  that time-slices `nvidia.com/gpu`); a **warning** for any other name of `nvidia.com` the
  configuration does not advertise. The configuration says the domain's names in full only
  when it does not name its resources itself (`resources: {gpus: [...]}`) and no other
  plugin of the project advertises names there (KubeVirt's passthrough plugin, HAMi, a
  DaemonSet's `--resource-name`): then the name stays info.
- **info**: any other unknown name of a registered vendor domain. gpulint's registry cannot
  know every device plugin, so a name it does not list is not called wrong: a new resource
  of a vendor's plugin (`nvidia.com/gpu-count`), another model or size of a registered
  name (`huawei.com/Ascend310` beside `huawei.com/Ascend310P`), a prefixed one
  (`nvidia.com/pgpu` beside `nvidia.com/gpu`), a well-formed MIG profile no GPU in the
  registry offers (`nvidia.com/mig-3g.30gb`: the message lists the 3g profiles GPUs do
  offer; a name not of a profile's shape, `nvidia.com/mig-1g.5gbb`, is a slip, an
  error), or another project's name in a vendor's domain. The message says so and gives
  the configuration line that declares the name (`devices: [{name: ...}]`), with a
  did-you-mean only when a registered name is close.
- **error** for a name of a registered vendor domain that is no valid resource name at all
  (`hygon.com/dcu-share-*c-*g`: a `*`, a space, a second `/`): the API server rejects the
  pod ("doesn't follow extended resource name standard"); `info` when the name holds a
  template's placeholder (`<cu>`, `${SIZE}`, `{{ .Values.x }}`), left for a tool to fill in.
- **info** also for a name a device plugin's later releases dropped while older ones still
  advertise it (`aws.amazon.com/neurondevice`: Neuron 2.19 was the last release with it),
  unless the project deploys the plugin: its image's release decides. A release known to
  advertise the name (`neuron-device-plugin:2.16.18.0`) makes it known (no finding); one
  known not to (`2.27.7.0` and later) makes it an error naming that image; an unpinned or
  unplaceable tag (`latest`) leaves it info.

Names the repository's own device plugins are configured to advertise are known: a
time-slicing or MPS `rename` of the NVIDIA device plugin's configuration, HAMi's
`resourceCountName`, `resourceCoreName` and the other names of its device configuration or
chart values, and any resource name a DaemonSet container of the project writes in its
`command`, `args` or `env` values (`--resource-name=vendor.com/npu`), the `resourceName` a
device plugin's configuration in a ConfigMap sets (Iluvatar's `ix-config`:
`resourceName: "iluvatar.com/gpu"`), the resource names a
KubeVirt CR's `permittedHostDevices` lists for VMs, when the run lints
those files (docs/cluster.md). A DaemonSet's own `resources` advertise nothing. The facts
come from the file's project only, so one project's plugin never settles another's names.

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
name (`intel.com/gpu`), the message lists what that vendor's device plugins advertise. A
domain two slips or more from every registered one is another vendor's, whatever its
likeness: VirtAI's `virtaitech.com/gpu` (Orion vGPU) is no misspelling of Vastai's
`vastaitech.com`, so it gets no finding.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
The scheduler only places a pod on a node that advertises every resource it asks for. No
node advertises a misspelt one, so the pod stays `Pending` forever with
`Insufficient nvidia.com/gpus`, and nothing in the API rejects it up front. A registry that
cannot know every plugin must not block a real resource, so a name it merely does not know
is info, never an error or a warning: the premise (no node advertises it) is one gpulint
cannot verify.

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
- https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/announcements/neuron2.x/announce-no-support-device-version.html
  (`neurondevice` no longer supported from Neuron 2.20; the plugin releases that decide it
  are cited in the registry's `legacy` row)
- `gpulint/data/devices.json` (the registry); GPU018 for the same names outside pod specs
  (accelerator profiles, queues, quotas, NodeOverlays), with the same verdicts
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
    holds_placeholder,
    in_chart_values,
    is_extended_resource,
    judge_resource_name,
)

CODE = "GPU010"
NAME = "unknown-gpu-resource-name"
SEVERITY = "error"
SCOPE = "pod"
AS_WRITTEN = True
FIX = "unsafe"  # what it changes: the "Fix safety" section
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    registry = ctx.registry
    for entry in container_entries(pod, ephemeral=True):
        name = entry.name
        verdict = judge_resource_name(name, registry, ctx.claims)
        if verdict is None:
            invalid = _invalid_name(name, registry)
            if invalid is not None:  # no slip of a known name, and no name at all
                yield _invalid_finding(entry.path, name, invalid)
            continue
        if not verdict.certain:
            yield Violation(entry.path, verdict.text, severity="info")
            continue
        if verdict.kind == "slip" and "/" not in name and in_chart_values(pod.obj, pod.path):
            continue  # a chart's own setting (a count it writes as nvidia.com/gpu), maybe
        severity = None
        if verdict.kind == "legacy":
            message = (
                f"{name} is no longer advertised by any node, so the pod stays Pending; "
                f"{verdict.text}"
            )
        elif verdict.kind in ("unadvertised", "unconfigured"):
            message = (
                f"{name} is not advertised by the project's device plugin "
                f"({verdict.said}), so the pod stays Pending; {verdict.text}"
            )
            severity = "error" if verdict.kind == "unadvertised" else "warning"
        else:
            message = (
                f"{name} is not a resource any GPU device plugin advertises: no node can "
                f"satisfy it and the pod stays Pending forever; {verdict.text}"
            )
        fix = _rename(entry.path, name, verdict.to, entry.container.resources)
        yield Violation(entry.path, message, severity=severity, fix=fix, related=verdict.evidence())


#: A reader's placeholder inside a name (``<cu>``), besides the tools' ones
#: ``holds_placeholder`` knows (``${SIZE}``, ``{{ .Values.x }}``, ``$(SIZE)``).
_ANGLED = re.compile(r"<[^<>]*>")


def _invalid_name(name: str, registry: Registry) -> bool | None:
    """For a name of a registered vendor's domain that is no resource name the API server
    takes: whether it holds a placeholder; None for any other name."""
    domain, slash, _ = name.rpartition("/")
    if not slash or "kubernetes.io/" in name or is_extended_resource(name):
        return None
    if not registry.has_domain(domain.strip()):
        return None
    return holds_placeholder(name) or _ANGLED.search(name) is not None


def _invalid_finding(path: tuple[Any, ...], name: str, placeholder: bool) -> Violation:
    if placeholder:
        return Violation(
            path,
            f"{name} holds a placeholder, and the API server rejects it as written: it is no "
            "resource name",
            severity="info",
            help="fill the placeholder in with the name the device plugin advertises "
            "(assumed: a tool replaces it before the manifest is applied)",
        )
    return Violation(
        path,
        f"{name} is no valid resource name (a qualified name of letters, digits, '-', '_' "
        "and '.'): the API server rejects the pod",
        help="write the name the device plugin advertises",
    )


def _rename(path: tuple[Any, ...], name: str, to: str | None, resources: Any) -> Repair | None:
    """Rename the resource, unless its section already holds the name it would get."""
    if to is None:
        return None
    section = resources.get(path[-2]) if isinstance(resources, dict) else None
    if not isinstance(section, dict) or to in section or "/" not in to:
        return None
    return Repair(f"rename {name} to {to}", (RenameKey(path, to),), "unsafe")
