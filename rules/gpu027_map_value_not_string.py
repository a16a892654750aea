"""A node selector's, label's or annotation's value that is not a string.

## What it does
Flags, in a workload that holds a pod spec, a value YAML reads as a boolean, a number, a
list or a mapping where the Kubernetes API takes only strings:

- the pod's `nodeSelector` (`nvidia.com/gpu.present: true`, `gpu: yes`);
- the `labels` and `annotations` of the pod template's `metadata` and of the object's own;
- the object's `spec.selector.matchLabels`.

YAML reads an unquoted `true`, `yes`, `10` or `0.9` as a boolean or a number; these fields
are `map[string]string` in the API's Go types. A `null` value is an empty string to the API
server and is not flagged. Values are read as Kubernetes' YAML decoder (go-yaml v2) reads
them: a short git commit such as `2e70684` is past the largest 64-bit float, which go-yaml
keeps as text, so it is a string and not flagged. The finding is at the value, and says how
to quote it. As for GPU025, the pod's fields are read only in pod specs the workload table places
(`gpulint/data/workloads.json`): an operator's own type found by its shape may mean something
else by these keys; the object's own `metadata` is every object's `ObjectMeta`, and is read
in any object that holds a pod spec. Each value is reported once, however many pod specs the
object holds.

A Helm chart's templates are read too when the run does not render them: the lines helm
renders as written (no action on them, outside every `if`, `with`, `range` or `define` but
one that wraps the whole template, under parents that are so too), at their own line
(docs/rendering.md, "Templates as written").

## Why it matters
The API server decodes the object into its Go types and rejects it: `json: cannot
unmarshal bool into Go struct field PodSpec.spec.template.spec.nodeSelector of type string`.
`kubectl apply` fails and nothing of the object is created. GPU node labels are where this
bites: GPU Feature Discovery's `nvidia.com/gpu.present` and the labels of most node pools
hold `"true"`, which is written unquoted as often as not.

## Example
```yaml
spec:
  nodeSelector:
    nvidia.com/gpu.present: true    # GPU027: a boolean
```

## Use instead
```yaml
spec:
  nodeSelector:
    nvidia.com/gpu.present: "true"
```

## Options
None.

## References
- Kubernetes API reference, `PodSpec` (`nodeSelector` object: map of string to string) and
  `ObjectMeta` (`labels`, `annotations`):
  https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/
- https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
  (label values are strings)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpulint.api import Path, PodSpec, RuleContext, Violation, as_written, non_string_kind

CODE = "GPU027"
NAME = "map-value-not-string"
SEVERITY = "error"
SCOPE = "pod"
AS_WRITTEN = True
OPTIONS: dict[str, Any] = {}

#: The object's own fields this rule reads (once per object, whatever its pod specs).
_OWN = (("metadata", "labels"), ("metadata", "annotations"), ("spec", "selector", "matchLabels"))


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.location != "pod":
        return
    placed = pod.found_by == "table"  # a shape found by its look may be an operator's type
    if placed:
        spec = pod.spec
        yield from _values(spec.get("nodeSelector"), (*pod.path, "nodeSelector"), "nodeSelector")
        template = pod.template_path
        if template is not None:
            meta = pod.template_metadata() or {}
            for field in ("labels", "annotations"):
                place = (*template, "metadata", field)
                yield from _values(meta.get(field), place, f"the pod template's {field}")
    memo = pod.obj.memo
    if memo.get(CODE):
        return
    memo[CODE] = True
    for fields in _OWN if placed else _OWN[:2]:  # every object's metadata is an ObjectMeta
        node: Any = pod.obj.data
        for part in fields:
            node = node.get(part) if isinstance(node, Mapping) else None
        yield from _values(node, (*pod.obj.path, *fields), ".".join(fields))


def _values(mapping: Any, path: Path, label: str) -> Iterator[Violation]:
    if not isinstance(mapping, Mapping):
        return
    for key, value in mapping.items():
        if value is None or isinstance(value, str):
            continue
        kind = non_string_kind(value)
        quoted = f'"{as_written(value)}"' if kind not in ("a list", "a mapping") else ""
        advice = f"quote it: {key}: {quoted}" if quoted else "write a string"
        yield Violation(
            (*path, key),
            f"{label} {key} is {kind}, but the API takes only strings there: the API server "
            f"rejects the object; {advice}",
            at="value",
        )
