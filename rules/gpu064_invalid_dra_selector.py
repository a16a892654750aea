"""DRA CEL selector that does not compile, or reads an attribute no driver publishes.

## What it does
Compiles every CEL selector of a ResourceClaim, ResourceClaimTemplate or DeviceClass
(`selectors[].cel.expression`, in requests, `exactly:` and `firstAvailable` subrequests) in
the environment Kubernetes declares for device selectors, and reports at the place in the
expression (its line and column in the file, where the scalar's style lets the file show it):

- **errors**, what the API server rejects: a syntax error; a name other than `device` (or a
  macro's or `cel.bind`'s variable); a field `device` does not have (it has `driver`,
  `attributes`, `capacity`, `allowMultipleAllocations`); an operator none of whose overloads
  takes the operands' types (`>=` between Quantities: they are compared with `compareTo`,
  `isGreaterThan`, `isLessThan`); a method the receiver's type lacks; a string method
  (`contains`, `startsWith`, `endsWith`, `matches`) given anything but one string, even on
  an attribute, whose type is open; a result that is not `bool`; an expression over 10 Ki;
- **warnings**, accepted but never matching: an attribute or capacity name a known driver
  does not publish in its domain (`device.attributes['gpu.nvidia.com'].productNam`), with
  did-you-mean, or a capacity read as an attribute; a domain one slip from a known one
  (`device.attributes['nvidia.com']`); a literal `quantity('…')` or `semver('…')` that
  does not parse.

Values whose type the driver chooses (every attribute) are not judged (but for the string
methods above), and a domain gpulint
does not know is never guessed at. The drivers' published names are in
`gpulint/data/dra-attributes.json`, every row citing the driver's source (NVIDIA's
`gpu.nvidia.com` and `compute-domain.nvidia.com`, Intel's `gpu.intel.com` and
`gaudi.intel.com`, AMD's `gpu.amd.com`, and Kubernetes' standard `resource.kubernetes.io`).
Any driver may publish names of its own in the standard domain (a memory driver's
`pageSize`), so a name that table does not list is not judged there, but for a near miss of a
listed one (`pcieroot`), which is `info` with did-you-mean.
The expressions are parsed with the `cel-python` package's CEL grammar, imported only for a
file that has a selector.

## Why it matters
A selector that does not compile makes `kubectl apply` fail (`spec.devices.requests[0].
exactly.selectors[0].cel.expression: Invalid value: …: compilation failed: …`). One that
reads an attribute the driver does not publish compiles, and then fails for every device
when the scheduler evaluates it: the pod stays `Pending` with a CEL runtime error in an
event. Misspelt attribute names are the commonest DRA question on the drivers' trackers.

## Example
```yaml
selectors:
- cel:
    expression: device.attributes['gpu.nvidia.com'].productNam == 'NVIDIA H100'   # GPU064
- cel:
    expression: device.capacity['gpu.nvidia.com'].memory >= quantity('40Gi')       # GPU064
```

## Use instead
```yaml
selectors:
- cel:
    expression: device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100'
- cel:
    expression: device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0
```

## Options
None.

## References
- kubernetes `staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`
  (`CompileCELExpression`, `newCompiler`: the `device` type, semver and bindings)
- kubernetes `pkg/apis/resource/validation/validation.go` (`validateCELExpression`)
- kubernetes `staging/src/k8s.io/apiserver/pkg/cel/library` (Quantity, semver, lists,
  regex, URLs, IP, CIDR, format)
- NVIDIA/k8s-dra-driver-gpu `cmd/gpu-kubelet-plugin/deviceinfo.go`, `mig.go`
- https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    K8sObject,
    RuleContext,
    Violation,
    dra_selectors,
    holds_placeholder,
    is_dra_object,
)

CODE = "GPU064"
NAME = "invalid-dra-selector"
SEVERITY = "error"
SCOPE = "object"
OPTIONS: dict[str, Any] = {}


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if not is_dra_object(obj):
        return
    for path, expression in dra_selectors(obj.kind, obj.data):
        if holds_placeholder(expression):
            continue  # filled in by a template or a substitution before it is applied
        # The selectors' checker is imported for the first selector: a run without one
        # does not import it, whether or not its rules were loaded.
        from gpulint.api import check_selector_expression

        for problem in check_selector_expression(expression):
            yield Violation(
                (*obj.path, *path),
                problem.message,
                at="value",
                severity=problem.severity,
                within=(problem.offset, problem.length),
            )
