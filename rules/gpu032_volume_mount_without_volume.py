"""A container mounts a volume its pod does not define.

## What it does
Reports, at the mount's `name`, an entry of a container's `volumeMounts` (init and sidecar
containers included) whose name is none of the pod's `volumes` (nor, in a StatefulSet, of
its `volumeClaimTemplates`). It reads the pod specs of Kubernetes' own workload kinds only —
`Pod`, `Deployment`, `StatefulSet`, `DaemonSet`, `ReplicaSet`, `ReplicationController`,
`Job`, `CronJob`, `PodTemplate` — whose pods are created as written. An operator's resource
is left alone: operators add volumes of their own (KServe merges a serving runtime's, Argo
Workflows a workflow's, Volcano its SSH keys'). Names that hold a template placeholder are
left alone, and so is a pod whose `volumes` is not a list of named volumes (a template fills
it in). On a Kustomize patch linted without `--render`, and on the base a patch completes,
the rule does not run (GL203): the patch may add the volume.

## Why it matters
The API server checks that every mount names a volume of the pod: `kubectl apply` fails with
`spec.template.spec.containers[0].volumeMounts[0].name: Not found: "scripts-pvc"`, and the
GPU workload is never created. A StatefulSet is accepted (its template's pod spec is not
validated), but every pod it creates is refused: the StatefulSet stays at zero ready replicas,
with the reason only in its events.

## Example
```yaml
spec:
  volumes:
  - name: dshm
    emptyDir:
      medium: Memory
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.11.0
    volumeMounts:
    - name: dshm
      mountPath: /dev/shm
    - name: model-cache     # GPU032: no volume model-cache
      mountPath: /root/.cache/huggingface
```

## Use instead
```yaml
spec:
  volumes:
  - name: dshm
    emptyDir:
      medium: Memory
  - name: model-cache
    persistentVolumeClaim:
      claimName: model-cache
```

## Options
None.

## References
- kubernetes/kubernetes `pkg/apis/core/validation/validation.go` (`ValidateVolumeMounts`:
  `field.NotFound(idxPath.Child("name"), mnt.Name)` for a mount whose name is no volume)
  and `pkg/apis/apps/validation/validation.go` (`ValidatePodTemplateSpecForStatefulSet`
  validates the template's labels and annotations, not its pod spec)
- https://kubernetes.io/docs/concepts/storage/volumes/
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, holds_placeholder

CODE = "GPU032"
NAME = "volume-mount-without-volume"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: a patch, or the base a patch completes, may add the volume
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
OPTIONS: dict[str, Any] = {}

#: Kubernetes' own kinds whose pods are created from the pod spec as written, by group.
_BUILTIN = {
    "": frozenset({"Pod", "ReplicationController", "PodTemplate"}),
    "apps": frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}),
    "batch": frozenset({"Job", "CronJob"}),
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod" or pod.found_by != "table":
        return
    obj = pod.obj
    if obj.kind not in _BUILTIN.get(obj.group, ()):
        return
    names = _volume_names(pod.spec.get("volumes"))
    if names is None:
        return
    statefulset = obj.kind == "StatefulSet"
    if statefulset:
        spec = obj.data.get("spec")
        claims = _claim_names(
            spec.get("volumeClaimTemplates") if isinstance(spec, Mapping) else None
        )
        if claims is None:
            return
        names |= claims
    refused = "every pod of this StatefulSet" if statefulset else f"the {obj.kind}"
    for container in pod.containers:
        if container.section == "ephemeralContainers":
            continue
        mounts = container.data.get("volumeMounts")
        for index, mount in enumerate(mounts if isinstance(mounts, list) else ()):
            name = mount.get("name") if isinstance(mount, Mapping) else None
            if not isinstance(name, str) or not name or name in names or holds_placeholder(name):
                continue
            yield Violation(
                (*container.path, "volumeMounts", index, "name"),
                f"container {container.label} mounts {name[:60]}, which is no volume of the "
                f"pod: the API server refuses {refused} (volumeMounts name: Not found)",
                help=f"add a volume named {name[:60]} to the pod's volumes, or fix the name",
                at="value",
            )


def _volume_names(volumes: Any) -> set[str] | None:
    """The names of a pod's ``volumes``; None when they cannot be told (not a list, or a
    volume without a plain name)."""
    return _names(volumes, lambda volume: volume.get("name"))


def _claim_names(templates: Any) -> set[str] | None:
    """The names of a StatefulSet's ``volumeClaimTemplates``; None when they cannot be told."""

    def name(template: Mapping[str, Any]) -> Any:
        meta = template.get("metadata")
        return meta.get("name") if isinstance(meta, Mapping) else None

    return _names(templates, name)


def _names(items: Any, name_of: Callable[[Mapping[str, Any]], Any]) -> set[str] | None:
    """The plain names ``name_of`` reads from each mapping of ``items`` (none when ``items``
    is absent); None when one cannot be told (not a list, an item without a plain name)."""
    if items is None:
        return set()
    if not isinstance(items, list):
        return None
    names: set[str] = set()
    for item in items:
        name = name_of(item) if isinstance(item, Mapping) else None
        if not isinstance(name, str) or holds_placeholder(name):
            return None
        names.add(name)
    return names
