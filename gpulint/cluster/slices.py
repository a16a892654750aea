"""ResourceSlices of a node inventory: the devices DRA drivers publish on each node.

``kubectl get nodes,resourceslices -o yaml`` prints the nodes and the ``ResourceSlice``
objects (``resource.k8s.io/v1``, ``v1beta2``, ``v1beta1``) in one ``List``. A slice names its
driver (``spec.driver``), its pool, the nodes its devices are for (exactly one of
``spec.nodeName``, ``spec.nodeSelector``, ``spec.allNodes``, or ``perDeviceNodeSelection``:
each device says it with its own ``nodeName``, ``nodeSelector`` or ``allNodes``;
``k8s.io/api/resource/v1/types.go``, ResourceSliceSpec and Device) and its devices, each with
attributes: NVIDIA's driver publishes a ``type``
attribute (``gpu``, ``mig``, ``vfio``) that its DeviceClasses select on
(``device.attributes['gpu.nvidia.com'].type == 'gpu'``).

A device shared by several nodes (network-attached, or a pool every node can reach) counts
for each node it is for: node fit asks whether one node could get it, not how many pods at
once. Each node's devices are kept in its ``devices`` (for ``gpulint inspect``) and as counts
in its ``allocatable``, under keys no resource name
can take (:func:`device_key`: ``devices gpu.nvidia.com type=gpu``, and ``devices
gpu.nvidia.com`` for every device of the driver), so they travel with the node (its
inventory cache, its pool's grouping) without a field of their own, and no rule that reads
resources mistakes them for one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from gpulint.cluster.model import Node

#: DeviceClasses of whole devices, as (driver, ``type`` attribute or None for every device
#: of the driver) their selectors pick (NVIDIA/k8s-dra-driver-gpu
#: ``templates/deviceclass-*.yaml``; intel-resource-drivers-for-kubernetes Gaudi).
CLASS_DEVICES: Mapping[str, tuple[str, str | None]] = {
    "gpu.nvidia.com": ("gpu.nvidia.com", "gpu"),
    "vfio.gpu.nvidia.com": ("gpu.nvidia.com", "vfio"),
    "gaudi.intel.com": ("gaudi.intel.com", None),
}


#: What ``gpulint inspect`` lists for a request's class: the whole-device classes, and the
#: classes of devices that are not whole (NVIDIA/k8s-dra-driver-gpu
#: ``templates/deviceclass-mig.yaml`` selects ``type == 'mig'``).
CLASS_SELECTS: Mapping[str, tuple[str, str | None]] = {
    **CLASS_DEVICES,
    "mig.nvidia.com": ("gpu.nvidia.com", "mig"),
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


class Published(NamedTuple):
    """One device a ResourceSlice publishes: its driver, pool and name, NVIDIA's ``type``
    attribute (None: the driver writes none) and the slice it is in."""

    driver: str
    pool: str
    name: str
    kind: str | None
    slice: str


class DeviceGroup(tuple):  # type: ignore[type-arg]
    """Devices (:class:`Published`) several nodes may share: a node's own, those for every
    node, those of one node selector. Its text for the findings cache's fingerprint
    (:func:`gpulint.lint.kept.canonical`) is a digest, made once however many nodes hold
    it."""

    _key: str

    def canonical_key(self) -> str:
        key = self.__dict__.get("_key")
        if key is None:
            import hashlib
            import json

            text = json.dumps([list(d) for d in self], sort_keys=True)
            key = self._key = hashlib.sha256(text.encode()).hexdigest()
        return key


class Scope(NamedTuple):
    """The nodes a slice (or, with ``perDeviceNodeSelection``, a device) is for: exactly one
    of a node's name, a node selector, or every node."""

    node: str | None = None
    selector: Mapping[str, Any] | None = None
    all_nodes: bool = False


#: The fields that say which nodes a slice's (or a device's) devices are for; exactly one is
#: set (``k8s.io/api/resource/v1/types.go``: ResourceSliceSpec ``NodeName``,
#: ``NodeSelector``, ``AllNodes``, ``PerDeviceNodeSelection``; Device ``NodeName``,
#: ``NodeSelector``, ``AllNodes``, under ``basic`` in ``v1beta1``).
def _scope(fields: Mapping[str, Any]) -> Scope | None:
    node, selector = fields.get("nodeName"), fields.get("nodeSelector")
    if isinstance(node, str) and node:
        return Scope(node=node)
    if isinstance(selector, Mapping):
        return Scope(selector=selector)
    if fields.get("allNodes") is True:
        return Scope(all_nodes=True)
    return None


