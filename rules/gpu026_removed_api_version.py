"""Built-in kind written in an API version that Kubernetes no longer serves.

## What it does
Reports an object of a built-in kind whose `apiVersion` is one Kubernetes removed, at the
`apiVersion` value, with the release that stopped serving it and the version to write
instead: `extensions/v1beta1`, `apps/v1beta1` and `apps/v1beta2` Deployments, DaemonSets,
ReplicaSets and StatefulSets (1.16), `extensions/v1beta1` and `networking.k8s.io/v1beta1`
Ingress (1.22), the `v1beta1` RBAC, PriorityClass, storage, webhook, CRD and APIService kinds
(1.22), `batch/v1beta1` CronJob, `autoscaling/v2beta1` HorizontalPodAutoscaler,
`policy/v1beta1` PodDisruptionBudget and PodSecurityPolicy, `node.k8s.io/v1beta1`
RuntimeClass (1.25), `autoscaling/v2beta2` HorizontalPodAutoscaler (1.26), and the rest of
Kubernetes' deprecated API migration guide, one row per kind and version.

A Helm chart's templates are read too when the run does not render them: a template
document's `apiVersion` and `kind` written literally at its top, outside every block (`if`,
`with`, `range`, `define`), are what helm renders whatever the values, so the finding is at
that line of the template (docs/rendering.md, "Templates as written"); a version chosen
inside an `if` on `.Capabilities` or `semverCompare` is left alone, as is a chart whose
`Chart.yaml` has a `kubeVersion` with an upper bound (it says it is for older clusters) and
a template wholly wrapped in a switch its `values.yaml` leaves off (`{{- if
.Values.psp.enabled }}` with `enabled: false`: compatibility kept for older clusters); one
the values turn on (`rbac.create: true`) is judged. With `--render` the output is judged.

It checks every object of a linted file, GPU workload or not: an autoscaler, a disruption
budget or a runtime class in a removed version stops the whole manifest from applying. Kinds
of `resource.k8s.io` (Dynamic Resource Allocation) are GPU061's, which also reports versions
that are deprecated and still served: a rule of its own, as pluto's and kube-linter's checks
of removed versions are, so that turning one off keeps the other. Custom resources are not
judged (their versions are their CRD's).

The severity says how sure the rejection is:

- **warning** for a version removed in Kubernetes 1.29 or earlier. gpulint does not know your
  cluster's version, but in December 2026 every release still maintained upstream (1.35 and
  later), by EKS, GKE and AKS (their extended and long-term support reaches back to 1.32) and
  by OpenShift (4.16's extended update support, Kubernetes 1.29, runs to June 2027) has
  removed it: only a cluster out of every provider's support still accepts the object.
- **info** for a version removed later (`flowcontrol.apiserver.k8s.io/v1beta3`, 1.32): a
  supported cluster may still serve it.
- **error**, and nothing at all for a version still served, when the rule's
  `kubernetes_version` option names your cluster's version: then gpulint knows.

It also reports, as an error, a kind of Kubernetes' own that no API server serves as
written: a built-in workload kind in another built-in group (`apiVersion: v1` with `kind:
Deployment`, which is `apps/v1`'s), or in another case (`kind: deployment`). Groups with a
dot are left alone: a custom resource's group has one.

One custom resource is judged, because it holds a GPU pool's nodes: a `karpenter.sh/v1`
NodePool whose `nodeClassRef` has no `group` (v1 requires `group`, `kind` and `name`;
v1beta1 took an `apiVersion`, which NodePools converted by hand keep) is an error at
`nodeClassRef`: the CRD's schema refuses it, and the GPU pods it was to serve stay Pending.
So is a NodePool's `disruption` its version's CRD refuses: a `consolidationPolicy` of the
other version (v1's values are `WhenEmpty` and `WhenEmptyOrUnderutilized`, v1beta1's
`WhenEmpty` and `WhenUnderutilized`), and in v1beta1 `WhenEmpty` without `consolidateAfter`
or `WhenUnderutilized` with a `consolidateAfter` other than `Never` (the CRD's validation
rules; kubernetes-sigs/karpenter `pkg/apis/v1beta1/nodepool.go`, `pkg/apis/v1/nodepool.go`),
and a label of the NodePool's node template that Karpenter keeps for itself:
`karpenter.sh/nodepool` (Karpenter sets it on every node of the pool),
`kubernetes.io/hostname`, or another `karpenter.sh` label but `karpenter.sh/capacity-type`
(`hack/validation/labels.sh`: "label \"karpenter.sh/nodepool\" is restricted").

## Why it matters
The API server answers `no matches for kind "HorizontalPodAutoscaler" in version
"autoscaling/v2beta2"`: `kubectl apply` fails on the object, and Flux's and Argo CD's sync of
the set that holds it fails: an autoscaler that never scales the GPU Deployment, a budget that
never protects it. Helm charts choose the version with a `semverCompare` on the cluster's; a
plain manifest cannot.

## Example
```yaml
apiVersion: autoscaling/v2beta2   # GPU026
kind: HorizontalPodAutoscaler
```

## Use instead
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
```
The message names the notable changes of the new version (for `autoscaling/v2`,
`targetAverageUtilization` becomes `target.averageUtilization`; for `apps/v1`,
`spec.selector` is required; for `networking.k8s.io/v1` Ingress, `pathType` is required and
the backend is `service.name` and `service.port`).

## Options
`kubernetes_version` (string such as `"1.31"`, default `""`: not known): your cluster's
Kubernetes version. With it a removed version is an `error` and a version that release still
serves is no finding.

```yaml
rules:
  GPU026:
    kubernetes_version: "1.31"
```

## References
- https://kubernetes.io/docs/reference/using-api/deprecation-guide/ (kubernetes/website
  `content/en/docs/reference/using-api/deprecation-guide.md`: every row of the table, with
  its removal release and replacement)
- https://kubernetes.io/docs/reference/using-api/deprecation-policy/ (beta versions are
  served for three releases after deprecation, then removed)
- https://kubernetes.io/releases/ (maintained releases), AWS EKS, GKE and AKS version
  calendars, the Red Hat OpenShift life cycle (4.16 = Kubernetes 1.29, EUS term 2 to
  2027-06-27)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import K8sObject, Path, RuleContext, Violation

CODE = "GPU026"
NAME = "removed-api-version"
SEVERITY = "warning"
SCOPE = "object"
AS_WRITTEN = True
OPTIONS: dict[str, Any] = {
    "kubernetes_version": {
        "type": "string",
        "pattern": r"^(v?1\.[0-9]+(\.[0-9]+)?)?$",
        "description": (
            "Your cluster's Kubernetes version (1.31): removed versions are then errors, "
            "versions it still serves no finding; empty: not known."
        ),
        "default": "",
    },
}

#: The newest release whose removals every maintained Kubernetes has made (December 2026):
#: OpenShift 4.16, Kubernetes 1.29, the oldest release any major provider still supports.
OLDEST_MAINTAINED = (1, 29)

_SELECTOR = "spec.selector is required"
_HPA = "targetAverageUtilization is target.averageUtilization with target.type: Utilization"
_REVIEW = "spec.group is spec.groups"
_WEBHOOK = "each webhook's sideEffects and admissionReviewVersions are required"

#: Kubernetes' deprecated API migration guide as rows: (apiVersion, kinds, the release that
#: stopped serving that version of those kinds, the apiVersion to write instead ("" when the
#: kind has no successor), the notable change the guide lists for the move ("" when none)).
ROWS: tuple[tuple[str, tuple[str, ...], str, str, str], ...] = (
    ("extensions/v1beta1", ("Deployment", "DaemonSet", "ReplicaSet"), "1.16", "apps/v1", _SELECTOR),
    ("apps/v1beta1", ("Deployment", "StatefulSet", "ReplicaSet"), "1.16", "apps/v1", _SELECTOR),
    (
        "apps/v1beta2",
        ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"),
        "1.16",
        "apps/v1",
        _SELECTOR,
    ),
    ("extensions/v1beta1", ("NetworkPolicy",), "1.16", "networking.k8s.io/v1", ""),
    ("extensions/v1beta1", ("PodSecurityPolicy",), "1.16", "", ""),
    (
        "admissionregistration.k8s.io/v1beta1",
        ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"),
        "1.22",
        "admissionregistration.k8s.io/v1",
        _WEBHOOK,
    ),
    (
        "apiextensions.k8s.io/v1beta1",
        ("CustomResourceDefinition",),
        "1.22",
        "apiextensions.k8s.io/v1",
        "each version needs its schema.openAPIV3Schema",
    ),
    ("apiregistration.k8s.io/v1beta1", ("APIService",), "1.22", "apiregistration.k8s.io/v1", ""),
    ("authentication.k8s.io/v1beta1", ("TokenReview",), "1.22", "authentication.k8s.io/v1", ""),
    (
        "authorization.k8s.io/v1beta1",
        (
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SubjectAccessReview",
            "SelfSubjectRulesReview",
        ),
        "1.22",
        "authorization.k8s.io/v1",
        _REVIEW,
    ),
    (
        "certificates.k8s.io/v1beta1",
        ("CertificateSigningRequest",),
        "1.22",
        "certificates.k8s.io/v1",
        "spec.signerName and spec.usages are required",
    ),
    ("coordination.k8s.io/v1beta1", ("Lease",), "1.22", "coordination.k8s.io/v1", ""),
    (
        "extensions/v1beta1",
        ("Ingress",),
        "1.22",
        "networking.k8s.io/v1",
        "every path needs pathType, and a backend is service.name and service.port",
    ),
    (
        "networking.k8s.io/v1beta1",
        ("Ingress",),
        "1.22",
        "networking.k8s.io/v1",
        "every path needs pathType, and a backend is service.name and service.port",
    ),
    ("networking.k8s.io/v1beta1", ("IngressClass",), "1.22", "networking.k8s.io/v1", ""),
    (
        "rbac.authorization.k8s.io/v1beta1",
        ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
        "1.22",
        "rbac.authorization.k8s.io/v1",
        "",
    ),
    ("scheduling.k8s.io/v1beta1", ("PriorityClass",), "1.22", "scheduling.k8s.io/v1", ""),
    (
        "storage.k8s.io/v1beta1",
        ("CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"),
        "1.22",
        "storage.k8s.io/v1",
        "",
    ),
    ("batch/v1beta1", ("CronJob",), "1.25", "batch/v1", ""),
    (
        "discovery.k8s.io/v1beta1",
        ("EndpointSlice",),
        "1.25",
        "discovery.k8s.io/v1",
        "topology is each endpoint's nodeName and zone",
    ),
    ("events.k8s.io/v1beta1", ("Event",), "1.25", "events.k8s.io/v1", ""),
    ("autoscaling/v2beta1", ("HorizontalPodAutoscaler",), "1.25", "autoscaling/v2", _HPA),
    (
        "policy/v1beta1",
        ("PodDisruptionBudget",),
        "1.25",
        "policy/v1",
        "an empty spec.selector there selects every pod of the namespace",
    ),
    ("policy/v1beta1", ("PodSecurityPolicy",), "1.25", "", ""),
    ("node.k8s.io/v1beta1", ("RuntimeClass",), "1.25", "node.k8s.io/v1", ""),
    ("autoscaling/v2beta2", ("HorizontalPodAutoscaler",), "1.26", "autoscaling/v2", _HPA),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "1.26",
        "flowcontrol.apiserver.k8s.io/v1",
        "",
    ),
    ("storage.k8s.io/v1beta1", ("CSIStorageCapacity",), "1.27", "storage.k8s.io/v1", ""),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "1.29",
        "flowcontrol.apiserver.k8s.io/v1",
        "assuredConcurrencyShares is nominalConcurrencyShares",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        ("FlowSchema", "PriorityLevelConfiguration"),
        "1.32",
        "flowcontrol.apiserver.k8s.io/v1",
        "",
    ),
)

#: (apiVersion, kind) -> (removed, replacement, note).
REMOVED: dict[tuple[str, str], tuple[str, str, str]] = {
    (api, kind): (removed, instead, note)
    for api, kinds, removed, instead, note in ROWS
    for kind in kinds
}

_VERSION = re.compile(r"^v?1\.([0-9]+)(?:\.[0-9]+)?$")

#: Built-in kinds a GPU manifest holds, and the apiVersion that serves them. Groups without
#: a dot are Kubernetes' own (a CustomResourceDefinition's group must have one), so a kind
#: of this table written in another of those groups, or in another case, is served by none.
SERVED: dict[str, str] = {
    **dict.fromkeys(
        (
            "Pod", "Service", "ConfigMap", "Secret", "Namespace", "PersistentVolumeClaim",
            "PersistentVolume", "ServiceAccount", "ResourceQuota", "LimitRange",
        ),
        "v1",
    ),
    **dict.fromkeys(("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"), "apps/v1"),
    **dict.fromkeys(("Job", "CronJob"), "batch/v1"),
    "HorizontalPodAutoscaler": "autoscaling/v2",
    "PodDisruptionBudget": "policy/v1",
}  # fmt: skip
_BY_LOWER = {kind.lower(): kind for kind in SERVED}
#: The groups of Kubernetes' own APIs that hold a kind of ``SERVED``.
_OWN_GROUPS = frozenset(api.split("/")[0] if "/" in api else "" for api in SERVED.values())


def _minor(release: str) -> int:
    return int(release.split(".")[1])


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    api = obj.ref.api_version
    if obj.parent is not None or not api:
        return
    unserved = _never_served(obj, api)
    if unserved is not None:
        yield unserved
        return
    yield from _karpenter_v1_class_ref(obj)
    yield from _karpenter_disruption(obj)
    yield from _karpenter_restricted_labels(obj)
    row = REMOVED.get((api, obj.kind))
    if row is None:
        return
    removed, instead, note = row
    configured = ctx.options.get("kubernetes_version")
    configured = configured if isinstance(configured, str) else ""
    match = _VERSION.match(configured)
    certain = ""
    if match is not None:
        if int(match.group(1)) < _minor(removed):
            return
        severity = "error"
        why = f"your cluster's Kubernetes {configured.lstrip('v')} rejects it"
    else:
        certain = (
            ' (assumed: {}; `rules: {{GPU026: {{kubernetes_version: "1.NN"}}}}` in .gpulint.yaml '
            "makes it certain)"
        )
        if _minor(removed) <= OLDEST_MAINTAINED[1]:
            severity = "warning"
            why = "every Kubernetes release still maintained rejects it"
            certain = certain.format("your cluster runs a maintained release")
        else:
            severity = "info"
            why = f"a cluster on {removed} or later rejects it"
            certain = certain.format(f"your cluster's version, older or newer than {removed}")
    if instead:
        todo = f"write apiVersion: {instead}" + (f" ({note})" if note else "")
    else:
        todo = f"{obj.kind} has no successor: remove it (Pod Security Admission replaced it)"
    yield Violation(
        (*obj.path, "apiVersion"),
        f"{api} {obj.kind} is no longer served since Kubernetes {removed}: {why}",
        at="value",
        severity=severity,
        help=todo + certain,
    )


def _karpenter_v1_class_ref(obj: K8sObject) -> Iterator[Violation]:
    """A ``karpenter.sh/v1`` NodePool whose ``nodeClassRef`` has no ``group``: v1 requires
    ``group``, ``kind`` and ``name`` (v1beta1 took an ``apiVersion``)."""
    if obj.group != "karpenter.sh" or obj.version != "v1" or obj.kind != "NodePool":
        return
    spec = obj.data.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    pod = template.get("spec") if isinstance(template, dict) else None
    ref = pod.get("nodeClassRef") if isinstance(pod, dict) else None
    if not isinstance(ref, dict) or "group" in ref:
        return
    old = ref.get("apiVersion")
    group = old.split("/", 1)[0] if isinstance(old, str) and "/" in old else "karpenter.k8s.aws"
    yield Violation(
        (*obj.path, "spec", "template", "spec", "nodeClassRef"),
        "karpenter.sh/v1 NodePool's nodeClassRef has no group (v1 requires group, kind and "
        "name): the API server refuses the NodePool",
        help=f"write group: {group[:60]}"
        + (" in place of v1beta1's apiVersion" if old is not None else ""),
        at="key",
        severity="error",
    )


#: The consolidation policies each version of Karpenter's NodePool takes (its CRD's enum).
KARPENTER_POLICIES = {
    "v1": ("WhenEmpty", "WhenEmptyOrUnderutilized"),
    "v1beta1": ("WhenEmpty", "WhenUnderutilized"),
}


def _karpenter_disruption(obj: K8sObject) -> Iterator[Violation]:
    """A Karpenter NodePool's ``disruption`` that its version's CRD refuses: a policy of the
    other version (v1beta1's ``WhenUnderutilized`` is v1's ``WhenEmptyOrUnderutilized``), or,
    in v1beta1, ``WhenEmpty`` without ``consolidateAfter`` and ``WhenUnderutilized`` with one
    other than ``Never`` (the CRD's XValidation rules)."""
    policies = KARPENTER_POLICIES.get(obj.version)
    if obj.group != "karpenter.sh" or obj.kind != "NodePool" or policies is None:
        return
    spec = obj.data.get("spec")
    disruption = spec.get("disruption") if isinstance(spec, dict) else None
    if not isinstance(disruption, dict):
        return
    policy = disruption.get("consolidationPolicy")
    at = (*obj.path, "spec", "disruption")
    api = f"karpenter.sh/{obj.version}"
    if isinstance(policy, str) and policy not in policies:
        yield Violation(
            (*at, "consolidationPolicy"),
            f"{api} NodePool's consolidationPolicy {policy[:40]} is no policy of {api}: the "
            "API server refuses the NodePool",
            help=f"write {policies[1]}"
            if "Underutilized" in policy
            else f"write {policies[0]} or {policies[1]}",
            at="value",
            severity="error",
        )
        return
    if obj.version != "v1beta1":
        return
    after = disruption.get("consolidateAfter")
    if policy == "WhenEmpty" and "consolidateAfter" not in disruption:
        yield Violation(
            (*at, "consolidationPolicy"),
            f"{api} NodePool's WhenEmpty consolidation has no consolidateAfter: the API server "
            "refuses the NodePool",
            help="add consolidateAfter: 30s (or the delay you want) beside it",
            at="value",
            severity="error",
        )
    elif policy in (None, "WhenUnderutilized") and after is not None and after != "Never":
        yield Violation(
            (*at, "consolidateAfter"),
            f"{api} NodePool's consolidateAfter {str(after)[:20]} with WhenUnderutilized "
            "consolidation: the API server refuses the NodePool (they cannot be combined)",
            help="delete consolidateAfter, or write consolidationPolicy: WhenEmpty",
            severity="error",
        )


#: The labels of a NodePool's node template that Karpenter keeps for itself: its CRD's
#: validation rules on ``spec.template.metadata.labels`` (kubernetes-sigs/karpenter
#: ``hack/validation/labels.sh``, v1 and v1beta1): the ``karpenter.sh`` domain but for
#: ``karpenter.sh/capacity-type``, ``karpenter.sh/nodepool`` itself (Karpenter sets it), and
#: ``kubernetes.io/hostname``.
KARPENTER_OPEN_LABELS = frozenset(("karpenter.sh/capacity-type",))
KARPENTER_RESTRICTED_LABELS = frozenset(("karpenter.sh/nodepool", "kubernetes.io/hostname"))


def _karpenter_restricted_labels(obj: K8sObject) -> Iterator[Violation]:
    """A Karpenter NodePool whose node template sets a label its CRD keeps for Karpenter."""
    if obj.group != "karpenter.sh" or obj.kind != "NodePool":
        return
    if obj.version not in KARPENTER_POLICIES:
        return
    spec = obj.data.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    metadata = template.get("metadata") if isinstance(template, dict) else None
    labels = metadata.get("labels") if isinstance(metadata, dict) else None
    if not isinstance(labels, dict):
        return
    api = f"karpenter.sh/{obj.version}"
    for key in labels:
        if not isinstance(key, str):
            continue
        domain = key.split("/", 1)[0] if "/" in key else ""
        restricted = key in KARPENTER_RESTRICTED_LABELS or (
            domain.endswith("karpenter.sh") and key not in KARPENTER_OPEN_LABELS
        )
        if not restricted:
            continue
        yield Violation(
            (*obj.path, "spec", "template", "metadata", "labels", key),
            f"{api} NodePool's node template sets the label {key[:80]}, which Karpenter keeps "
            "for itself: the API server refuses the NodePool",
            help="delete it: Karpenter labels each node with karpenter.sh/nodepool itself; "
            "select the pool's nodes by that label or one of your own domain",
            severity="error",
        )


def _never_served(obj: K8sObject, api: str) -> Violation | None:
    """A built-in kind written in a group of Kubernetes' own that has no such kind
    (``apiVersion: v1`` with ``kind: Deployment``), or in another case (``deployment``): no
    API server serves it. A group with a dot may be a custom resource's, and is left alone."""
    kind = obj.kind
    group = api.split("/")[0] if "/" in api else ""
    if "." in group or group not in _OWN_GROUPS:
        return None
    meant = _BY_LOWER.get(kind.lower())
    if meant is None:
        return None
    served = SERVED[meant]
    served_group = served.split("/")[0] if "/" in served else ""
    if meant == kind and served_group == group:
        return None  # the right group (a version GPU026's table does not hold is not judged)
    if meant != kind:
        what = f"kinds are case-sensitive: no API serves {api} {kind}"
        where: Path = (*obj.path, "kind")
        todo = f"write kind: {meant}" + (f" and apiVersion: {served}" if api != served else "")
    else:
        what = f"{api} has no kind {kind}: the API server answers no matches for kind"
        where = (*obj.path, "apiVersion")
        todo = f"write apiVersion: {served}"
    return Violation(where, what, at="value", severity="error", help=todo)
