"""A Job's container reads its completion index, but the Job is not Indexed.

## What it does
Flags a container of a `batch/v1` Job (or a CronJob's job template) whose `completionMode`
is not `Indexed` (it is `NonIndexed` when left out) and that reads the Job's completion
index:

- a `$(JOB_COMPLETION_INDEX)` reference in its `command`, `args` or an `env` value, when
  the container defines no variable of that name;
- an `env` variable taken from the pod's `batch.kubernetes.io/job-completion-index`
  annotation or label through the downward API (`fieldRef`).

The finding is on the reference (inside the string when the file's text proves where it
is) or on the `fieldPath`. An escaped `$$(JOB_COMPLETION_INDEX)` is text Kubernetes leaves
as written and is not flagged. Other kinds that run Jobs (JobSet, which makes its Jobs
Indexed, or a training operator's) are not judged.

## Why it matters
Only an Indexed Job gives each pod its index: the Job controller sets the
`JOB_COMPLETION_INDEX` variable and the `batch.kubernetes.io/job-completion-index`
annotation on the pods of an Indexed Job alone. Kubernetes leaves a `$(VAR)` reference to a
variable that is not defined as written, so `torchrun --node_rank=$(JOB_COMPLETION_INDEX)`
gets the text `$(JOB_COMPLETION_INDEX)` and stops; a shell reads it as a command
substitution that fails and gives an empty string; the downward API gives an empty value.
Every pod of a multi-node GPU job then takes the same rank, or none, and the job holds its
GPUs without ever forming. It is a warning: a program may fall back to a default of its
own.

## Example
```yaml
apiVersion: batch/v1
kind: Job
spec:
  completions: 2
  parallelism: 2
  template:
    spec:
      containers:
      - name: trainer
        command: [torchrun, --nnodes=2, --node_rank=$(JOB_COMPLETION_INDEX), train.py]  # GPU037
```

## Use instead
```yaml
apiVersion: batch/v1
kind: Job
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      containers:
      - name: trainer
        command: [torchrun, --nnodes=2, --node_rank=$(JOB_COMPLETION_INDEX), train.py]
```

## Options
None.

## References
- https://kubernetes.io/docs/concepts/workloads/controllers/job/#completion-mode (the
  index is given "for Indexed Jobs" only: annotation, label and `JOB_COMPLETION_INDEX`)
- https://kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables/
  (`$(VAR_NAME)` of an undefined variable stays as written)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation

CODE = "GPU037"
NAME = "job-index-not-set"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

VARIABLE = "JOB_COMPLETION_INDEX"
#: A Kubernetes reference to the variable, not escaped (``$$(...)`` is text).
REFERENCE = re.compile(r"(?<!\$)\$\(" + VARIABLE + r"\)")
#: The annotation and label of an Indexed Job's pods that hold the index.
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
#: (Another spelling of the path is refused by the API server: GPU048's.)
INDEX_FIELDS = frozenset(f"metadata.{where}['{INDEX_KEY}']" for where in ("annotations", "labels"))


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    obj = pod.obj
    if pod.found_by != "table" or obj.group != "batch" or obj.kind not in ("Job", "CronJob"):
        return
    job = _job_spec(obj.data, obj.kind)
    if job is None:
        return
    mode = job.get("completionMode")
    if mode is not None and mode != "NonIndexed":
        return  # Indexed, or a value a template fills in
    for container in pod.containers:
        data = container.data
        listed = data.get("env")
        env: list[Any] = listed if isinstance(listed, list) else []
        defined = {item.get("name") for item in env if isinstance(item, dict)}
        if VARIABLE not in defined:
            for field in ("command", "args"):
                words = data.get(field)
                if not isinstance(words, list):
                    continue
                for index, word in enumerate(words):
                    found = _reference(container.label, word, (*container.path, field, index))
                    if found is not None:
                        yield found
            for index, item in enumerate(env):
                if isinstance(item, dict):
                    path = (*container.path, "env", index, "value")
                    found = _reference(container.label, item.get("value"), path)
                    if found is not None:
                        yield found
        for index, item in enumerate(env):
            if _field_path(item) in INDEX_FIELDS:
                yield Violation(
                    (*container.path, "env", index, "valueFrom", "fieldRef", "fieldPath"),
                    f"container {container.label} takes a variable from the pod's {INDEX_KEY}, "
                    "but the Job is not Indexed, so its pods have none; "
                    "set completionMode: Indexed on the Job",
                    at="value",
                )


def _reference(label: str, value: Any, path: tuple[Any, ...]) -> Violation | None:
    """The finding on a string that refers to the variable, if ``value`` does."""
    match = REFERENCE.search(value) if isinstance(value, str) else None
    if match is None:
        return None
    return Violation(
        path,
        f"container {label} reads $({VARIABLE}), but the Job is not Indexed: Kubernetes "
        "sets no such variable and leaves the text as written; "
        "set completionMode: Indexed on the Job",
        at="value",
        within=(match.start(), match.end() - match.start()),
    )


def _job_spec(data: dict[str, Any], kind: str) -> dict[str, Any] | None:
    spec = data.get("spec")
    if kind == "CronJob":
        template = spec.get("jobTemplate") if isinstance(spec, dict) else None
        spec = template.get("spec") if isinstance(template, dict) else None
    return spec if isinstance(spec, dict) else None


def _field_path(item: Any) -> str | None:
    source = item.get("valueFrom") if isinstance(item, dict) else None
    ref = source.get("fieldRef") if isinstance(source, dict) else None
    path = ref.get("fieldPath") if isinstance(ref, dict) else None
    return path if isinstance(path, str) else None
