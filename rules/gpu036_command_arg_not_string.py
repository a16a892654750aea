"""A container's command or argument that is not a string.

## What it does
Flags an item of a container's `command` or `args` (init, sidecar and ephemeral containers
included) that YAML reads as a number, a boolean, a list or a mapping: `- 8080`,
`- 999`, `- true`. It also flags a `command` or `args` written as one string or number
instead of a list (`args: --port 8080`). The Kubernetes API types both fields as lists of
strings. The finding is at the value, and says how to quote it. An empty item (`-` with
nothing after it) is an empty string to the API server and is not flagged.

Only pod specs that the workload table (`gpulint/data/workloads.json`) places are read,
whose containers are Kubernetes `Container`s (a KServe `ServingRuntime`'s, a Kubeflow
`PyTorchJob`'s, ...); a pod-like shape found by its look alone may be an operator's own
type, whose `args` mean something else.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
The API server decodes the object into its Go types and rejects it: `json: cannot
unmarshal number into Go struct field Container.spec.containers.args of type string`.
`kubectl apply` fails and nothing of the object is created; a custom resource whose schema
embeds the `Container` type fails its schema validation the same way (`must be of type
string`). Engine flags take numbers (`--port 8080`, `--n-gpu-layers 999`,
`--tensor-parallel-size 2`), and a list that writes each on a line of its own is where the
quotes get lost.

## Example
```yaml
containers:
- name: llama-server
  image: ghcr.io/ggml-org/llama.cpp:server-cuda
  args:
  - --n-gpu-layers
  - 999          # GPU036: a number
```

## Use instead
```yaml
containers:
- name: llama-server
  image: ghcr.io/ggml-org/llama.cpp:server-cuda
  args:
  - --n-gpu-layers
  - "999"
```

## Options
None.

## References
- Kubernetes API reference, `Container` (`command` and `args`: string arrays):
  https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#entrypoint
- https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, as_written, non_string_kind

CODE = "GPU036"
NAME = "command-arg-not-string"
SEVERITY = "error"
SCOPE = "pod"
AS_WRITTEN = True
OPTIONS: dict[str, Any] = {}

#: The container fields the API types as lists of strings.
FIELDS = ("command", "args")


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.found_by != "table":
        return  # a shape found by its look may be an operator's own type
    for container in pod.containers:
        for field in FIELDS:
            if field not in container.data:
                continue
            value = container.data[field]
            if value is None:
                continue
            if not isinstance(value, list):
                shown = "a string" if isinstance(value, str) else non_string_kind(value)
                yield Violation(
                    (*container.path, field),
                    f"container {container.label} writes its {field} as {shown}, but "
                    f"{field} is a list of strings: the API server rejects the object; "
                    "write one list item for each word",
                    at="value",
                )
                continue
            for index, item in enumerate(value):
                if item is None or isinstance(item, str):
                    continue
                kind = non_string_kind(item)
                scalar = kind not in ("a list", "a mapping")
                written = as_written(item)
                advice = f'quote it ("{written}")' if scalar else "write a string"
                shown = f"{kind} ({written})" if scalar else kind
                yield Violation(
                    (*container.path, field, index),
                    f"container {container.label} has {shown} in its {field}, but {field} "
                    f"is a list of strings: the API server rejects the object; {advice}",
                    at="value",
                )
