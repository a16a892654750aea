"""Platform profiles (``platform:`` / ``--platform``): what a managed Kubernetes does on its
own that decides whether a GPU pod schedules. Every fact is cited in docs/cluster.md.

- ``gke``: GPU node pools in a cluster with other pools are tainted
  ``nvidia.com/gpu=present:NoSchedule``, and the ExtendedResourceToleration admission plugin
  adds the matching toleration to every pod that requests ``nvidia.com/gpu``; nodes carry
  ``cloud.google.com/gke-nodepool`` and ``cloud.google.com/gke-accelerator``.
- ``gke-autopilot``: the same, and a GPU pod names its GPU with a
  ``cloud.google.com/gke-accelerator`` node selector (GPU054).
- ``eks``: managed node groups and Karpenter NodePools have no taint unless one is declared;
  nodes carry ``eks.amazonaws.com/nodegroup``.
- ``aks``: GPU node pools have no taint unless one is given at creation (the docs use
  ``sku=gpu:NoSchedule``); nodes carry ``kubernetes.azure.com/agentpool``.
- ``ack``: GPU node pools have no taint unless one is set; GPU sharing and exclusivity are
  chosen per pool with the ``ack.node.gpu.schedule`` label (``default``, ``cgpu``,
  ``core_mem``, ``share``, ``mps``, ``topology``).
- ``openshift``: the NVIDIA GPU Operator labels GPU nodes and taints none.
- ``generic``: nothing beyond Kubernetes: the rules keep their options.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from gpulint.cluster.model import Cluster
from gpulint.errors import GpulintError
from gpulint.k8s.taints import Taint

#: GKE taints NVIDIA GPU pools so (TPU pools get `google.com/tpu=present:NoSchedule`, which
#: the same admission plugin tolerates for TPU pods): it applies to pods of NVIDIA hardware.
GKE_GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule", frozenset({"nvidia"}))


class Platform(NamedTuple):
    name: str
    #: ExtendedResourceToleration is enabled (the pod gets the resource's toleration).
    extended_resource_toleration: bool = False
    #: Taints GPU node pools get by themselves (``None``: the platform says nothing).
    gpu_taints: tuple[Taint, ...] | None = None
    #: The label every node of a pool carries with the pool's name.
    pool_label: str | None = None
    #: A GPU pod must select its accelerator with ``cloud.google.com/gke-accelerator``.
    requires_accelerator_selector: bool = False


PLATFORMS: dict[str, Platform] = {
    "ack": Platform("ack", gpu_taints=()),
    "gke": Platform(
        "gke",
        extended_resource_toleration=True,
        gpu_taints=(GKE_GPU_TAINT,),
        pool_label="cloud.google.com/gke-nodepool",
    ),
    "gke-autopilot": Platform(
        "gke-autopilot",
        extended_resource_toleration=True,
        gpu_taints=(GKE_GPU_TAINT,),
        pool_label="cloud.google.com/gke-nodepool",
        requires_accelerator_selector=True,
    ),
    "eks": Platform("eks", gpu_taints=(), pool_label="eks.amazonaws.com/nodegroup"),
    "aks": Platform("aks", gpu_taints=(), pool_label="kubernetes.azure.com/agentpool"),
    "openshift": Platform("openshift", gpu_taints=()),
    "generic": Platform("generic"),
}

CHOICES = tuple(PLATFORMS)

#: (label key or prefix ending in "/" or "-", platform, where the platform documents the label).
PLATFORM_LABELS: tuple[tuple[str, str, str], ...] = (
    (
        "cloud.google.com/gke-accelerator",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus#create-gpu-pool",
    ),
    (
        "cloud.google.com/gke-nodepool",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/node-pools",
    ),
    (
        "cloud.google.com/gke-gpu-partition-size",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi",
    ),
    (
        "cloud.google.com/gke-gpu-sharing-strategy",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/timesharing-gpus",
    ),
    (
        "cloud.google.com/gke-tpu-accelerator",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/tpus",
    ),
    (
        "cloud.google.com/gke-tpu-topology",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/tpus",
    ),
    (
        "cloud.google.com/compute-class",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes",
    ),
    (
        "cloud.google.com/gke-spot",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms",
    ),
    (
        "cloud.google.com/gke-preemptible",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/how-to/preemptible-vms",
    ),
    (
        "cloud.google.com/gke-flex-start",
        "gke",
        "https://cloud.google.com/kubernetes-engine/docs/concepts/dws",
    ),
    (
        "eks.amazonaws.com/nodegroup",
        "eks",
        "https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html",
    ),
    (
        "eks.amazonaws.com/capacityType",
        "eks",
        "https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html",
    ),
    (
        "eks.amazonaws.com/instance-",
        "eks",
        "https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html",
    ),
    ("karpenter.k8s.aws/", "eks", "https://karpenter.sh/docs/reference/instance-types/"),
    (
        "kubernetes.azure.com/agentpool",
        "aks",
        "https://learn.microsoft.com/azure/aks/use-labels",
    ),
    (
        "kubernetes.azure.com/scalesetpriority",
        "aks",
        "https://learn.microsoft.com/azure/aks/spot-node-pool",
    ),
    ("karpenter.azure.com/", "aks", "https://learn.microsoft.com/azure/aks/node-autoprovision"),
    (
        "kubernetes.azure.com/accelerator",
        "aks",
        "https://learn.microsoft.com/azure/aks/gpu-cluster",
    ),
    (
        "aliyun.accelerator/nvidia_name",
        "ack",
        "https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/"
        "labels-for-enabling-gpu-scheduling-policies",
    ),
    (
        "alibabacloud.com/nodepool-id",
        "ack",
        "https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/"
        "create-a-node-pool",
    ),
    (
        "ack.node.gpu.schedule",
        "ack",
        "https://www.alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/"
        "labels-for-enabling-gpu-scheduling-policies",
    ),
)

#: Platform names as messages write them.
PLATFORM_NAMES = {
    "gke": "GKE",
    "gke-autopilot": "GKE Autopilot",
    "eks": "EKS",
    "aks": "AKS",
    "ack": "ACK",
    "openshift": "OpenShift",
}


def platform_of_label(key: Any) -> str | None:
    """The platform a node label key belongs to (:data:`PLATFORM_LABELS`), else None."""
    if not isinstance(key, str):
        return None
    for label, name, _ in PLATFORM_LABELS:
        if key == label or (label.endswith(("/", "-")) and key.startswith(label)):
            return name
    return None


class Inferred(NamedTuple):
    """A platform the nodes of an inventory show, and what shows it."""

    platform: str
    #: The label key that shows it: ``cloud.google.com/gke-nodepool``.
    label: str
    #: Where: the first node that carries it (``nodes.yaml:12``).
    source: str

    def note(self) -> str:
        """``the inventory's node labels cloud.google.com/gke-nodepool (nodes.yaml:12)``."""
        where = f" ({self.source})" if self.source else ""
        return f"the inventory's node labels {self.label}{where}"

    def place(self) -> tuple[str, int] | None:
        """``(file, line)`` of :attr:`source`, when it names one."""
        label, _, line = self.source.rpartition(":")
        return (label, int(line)) if label and line.isdigit() else None


