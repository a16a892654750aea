"""ResourceSlices of a node inventory: the devices DRA drivers publish on each node.

``kubectl get nodes,resourceslices -o yaml`` prints the nodes and the ``ResourceSlice``
objects (``resource.k8s.io/v1``, ``v1beta2``, ``v1beta1``) in one ``List``. A slice names its
driver (``spec.driver``), the node its devices are on (``spec.nodeName``; a slice for several
nodes, ``nodeSelector`` or ``allNodes``, publishes devices that are not a node's own, and is
left out) and its devices, each with attributes: NVIDIA's driver publishes a ``type``
attribute (``gpu``, ``mig``, ``vfio``) that its DeviceClasses select on
(``device.attributes['gpu.nvidia.com'].type == 'gpu'``).

Each node's devices are kept as counts in its ``allocatable``, under keys no resource name
can take (:func:`device_key`: ``devices gpu.nvidia.com type=gpu``, and ``devices
gpu.nvidia.com`` for every device of the driver), so they travel with the node (its
inventory cache, its pool's grouping) without a field of their own, and no rule that reads
resources mistakes them for one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

#: DeviceClasses of whole devices, as (driver, ``type`` attribute or None for every device
#: of the driver) their selectors pick (NVIDIA/k8s-dra-driver-gpu
#: ``templates/deviceclass-*.yaml``; intel-resource-drivers-for-kubernetes Gaudi).
CLASS_DEVICES: Mapping[str, tuple[str, str | None]] = {
    "gpu.nvidia.com": ("gpu.nvidia.com", "gpu"),
    "vfio.gpu.nvidia.com": ("gpu.nvidia.com", "vfio"),
    "gaudi.intel.com": ("gaudi.intel.com", None),
}


def device_key(driver: str, kind: str | None = None) -> str:
    """The ``allocatable`` key of a node's published devices of ``driver`` (of one
    ``type``). It holds spaces, so it is no resource name."""
    return f"devices {driver}" + (f" type={kind}" if kind else "")


def class_key(device_class: str) -> str | None:
    """The key of the devices a DeviceClass hands out (None: a class not listed)."""
    found = CLASS_DEVICES.get(device_class)
    return device_key(*found) if found is not None else None


def is_slice(data: Any) -> bool:
    if not isinstance(data, Mapping) or data.get("kind") != "ResourceSlice":
        return False
    version = data.get("apiVersion")
    return isinstance(version, str) and version.startswith("resource.k8s.io/")


def slice_devices(data: Mapping[str, Any]) -> tuple[str, dict[str, int]] | None:
    """The node of a ResourceSlice and its device counts by key; None for a slice that is
    not one node's (or not readable)."""
    spec = data.get("spec")
    if not isinstance(spec, Mapping):
        return None
    node, driver, devices = spec.get("nodeName"), spec.get("driver"), spec.get("devices")
    if not isinstance(node, str) or not node or not isinstance(driver, str) or not driver:
        return None
    counts: dict[str, int] = {}
    for device in devices if isinstance(devices, list) else ():
        if not isinstance(device, Mapping):
            continue
        basic = device.get("basic")  # v1beta1 nests the attributes under basic
        attributes = (basic if isinstance(basic, Mapping) else device).get("attributes")
        kind = _type(attributes)
        for key in {device_key(driver), device_key(driver, kind)}:
            counts[key] = counts.get(key, 0) + 1
    return node, counts


def _type(attributes: Any) -> str | None:
    if not isinstance(attributes, Mapping):
        return None
    value = attributes.get("type")
    value = value.get("string") if isinstance(value, Mapping) else None
    return value if isinstance(value, str) and value else None


def add_devices(
    allocatable: Mapping[str, Decimal], found: Iterable[Mapping[str, int]]
) -> dict[str, Decimal]:
    """``allocatable`` with the devices of the node's slices added."""
    out = dict(allocatable)
    for counts in found:
        for key, count in counts.items():
            out[key] = out.get(key, Decimal(0)) + count
    return out
