"""HorizontalPodAutoscaler that scales on an accelerator's resource metric.

## What it does
Flags a `HorizontalPodAutoscaler` (`autoscaling/v2`, `v2beta2`, `v2beta1`) whose `metrics`
hold a `Resource` or `ContainerResource` metric on an accelerator resource
(`nvidia.com/gpu`, `amd.com/gpu`, a MIG or shared-GPU name, any name of the device registry
or that looks like one), at the metric's `name`.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
Resource and container-resource metrics come from the resource metrics API
(`metrics.k8s.io`), which serves the CPU and memory the kubelet measures of each container
and nothing else: metrics-server collects only those two, and prometheus-adapter's resource
rules have a `cpu` and a `memory` entry and no other. The autoscaler finds no value for
`nvidia.com/gpu` (`FailedGetResourceMetric`: "unable to get metrics for resource
nvidia.com/gpu: no metrics returned from resource metrics API"), so it never scales on GPU
use, and while one of its metrics fails it does not scale down on the others either. The
API server accepts the object, so nothing says so until the autoscaler's events are read.

GPU utilization reaches an autoscaler as a custom or external metric: the DCGM exporter's
`DCGM_FI_DEV_GPU_UTIL` through prometheus-adapter or KEDA, as a `Pods` metric of the
scaled pods or an `External` metric.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
spec:
  metrics:
    - type: Resource
      resource:
        name: nvidia.com/gpu   # GPU046
        target: {type: Utilization, averageUtilization: 85}
```

## Use instead
```yaml
  metrics:
    - type: Pods
      pods:
        metric:
          name: DCGM_FI_DEV_GPU_UTIL
        target: {type: AverageValue, averageValue: "85"}
```

## Options
None.

## References
- https://kubernetes.io/docs/tasks/debug/debug-cluster/resource-metrics-pipeline/ (the
  Metrics API serves CPU and memory)
- https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/ (resource,
  container resource, pods and external metrics; a failing metric stops scale-down)
- kubernetes-sigs/prometheus-adapter `pkg/config/config.go` (`ResourceRules`: `CPU`,
  `Memory`); kubernetes-sigs/metrics-server (CPU and memory of each container)
- https://github.com/NVIDIA/dcgm-exporter (`DCGM_FI_DEV_GPU_UTIL`)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import K8sObject, RuleContext, Violation

CODE = "GPU046"
NAME = "hpa-gpu-resource-metric"
SEVERITY = "warning"
SCOPE = "object"
AS_WRITTEN = True
OPTIONS: dict[str, object] = {}

#: The metric types read from the resource metrics API, and the field that holds each.
RESOURCE_TYPES = {"Resource": "resource", "ContainerResource": "containerResource"}


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.kind != "HorizontalPodAutoscaler" or obj.group != "autoscaling":
        return
    spec = obj.data.get("spec")
    metrics = spec.get("metrics") if isinstance(spec, dict) else None
    if not isinstance(metrics, list):
        return
    registry = ctx.registry
    for i, metric in enumerate(metrics):
        if not isinstance(metric, dict):
            continue
        field = RESOURCE_TYPES.get(str(metric.get("type")))
        source = metric.get(field) if field else None
        name = source.get("name") if isinstance(source, dict) else None
        if not isinstance(name, str):
            continue
        if not (registry.may_be_accelerator(name)):
            continue
        yield Violation(
            (*obj.path, "spec", "metrics", i, field, "name"),
            f"the autoscaler scales on the {metric['type']} metric {name}, which the "
            "resource metrics API never serves: it gets no value and never scales on it",
            help="scale on GPU utilization as a Pods or External metric (the DCGM exporter's "
            "DCGM_FI_DEV_GPU_UTIL through prometheus-adapter or KEDA); the resource metrics "
            "API serves CPU and memory only (while this metric fails, the autoscaler does "
            "not scale down on the others)",
            at="value",
        )
