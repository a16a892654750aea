"""A workload's selector that does not select its own pod template.

## What it does
Reports, in an `apps/v1` Deployment, ReplicaSet, StatefulSet or DaemonSet, each requirement
of `spec.selector` that the labels of `spec.template.metadata` do not meet: a `matchLabels`
entry the template's labels lack or hold with another value (at the selector's value), and a
`matchExpressions` requirement (`In`, `NotIn`, `Exists`, `DoesNotExist`) they fail (at its
`key`). The message names the template's value, or says the template lacks the label.

A `batch/v1` Job is different: its selector is generated (from the new Job's uid) unless
`spec.manualSelector` is `true`, and the API server refuses a selector written without it
that does not select the generated labels (`` `selector` not auto-generated ``): the finding
is at the selector's first key. A selector of the Job's own `job-name` alone passes; with
`manualSelector: true` the Job's selector is checked against its template as above. A Job
saved from a live cluster (`kubectl get -o yaml`) carries its old `controller-uid` selector
and is refused this way when it is applied again.

It reads only what is written: a selector that is empty or missing is left alone
(Kustomize's `labels` and `commonLabels` add the same labels to both, so a base written
without them is completed by its overlay); a template without labels under a selector that
asks for some is reported. A file that a kustomization of its project labels
(`commonLabels`, or `labels` with `includeSelectors` or `includeTemplates`, in its folder or
in one that builds on it) is not judged without `--render`: the labels and selectors
applied are not those written. Values a template engine fills in
(`{{ }}`, `${VAR}`), values that are not strings (GPU027's) and an operator Kubernetes does
not know are left alone. A Kustomize patch linted alone is not judged (GL203): the base
it completes holds the rest of the object.

## Why it matters
The API server validates that a workload's selector selects its template
(`ValidateDeploymentSpec`, and the same for the other three): `spec.template.metadata.labels:
Invalid value: ...: selector does not match template labels`. `kubectl apply` fails, the
GPU workload is never created, and a GitOps sync of the set that holds it fails too. The
selector is immutable after creation, so the fix is always in the template or in a new
object.

## Example
```yaml
apiVersion: apps/v1
kind: Deployment
spec:
  selector:
    matchLabels:
      app: nginx        # GPU029: the template's labels have app: triton
  template:
    metadata:
      labels:
        app: triton
```

## Use instead
```yaml
spec:
  selector:
    matchLabels:
      app: triton
  template:
    metadata:
      labels:
        app: triton
```

## Options
None.

## References
- Kubernetes, `pkg/apis/batch/validation/validation.go` (`ValidateGeneratedSelector`:
  "`selector` not auto-generated" unless `manualSelector` is true)
- Kubernetes, `pkg/apis/apps/validation/validation.go` (`ValidateDeploymentSpec`,
  `ValidateReplicaSetSpec`, `ValidateStatefulSetSpec`, `ValidateDaemonSetSpec`: "selector
  does not match template labels")
- https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#selector
  ("`.spec.selector` must match `.spec.template.metadata.labels`, or it will be rejected by
  the API")
- https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#resources-that-support-set-based-requirements
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import K8sObject, RuleContext, Violation, holds_placeholder

CODE = "GPU029"
NAME = "selector-does-not-match-template"
SEVERITY = "error"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}
WHOLE_OBJECT = True  # GL203: a patch's labels or selector are completed by its base
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
LABELS_AS_WRITTEN = True  # a kustomization's commonLabels / labels complete them

#: The kinds whose selector the API server checks against the template's labels.
KINDS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"})
#: The labels of a Job's generated selector that name the Job (the other is its new uid).
_JOB_NAME_LABELS = frozenset({"job-name", "batch.kubernetes.io/job-name"})


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    spec = obj.data.get("spec")
    if not isinstance(spec, Mapping):
        return
    if obj.group == "batch" and obj.version == "v1" and obj.kind == "Job":
        if spec.get("manualSelector") is not True:
            yield from _generated(obj, spec)
            return
    elif obj.group != "apps" or obj.version != "v1" or obj.kind not in KINDS:
        return
    selector = spec.get("selector")
    template = spec.get("template")
    meta = template.get("metadata") if isinstance(template, Mapping) else None
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    if labels is None:
        labels = {}  # a template without labels: a selector that asks for one fails
    if not isinstance(selector, Mapping) or not isinstance(labels, Mapping):
        return
    if any(_filled_in(k) or _filled_in(v) for k, v in labels.items()):
        return
    place = (*obj.path, "spec", "selector")
    match = selector.get("matchLabels")
    if isinstance(match, Mapping):
        for key, want in match.items():
            if not isinstance(key, str) or not isinstance(want, str):
                continue
            if _filled_in(key) or _filled_in(want):
                continue
            has = labels.get(key)
            if has == want:
                continue
            yield Violation(
                (*place, "matchLabels", key),
                f"the selector's {key}: {want} does not select the pod template (its labels "
                f"{_holds(labels, key)}): the API server rejects the {obj.kind}",
                help=f"write the same {key} in the selector and in spec.template.metadata.labels",
                at="value",
            )
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        for i, term in enumerate(expressions):
            problem = _fails(term, labels)
            if problem is None:
                continue
            yield Violation(
                (*place, "matchExpressions", i, "key"),
                f"the selector's {problem}: the API server rejects the {obj.kind}",
                help="make spec.template.metadata.labels meet every requirement of the selector",
                at="value",
            )


def _generated(obj: K8sObject, spec: Mapping[Any, Any]) -> Iterator[Violation]:
    """A Job's selector written without ``manualSelector: true``: the API server adds its
    own (the new Job's ``controller-uid``) and refuses any selector that does not select
    those labels. Only a selector of the Job's own ``job-name`` passes."""
    selector = spec.get("selector")
    if not isinstance(selector, Mapping):
        return
    match = selector.get("matchLabels")
    expressions = selector.get("matchExpressions")
    name = obj.ref.name
    written = list(match) if isinstance(match, Mapping) else []
    if not written and not expressions:
        return  # an empty selector: the generated one replaces it
    values = list(match.values()) if isinstance(match, Mapping) else []
    if any(_filled_in(v) or not isinstance(v, str) for v in (*written, *values)):
        return
    if (
        not expressions
        and isinstance(match, Mapping)
        and all(k in _JOB_NAME_LABELS and v == name for k, v in match.items())
    ):
        return  # the generated selector's own job-name label: it selects the Job's pods
    key = written[0] if written else None
    place = (*obj.path, "spec", "selector", *(("matchLabels", key) if key else ()))
    yield Violation(
        place,
        "the Job writes a selector without manualSelector: true: the API server generates "
        "a Job's selector and rejects this one (`selector` not auto-generated)",
        help="remove spec.selector (and any controller-uid label of the template), or set "
        "spec.manualSelector: true and make the selector unique to this Job",
        at="key" if key else "value",
    )


def _filled_in(value: Any) -> bool:
    return isinstance(value, str) and holds_placeholder(value)


def _listed(values: list[str]) -> str:
    shown = ", ".join(v[:40] for v in values[:3])
    return shown + (f" and {len(values) - 3} more" if len(values) > 3 else "")


def _holds(labels: Mapping[Any, Any], key: str) -> str:
    value = labels.get(key)
    if key not in labels:
        return f"have no {key}"
    if isinstance(value, str):
        return f"have {key}: {value[:40]}"
    return f"have another {key}"


def _fails(term: Any, labels: Mapping[Any, Any]) -> str | None:
    """What the requirement ``term`` asks that ``labels`` do not give, or None."""
    if not isinstance(term, Mapping):
        return None
    key, operator, values = term.get("key"), term.get("operator"), term.get("values")
    if not isinstance(key, str) or not isinstance(operator, str) or _filled_in(key):
        return None
    if operator in ("In", "NotIn"):
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return None
        if any(_filled_in(v) for v in values):
            return None
        shown = f"{key} {operator} ({_listed(values)})"
        value = labels.get(key)
        if operator == "In" and value not in values:
            return f"{shown} fails on the pod template (its labels {_holds(labels, key)})"
        if operator == "NotIn" and key in labels and value in values:
            return f"{shown} fails on the pod template (its labels {_holds(labels, key)})"
        return None
    if operator == "Exists" and key not in labels:
        return f"{key} Exists fails on the pod template (its labels have no {key})"
    if operator == "DoesNotExist" and key in labels:
        return f"{key} DoesNotExist fails on the pod template (its labels have {key})"
    return None
