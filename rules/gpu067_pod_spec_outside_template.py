"""A workload's containers written outside its pod template, which the API server refuses.

## What it does
Reports, at the key, `containers` or `initContainers` written where a built-in workload has
no such field: in the spec of a `Deployment`, `StatefulSet`, `DaemonSet`, `ReplicaSet`,
`ReplicationController` or `Job`, or in a `CronJob`'s `jobTemplate.spec`, when no pod
template beside them holds a pod spec (the `template:` and `spec:` levels left out); or
directly in the pod template (`template: {containers: ...}`, the `spec:` level left out),
when the template has no `spec` of its own. Where the pod spec is in its place too, the stray
key is GPU024's (a pod field written in the workload's spec). `extensions/v1beta1` and
`batch/v1beta1` objects are read the same way (GPU026 says they are removed).

## Why it matters
The workload's pod template then has no containers: the API server refuses the object
(`spec.template.spec.containers: Required value`), or, with `kubectl`'s strict field
validation, the unknown field itself (`unknown field "spec.jobTemplate.spec.containers"`).
The GPU job is never created.

## Example
```yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-train
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      restartPolicy: OnFailure
      containers:          # GPU067
      - name: train
        image: ghcr.io/example/train:1.0
        resources:
          limits:
            nvidia.com/gpu: 1
```

## Use instead
```yaml
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: train
            image: ghcr.io/example/train:1.0
            resources:
              limits:
                nvidia.com/gpu: 1
```

## Options
None.

## References
- Kubernetes API reference: DeploymentSpec, JobSpec, CronJobSpec (`jobTemplate`) and
  PodTemplateSpec (`metadata`, `spec`): https://kubernetes.io/docs/reference/kubernetes-api/
- Kubernetes `pkg/apis/core/validation/validation.go` (`ValidatePodTemplateSpec`, the pod
  spec's `containers`: "Required value")
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import K8sObject, RuleContext, Violation, value_at

CODE = "GPU067"
NAME = "pod-spec-outside-template"
SEVERITY = "error"
SCOPE = "object"

#: The built-in kinds whose spec holds a pod template (``spec.template``), by API group,
#: the removed ``extensions`` betas too.
_TEMPLATE_KINDS = frozenset(
    {
        ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"), ("batch", "Job"), ("", "ReplicationController"),
        ("extensions", "Deployment"), ("extensions", "DaemonSet"),
        ("extensions", "ReplicaSet"),
    }
)  # fmt: skip
#: The pod spec's container lists.
_CONTAINER_KEYS = ("containers", "initContainers")


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    kind = (obj.group, obj.kind)
    if kind in _TEMPLATE_KINDS:
        at: tuple[str, ...] = ("spec",)
        where = f"the {obj.kind}'s spec"
    elif kind == ("batch", "CronJob"):
        at = ("spec", "jobTemplate", "spec")
        where = "the CronJob's jobTemplate.spec"
    else:
        return
    spec = value_at(obj.data, at)
    if not isinstance(spec, dict):
        return
    template = spec.get("template")
    pod = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod, dict):
        dotted = ".".join(at)
        for key in _CONTAINER_KEYS:
            if isinstance(spec.get(key), list):
                yield _stray(obj, (*at, key), key, where, f"{dotted}.template.spec")
    if isinstance(template, dict) and pod is None:
        dotted = ".".join((*at, "template"))
        for key in _CONTAINER_KEYS:
            if isinstance(template.get(key), list):
                yield _stray(obj, (*at, "template", key), key, "the pod template", f"{dotted}.spec")


def _stray(obj: K8sObject, path: tuple[str, ...], key: str, where: str, place: str) -> Violation:
    return Violation(
        (*obj.path, *path),
        f"{key} is a field of the pod spec, not of {where}: the {obj.kind}'s pod template has "
        f"no containers, so the API server refuses it",
        help=f"write the pod spec under {place}",
        at="key",
    )