def nodes_platform(nodes: Iterable[tuple[Mapping[str, str], str]]) -> Inferred | None:
    """The one platform the ``(labels, source)`` of an inventory's nodes show; None when
    they show none, or more than one (a mixed list says nothing certain)."""
    found: dict[str, Inferred] = {}
    for labels, source in nodes:
        for key in labels:
            name = platform_of_label(key)
            if name is not None and name not in found:
                found[name] = Inferred(name, key, source)
    return next(iter(found.values())) if len(found) == 1 else None


class UnknownPlatform(GpulintError, ValueError):
    """A platform name gpulint has no profile for; the message lists the choices."""


def platform(name: str) -> Platform:
    """The platform named ``name``, in any case (``GKE`` is ``gke``, as rule codes are)."""
    try:
        return PLATFORMS[name] if name in PLATFORMS else PLATFORMS[name.lower()]
    except KeyError:
        raise UnknownPlatform(
            f"unknown platform {name!r}; choose one of: {', '.join(CHOICES)}"
        ) from None


def with_inferred_platform(cluster: Cluster) -> Cluster:
    """With no ``platform:``, the cluster with the one platform its inventory's node labels
    show (:func:`nodes_platform`), that platform's admission (GKE's ExtendedResourceToleration)
    and where it came from; the nodes keep their own taints."""
    from gpulint.cluster.filters import cluster_groups

    inferred = nodes_platform((n.labels, n.source) for n in cluster.nodes)
    if inferred is None:
        return cluster
    cluster = cluster._replace(
        platform=inferred.platform,
        extended_resource_toleration=PLATFORMS[inferred.platform].extended_resource_toleration,
        platform_source=inferred.note(),
        platform_place=inferred.place(),
    )
    cluster_groups(cluster)  # grouped once here, before the linting workers are forked
    return cluster
