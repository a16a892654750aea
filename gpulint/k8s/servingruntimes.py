"""What a project's KServe serving runtimes give the pods of the predictors that use them.

KServe builds a predictor's pod from its ``ServingRuntime`` (or ``ClusterServingRuntime``):
the runtime's container is merged with the predictor's ``model``, and the runtime's volumes
join the pod (kserve/kserve ``pkg/controller/v1beta1/inferenceservice/components/predictor.go``).
A predictor that names its runtime (``model.runtime``) therefore mounts what that runtime
mounts. When the project defines the runtime, what it mounts at ``/dev/shm`` is known:
``memory`` (an ``emptyDir`` with ``medium: Memory``, or the host's ``/dev/shm``), ``disk``
(another ``emptyDir``), ``other`` (a volume the runtime does not define, or one whose medium
is not judged), or ``none``; otherwise it is not (GPU042 then says what it assumed). The
volumes are judged as a pod's own are (:func:`volume_media`, :func:`shm_mount`).

Read in the facts stage (:func:`gpulint.lint.prepass.serving_runtimes`) from every file of the
project whose bytes name ``ServingRuntime``, so an InferenceService is judged the same
whichever of the project's files the run was given. Runtimes are told apart by name only:
two runtimes of one name that mount different things (two namespaces) make it unknown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: Runtimes kept at most per project.
MAX_RUNTIMES = 4096
#: The kinds, in KServe's API group.
KINDS = frozenset(("ServingRuntime", "ClusterServingRuntime"))
GROUP = "serving.kserve.io"
SHM = "/dev/shm"
#: A runtime named twice with different mounts: which one a predictor gets is not known.
CONFLICT = "?"


class ServingRuntimes:
    """What each serving runtime of the project mounts at ``/dev/shm``, by name."""

    def __init__(self) -> None:
        self._shm: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self._shm)

    def add(self, obj: Mapping[str, Any]) -> None:
        """Record ``obj`` if it is a serving runtime with a name."""
        if len(self._shm) >= MAX_RUNTIMES or obj.get("kind") not in KINDS:
            return
        api = obj.get("apiVersion")
        if not isinstance(api, str) or api.split("/", 1)[0] != GROUP:
            return
        metadata = obj.get("metadata")
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        spec = obj.get("spec")
        if not isinstance(name, str) or not isinstance(spec, Mapping):
            return
        shm = shm_of(spec)
        known = self._shm.get(name)
        self._shm[name] = shm if known is None or known == shm else CONFLICT

    def shm(self, name: str) -> str | None:
        """``memory``, ``disk``, ``other`` or ``none``: what the runtime ``name`` mounts at
        /dev/shm; None when the project does not define it (or defines two that differ)."""
        found = self._shm.get(name)
        return None if found is None or found == CONFLICT else found


def volume_media(spec: Mapping[str, Any]) -> dict[str, str]:
    """A pod spec's volumes by name: ``memory`` (an ``emptyDir`` with ``medium: Memory``, or
    the host's ``/dev/shm``), ``disk`` (another ``emptyDir``) or ``other`` (a volume whose
    medium gpulint does not judge: a claim, a ConfigMap, another host path)."""
    out: dict[str, str] = {}
    volumes = spec.get("volumes")
    for volume in volumes if isinstance(volumes, list) else ():
        if not isinstance(volume, Mapping) or not isinstance(volume.get("name"), str):
            continue
        empty = volume.get("emptyDir")
        host = volume.get("hostPath")
        if "emptyDir" in volume:
            medium = empty.get("medium") if isinstance(empty, Mapping) else None
            out[volume["name"]] = "memory" if medium == "Memory" else "disk"
        elif isinstance(host, Mapping) and str(host.get("path", "")).rstrip("/") == SHM:
            out[volume["name"]] = "memory"
        else:
            out[volume["name"]] = "other"
    return out


def shm_mount(container: Mapping[str, Any]) -> str | None:
    """The name of the volume a container mounts at /dev/shm (``""``: a mount without a
    name), if any."""
    mounts = container.get("volumeMounts")
    for mount in mounts if isinstance(mounts, list) else ():
        if not isinstance(mount, Mapping):
            continue
        path = mount.get("mountPath")
        if isinstance(path, str) and path.rstrip("/") == SHM:
            name = mount.get("name")
            return name if isinstance(name, str) else ""
    return None


def shm_of(spec: Mapping[str, Any]) -> str:
    """What a runtime's containers mount at /dev/shm: ``memory``, ``disk``, ``other`` (a
    volume the runtime does not define, or one whose medium is not judged) or ``none``."""
    media = volume_media(spec)
    found = "none"
    containers = spec.get("containers")
    for container in containers if isinstance(containers, list) else ():
        mount = shm_mount(container) if isinstance(container, Mapping) else None
        if mount is not None:
            kind = media.get(mount, "other")
            if kind == "memory":
                return "memory"
            found = kind
    return found


def project_runtimes(objects: Iterable[Any]) -> ServingRuntimes | None:
    """The serving runtimes among ``objects`` (the documents of the project's files that
    name the kind); None when there are none."""
    runtimes = ServingRuntimes()
    for obj in objects:
        if isinstance(obj, Mapping):
            runtimes.add(obj)
    return runtimes if runtimes else None
