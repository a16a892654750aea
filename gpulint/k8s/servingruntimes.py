"""What a project's KServe serving runtimes give the pods of the predictors that use them.

KServe builds a predictor's pod from its ``ServingRuntime`` (or ``ClusterServingRuntime``):
the runtime's container is merged with the predictor's ``model``, and the runtime's volumes
join the pod (kserve/kserve ``pkg/controller/v1beta1/inferenceservice/components/predictor.go``).
A predictor that names its runtime (``model.runtime``) therefore mounts what that runtime
mounts. When the project defines the runtime, what it mounts at ``/dev/shm`` is known:
``memory`` (an ``emptyDir`` with ``medium: Memory``, or the host's ``/dev/shm``), ``disk``
(another volume of the runtime), ``other`` (a volume the runtime does not define), or
``none``; otherwise it is not (GPU042 then says what it assumed).

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


def shm_of(spec: Mapping[str, Any]) -> str:
    """What a runtime's containers mount at /dev/shm: ``memory``, ``disk``, ``other`` or
    ``none``."""
    volumes: dict[str, str] = {}
    listed = spec.get("volumes")
    for volume in listed if isinstance(listed, list) else ():
        if not isinstance(volume, Mapping) or not isinstance(volume.get("name"), str):
            continue
        empty = volume.get("emptyDir")
        host = volume.get("hostPath")
        memory = isinstance(empty, Mapping) and empty.get("medium") == "Memory"
        memory = memory or (isinstance(host, Mapping) and host.get("path") == SHM)
        volumes[volume["name"]] = "memory" if memory else "disk"
    found = "none"
    containers = spec.get("containers")
    for container in containers if isinstance(containers, list) else ():
        mounts = container.get("volumeMounts") if isinstance(container, Mapping) else None
        for mount in mounts if isinstance(mounts, list) else ():
            if isinstance(mount, Mapping) and mount.get("mountPath") == SHM:
                # a volume the runtime does not define may be the predictor's own
                kind = volumes.get(str(mount.get("name")), "other")
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
