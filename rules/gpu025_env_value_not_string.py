"""An environment variable's value that is not a string.

## What it does
Flags an `env` item of a container (init, sidecar and ephemeral containers included) whose
`value` is a number, a boolean, a list or a mapping: `value: 10`, `value: true`,
`value: 0.9`. YAML reads an unquoted `10` as an integer, and the Kubernetes API types
`EnvVar.value` as a string. The finding is at the value, and says how to quote it.
A `null` value (`value:` with nothing after it) is an empty string to the API server
and is not flagged.

Only pod specs that the workload table (`gpulint/data/workloads.json`) places are read,
whose containers are Kubernetes `Container`s; a pod-like shape found by its look alone
may be an operator's own type, whose `env` means something else.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
The API server decodes the object into its Go types and rejects it: `json: cannot
unmarshal number into Go struct field EnvVar.spec.template.spec.containers.env.value of
type string`. `kubectl apply` fails and nothing of the object is created (a custom resource
whose schema embeds the `Container` type fails its schema validation the same way:
`must be of type string`). A Helm value written into `value: {{ .Values.tp }}` without
`quote` does this whenever the value is a number.

## Example
```yaml
env:
- name: TENSOR_PARALLEL_SIZE
  value: 4            # GPU025: a number
```

## Use instead
```yaml
env:
- name: TENSOR_PARALLEL_SIZE
  value: "4"
```

## Options
None.

## References
- Kubernetes API reference, `EnvVar` (`value` string):
  https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#environment-variables
- https://kubernetes.io/docs/tasks/inject-data-application/define-environment-variable-container/
- Helm documentation, "Template Functions and Pipelines" (`quote`):
  https://helm.sh/docs/chart_template_guide/functions_and_pipelines/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, as_written, non_string_kind

CODE = "GPU025"
NAME = "env-value-not-string"
SEVERITY = "error"
SCOPE = "pod"
AS_WRITTEN = True
OPTIONS: dict[str, Any] = {}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.found_by != "table":
        return  # a shape found by its look may be an operator's own type
    for container in pod.containers:
        env = container.data.get("env")
        if not isinstance(env, list):
            continue
        for index, item in enumerate(env):
            if not isinstance(item, dict) or "value" not in item:
                continue
            value = item["value"]
            if value is None or isinstance(value, str):
                continue
            kind = non_string_kind(value)
            name = item.get("name")
            shown = f"variable {name}" if isinstance(name, str) else "a variable"
            quoted = (
                f'value: "{as_written(value)}"' if kind != "a mapping" and kind != "a list" else ""
            )
            advice = f"quote it ({quoted})" if quoted else "write a string"
            yield Violation(
                (*container.path, "env", index, "value"),
                f"container {container.label} sets {shown} to {kind}, but an environment "
                "variable's value is a string: the API server rejects the object; "
                f"{advice}",
                at="value",
            )
