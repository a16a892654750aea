"""GPU quantity is a template placeholder.

## What it does
Reports a GPU or accelerator value that is a template placeholder rather than a quantity:
`$GPU_PER_NODE`, `${NVB_GPUS_PER_NODE}`, `${GPU_REQUEST:-1}`, `$(GPUS)`, `${{GPUS}}`,
`{{ .Values.gpus }}`, `{% set g = gpus %}{{ g // 2 }}` (a Jinja statement, then its
expression), `PLACEHOLDER_NUM_GPUS`, `<gpus>`, `__GPUS__`, `###ZARF_VAR_GPU_LIMIT###`
(Zarf's package variables), `($node_gpus)` (a Kyverno Chainsaw test's binding), a name after
`#`, `%` or `@` (`'#GPUS'`, `'%GPUS%'`: a job script's `sed` fills it in), or an
upper-case name with an underscore such as `GPU_REQUEST`
(a token a deploy script replaces with `sed`; no quantity is written so). The value was not
checked, and GPU005 does not call it (or a CPU or memory value written so) invalid.

## Why it matters
Files meant for `envsubst`, `sed` or a template engine are valid YAML but not yet valid
manifests. Calling `$GPU_PER_NODE` an invalid quantity (GPU005) would be noise; saying
nothing would hide that the GPU count, the integer checks and the node-size check were all
skipped. Lint the rendered output (`envsubst < job.yaml | gpulint check -`) to check it.

## Example
```yaml
resources:
  limits:
    nvidia.com/gpu: $GPU_PER_NODE   # GPU007 (info)
```

## Use instead
```console
$ GPU_PER_NODE=8 envsubst < job.yaml | gpulint check -
```

## Options
None. Ignore GPU007 for template sources you lint only after rendering.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/domain.md#quantities
  (quantity grammar: `$` is not part of any quantity)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import PodSpec, RuleContext, Violation, accelerator_entries

CODE = "GPU007"
NAME = "placeholder-gpu-value"
SEVERITY = "info"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for entry in accelerator_entries(pod, ctx.registry):
        if not entry.amount.placeholder:
            continue
        yield Violation(
            entry.path,
            f"{entry.name}: {str(entry.value).strip()} is a template placeholder, not a "
            "quantity: this value was not checked; lint the rendered manifest to check it",
            at="value",
        )
