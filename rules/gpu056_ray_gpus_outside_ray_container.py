"""KubeRay pod whose GPUs are held by a container other than the Ray container.

## What it does
Flags a head or worker group of a KubeRay `RayCluster`, `RayJob` or `RayService` whose pod
template holds accelerators (a device registry resource with an amount other than 0) in a
container that is not the first one, while the first container holds none. KubeRay takes the
first container of the template for the Ray container: it starts `ray start` there and
counts the Ray node's GPUs from that container's resources. The finding is at the first
container's name and names the container that holds the devices.

It is a warning when the group's `rayStartParams` give `num-gpus` above 0 (Ray advertises
GPUs the Ray container cannot see, and tasks that ask for them fail to find CUDA), `info`
otherwise (the other container may be a GPU program of its own beside Ray; the finding says
it assumed the devices are meant for Ray). Init containers and sidecars (init containers
with `restartPolicy: Always`) are not the Ray container.

## Why it matters
A sidecar written first (GKE's TCPXO daemon of A3 Mega nodes, a log shipper) becomes the Ray
container: Ray runs where there is no GPU, and the container that holds the node's GPUs runs
`sleep infinity` with them idle. KubeRay decided that the Ray container is the first
application container (ray-project/kuberay#1379).

## Example
```yaml
workerGroupSpecs:
- groupName: gpu
  rayStartParams: {num-gpus: "8"}
  template:
    spec:
      containers:
      - name: tcpxo-daemon          # GPU056: KubeRay starts Ray here
        image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.12
      - name: ray-worker
        image: rayproject/ray:2.40.0-gpu
        resources:
          limits:
            nvidia.com/gpu: 8
```

## Use instead
```yaml
      containers:
      - name: ray-worker
        image: rayproject/ray:2.40.0-gpu
        resources:
          limits:
            nvidia.com/gpu: 8
      - name: tcpxo-daemon
        image: us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.12
```

## Options
None.

## References
- ray-project/kuberay#1379 "Ray container must be the first application container"
- Ray documentation, "RayCluster Configuration" (the Ray container, `rayStartParams`):
  https://docs.ray.io/en/latest/cluster/kubernetes/user-guides/config.html
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    accelerator_entries,
    kuberay_pod,
    value_at,
)

CODE = "GPU056"
NAME = "ray-gpus-outside-ray-container"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod" or not kuberay_pod(pod.obj) or pod.path[-2:] != ("template", "spec"):
        return
    main = [c for c in pod.containers if c.section == "containers"]
    if len(main) < 2:
        return
    held: dict[str, str] = {}
    for entry in accelerator_entries(pod, ctx.registry):
        if entry.container.section == "containers" and entry.amount.positive_or_unknown:
            held.setdefault(entry.container.label, entry.name)
    first = main[0]
    if not held or first.label in held:
        return
    other, name = next(iter(held.items()))
    group = _group(pod)
    gpus = _num_gpus(group.get("rayStartParams") if group is not None else None)
    said = f" (rayStartParams: num-gpus {gpus})" if gpus else ""
    yield Violation(
        (*first.path, "name") if "name" in first.data else first.path,
        f"KubeRay starts Ray in the first container, {first.label}, which holds no "
        f"accelerator; container {other} holds the {name}",
        help=f"put the Ray container ({other}) first in containers{said}"
        + ("" if gpus else " (assumed: its devices are meant for Ray)"),
        at="value",
        severity=None if gpus else "info",
    )


def _group(pod: PodSpec) -> Mapping[str, Any] | None:
    """The head or worker group that holds the pod template (``...template.spec``)."""
    root = pod.obj.root
    node = value_at(root.data, pod.path[len(root.path) : len(pod.path) - 2])
    return node if isinstance(node, Mapping) else None


def _num_gpus(params: Any) -> int:
    """``rayStartParams``' ``num-gpus`` (a string, as KubeRay takes it), 0 when absent."""
    if not isinstance(params, Mapping):
        return 0
    value = params.get("num-gpus")
    try:
        return int(str(value).strip().strip('"'))
    except ValueError:
        return 0
