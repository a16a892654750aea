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

from typing import NamedTuple

from gpulint.taints import Taint

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


class UnknownPlatform(ValueError):
    """A platform name gpulint has no profile for; the message lists the choices."""


def platform(name: str) -> Platform:
    try:
        return PLATFORMS[name]
    except KeyError:
        raise UnknownPlatform(
            f"unknown platform {name!r}; choose one of: {', '.join(CHOICES)}"
        ) from None
