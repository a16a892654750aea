"""Declarative rules: a YAML file that applies a JSON Schema to containers, pods or objects.

The Polaris style: a policy such as "every GPU container sets a memory limit" is data, not
Python. The file's own shape is ``schemas/declarative-rule.schema.json``::

    code: ORG001
    name: gpu-container-memory-limit
    severity: warning
    target: container          # container | pod | object
    when:
      gpu: true                # only containers that request an accelerator
    message: "GPU container {container} sets no memory limit"
    schema:
      required: [resources]
      properties:
        resources:
          required: [limits]
          properties:
            limits: {required: [memory]}

A target that fails the schema gets one finding, pointing at the deepest part of the path of
jsonschema's best-matching error that exists in the document (for a ``required`` error, the
mapping that lacks the key), else at the target itself.
"""

from __future__ import annotations

import fnmatch
import string
from collections.abc import Iterator, Mapping
from pathlib import Path as FsPath
from typing import Any

from gpulint.model import Path, Severity
from gpulint.rule import Rule, RuleContext, RuleLoadError, Violation

PLACEHOLDERS = frozenset({"kind", "name", "namespace", "container", "path", "error"})
_SCOPES = {"container": "pod", "pod": "pod", "object": "object"}


def _fields(template: str) -> set[str] | str:
    """The placeholders of a message, or why it cannot be formatted."""
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        return f"{exc} (write a literal brace as {{{{ or }}}})"


class _Values(dict[str, str]):
    def __missing__(self, key: str) -> str:  # pragma: no cover - checked at load time
        return "{" + key + "}"


def _read(path: FsPath) -> tuple[Any, Any]:
    """(data, document) of a declarative rule file; RuleLoadError when unreadable."""
    from gpulint.yamlload import SourceError, load_one_document

    where = str(path)
    try:
        doc = load_one_document(path)
    except SourceError as exc:
        line, message = exc.problems[0]
        at = f"{where}:{line}" if line else where
        raise RuleLoadError(f"declarative rule {at}: {message}") from None
    if doc is None or not isinstance(doc.data, dict):
        raise RuleLoadError(f"declarative rule {where}: expected one YAML mapping")
    return doc.data, doc


def load_declarative(path: FsPath, origin: str = "declarative") -> Rule:
    """Read, validate and compile a declarative rule file."""
    from gpulint.data import schema_path
    from gpulint.schemacheck import check, schema_error

    data, doc = _read(path)
    where = str(path)
    import json

    with open(schema_path("declarative-rule.schema.json"), encoding="utf-8") as fh:
        own_schema = json.load(fh)
    problems = check(own_schema, data, lambda p: doc.key_span(p).line)
    if problems:
        raise RuleLoadError("\n".join(f"declarative rule {p.render(where)}" for p in problems))
    for key in ("schema", ("when", "schema")):
        keys = key if isinstance(key, tuple) else (key,)
        node: Any = data
        for k in keys:
            node = node.get(k) if isinstance(node, dict) else None
        if node is None:
            continue
        problem = schema_error(node)
        if problem is not None:
            line = doc.key_span(keys).line
            raise RuleLoadError(
                f"declarative rule {where}:{line}: {'.'.join(keys)}: not a valid JSON "
                f"Schema: {problem}"
            )
    fields = _fields(data["message"])
    line = doc.key_span(("message",)).line
    if isinstance(fields, str):
        raise RuleLoadError(f"declarative rule {where}:{line}: message: {fields}")
    unknown = fields - PLACEHOLDERS
    if unknown:
        allowed = ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS))
        raise RuleLoadError(
            f"declarative rule {where}:{line}: message: unknown placeholder "
            f"{{{sorted(unknown)[0]}}}; allowed placeholders: {allowed}"
        )
    check_fn = _compile(data)
    docs = data.get("docs") or (
        f"## What it does\n{data['message']}\n\n## Options\nNone.\n\n## References\n- {where}"
    )
    return Rule(
        code=data["code"],
        name=data["name"],
        severity=Severity.parse(data.get("severity", "warning")),
        scope=_SCOPES[data["target"]],
        options_schema={},
        docstring=docs.strip(),
        check=check_fn,
        module=where,
        origin=origin,
    )


def _compile(data: Mapping[str, Any]) -> Any:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    target = data["target"]
    when = data.get("when", {})
    gpu = when.get("gpu")
    kinds = tuple(when.get("kinds", ()))
    when_schema = Draft202012Validator(when["schema"]) if "schema" in when else None
    validator = Draft202012Validator(data["schema"])
    message = data["message"]

    def violation(instance: Any, base: Path, values: dict[str, str]) -> Iterator[Violation]:
        if when_schema is not None and not when_schema.is_valid(instance):
            return
        error = best_match(validator.iter_errors(instance))
        if error is None:
            return
        rel = tuple(error.absolute_path)
        values = _Values(values, path=".".join(str(p) for p in rel) or "(top)")
        values["error"] = error.message
        yield Violation((*base, *rel), message.format_map(values))

    def names(obj: Any) -> dict[str, str]:
        ref = obj.ref
        return {
            "kind": ref.kind or "",
            "name": ref.name or "",
            "namespace": ref.namespace or "",
            "container": "",
        }

    def kind_ok(obj: Any) -> bool:
        return not kinds or any(fnmatch.fnmatchcase(obj.kind, k) for k in kinds)

    if target == "object":

        def check_object(obj: Any, ctx: RuleContext) -> Iterator[Violation]:
            if not kind_ok(obj):
                return
            if gpu is not None:
                from gpulint.resources import wants_accelerator
                from gpulint.workloads import builtin_table

                table = ctx.workloads or builtin_table()
                wants = any(wants_accelerator(p, ctx.registry) for p in table.pod_specs(obj))
                if wants != gpu:
                    return
            yield from violation(obj.data, obj.path, names(obj))

        return check_object

    if target == "pod":

        def check_pod(pod: Any, ctx: RuleContext) -> Iterator[Violation]:
            if pod.location != "pod" or not pod.path or pod.path[-1] != "spec":
                return
            if not kind_ok(pod.obj):
                return
            if gpu is not None:
                from gpulint.resources import wants_accelerator

                if wants_accelerator(pod, ctx.registry) != gpu:
                    return
            base = pod.path[:-1]
            from gpulint.workloads import _get

            instance = _get(pod.obj.doc.data, base)
            if isinstance(instance, dict):
                yield from violation(instance, base, names(pod.obj))

        return check_pod

    def check_containers(pod: Any, ctx: RuleContext) -> Iterator[Violation]:
        if not kind_ok(pod.obj):
            return
        from gpulint.resources import resource_entries

        registry = ctx.registry
        for container in pod.containers:
            if container.section == "ephemeralContainers":
                continue
            if gpu is not None:
                wants = any(
                    (registry.is_accelerator(e.name) or registry.looks_like_accelerator(e.name))
                    and e.amount.positive_or_unknown
                    for e in resource_entries(container)
                )
                if wants != gpu:
                    continue
            values = names(pod.obj)
            values["container"] = container.name or ""
            yield from violation(container.data, container.path, values)

    return check_containers
