"""Pod template whose restart policy its workload refuses.

## What it does
Flags a pod template's `restartPolicy` that the API server refuses for the workload that
holds it, at the value (or at the pod spec when the field is missing):

- a Deployment, ReplicaSet, StatefulSet, DaemonSet or ReplicationController (`restartPolicy`
  must be `Always`, the default: these controllers replace pods, they never let one end);
- a Job or a CronJob's job template (`OnFailure` or `Never`, and the field is required: left
  out, it defaults to `Always`, which a Job refuses);
- a Pod (`Always`, `OnFailure` or `Never`, spelled so: the values are case-sensitive).

Every such pod template is checked, with or without GPUs: the API server rejects the whole
object either way. Only the built-in kinds are judged (an operator's Job, a JobSet or a
Kubeflow job, defaults or validates its own), and not a patch linted alone (GL203): its
base may hold the field.

## Why it matters
`kubectl apply` fails with `spec.template.spec.restartPolicy: Unsupported value: "OnFailure":
supported values: "Always"` for a StatefulSet, and with `Required value: valid values:
"OnFailure", "Never"` for a Job without the field: nothing is created, and a GPU training
run that was to start with the manifest never does.

## Example
```yaml
apiVersion: apps/v1
kind: StatefulSet
spec:
  template:
    spec:
      restartPolicy: OnFailure   # GPU039
```

## Use instead
```yaml
apiVersion: apps/v1
kind: StatefulSet
spec:
  template:
    spec:
      restartPolicy: Always      # or leave it out
```

## Options
None.

## References
- kubernetes `pkg/apis/apps/validation/validation.go` (`ValidatePodTemplateSpecForStatefulSet`,
  `ValidateDaemonSetSpec`, `ValidatePodTemplateSpecForReplicaSet`: only `Always`)
- kubernetes `pkg/apis/batch/validation/validation.go` (`validateJobSpec`: `OnFailure` or
  `Never`) and `pkg/apis/core/v1/defaults.go` (`SetDefaults_PodSpec`: an empty policy becomes
  `Always`)
- https://kubernetes.io/docs/concepts/workloads/controllers/job/#pod-template
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, holds_placeholder

CODE = "GPU039"
NAME = "invalid-restart-policy"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}
WHOLE_OBJECT = True  # GL203: a patch's base may hold the restart policy
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run

#: Built-in workloads (group, kind) -> the restart policies their pod templates may have.
_ALLOWED = {
    ("apps", "Deployment"): ("Always",),
    ("apps", "ReplicaSet"): ("Always",),
    ("apps", "StatefulSet"): ("Always",),
    ("apps", "DaemonSet"): ("Always",),
    ("", "ReplicationController"): ("Always",),
    ("batch", "Job"): ("OnFailure", "Never"),
    ("batch", "CronJob"): ("OnFailure", "Never"),
    ("", "Pod"): ("Always", "OnFailure", "Never"),
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    obj = pod.obj
    if pod.location != "pod" or pod.found_by != "table" or obj.parent is not None:
        return
    allowed = _ALLOWED.get((obj.group, obj.kind))
    if allowed is None:
        return
    written = pod.spec.get("restartPolicy")
    if written is None:
        if "Always" in allowed:
            return
        yield Violation(
            pod.path,
            f"the {obj.kind}'s pod template has no restartPolicy: it defaults to Always, which "
            "a Job refuses, so the API server rejects it",
            help="write restartPolicy: OnFailure (or Never) in the pod template's spec",
            at="key",
        )
        return
    if not isinstance(written, str) or written in allowed or holds_placeholder(written):
        return  # a number or a list is another rule's; a placeholder is not judged here
    choices = allowed[0] if len(allowed) == 1 else f"{', '.join(allowed[:-1])} or {allowed[-1]}"
    what = "a Pod" if obj.kind == "Pod" else f"a {obj.kind}'s pod template"
    fix = next((a for a in allowed if a.lower() == written.lower()), None)
    hint = f"write {fix} (the values are case-sensitive)" if fix else f"write {choices}"
    if len(allowed) == 1 and fix is None:
        hint += ", or leave it out"
    yield Violation(
        (*pod.path, "restartPolicy"),
        f"{what} takes restartPolicy {choices}, not {written[:30]}: the API server rejects it",
        help=hint,
        at="value",
    )
