"""ResourceClaim, ResourceClaimTemplate or DeviceClass the API server rejects.

## What it does
Checks the DRA objects of `resource.k8s.io` (`v1`, `v1beta2` and `v1beta1`) as the API
server validates them, after its defaulting, and reports, at the field to change:

- a request written in another version's shape: under `v1` and `v1beta2` the class,
  selectors, allocation mode and count of an exact request go under `exactly:`; under
  `v1beta1` they sit on the request itself ("strict decoding error: unknown field", and
  "exactly one of `exactly` or `firstAvailable` is required");
- `exactly` and `firstAvailable` together, or neither;
- an allocation mode other than `ExactCount` or `All` (modes are case-sensitive: `all` is
  refused), a `count` with `allocationMode: All`, a negative count (a count left out, or 0,
  is defaulted to 1 and accepted);
- a request or subrequest name that is not a DNS label, or is used twice; a DeviceClass name
  that is not a DNS subdomain; a `deviceClassName` left out;
- a constraint or a config whose `requests` names no request of the claim (a subrequest is
  named `request/subrequest`); a constraint without `matchAttribute`/`distinctAttribute`, or
  with one that is not a fully qualified name (`gpu.nvidia.com/productName`);
- a selector without `cel.expression`, a config without `opaque` (and its `driver` and
  `parameters`);
- more than 32 requests, constraints, configs or selectors, more than 8 `firstAvailable`
  subrequests.

The message quotes the API server's own words. The selectors' CEL is GPU064; configuration
a driver refuses is GPU065; an old API version is GPU061.

A CustomResourceDefinition of `resource.k8s.io` itself (a "minimal DRA CRD" written to make
a cluster without DRA take claims) is reported at its `spec.group`: the group is one
Kubernetes protects, and without the `api-approved.kubernetes.io` annotation the API server
refuses the CRD ("protected groups must have approval annotation"); the kinds are built in.

## Why it matters
`kubectl apply` fails on the whole object (`ResourceClaim.resource.k8s.io "gpu" is invalid:
spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is
required`). A claim written from a `v1beta1` tutorial under `apiVersion:
resource.k8s.io/v1` is the most common case: the cluster serves `v1`, and the request shape
changed with it.

## Example
```yaml
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: single-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com   # GPU060: v1beta1 shape under v1
```

## Use instead
```yaml
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
```

## Options
None.

## References
- kubernetes `pkg/apis/resource/validation/validation.go` (`validateDeviceClaim`,
  `validateDeviceRequest`, `validateExactDeviceRequest`, `validateDeviceSubRequest`,
  `validateDeviceAllocationMode`, `validateRequestNameRef`, `validateDeviceConstraint`,
  `validateDeviceConfiguration`, `validateSelector`)
- kubernetes `pkg/apis/resource/v1/defaults.go` (`SetDefaults_ExactDeviceRequest`,
  `SetDefaults_DeviceSubRequest`)
- kubernetes `staging/src/k8s.io/api/resource/v1/types.go`, `v1beta2/types.go`,
  `v1beta1/types.go` (the fields of each version; `DeviceRequestsMaxSize`,
  `DeviceSelectorsMaxSize`, `FirstAvailableDeviceRequestMaxSize`)
- https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/
- kubernetes `staging/src/k8s.io/apiextensions-apiserver`, in
  `pkg/apis/apiextensions/validation/validation.go` (`validateAPIApproval`: "protected
  groups must have approval annotation") and KEP-1111
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import K8sObject, RuleContext, Violation, dra_object_problems, is_dra_object

CODE = "GPU060"
NAME = "invalid-dra-object"
SEVERITY = "error"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}


#: The annotation a CustomResourceDefinition of a group Kubernetes protects (``*.k8s.io``,
#: ``*.kubernetes.io``) must carry (KEP-1111: a URL of the approved API, or "unapproved, ...").
APPROVAL = "api-approved.kubernetes.io"


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.kind == "CustomResourceDefinition" and (obj.group, obj.version) == (
        "apiextensions.k8s.io",
        "v1",
    ):
        yield from _dra_crd(obj)
        return
    if not is_dra_object(obj):
        return
    for problem in dra_object_problems(obj.kind, obj.version, obj.data, obj.path):
        yield Violation(problem.path, problem.message, at=problem.at, help=problem.help)


def _dra_crd(obj: K8sObject) -> Iterator[Violation]:
    """A CustomResourceDefinition of ``resource.k8s.io``, a protected group, without the
    approval annotation: the API server refuses it (the group's kinds are built in)."""
    spec = obj.data.get("spec")
    if not isinstance(spec, dict) or spec.get("group") != "resource.k8s.io":
        return
    metadata = obj.data.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if isinstance(annotations, dict) and APPROVAL in annotations:
        return
    yield Violation(
        (*obj.path, "spec", "group"),
        "resource.k8s.io is a group Kubernetes protects: a CustomResourceDefinition of it "
        f"without the {APPROVAL} annotation is refused by the API server",
        help="remove the CRD: ResourceClaim, ResourceClaimTemplate, DeviceClass and "
        "ResourceSlice are built in (resource.k8s.io/v1 from Kubernetes 1.34, v1beta1 behind "
        "the DynamicResourceAllocation feature gate before)",
        at="value",
    )
