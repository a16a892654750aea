"""A pod's options as a rule reads them: the NVIDIA container runtime's RuntimeClasses, and
the pod options a chart's values give the containers below them.

GPU016 and GPU043 both ask whether a pod runs under NVIDIA's runtime, in a pod spec or in a
chart's values (bjw-s app-template's ``controllers.<name>.pod`` and ``defaultPodOptions``,
the common library's values.yaml; other charts write the pod spec's fields beside their
containers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpulint.k8s.workloads import Container, PodSpec
    from gpulint.model import Path

#: RuntimeClasses of the NVIDIA container runtime: the GPU Operator's (``nvidia``,
#: ``nvidia-cdi``, ``nvidia-legacy``: docs.nvidia.com/datacenter/cloud-native/gpu-operator,
#: "Container runtime class") and k3s's (``nvidia``, ``nvidia-experimental``:
#: docs.k3s.io/advanced#nvidia-container-runtime-support).
NVIDIA_RUNTIME_CLASSES = frozenset({"nvidia", "nvidia-cdi", "nvidia-legacy", "nvidia-experimental"})
#: Keys of a chart's values that hold the pod options of the containers below them.
CHART_POD_KEYS = ("pod", "defaultPodOptions", "podOptions")


def chart_pod_options(
    pod: PodSpec, container: Container, fields: tuple[str, ...]
) -> dict[str, tuple[Mapping[str, Any], Path]]:
    """The pod options a chart's values give ``container``: for each of ``fields``, the
    nearest mapping above the container that sets it (one of :data:`CHART_POD_KEYS`, or a
    mapping of the container's ancestors itself) and its path. Nearer wins: a controller's
    ``pod`` over the values' ``defaultPodOptions``."""
    obj = pod.obj
    relative = container.path[len(obj.path) :]
    chain: list[tuple[Mapping[str, Any], Path]] = []
    node: Any = obj.data
    path: Path = obj.path
    for key in relative[:-2]:  # down to the mapping that holds ``containers``
        if not isinstance(node, Mapping):
            break
        chain.append((node, path))
        node, path = node.get(key), (*path, key)
    if isinstance(node, Mapping):
        chain.append((node, path))
    found: dict[str, tuple[Mapping[str, Any], Path]] = {}
    for mapping, at in chain:  # from the root down: a nearer holder replaces a farther one
        holders = [(mapping, at)]
        for key in CHART_POD_KEYS:
            if isinstance(mapping.get(key), Mapping):
                holders.append((mapping[key], (*at, key)))
        for holder, where in holders:
            for field in fields:
                if field in holder:
                    found[field] = (holder, where)
    return found


def nvidia_runtime_class(spec: Mapping[str, Any], path: Path) -> tuple[str, Path] | None:
    """The ``runtimeClassName`` of pod spec (or pod options) ``spec`` at ``path``, and where
    it is written, when it is one of the NVIDIA container runtime's."""
    name = spec.get("runtimeClassName")
    if isinstance(name, str) and name in NVIDIA_RUNTIME_CLASSES:
        return name, (*path, "runtimeClassName")
    return None


def runs_nvidia_runtime(pod: PodSpec, container: Container) -> tuple[str, Path] | None:
    """The NVIDIA RuntimeClass ``container``'s pod runs under, and where it is written: the
    pod spec's ``runtimeClassName``, or in a chart's values the nearest one set above the
    container (a controller's ``pod``, the values' ``defaultPodOptions``)."""
    if pod.location == "pod":
        return nvidia_runtime_class(pod.spec, pod.path)
    options = chart_pod_options(pod, container, ("runtimeClassName",))
    return nvidia_runtime_class(*options["runtimeClassName"]) if options else None
