"""Duplicate mapping key.

## What it does
Reports a key that appears twice in one mapping, such as two `resources:` blocks in one
container or `nvidia.com/gpu` twice under one `limits`, at the second occurrence.

A file that is not Kubernetes (no `apiVersion` and `kind` anywhere: a chart's values kept
outside the chart, another tool's configuration) gets no YAML findings, with one exception:
a duplicate key whose first value names an accelerator resource (`nvidia.com/gpu`), a
warning. A reader that keeps the last of two keys (Helm reading a chart's values) drops the
first value with the GPU it sets. A kustomization (`kustomization.yaml`, another tool's file
that gets no other finding) gets the same warning: Kustomize keeps the last of two keys
without a word, so a first `patch:` that adds `nvidia.com/gpu` is dropped (checked with
`kubectl kustomize`).

## Why it matters
kubectl's strict field validation rejects the object (`duplicate field`). Non-strict decoders
keep only the last value and silently drop the first, so the object that runs is not the
one that was reviewed. gpulint lints the last value, as non-strict decoding would.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
resources:            # YML002
  requests:
    cpu: 2
```

## Use instead
```yaml
resources:
  limits:
    nvidia.com/gpu: 1
  requests:
    cpu: 2
```

## Options
None.

## References
- https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
"""

CODE = "YML002"
NAME = "duplicate-key"
SEVERITY = "error"
SCOPE = "input"
