"""Declared node pools (``node-pools:`` in the configuration) as :class:`Node` values.

A pool names an instance type of the built-in catalog (``gpulint/data/instance-types.json``) or
says what its nodes have (``gpus``, ``resource``, ``allocatable``); its MIG layout and GPU
sharing decide which resources the device plugin advertises, as the plugins do:

- MIG ``single`` strategy: every MIG instance is an ``nvidia.com/gpu`` (so ``nvidia.com/gpu``
  counts instances), nodes labelled ``nvidia.com/mig.strategy=single``;
- MIG ``mixed`` strategy: ``nvidia.com/mig-<profile>`` per instance (``+`` written ``.``);
  the GPUs left whole (``partitioned`` below ``gpus``) stay ``nvidia.com/gpu``;
- time-slicing and MPS (NVIDIA device plugin): ``replicas`` per device under the same name,
  or under ``<name>.shared`` with ``rename-by-default``;
- Alibaba cGPU / gpushare (ACK): ``aliyun.com/gpu-mem`` (GiB) and ``aliyun.com/gpu-count``
  (cGPU also ``aliyun.com/gpu-core.percentage``), the pool labelled ``ack.node.gpu.schedule``
  ``cgpu`` or ``share``; ``nvidia.com/gpu`` is 0 there (ACK sets the other modes' resources
  to 0);
- HAMi: ``nvidia.com/gpu`` counts vGPUs (``replicas`` per GPU, HAMi's ``deviceSplitCount``,
  default 10), ``nvidia.com/gpumem`` (MiB) and ``nvidia.com/gpucores`` (percent).

A pool without ``taints`` gets the taints its platform puts on GPU pools (GKE's
``nvidia.com/gpu=present:NoSchedule``), else none: declaring a pool states its taints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpulint.cluster.catalog import builtin_catalog
from gpulint.cluster.model import Cluster, Node
from gpulint.cluster.platforms import Platform, platform
from gpulint.errors import GpulintError
from gpulint.k8s.taints import Taint

GIB = Decimal(2**30)
#: The kubelet's default ``--max-pods``.
DEFAULT_MAX_PODS = 110
#: HAMi's default ``deviceSplitCount``: vGPUs per physical GPU.
HAMI_SPLIT = 10


class PoolError(GpulintError, ValueError):
    """A pool that cannot be built; ``path`` is the key it is about (inside the pool)."""

    def __init__(self, path: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.path = path


def mig_resource(profile: str) -> str:
    """``1g.10gb+me`` -> ``nvidia.com/mig-1g.10gb.me`` (the device plugin's name)."""
    return "nvidia.com/mig-" + profile.replace("+", ".")


def _quantity(text: Any, path: tuple[str | int, ...]) -> Decimal:
    from gpulint.k8s.quantity.parse import QuantityError, parse_quantity

    try:
        return parse_quantity(str(text))
    except QuantityError as exc:
        raise PoolError(path, f"{text!r} is not a Kubernetes quantity: {exc}") from None


def _check_profile(profile: str, model: str) -> None:
    """A MIG profile of the device registry, and one the pool's GPU model offers (when the
    registry knows the model: ``A100-SXM4-40GB`` is its ``A100-40GB``)."""
    import re

    from gpulint.k8s.devices import builtin_registry

    registry = builtin_registry()
    resource = registry.get(mig_resource(profile))
    if resource is None or resource.kind != "mig":
        raise PoolError(("mig", "layout", profile), f"{profile!r} is not a MIG profile")
    known = {m for r in registry.resources.values() if r.kind == "mig" for m in r.mig_models}
    plain = re.sub(r"-(SXM\d?|PCIE)(?=-)", "", model)
    if plain in known and resource.mig_models and plain not in resource.mig_models:
        offered = sorted(
            n[len("nvidia.com/mig-") :]
            for n, r in registry.resources.items()
            if r.kind == "mig" and plain in r.mig_models and not n.endswith(".me")
        )
        raise PoolError(
            ("mig", "layout", profile),
            f"{model} GPUs offer no MIG profile {profile}; they offer {', '.join(offered)}",
        )


def _instance_type(
    itype: str, labels: dict[str, str], allocatable: dict[str, Decimal]
) -> tuple[int, int, str, str]:
    """What the instance-type catalog knows of ``itype``: its labels and CPU and memory go
    into ``labels`` and ``allocatable``; returns its GPUs, GPU memory (GiB), model, resource."""
    catalog = builtin_catalog()
    known = catalog.get(itype)
    if known is None:
        near = catalog.closest(itype)
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise PoolError(
            ("instance-type",),
            f"unknown instance type {itype!r}{hint} (or describe the nodes with gpus, "
            "resource and allocatable instead of instance-type)",
        )
    labels.update(known.labels)
    allocatable["cpu"] = Decimal(known.vcpus)
    allocatable["memory"] = Decimal(known.memory_gib) * GIB
    return known.gpus, known.gpu_memory_gib, known.gpu_model, known.resource


def _mig_devices(
    mig: Mapping[str, Any], resource: str, model: str, gpus: int, labels: dict[str, str]
) -> dict[str, int] | None:
    """The devices of a pool whose GPUs MIG partitions (``None`` for the ``none``
    strategy); its MIG labels go into ``labels``."""
    strategy = mig.get("strategy", "none")
    layout: Mapping[str, int] = mig.get("layout") or {}
    if strategy == "none":
        return None
    if resource != "nvidia.com/gpu":
        raise PoolError(("mig",), f"MIG partitions NVIDIA GPUs, but this pool has {resource}")
    if not layout:
        raise PoolError(("mig", "layout"), f"the {strategy} strategy needs a MIG layout")
    for profile in layout:
        _check_profile(profile, model)
    labels["nvidia.com/mig.strategy"] = strategy
    if strategy == "single":
        if len(layout) != 1:
            raise PoolError(
                ("mig", "layout"),
                "the single strategy partitions every GPU alike: give one profile "
                "(use the mixed strategy for several)",
            )
        ((profile, per_gpu),) = layout.items()
        if model:
            labels["nvidia.com/gpu.product"] = f"{model}-MIG-{profile}"
        return {"nvidia.com/gpu": gpus * per_gpu}
    partitioned = int(mig.get("partitioned", gpus))
    if partitioned > gpus:
        raise PoolError(
            ("mig", "partitioned"),
            f"{partitioned} partitioned GPUs, but the pool has {gpus}",
        )
    devices = {"nvidia.com/gpu": gpus - partitioned} if gpus > partitioned else {}
    for profile, per_gpu in layout.items():
        devices[mig_resource(profile)] = partitioned * per_gpu
    return devices


def _shared_devices(
    sharing: Mapping[str, Any],
    devices: dict[str, int],
    whole_nvidia: bool,
    gpus: int,
    gpu_memory: int,
    labels: dict[str, str],
) -> dict[str, int]:
    """The devices a pool advertises once its GPU sharing is on (``devices`` as they are
    without it; ``whole_nvidia``: NVIDIA GPUs MIG does not partition); the sharing's labels
    go into ``labels``."""
    kind = sharing.get("strategy")
    if kind in ("time-slicing", "mps"):
        replicas = int(sharing.get("replicas", 1))
        rename = bool(sharing.get("rename-by-default", False))
        labels["nvidia.com/gpu.sharing-strategy"] = kind
        labels["nvidia.com/gpu.replicas"] = str(replicas)
        shared: dict[str, int] = {}
        for key, count in devices.items():
            if key == "nvidia.com/gpu" or key.startswith("nvidia.com/mig-"):
                shared[f"{key}.shared" if rename else key] = count * replicas
            else:
                shared[key] = count
        return shared
    if kind in ("cgpu", "gpushare"):
        if not whole_nvidia:
            raise PoolError(("sharing",), f"{kind} shares whole NVIDIA GPUs (no MIG)")
        if not gpu_memory:
            raise PoolError(("gpu-memory",), f"{kind} advertises GPU memory: give gpu-memory (GiB)")
        labels["ack.node.gpu.schedule"] = "cgpu" if kind == "cgpu" else "share"
        shared = {"aliyun.com/gpu-mem": gpus * gpu_memory, "aliyun.com/gpu-count": gpus}
        if kind == "cgpu":
            shared["aliyun.com/gpu-core.percentage"] = gpus * 100
        return shared
    if kind == "hami":
        if not whole_nvidia:
            raise PoolError(("sharing",), "HAMi shares whole NVIDIA GPUs (no MIG)")
        split = int(sharing.get("replicas", HAMI_SPLIT))
        shared = {"nvidia.com/gpu": gpus * split, "nvidia.com/gpucores": gpus * 100}
        if gpu_memory:
            shared["nvidia.com/gpumem"] = gpus * gpu_memory * 1024
        return shared
    return devices


def _pool_taints(
    row: Mapping[str, Any], plat: Platform | None, allocatable: Mapping[str, Decimal]
) -> tuple[Taint, ...]:
    """The pool's own taints, else the platform's GPU taints on a node with devices."""
    if "taints" in row:
        return tuple(Taint.from_option(t) for t in row["taints"])
    if (
        plat is not None
        and plat.gpu_taints
        and any(k != "pods" and k not in ("cpu", "memory") for k in allocatable)
    ):
        return tuple(t._replace(hardware=None) for t in plat.gpu_taints)  # a node's own
    return ()


def pool_node(row: Mapping[str, Any], plat: Platform | None, source: str = "") -> Node:
    """The node of one ``node-pools`` entry (already valid against the schema)."""
    name = row["name"]
    labels: dict[str, str] = {}
    allocatable: dict[str, Decimal] = {}
    itype = row.get("instance-type")
    gpus = 0
    gpu_memory = 0
    resource = row.get("resource", "nvidia.com/gpu")
    model = row.get("gpu-model", "")
    if itype is not None:
        gpus, gpu_memory, known_model, known_resource = _instance_type(itype, labels, allocatable)
        model = row.get("gpu-model", known_model)
        resource = row.get("resource", known_resource)
    gpus = int(row.get("gpus", gpus))
    gpu_memory = int(row.get("gpu-memory", gpu_memory))
    allocatable["pods"] = Decimal(DEFAULT_MAX_PODS)
    if plat is not None and plat.pool_label is not None:
        labels[plat.pool_label] = name
    mig = row.get("mig") or {}
    devices = _mig_devices(mig, resource, model, gpus, labels)
    whole_nvidia = resource == "nvidia.com/gpu" and devices is None
    if devices is None:
        devices = {resource: gpus} if gpus else {}
    devices = _shared_devices(
        row.get("sharing") or {}, devices, whole_nvidia, gpus, gpu_memory, labels
    )
    for key, count in devices.items():
        if count:
            allocatable[key] = Decimal(count)
    for key, text in (row.get("allocatable") or {}).items():
        allocatable[key] = _quantity(text, ("allocatable", key))
    labels.update(row.get("labels") or {})
    return Node(
        name=name,
        labels=labels,
        taints=_pool_taints(row, plat, allocatable),
        allocatable=allocatable,
        unschedulable=False,
        node_count=int(row.get("nodes", 1)),
        pool=name,
        source=source,
    )


def build_cluster(
    platform_name: str | None,
    rows: Sequence[Mapping[str, Any]],
    where: Callable[[int], str] = lambda i: f"node-pools[{i}]",
) -> Cluster | None:
    """The cluster the configuration describes, or None when it describes none.

    Raises :class:`PoolError` (with the index of the pool in ``args``-free ``path``) or
    :class:`~gpulint.cluster.platforms.UnknownPlatform`.
    """
    if platform_name is None and not rows:
        return None
    plat = platform(platform_name) if platform_name is not None else None
    nodes = []
    for i, row in enumerate(rows):
        try:
            nodes.append(pool_node(row, plat, where(i)))
        except PoolError as exc:
            raise PoolError((i, *exc.path), str(exc)) from None
    return Cluster(
        nodes=tuple(nodes),
        platform=platform_name,
        extended_resource_toleration=plat.extended_resource_toleration if plat else False,
        gpu_taints=plat.gpu_taints if plat else None,
    )