def slice_devices(data: Mapping[str, Any]) -> list[tuple[Scope, Published]]:
    """The devices of a ResourceSlice, each with the nodes it is for (a slice's own
    ``nodeName``, ``nodeSelector`` or ``allNodes``; each device's own with
    ``perDeviceNodeSelection``). A slice or device that says no node is left out."""
    spec = data.get("spec")
    if not isinstance(spec, Mapping):
        return []
    driver, devices = spec.get("driver"), spec.get("devices")
    if not isinstance(driver, str) or not driver or not isinstance(devices, list):
        return []
    pool = spec.get("pool")
    pool_name = pool.get("name") if isinstance(pool, Mapping) else None
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    per_device = spec.get("perDeviceNodeSelection") is True
    scope = None if per_device else _scope(spec)
    if scope is None and not per_device:
        return []
    found: list[tuple[Scope, Published]] = []
    for device in devices:
        if not isinstance(device, Mapping):
            continue
        basic = device.get("basic")  # v1beta1 nests the attributes under basic
        fields = basic if isinstance(basic, Mapping) else device
        mine = _scope(fields) if per_device else scope
        if mine is None:
            continue
        device_name = device.get("name")
        found.append(
            (
                mine,
                Published(
                    driver,
                    pool_name if isinstance(pool_name, str) else "",
                    device_name if isinstance(device_name, str) else "",
                    _type(fields.get("attributes")),
                    name if isinstance(name, str) else "",
                ),
            )
        )
    return found


def _type(attributes: Any) -> str | None:
    if not isinstance(attributes, Mapping):
        return None
    value = attributes.get("type")
    value = value.get("string") if isinstance(value, Mapping) else None
    return value if isinstance(value, str) and value else None


#: Node-selector requirements checked against candidate nodes at most (each distinct
#: selector of the shared slices, against the nodes its ``In`` requirements leave): about a
#: second of work.
MAX_SELECTOR_WORK = 2_000_000


class TooManySelectors(ValueError):
    """The shared slices' node selectors are more work to match than
    :data:`MAX_SELECTOR_WORK`."""


def attach(nodes: list[Node], found: Iterable[tuple[Scope, Published]]) -> list[Node]:
    """``nodes`` with the devices of ``found`` that are for them: in their ``devices`` (in
    groups: the node's own, those for every node, those of each selector that matches it;
    a group is one tuple however many nodes share it) and counted in their ``allocatable``
    (:func:`device_key`). A device for a node selector is
    for each node the selector matches (as ``k8s.io/component-helpers`` nodeaffinity
    matches a NodeSelector: :mod:`gpulint.cluster.selectors`); one for all nodes, for each.

    Each distinct selector is parsed once, and each of its terms is matched only against
    the nodes its most selective ``In`` requirement (or ``metadata.name`` field) leaves,
    found in an index of the nodes' labels: a selector per node (``kubernetes.io/hostname``)
    costs one node each, not the cluster.
    """
    import json

    from gpulint.cluster.selectors import parse_terms

    own: dict[str, list[Published]] = {}
    everywhere: list[Published] = []
    selected: dict[str, tuple[Mapping[str, Any], list[Published]]] = {}
    for scope, device in found:
        if scope.node is not None:
            own.setdefault(scope.node, []).append(device)
        elif scope.all_nodes:
            everywhere.append(device)
        elif scope.selector is not None:
            key = json.dumps(scope.selector, sort_keys=True, default=str)
            selected.setdefault(key, (scope.selector, []))[1].append(device)
    if not own and not everywhere and not selected:
        return nodes
    shared: dict[int, list[DeviceGroup]] = {}
    index = _LabelIndex(nodes)
    work = 0
    for selector, devices in selected.values():
        matched: set[int] = set()
        for term in parse_terms(selector):
            candidates = index.candidates(term)
            work += len(candidates) * (len(term.labels) + len(term.fields) + 1)
            if work > MAX_SELECTOR_WORK:
                raise TooManySelectors(
                    f"{len(selected)} distinct node selectors of shared ResourceSlices for "
                    f"{len(nodes)} nodes"
                )
            matched.update(i for i in candidates if term.matches(nodes[i]))
        group = DeviceGroup(devices)
        for i in matched:
            shared.setdefault(i, []).append(group)
    common = [DeviceGroup(everywhere)] if everywhere else []
    counted: dict[int, dict[str, int]] = {}  # a group's counts, by the group's id
    out = []
    for i, node in enumerate(nodes):
        mine = own.get(node.name)
        groups: list[DeviceGroup] = [DeviceGroup(mine)] if mine else []
        groups += [*common, *shared.get(i, ())]
        if not groups:
            out.append(node)
            continue
        totals: list[dict[str, int]] = []
        for group in groups:
            counts = counted.get(id(group))
            if counts is None:
                counts = counted[id(group)] = _counts(group)
            totals.append(counts)
        out.append(
            node._replace(
                allocatable=add_devices(node.allocatable, totals),
                devices=(*node.devices, *groups),
            )
        )
    return out


