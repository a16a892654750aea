"""What a pod gets through its DRA claims, counted: the whole accelerators a container's
claims give it (GPU041, GPU042) and those all of a pod's claims give it, which are allocated
on its one node (GPU040). The claims are resolved by :mod:`gpulint.k8s.dra` (the file's,
then the project's); a request of ``allocationMode: All``, a share of a device or
alternatives of different counts are not counted."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from gpulint.k8s.devices import Registry
from gpulint.k8s.dra import ClaimIndex, GpuClaim, claim_reference, class_devices, gpu_claims
from gpulint.k8s.workloads import PodSpec
from gpulint.model import Related


class ClaimedDevices(NamedTuple):
    """Accelerators a container gets through the DRA claims it names."""

    #: Whole devices, when every request it names is an exact count of a class that hands
    #: out whole devices; None otherwise (``All``, a share, a claim in another file).
    devices: int | None
    #: The accelerator (the registry's ``hardware``) of the classes.
    hardware: str
    #: The claims, as a pod describes them (for messages and related places).
    claims: tuple[GpuClaim, ...]

    def related(self) -> tuple[Related, ...]:
        """Where each claim (or template) is defined, as the related places of a finding
        that counts its devices."""
        out: dict[tuple[str, int], Related] = {}
        for c in self.claims:
            why = f"{c.claim.kind} {c.claim.name} (the pod's DRA claim {c.name!r}): its devices"
            out.setdefault((c.claim.label, c.claim.line), c.claim.related(why))
        return tuple(out.values())


def claimed_devices(
    pod: PodSpec, container_claims: Any, registry: Registry, index: ClaimIndex | None
) -> ClaimedDevices | None:
    """The accelerators a container gets through the claims its ``resources.claims`` names
    (``container_claims``): the sum of the exact counts of the requests it names (all of a
    claim's requests when it names no ``request``). None when it names no accelerator claim."""
    if not isinstance(container_claims, list) or not container_claims:
        return None
    by_entry = {c.name: c for c in gpu_claims(pod, registry, index)}
    total: int | None = 0
    hardware = ""
    used: list[GpuClaim] = []
    for ref in container_claims:
        if not isinstance(ref, Mapping):
            continue
        found = by_entry.get(ref.get("name"))  # type: ignore[arg-type]
        if found is None:
            continue
        used.append(found)
        hardware = found.hardware
        wanted = ref.get("request")
        for request in found.claim.requests:
            if wanted and request.name != wanted:
                continue
            whole = all(_whole(c, registry) for c in request.classes)
            if total is None or request.devices is None or not whole:
                total = None
            else:
                total += request.devices
    if not used:
        return None
    return ClaimedDevices(total if total else None, hardware, tuple(used))


class PodClaimed(NamedTuple):
    """Whole accelerators of one kind a pod gets through its DRA claims, all containers
    together: every device of a pod's claims is allocated on the pod's node."""

    #: The accelerator (the registry's ``hardware``: ``nvidia``).
    hardware: str
    #: The whole devices the exact requests ask for (a request of ``All``, a share or
    #: alternatives of different counts left out: a lower bound).
    devices: int
    #: The pod's claims that give them, largest first.
    claims: tuple[tuple[GpuClaim, int], ...]

    def related(self) -> tuple[Related, ...]:
        return ClaimedDevices(
            self.devices, self.hardware, tuple(c for c, _ in self.claims)
        ).related()


def pod_claimed(pod: PodSpec, registry: Registry, index: ClaimIndex | None) -> list[PodClaimed]:
    """The whole accelerators the pod's DRA claims ask for, per accelerator: each of its
    ``resourceClaims`` entries counted once, whichever containers name it."""
    found: dict[str, list[tuple[GpuClaim, int]]] = {}
    for claim in gpu_claims(pod, registry, index):
        devices = 0
        for request in claim.claim.requests:
            if request.devices is not None and all(_whole(c, registry) for c in request.classes):
                devices += request.devices
        if devices:
            found.setdefault(claim.hardware, []).append((claim, devices))
    return [
        PodClaimed(hardware, sum(n for _, n in rows), tuple(sorted(rows, key=lambda r: -r[1])))
        for hardware, rows in found.items()
    ]


def _whole(device_class: str, registry: Registry) -> bool:
    """A class whose every device is one whole accelerator (``whole GPUs``)."""
    known = registry.device_classes.get(device_class)
    return known is not None and known.unit.startswith("whole ") and " or " not in known.unit


def entry_devices(
    entry: Mapping[str, Any], namespace: str | None, registry: Registry, index: ClaimIndex | None
) -> str:
    """What a ``resourceClaims`` entry of a pod (or of a chart's pod options) hands out, by
    the claim or template it names in ``index``: ``accelerator`` when a class of it is an
    accelerator class, ``other`` when every class is known and none is (NVIDIA's IMEX
    channels, a NIC a DRA network driver moves into the pod), ``unknown`` when the claim or
    a class of it is not known."""
    reference = claim_reference(entry)
    claim = None
    if reference is not None and index is not None:
        claim = index.claim(reference[0], reference[1], namespace)
    if claim is None or not claim.device_classes:
        return "unknown"
    kinds = {class_devices(c, registry, index)["devices"] for c in claim.device_classes}
    if "accelerator" in kinds:
        return "accelerator"
    return "unknown" if "unknown" in kinds else "other"
