"""A GPU node agent that requests a GPU of its own, which ties up a device on every node.

## What it does
Flags a DaemonSet that runs one of NVIDIA's GPU node agents — the device plugin, the DCGM
exporter or another GPU metrics exporter, GPU Feature Discovery, the driver, the container
toolkit, the MIG or vGPU manager (`gpulint/data/agents.json`) — when one of its containers
requests `nvidia.com/gpu`, at the request. Not flagged: the GPU Operator's validator, whose
workload check runs on a GPU on purpose; DCGM's own image
(`nvcr.io/nvidia/cloud-native/dcgm`, which also runs `dcgmi diag` on the GPUs it is given);
pods recognised by their command (an MPS control daemon, a Job that sets the compute mode),
which may hold the devices they set up; and other vendors' agents, whose device plugins may
share a device among containers (Intel's `shared-dev-num`) or offer one resource that grants
them all (Intel's `*_monitoring`).

## Why it matters
A node agent works on all of its node's GPUs, through the host's device files and driver,
not through the scheduler. A request takes a GPU of every GPU node (or a share of one, with
time-slicing) away from the workloads for good, and the device plugin then shows the agent
only that GPU: a DCGM exporter reports one GPU of eight, and on a node whose GPUs are all in
use it stays `Pending` and reports nothing. A device plugin that requests the resource it
advertises cannot start on a node where no plugin has advertised it yet.

## Example
```yaml
kind: DaemonSet
spec:
  template:
    spec:
      containers:
      - name: dcgm-exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
        resources:
          limits:
            nvidia.com/gpu: 1   # GPU079
```

## Use instead
```yaml
      containers:
      - name: dcgm-exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
        securityContext:
          capabilities:
            add: ["SYS_ADMIN"]
```

## Options
None.

## References
- NVIDIA dcgm-exporter's DaemonSet (`dcgm-exporter.yaml`, the Helm chart): no GPU request;
  it reaches every GPU through the NVIDIA runtime with `NVIDIA_VISIBLE_DEVICES=all`
  (https://github.com/NVIDIA/dcgm-exporter)
- NVIDIA k8s-device-plugin's DaemonSet: no GPU request
  (https://github.com/NVIDIA/k8s-device-plugin/blob/main/deployments/static/nvidia-device-plugin.yml)
- Kubernetes device plugins: a container gets only the devices allocated to it
  (https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, accelerator_entries, image_repository

CODE = "GPU079"
NAME = "gpu-agent-requests-gpu"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

#: Agents that may hold a device on purpose: the validator runs a CUDA workload on one.
_MAY_HOLD = frozenset({"NVIDIA GPU Operator validator"})


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if not pod.node_agent or pod.location != "pod":
        return
    entries = accelerator_entries(pod, ctx.registry)
    if not entries:
        return
    from gpulint.api import find_agent  # node agents only: imported when one is met

    agent = find_agent(pod)
    if agent is None or not agent.node or agent.commands or agent.agent in _MAY_HOLD:
        return
    if agent.hardware != "nvidia":
        return  # other vendors' plugins may share a device, or grant all for monitoring
    if agent.agent == "DCGM exporter" and not any(
        "dcgm-exporter" in image_repository(c.data["image"])
        for c in pod.containers
        if isinstance(c.data.get("image"), str)
    ):
        return  # DCGM's own image: `dcgmi diag` runs its checks on the GPUs it is given
    seen: set[tuple[str | None, str]] = set()
    for entry in entries:
        if entry.name != "nvidia.com/gpu" or not entry.amount.positive_or_unknown:
            continue
        if (entry.container.name, entry.name) in seen:
            continue  # its limit and its request: one finding
        seen.add((entry.container.name, entry.name))
        plugin = "device plugin" in agent.agent.lower()
        consequence = (
            ", the resource it advertises: it cannot start on a node no plugin has given it"
            if plugin
            else ": it takes a GPU of every node from the workloads, and sees only that one"
        )
        yield Violation(
            entry.path,
            f"the {agent.agent} requests {entry.name}{consequence}",
            help="remove the request: a node agent reaches its node's devices through the "
            "host, not the scheduler",
            at="key",
        )
