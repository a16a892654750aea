"""A list field of a pod or a container written as a mapping or a single value.

## What it does
Flags a field of a pod spec that the Kubernetes API defines as a list (`containers`,
`initContainers`, `volumes`, `tolerations`, `imagePullSecrets`, ...) or such a field of a
container (`env`, `envFrom`, `ports`, `volumeMounts`, ...) when it is written as a mapping,
a string, a number or a boolean, at the value. The usual slip is a list item without its
`- `: `containers:` followed by `name:` and `image:` at one indentation, which YAML reads
as one mapping. Pod specs of Kubernetes' workloads and of the operators gpulint's workload
table knows are checked (`gpulint/data/workloads.json`); a shape found only by its look
may be an operator's own type, and is left alone. `command` and `args` are GPU036's.

## Why it matters
The API server decodes the object into its Go types, and a mapping is no list: `kubectl
apply` fails with `cannot unmarshal object into Go struct field PodSpec.spec.template.spec.
containers of type []v1.Container`, and a custom resource whose schema embeds the pod
template (KubeRay's, Kubeflow's) is refused by the schema's `type: array`. Nothing is
created. Until then, every check of the containers is blind: a GPU request inside the
mapping is no container's request.

## Example
```yaml
template:
  spec:
    containers:            # GPU075: a mapping, not a list of containers
      name: ray-head
      image: rayproject/ray:2.9.0-gpu
```

## Use instead
```yaml
template:
  spec:
    containers:
    - name: ray-head
      image: rayproject/ray:2.9.0-gpu
```

## Options
None.

## References
- Kubernetes API, PodSpec and Container: `containers`, `volumes`, `tolerations`, `env`,
  `ports`, `volumeMounts` are arrays
  (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, RuleContext, Violation, non_string_kind

CODE = "GPU075"
NAME = "pod-list-not-a-list"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

#: PodSpec's fields of array type (k8s.io/api/core/v1).
POD_LISTS = (
    "containers",
    "initContainers",
    "ephemeralContainers",
    "volumes",
    "tolerations",
    "imagePullSecrets",
    "hostAliases",
    "topologySpreadConstraints",
    "readinessGates",
    "resourceClaims",
    "schedulingGates",
)
#: Container's fields of array type but ``command`` and ``args`` (GPU036's).
CONTAINER_LISTS = ("env", "envFrom", "ports", "volumeMounts", "volumeDevices", "resizePolicy")


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.found_by != "table" or pod.location != "pod":
        return  # a shape found by its look, or a chart's values: not a PodSpec as written
    for field in POD_LISTS:
        value = pod.spec.get(field)
        if value is not None and not isinstance(value, list):
            yield _finding((*pod.path, field), f"the pod's {field}", field, value)
    for container in pod.containers:
        for field in CONTAINER_LISTS:
            value = container.data.get(field)
            if value is not None and not isinstance(value, list):
                where = f"container {container.label}'s {field}"
                yield _finding((*container.path, field), where, field, value)


def _finding(path: tuple[object, ...], where: str, field: str, value: object) -> Violation:
    kind = "a string" if isinstance(value, str) else non_string_kind(value)
    advice = (
        "write each item with `- ` before its first key"
        if isinstance(value, dict)
        else "write it as a list"
    )
    return Violation(
        path,
        f"{where} is written as {kind}, but {field} is a list: the API server rejects the object",
        at="value",
        help=advice,
    )
