"""GPU resource with an empty value.

## What it does
Flags a GPU or accelerator resource under `limits` or `requests` that has no value:
`nvidia.com/gpu:` with nothing after it, or an explicit `null` / `~`.

## Why it matters
Kubernetes reads a null quantity as zero (`Quantity.UnmarshalJSON` turns `null` into an
empty quantity), and nothing warns about it. Under `limits` the container silently gets no
GPU: the pod is scheduled, starts, and finds no device. Under `requests` beside a limit, the
zero request differs from the limit and the API server rejects the pod (`must be equal to
nvidia.com/gpu limit of 1`). The empty value is usually a template variable that was never
filled in.

In a Kustomize strategic-merge patch a `null` deletes the key from the object it patches
(`nvidia.com/gpu: null` in a patch that makes a CPU variant): such a file, and the object a
patch completes, is not judged without `--render` (GL203 says so); with `--render` the
rendered object is.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu:     # GPU006
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 8
```

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#requests-and-limits
  (a key without a value is a zero quantity)
- kubernetes `staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`
  (`UnmarshalJSON`: `null` becomes a zero quantity)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, RuleContext, Violation, accelerator_entries, amount

CODE = "GPU006"
NAME = "empty-gpu-value"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: in a Kustomize patch, null deletes the key (strategic merge)
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for entry in accelerator_entries(pod, ctx.registry):
        if entry.value is not None:
            continue
        resources = entry.container.resources or {}
        limits = resources.get("limits")
        limit = limits.get(entry.name) if isinstance(limits, dict) else None
        if entry.section == "requests" and limit is not None and amount(limit).value != 0:
            consequence = "the request is 0, not its limit: the API server rejects the pod"
        else:
            consequence = "the container silently gets no GPU and nothing rejects it"
        yield Violation(
            entry.path,
            f"{entry.name} has no value: Kubernetes reads null as 0, so {consequence}; write "
            f"the number of devices (e.g. {entry.name}: 1), or fill in the template variable",
        )
