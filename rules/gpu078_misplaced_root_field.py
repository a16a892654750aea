"""A Kubernetes object whose metadata, spec or data is misspelt or written at its root.

## What it does
Checks the keys at the root of an object of Kubernetes' own kinds that hold no pod (a
ConfigMap, Secret, Service, HorizontalPodAutoscaler, PodDisruptionBudget, ResourceQuota,
PriorityClass, RuntimeClass, a role or binding, a DRA DeviceClass, ...; GPU024 checks the
roots of the objects that hold a pod spec) and reports, at the key:

- `metadata` misspelt (`metaData:`, `Metadata:`, `meta_data:`) while the object has no
  `metadata`: an **error**, since the object has no name and the API server refuses it;
- `spec` or `data` misspelt (`Spec:`, `datas:`) while the object has none;
- a field of `metadata` written at the root (`name:`, `namespace:`, `labels:`,
  `annotations:`), most often a whole block that lost its indentation.

The kinds are those the API server serves itself (the core group and the `apps`, `batch`,
`autoscaling`, `policy`, `networking.k8s.io`, `rbac.authorization.k8s.io`, `storage.k8s.io`,
`scheduling.k8s.io`, `node.k8s.io`, `resource.k8s.io`, ... groups): a tool's configuration
written as a Kubernetes-like document (kind's `Cluster` with its root `name`, a
Kustomization's `namespace`) is never judged.

## Why it matters
`kubectl apply` validates fields strictly by default and refuses an unknown field; other
clients drop it. An object without `metadata` has no name: `name or generateName is
required`. A ConfigMap whose `metadata` is spelt `metaData` is never created, and the GPU
Operator's ClusterPolicy that names it (vGPU licensing, a device plugin configuration) finds
no ConfigMap; an HPA whose `name` and `scaleTargetRef` lost their indentation is refused.

## Example
```yaml
apiVersion: v1
kind: ConfigMap
metaData:   # GPU078
  name: licensing-config
  namespace: nvidia-gpu-operator
data:
  gridd.conf: |
    FeatureType=1
```

## Use instead
```yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: licensing-config
  namespace: nvidia-gpu-operator
```

## Options
None.

## References
- ObjectMeta's fields: kubernetes/apimachinery `pkg/apis/meta/v1/types.go`
- "Field validation" (kubectl's `--validate=strict`, the default since 1.27):
  https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
- Kubernetes `staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go`
  (`name or generateName is required`)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    METADATA_AT_ROOT,
    K8sObject,
    RuleContext,
    Violation,
    metadata_at_root,
    near_field,
)

CODE = "GPU078"
NAME = "misplaced-root-field"
SEVERITY = "warning"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}

#: The API groups the API server serves itself ("" is the core group, ``v1``).
BUILTIN_GROUPS = frozenset(
    {
        "", "apps", "batch", "autoscaling", "policy", "extensions", "networking.k8s.io",
        "rbac.authorization.k8s.io", "storage.k8s.io", "scheduling.k8s.io", "node.k8s.io",
        "resource.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
        "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io",
        "certificates.k8s.io", "flowcontrol.apiserver.k8s.io",
    }
)  # fmt: skip

#: The core group's kinds without a pod: other ``apiVersion: v1`` documents (a kubeconfig's
#: ``Config``, OpenShift's legacy ``Template``, a ``List``) are not judged.
CORE_KINDS = frozenset(
    {
        "ConfigMap", "Secret", "Service", "Namespace", "ServiceAccount", "ResourceQuota",
        "LimitRange", "PersistentVolumeClaim", "PersistentVolume", "Endpoints", "Node",
    }
)  # fmt: skip

#: Kinds that hold a pod spec: GPU024 judges their roots.
POD_KINDS = frozenset(
    {
        "Pod", "PodTemplate", "ReplicationController", "Deployment", "StatefulSet",
        "DaemonSet", "ReplicaSet", "Job", "CronJob",
    }
)  # fmt: skip


#: Kinds of these groups with no ``spec`` at their root.
_NO_SPEC = frozenset(
    {
        "ConfigMap", "Secret", "ServiceAccount", "Endpoints", "Role", "ClusterRole",
        "RoleBinding", "ClusterRoleBinding", "StorageClass", "PriorityClass", "RuntimeClass",
        "CSIDriver", "IngressClass", "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicyBinding", "EndpointSlice",
    }
)  # fmt: skip


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if not _judged(obj):
        return
    data = obj.data
    roots = _roots(obj.kind)
    for key in data:
        if not isinstance(key, str) or key in roots or key in ("apiVersion", "kind"):
            continue
        if key in METADATA_AT_ROOT:
            message, advice = metadata_at_root(obj.kind, key)
            yield Violation((*obj.path, key), message, help=advice, at="key")
            continue
        meant = near_field(key, roots)
        if meant is None or meant in data:
            continue
        if meant == "metadata":
            yield Violation(
                (*obj.path, key),
                f"{key} is not metadata: the {obj.kind} has no metadata, so no name, and the "
                "API server refuses it",
                help=f"write metadata: (not {key})",
                at="key",
                severity="error",
            )
        else:
            yield Violation(
                (*obj.path, key),
                f"{key} is not {meant}: kubectl refuses the unknown field, or it is dropped "
                f"and the {obj.kind} has no {meant}",
                help=f"write {meant}: (not {key})",
                at="key",
            )


def _judged(obj: K8sObject) -> bool:
    """An object of a kind the API server serves itself, that holds no pod."""
    if not obj.kind or obj.kind in POD_KINDS or obj.group not in BUILTIN_GROUPS:
        return False
    if obj.group == "":
        return obj.version == "v1" and obj.kind in CORE_KINDS
    return True


def _roots(kind: str) -> frozenset[str]:
    """The root fields of ``kind`` a misspelling is judged against: ``metadata``; ``spec``
    but for the kinds without one; ``data`` of a ConfigMap or a Secret."""
    roots = {"metadata"}
    if kind not in _NO_SPEC:
        roots.add("spec")
    if kind in ("ConfigMap", "Secret"):
        roots.add("data")
    return frozenset(roots)
