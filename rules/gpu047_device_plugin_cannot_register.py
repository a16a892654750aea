"""A device plugin that mounts no kubelet device-plugin folder, so it can never register.

## What it does
Reports a DaemonSet that runs a GPU device plugin of `gpulint/data/agents.json` (NVIDIA's, AMD's,
Intel's GPU and Gaudi plugins, AWS Neuron's, Huawei Ascend's, the GPU-sharing and KubeVirt
GPU plugins: the agents whose row is a "device plugin") but mounts no `hostPath` volume that
holds the kubelet's device-plugin folder (`/var/lib/kubelet/device-plugins`, or a folder above
it such as `/var/lib/kubelet`; a path with `device-plugins` in it counts too, for
distributions that keep the kubelet elsewhere, such as MicroK8s and k0s). The finding is at
the plugin container's image (the first container that runs its image's entrypoint or a
command naming a plugin), and names the resource its nodes then never advertise. Pods and
Jobs that borrow a plugin's image (a debug pod running `nvidia-smi`, the GPU Operator's
validation pod) are not plugins, and a DaemonSet that declares no volumes at all and no
`spec.selector` (which `apps/v1` requires) is left alone: it is an excerpt (a manifest
trimmed for a README), not what gets applied. A whole DaemonSet without volumes is judged:
`privileged: true` gives the container the host's devices, not its folders.
Only a DaemonSet one of whose containers runs one of the plugin's images is judged: one
that is only named like a plugin (`gpu-manager`) and runs an image of its own may be
another program (a manager beside the project's own plugin), whose volumes are its own.

A volume whose path a template engine fills in (`{{ }}`, `${VAR}`) is taken to be that
folder. Chart values are not judged (the chart writes the volumes).

## Why it matters
A device plugin registers with the kubelet through the Unix socket
`/var/lib/kubelet/device-plugins/kubelet.sock` and serves its own socket in the same folder
(Kubernetes' device plugin API). Without that folder from the host the plugin finds no
kubelet socket: it retries or exits, the node never advertises `nvidia.com/gpu` (or
`amd.com/gpu`, ...), and every GPU pod stays Pending with `Insufficient nvidia.com/gpu`.

## Example
```yaml
containers:
- name: amd-gpu-device-plugin
  image: rocm/k8s-device-plugin:latest   # GPU047
  volumeMounts:
  - {name: dev, mountPath: /dev}
volumes:
- {name: dev, hostPath: {path: /dev}}
```

## Use instead
```yaml
  volumeMounts:
  - {name: dp, mountPath: /var/lib/kubelet/device-plugins}
  - {name: dev, mountPath: /dev}
volumes:
- {name: dp, hostPath: {path: /var/lib/kubelet/device-plugins}}
- {name: dev, hostPath: {path: /dev}}
```

## Options
None.

## References
- https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/
  (registration through `/var/lib/kubelet/device-plugins/kubelet.sock`; "a device plugin
  ... must be deployed with a hostPath volume mount of `/var/lib/kubelet/device-plugins`")
- NVIDIA/k8s-device-plugin `deployments/static/nvidia-device-plugin.yml`,
  ROCm/k8s-device-plugin `k8s-ds-amdgpu-dp.yaml`, intel/intel-device-plugins-for-kubernetes
  `deployments/gpu_plugin/base/intel-gpu-plugin.yaml` (each mounts that folder)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, holds_placeholder

CODE = "GPU047"
NAME = "device-plugin-cannot-register"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

#: Folders of the host whose mount gives the plugin the kubelet's device-plugin folder.
_ABOVE = frozenset({"/", "/var", "/var/lib", "/var/lib/kubelet"})


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod" or pod.found_by != "table" or pod.obj.kind != "DaemonSet":
        return
    from gpulint.api import find_agent

    agent = find_agent(pod)
    if agent is None or not agent.agent.endswith("device plugin"):
        return
    images = [str(c.data["image"]) for c in pod.containers if "image" in c.data]
    if not any(agent.runs_image(image) for image in images):
        # Named like a plugin but running an image of its own: a plugin built in the project,
        # or another program of that name (a manager beside the project's own plugin).
        return
    volumes = pod.spec.get("volumes")
    if not isinstance(volumes, list) or not volumes:
        spec = pod.obj.data.get("spec")
        if not isinstance(spec, Mapping) or not isinstance(spec.get("selector"), Mapping):
            return  # no volumes and no selector: an excerpt (a README's), not a manifest
        volumes = []
    hosts: dict[str, str] = {}
    for volume in volumes:
        if not isinstance(volume, Mapping) or not isinstance(volume.get("name"), str):
            continue
        source = volume.get("hostPath")
        path = source.get("path") if isinstance(source, Mapping) else None
        if isinstance(path, str):
            hosts[volume["name"]] = path
    mounted = set()
    for container in pod.containers:
        mounts = container.data.get("volumeMounts")
        for mount in mounts if isinstance(mounts, list) else ():
            if isinstance(mount, Mapping) and isinstance(mount.get("name"), str):
                mounted.add(mount["name"])
    for name, path in hosts.items():
        if name in mounted and _holds_device_plugins(path):
            return
    plugin = next((c for c in pod.containers if _runs_plugin(c.data)), None)
    if plugin is None:
        return
    yield Violation(
        (*plugin.path, "image"),
        f"this {agent.agent} mounts no hostPath /var/lib/kubelet/device-plugins: it "
        "cannot register with the kubelet",
        help="mount hostPath /var/lib/kubelet/device-plugins at the same path in the plugin "
        f"container (else {agent.effect})",
        at="value",
    )


def _runs_plugin(container: Mapping[str, Any]) -> bool:
    """A container that runs its image's own entrypoint, or a command that names a plugin
    (not the device plugin's image borrowed for ``nvidia-smi``)."""
    if "image" not in container:
        return False
    command = container.get("command")
    return not command or "plugin" in str(command).lower()


def _holds_device_plugins(path: str) -> bool:
    if holds_placeholder(path) or "device-plugins" in path:
        return True
    return (path.rstrip("/") or "/") in _ABOVE