def _counts(devices: Iterable[Published]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for d in devices:
        for key in {device_key(d.driver), device_key(d.driver, d.kind)}:
            counts[key] = counts.get(key, 0) + 1
    return counts


class _LabelIndex:
    """The nodes by label (key, value) and by name, built on first use."""

    def __init__(self, nodes: list[Node]) -> None:
        self._nodes = nodes
        self._labels: dict[tuple[str, str], list[int]] | None = None
        self._names: dict[str, list[int]] = {}

    def _build(self) -> dict[tuple[str, str], list[int]]:
        if self._labels is None:
            self._labels = {}
            for i, node in enumerate(self._nodes):
                self._names.setdefault(node.name, []).append(i)
                for item in node.labels.items():
                    self._labels.setdefault(item, []).append(i)
        return self._labels

    def candidates(self, term: Any) -> Sequence[int]:
        """The nodes that may match ``term``: those its narrowest ``In`` requirement (or
        ``metadata.name`` equality) allows; every node when it has none."""
        if not term.parsed:
            return ()
        labels = self._build()
        best: Sequence[int] | None = None
        for req in term.labels:
            if req.operator == "In":
                found = sorted({i for v in req.values for i in labels.get((req.key, v), ())})
                if best is None or len(found) < len(best):
                    best = found
        for req in term.fields:
            if req.equal and req.key == "metadata.name":
                found = self._names.get(req.value, [])
                if best is None or len(found) < len(best):
                    best = found
        return best if best is not None else range(len(self._nodes))


def add_devices(
    allocatable: Mapping[str, Decimal], found: Iterable[Mapping[str, int]]
) -> dict[str, Decimal]:
    """``allocatable`` with the devices of the node's slices added."""
    out = dict(allocatable)
    for counts in found:
        for key, count in counts.items():
            out[key] = out.get(key, Decimal(0)) + count
    return out


#: Node names a pool's entry lists at most (``node_count`` says how many there are).
SHOWN_NODES = 10


#: Each device group of the nodes once, with the names of the nodes that hold it.
Reach = list[tuple["DeviceGroup", list[str]]]


def device_reach(nodes: Iterable[Node]) -> Reach:
    """The nodes' device groups, each once, with the nodes that can reach its devices
    (empty: no ResourceSlice in the inventory)."""
    groups: dict[int, tuple[DeviceGroup, list[str]]] = {}
    for node in nodes:
        for group in node.devices:
            if isinstance(group, DeviceGroup):
                groups.setdefault(id(group), (group, []))[1].append(node.name)
    return list(groups.values())


def available(reach: Reach, device_class: str, drivers: Iterable[str] = ()) -> dict[str, Any]:
    """The published devices (``reach``: :func:`device_reach`) a request for
    ``device_class`` may get, for ``gpulint inspect``: by driver and pool, the device names,
    how many, and the nodes that can reach them. The class's devices are known for the
    classes of :data:`CLASS_SELECTS` and for a DeviceClass of the project whose selectors
    name its drivers (``drivers``: every device of those drivers, whatever else its
    selectors ask); ``selected_by`` is None for any other class."""
    known = CLASS_SELECTS.get(device_class)
    wanted: list[tuple[str, str | None]] = [known] if known else [(d, None) for d in drivers]
    if not wanted:
        return {"selected_by": None, "count": 0, "pools": []}
    pools: dict[tuple[str, str], tuple[set[tuple[str, str]], set[str]]] = {}
    for group, names in reach:
        hit: set[tuple[str, str]] = set()
        for d in group:
            if any(d.driver == w and (k is None or d.kind == k) for w, k in wanted):
                pools.setdefault((d.driver, d.pool), (set(), set()))[0].add((d.slice, d.name))
                hit.add((d.driver, d.pool))
        for key in hit:  # once per pool of the group, not per device
            pools[key][1].update(names)
    rows = []
    for (driver, pool), (devices, nodes) in sorted(pools.items()):
        shown = sorted(nodes)
        rows.append(
            {
                "driver": driver,
                "pool": pool,
                "devices": sorted({name for _, name in devices}),
                "count": len(devices),
                "nodes": shown[:SHOWN_NODES],
                "node_count": len(shown),
            }
        )
    selected = " or ".join(
        f"driver {w}" + (f" with type {k}" if k is not None else "") for w, k in wanted
    )
    return {"selected_by": selected, "count": sum(r["count"] for r in rows), "pools": rows}
