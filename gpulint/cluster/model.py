"""The cluster as values: nodes (or node pools of identical nodes) and the platform.

A node inventory (``kubectl get nodes -o yaml``), declared ``node-pools:`` with the
instance-type catalog, node-pool objects in the linted files (``gpulint/data/node-pools.json``) and
a platform profile all end up as these values; the scheduler filters and the rules read only
them.
"""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from gpulint.k8s.taints import Taint


class Node(NamedTuple):
    """One node, or ``node_count`` identical nodes of a pool, as kube-scheduler's filters see it.

    ``allocatable`` holds exact quantities (``gpulint.k8s.quantity.parse.parse_quantity``):
    cores for ``cpu``, bytes for ``memory``, a count for extended resources such as
    ``nvidia.com/gpu``.
    """

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    allocatable: Mapping[str, Decimal]
    unschedulable: bool = False
    #: How many identical nodes this row stands for (a node pool's node count).
    node_count: int = 1
    #: The node pool or instance type it belongs to, when known.
    pool: str | None = None
    #: Where it was described, for messages: ``nodes.yaml:12``, ``node-pools[0]``.
    source: str = ""
    #: The DRA devices a node inventory's ResourceSlices publish for it, in groups shared
    #: by the nodes a slice is for (tuples of :class:`gpulint.cluster.slices.Published`;
    #: counted in ``allocatable`` too).
    devices: tuple[tuple[Any, ...], ...] = ()


class Cluster(NamedTuple):
    """The nodes a pod could land on, and the platform that runs them (``None``: unknown)."""

    nodes: tuple[Node, ...] = ()
    platform: str | None = None
    #: The platform's admission adds ``{key: <resource>, operator: Exists, effect:
    #: NoSchedule}`` to a pod for each extended resource it requests (Kubernetes'
    #: ExtendedResourceToleration plugin, on by default on GKE).
    extended_resource_toleration: bool = False
    #: The taints the platform puts on GPU nodes by itself, for rules to use when no node is
    #: described (``None``: the platform says nothing; ``()``: GPU nodes are not tainted).
    gpu_taints: tuple[Taint, ...] | None = None
    #: Tolerations a queueing controller adds to the pods it admits (Kueue's ResourceFlavor
    #: ``tolerations``), for pods that name a queue (``kueue.x-k8s.io/queue-name``).
    queue_tolerations: tuple[Mapping[str, str], ...] = ()
    #: Where the platform comes from when nothing configures it: ``the inventory's node
    #: labels cloud.google.com/gke-nodepool (nodes.yaml:12)``; "" when ``platform:`` /
    #: ``--platform`` names it (or none is known).
    platform_source: str = ""
    #: The ``(file, line)`` of the node that shows it, for a finding's ``related`` places.
    platform_place: tuple[str, int] | None = None
