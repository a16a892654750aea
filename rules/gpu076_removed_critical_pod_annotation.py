"""A GPU node agent that relies on the removed critical-pod annotation for its priority.

## What it does
Flags the `scheduler.alpha.kubernetes.io/critical-pod` annotation of a GPU node agent's pod
template (a device plugin, GPU Feature Discovery, the DCGM exporter, ...: a DaemonSet that
`gpulint/data/agents.json` knows, or one named or built as a `device-plugin`) when the pod
sets no `priorityClassName`, at the annotation.

## Why it matters
Kubernetes read the annotation only through the `ExperimentalCriticalPodAnnotation` feature
gate, which 1.16 removed: since then it is an annotation like any other, and the pod runs at
the default priority, 0. Under memory or disk pressure the kubelet evicts it as readily as
any workload, and a pending pod of higher priority preempts it; a device plugin that is gone
takes its node's GPUs out of the node's allocatable, so GPU pods stop being scheduled there.
Old copies of NVIDIA's and other vendors' device plugin manifests still carry it.

## Example
```yaml
spec:
  template:
    metadata:
      annotations:
        scheduler.alpha.kubernetes.io/critical-pod: ""   # GPU076
    spec:
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
```

## Use instead
```yaml
spec:
  template:
    spec:
      priorityClassName: system-node-critical
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
```

## Options
None.

## References
- Kubernetes 1.16 release notes: the `ExperimentalCriticalPodAnnotation` feature gate is
  removed; use priority classes (https://kubernetes.io/blog/2019/09/18/kubernetes-1-16-release-announcement/)
- "Guaranteed Scheduling For Critical Add-On Pods"
  (https://kubernetes.io/docs/tasks/administer-cluster/guaranteed-scheduling-critical-addon-pods/)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, RuleContext, Violation, image_repository, value_at

CODE = "GPU076"
NAME = "removed-critical-pod-annotation"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

ANNOTATION = "scheduler.alpha.kubernetes.io/critical-pod"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if not pod.node_agent or pod.location != "pod" or not pod.path:
        return
    metadata = (*pod.path[:-1], "metadata")
    annotations = value_at(pod.obj.doc.data, (*metadata, "annotations"))
    if not isinstance(annotations, dict) or ANNOTATION not in annotations:
        return
    if pod.spec.get("priorityClassName"):
        return  # the priority class decides; the annotation is only left over
    if not _gpu_agent(pod):
        return
    yield Violation(
        (*metadata, "annotations", ANNOTATION),
        "the critical-pod annotation does nothing since Kubernetes 1.16 and the pod sets no "
        "priorityClassName: the GPU agent runs at priority 0",
        help="set priorityClassName: system-node-critical in the pod template (at priority 0 "
        "no eviction or preemption spares it)",
    )


def _gpu_agent(pod: PodSpec) -> bool:
    """A GPU node agent: one of the agents table, or a device plugin by name or image."""
    from gpulint.api import find_agent  # node agents only: imported when one is met

    if find_agent(pod) is not None:
        return True
    words = [(pod.obj.ref.name or "").lower()]
    words += [
        image_repository(c.data["image"])
        for c in pod.containers
        if isinstance(c.data.get("image"), str)
    ]
    return any("device-plugin" in w or "deviceplugin" in w for w in words)
