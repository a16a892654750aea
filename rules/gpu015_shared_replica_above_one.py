"""More than one replica of a shared (time-sliced or MPS) GPU in one container.

## What it does
Flags a container that asks for more than one of a resource that is a replica of a shared
GPU: the `<name>.shared` resources the NVIDIA device plugin advertises with time-slicing or
MPS and `renameByDefault: true` (`nvidia.com/gpu.shared`,
`nvidia.com/mig-1g.10gb.shared`), and any name listed in the `resources` option (the
resources your plugin configuration shares without renaming them, such as `nvidia.com/gpu`
on an MPS node pool). The finding is at the value, under `limits` when the container sets
one there, else under `requests`.

When the run lints the repository's own NVIDIA device plugin configuration (a time-slicing
or MPS `sharing` block: a ConfigMap the GPU Operator's ClusterPolicy or the plugin reads,
the plugin chart's `config.map`), its `resources` rows say which names are replicas: a
`rename`d one (`nvidia.com/gpu-slice`), `<name>.shared` with `renameByDefault: true`, or the
name itself when every configuration of the run shares it without renaming (a row of
`replicas: 1` that keeps its name is taken to share nothing: a configuration of such rows,
one per node label as `single`, is not read as sharing the name (the plugin refuses it:
GPU035); nor is a named configuration that says only `version: v1`,
the chart's `default` beside an `mps` one). If that
configuration rejects a request above one (`failRequestsGreaterThanOne: true`, or MPS), the
finding is an **error** that names the configuration's line (a `related` place of kind
`evidence`): the pod can never run on those nodes.

## Why it matters
A replica is a slice of one GPU, not a GPU. Under MPS the device plugin always fails a
request above one, and under time-slicing it does so with `failRequestsGreaterThanOne:
true`: the container is rejected at admission on the node with `invalid request: maximum
request size for shared resources is 1` (`UnexpectedAdmissionError`), and the pod never
runs. Without that flag the request is accepted, but the replicas may all be slices of the
same GPU: two replicas give no more memory or compute than one, and a job that expects two
GPUs sees one. Without the plugin's configuration in the project the finding is `info`: which
of the two happens is the configuration, which the manifest does not show (time-slicing, the
plugin's default sharing, accepts the request), and it says so; a warning when the project's
configurations disagree (some nodes reject the request, others accept it). When every
configuration of the project that shares the GPU time-slices without
`failRequestsGreaterThanOne`, the request is accepted and the pod runs, and some ask for
several replicas on purpose (a larger share of a GPU that fewer pods then share): the
finding is **info**, naming the configuration.

## Example
```yaml
containers:
- name: notebook
  resources:
    limits:
      nvidia.com/gpu.shared: 2   # GPU015
```

## Use instead
```yaml
containers:
- name: notebook
  resources:
    limits:
      nvidia.com/gpu.shared: 1   # or nvidia.com/gpu: 2 on nodes that are not shared
```

## Options
`resources` (list of resource names, default `[]`): more names that are shared replicas on
your cluster, for time-slicing or MPS configured without `renameByDefault` (the replicas
keep the name `nvidia.com/gpu`). Only list a name if every node that offers it shares it.

## References
- https://github.com/NVIDIA/k8s-device-plugin/issues/929 (MPS with `nvidia.com/gpu: 20`:
  "maximum request size for shared resources is 1"; MPS always sets
  `failRequestsGreaterThanOne`)
- https://github.com/NVIDIA/k8s-device-plugin/issues/1208
- https://github.com/NVIDIA/gpu-operator/issues/386 (two time-sliced replicas on one GPU)
- NVIDIA/k8s-device-plugin `internal/rm/rm.go` (`ValidateRequest`), README ("Shared Access
  to GPUs": `renameByDefault`, `failRequestsGreaterThanOne`), `api/config/v1/sharing.go`,
  `api/config/v1/replicas.go` (`name`, `rename`, `replicas`)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    PodSpec,
    ResourceEntry,
    RuleContext,
    Violation,
    container_entries,
    show_value,
)

CODE = "GPU015"
NAME = "shared-gpu-replicas-above-one"
SEVERITY = "info"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {
    "resources": {
        "type": "array",
        "items": {"type": "string", "minLength": 1},
        "description": (
            "More resource names that are shared GPU replicas on your cluster (time-slicing "
            "or MPS without renameByDefault)."
        ),
        "default": [],
    }
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    extra = set(ctx.options.get("resources", ()))
    chosen: dict[tuple[int, str], ResourceEntry] = {}
    for entry in container_entries(pod):
        name = entry.name
        resource = ctx.registry.get(name)
        if name not in extra and (
            resource is None or (resource.kind != "shared" and not resource.replica)
        ):
            continue
        value = entry.amount.value
        if value is None or value <= 1:
            continue
        key = (id(entry.container), name)
        # One finding per container and name: at limits (which sets the request of an
        # extended resource) when it says more than one, else at requests.
        if key not in chosen or entry.section == "limits":
            chosen[key] = entry
    for entry in chosen.values():
        resource = ctx.registry.get(entry.name)
        asked = (
            f"container {entry.container.label} asks for {show_value(entry.value)} of {entry.name}"
        )
        ask_one = f"ask for {entry.name}: 1"
        whole = "or for whole GPUs on nodes that are not shared"
        severity: str | None
        if resource is not None and resource.said:
            said = f"{resource.setting}, {resource.said}"
            if resource.single:
                # The run's own device-plugin configuration says the plugin rejects it.
                severity = "error"
                message = (
                    f"{asked}, a replica of one shared GPU, which the project's device plugin "
                    "rejects at admission"
                )
                help_ = f"{ask_one}, {whole} (its configuration: {said})"
            elif resource.accepted:
                # The run's own configuration time-slices without failRequestsGreaterThanOne:
                # the plugin accepts the request and the pod runs; what stays is a caution.
                severity = "info"
                message = (
                    f"{asked}, a replica of one shared GPU: the replicas may all be slices of "
                    "one GPU, with no more memory or compute than one"
                )
                help_ = (
                    f"{ask_one} if one slice is enough, {whole} (the project's device plugin "
                    f"accepts more: {said})"
                )
            else:
                # The project's configurations disagree: some nodes reject the request.
                severity = "warning"
                message = (
                    f"{asked}, a replica of one shared GPU: rejected under MPS, else maybe all "
                    "slices of one GPU"
                )
                help_ = f"{ask_one}, {whole} ({resource.setting})"
        else:
            # No configuration of the project says how the GPU is shared: rejected under
            # MPS, accepted by time-slicing (its default): the premise is not known.
            severity = None
            message = (
                f"{asked}: rejected under MPS, else maybe all slices of one GPU (assumed: its "
                "sharing is not in the project)"
            )
            help_ = f"{ask_one}, {whole}"
        yield Violation(
            entry.path,
            message,
            help=help_,
            at="value",
            severity=severity,
            related=() if resource is None else resource.evidence(),
        )
