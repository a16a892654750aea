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

A rule file comes from the linted repository, so it is data and nothing more:

- ``$ref`` and ``$dynamicRef`` resolve only inside the rule's own schema. The validators get a
  ``referencing`` registry whose ``retrieve`` refuses every URI, so ``file://``, ``http://``
  and relative references are never read or requested; a reference that does not resolve
  inside the file is a load error naming the rule.
- ``pattern`` and ``patternProperties`` run on RE2 (google-re2), a linear-time engine, in
  place of Python's backtracking ``re``: no manifest value can make a rule backtrack
  exponentially. RE2 has no lookaround or backreferences; a pattern that uses them is a load
  error. (A time bound, such as the ``regex`` package's ``timeout``, would still spend the
  bound on every value of every file and turn a slow pattern into random findings; RE2 is
  linear by construction, times the pattern's program: characters scanned times instructions
  count against a budget per file, :class:`gpulint.util.schemacost.PatternWork`.) jsonschema
  has no hook for its regex engine, so the keywords that run patterns (``pattern``,
  ``patternProperties``, ``additionalProperties``) are replaced in the validator;
  ``unevaluatedProperties`` runs ``patternProperties``' patterns through jsonschema's own
  code, so the two keywords cannot be combined in one rule.
- The schema's cost is bounded (:mod:`gpulint.util.schemacost`): one whose references expand
  past 100,000 schemas when inlined (an ``anyOf`` of two ``$ref`` per level doubles per
  level) is a load error at the ``schema`` key's line, and a validation of one object that
  enters more than 10,000 subschemas stops there, a GL900 finding on that object. Every
  ``$schema`` in it must be 2020-12's, and the validator keeps its class throughout
  (jsonschema would switch to the stock validator of a subschema's ``$schema``).
- ``message`` placeholders are plain ``{name}`` fields, substituted as text: no format specs
  (``{container:>200000000}``), conversions, attribute or index access.
"""

from __future__ import annotations

import fnmatch
import string
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path as FsPath
from typing import Any

from gpulint.model import Path, Severity
from gpulint.rule import Rule, RuleContext, RuleLoadError, Scope, Violation
from gpulint.util.schemacost import Budget

PLACEHOLDERS = frozenset({"kind", "name", "namespace", "container", "path", "error"})
_SCOPES: dict[str, Scope] = {"container": "pod", "pod": "pod", "object": "object"}


#: A message as (literal text, placeholder or None) pieces.
Template = list[tuple[str, str | None]]


def _template(text: str) -> Template | str:
    """The pieces of a message, or why it is not a message of plain ``{name}`` fields."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        return f"{exc} (write a literal brace as {{{{ or }}}})"
    pieces: Template = []
    for literal, name, spec, conversion in parsed:
        if name is not None and (spec or conversion is not None or name not in PLACEHOLDERS):
            field = "{" + name + (f"!{conversion}" if conversion else "")
            field += (f":{spec}" if spec else "") + "}"
            if spec or conversion is not None or not name.isidentifier():
                return (
                    f"{field} is not a plain placeholder: write {{name}} with no format "
                    "spec, conversion, attribute or index"
                )
            allowed = ", ".join("{" + p + "}" for p in sorted(PLACEHOLDERS))
            return f"unknown placeholder {field}; allowed placeholders: {allowed}"
        pieces.append((literal, name))
    return pieces


#: The most of jsonschema's error message ``{error}`` shows. The message quotes the failing
#: value whole (``{...} should not be valid under {}``): a target built from aliases of a
#: large anchor would print many times the file's size in every finding.
MAX_ERROR = 300


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_ERROR else text[: MAX_ERROR - 1] + "\u2026"


def _render(template: Template, values: Mapping[str, str]) -> str:
    """The message, with each placeholder replaced by its value as text."""
    return "".join(
        literal + (values[name] if name is not None else "") for literal, name in template
    )


def _read(path: FsPath) -> tuple[Any, Any]:
    """(data, document) of a declarative rule file; RuleLoadError when unreadable."""
    from gpulint.loader.ownfiles import SourceError, load_one_document

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
    try:
        return _load(path, origin)
    except RecursionError:
        # jsonschema and referencing walk a schema recursively: `{not: {not: ...}}` a few
        # thousand deep is a rule file gpulint cannot use, not an internal error.
        raise RuleLoadError(
            f"declarative rule {path}: the schema is nested too deeply to check"
        ) from None


def _load(path: FsPath, origin: str) -> Rule:
    from gpulint.data import schema_path
    from gpulint.loader.schemacheck import check, schema_error

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
        problem = _unsafe(node) or _too_large(node)
        if problem is not None:
            line = doc.key_span(keys).line
            raise RuleLoadError(f"declarative rule {where}:{line}: {'.'.join(keys)}: {problem}")
    line = doc.key_span(("message",)).line
    template = _template(data["message"])
    if isinstance(template, str):
        raise RuleLoadError(f"declarative rule {where}:{line}: message: {template}")
    check_fn = _compile(data, template)
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


# -- data only: references, regular expressions ---------------------------------------------
def _refuse(uri: str) -> Any:
    """The registry's ``retrieve``: nothing outside the rule file is ever read or requested."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def _registry() -> Any:
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


#: The only ``$schema`` a rule's schema (or any of its subschemas) may name.
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _unsafe(schema: Any) -> str | None:
    """Why a rule's schema is not data only (a reference out of it, a pattern RE2 cannot
    run), or None."""
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    root = DRAFT202012.create_resource(schema)
    patterns_seen = False
    unevaluated = False
    todo = [(root, _registry().resolver_with_root(root))]
    while todo:
        resource, resolver = todo.pop()
        node = resource.contents
        if isinstance(node, dict):
            for key in ("$ref", "$dynamicRef"):
                ref = node.get(key)
                if isinstance(ref, str):
                    try:
                        resolver.lookup(ref)
                    except Unresolvable:
                        return (
                            f"{key} {ref!r} does not resolve inside the rule file (references "
                            "to files, URLs or other documents are not followed)"
                        )
            dialect = node.get("$schema", DIALECT)
            if dialect not in (DIALECT, DIALECT + "#"):
                return (
                    f"$schema {str(dialect)[:100]!r}: a declarative rule's schema is JSON "
                    f"Schema 2020-12 ({DIALECT!r}) throughout"
                )
            patterns = list(node.get("patternProperties") or ())
            patterns_seen = patterns_seen or bool(patterns)
            unevaluated = unevaluated or "unevaluatedProperties" in node
            if isinstance(node.get("pattern"), str):
                patterns.append(node["pattern"])
            for pattern in patterns:
                import re2  # type: ignore[import-untyped]

                from gpulint.util.schemacost import compiled_pattern

                try:
                    compiled_pattern(pattern)
                except re2.error as exc:
                    why = exc.args[0].decode() if exc.args else "invalid"
                    return (
                        f"pattern {pattern!r} cannot run on RE2, the linear-time engine "
                        f"declarative rules use (no lookaround, no backreferences): {why}"
                    )
        for sub in resource.subresources():
            todo.append((sub, resolver.in_subresource(sub)))
    if patterns_seen and unevaluated:
        return "unevaluatedProperties cannot be combined with patternProperties in a rule"
    return None


def _too_large(schema: Any) -> str | None:
    """Why a rule's schema costs too much to run (its references expand past
    :data:`gpulint.util.schemacost.MAX_EXPANDED` schemas), or None."""
    from referencing.jsonschema import DRAFT202012

    from gpulint.util.schemacost import MAX_EXPANDED, expanded_size

    resolver = _registry().resolver_with_root(DRAFT202012.create_resource(schema))
    if expanded_size(schema, resolver) <= MAX_EXPANDED:
        return None
    return (
        f"the schema expands to more than {MAX_EXPANDED:,} schemas when its $ref are "
        "followed (references under anyOf/oneOf/allOf that multiply per level): a rule may "
        "use at most that many"
    )


def _validator_class(budget: Budget) -> Any:
    """Draft 2020-12 with the pattern keywords on RE2, spending ``budget`` (a class per
    rule: the budget is the rule's, reset for each object)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import extend

    from gpulint.util.schemacost import RE2_KEYWORDS, budgeted

    cls = extend(  # type: ignore[no-untyped-call]
        Draft202012Validator,
        RE2_KEYWORDS,
    )
    return budgeted(cls, budget)


def _validator(schema: Any, budget: Budget) -> Any:
    return _validator_class(budget)(schema, registry=_registry())


def _compile(data: Mapping[str, Any], template: Template) -> Any:
    from jsonschema.exceptions import best_match

    from gpulint.util.schemacost import begin_file, has_patterns, pattern_work

    target = data["target"]
    when = data.get("when", {})
    gpu = when.get("gpu")
    kinds = tuple(when.get("kinds", ()))
    budget = Budget()
    patterned = any(has_patterns(s) for s in (when.get("schema"), data["schema"]))
    when_schema = _validator(when["schema"], budget) if "schema" in when else None
    validator = _validator(data["schema"], budget)

    def violation(instance: Any, base: Path, values: dict[str, str]) -> Iterator[Violation]:
        # One budget for the object's ``when`` and ``schema``: past it, BudgetExceeded is
        # a GL900 finding on this object (gpulint.util.schemacost), and the run goes on.
        budget.reset()
        if patterned and pattern_work().spent:
            return  # GL900 said so on the object where the file's pattern budget ran out
        if when_schema is not None and not when_schema.is_valid(instance):
            return
        error = best_match(validator.iter_errors(instance))
        if error is None:
            return
        rel = tuple(error.absolute_path)
        values = {**values, "path": ".".join(str(p) for p in rel) or "(top)"}
        values["error"] = _shorten(error.message)
        yield Violation((*base, *rel), _render(template, values))

    def kind_ok(obj: Any) -> bool:
        return not kinds or any(fnmatch.fnmatchcase(obj.kind, k) for k in kinds)

    make = {"object": _object_check, "pod": _pod_check}.get(target, _containers_check)
    check = make(violation, kind_ok, gpu)
    check.begin_file = begin_file  # the engine calls it
    return check


def _names(obj: Any) -> dict[str, str]:
    """The object's names, for a declarative rule's message template."""
    ref = obj.ref
    return {
        "kind": ref.kind or "",
        "name": ref.name or "",
        "namespace": ref.namespace or "",
        "container": "",
    }


#: A compiled rule's judgement of one instance (its data, where it is, the template's names).
_Judge = Callable[[Any, Path, dict[str, str]], Iterator[Violation]]


def _object_check(violation: _Judge, kind_ok: Callable[[Any], bool], gpu: Any) -> Any:
    """The check of a rule whose ``target`` is ``object``."""

    def check_object(obj: Any, ctx: RuleContext) -> Iterator[Violation]:
        if not kind_ok(obj):
            return
        if gpu is not None:
            from gpulint.k8s.resources import gpu_demand
            from gpulint.k8s.workloads import builtin_table

            table = ctx.workloads or builtin_table()
            # The pod specs the per-file view already found (the engine's table is
            # ctx.workloads), else found here.
            pods = obj.pods if obj.pods is not None else table.pod_specs(obj)
            demands = [gpu_demand(p, ctx.registry, ctx.claims) for p in pods]
            # A GPU object has a GPU pod; a CPU object has only pods surely without one.
            if not (any(d.gpu for d in demands) if gpu else all(d.cpu for d in demands)):
                return
        yield from violation(obj.data, obj.path, _names(obj))

    return check_object


def _pod_check(violation: _Judge, kind_ok: Callable[[Any], bool], gpu: Any) -> Any:
    """The check of a rule whose ``target`` is ``pod``."""

    def check_pod(pod: Any, ctx: RuleContext) -> Iterator[Violation]:
        if pod.location != "pod" or not pod.path or pod.path[-1] != "spec":
            return
        if not kind_ok(pod.obj):
            return
        if gpu is not None:
            from gpulint.k8s.resources import gpu_demand

            demand = gpu_demand(pod, ctx.registry, ctx.claims)
            if not (demand.gpu if gpu else demand.cpu):
                return
        base = pod.path[:-1]
        from gpulint.k8s.objects import value_at

        instance = value_at(pod.obj.doc.data, base)
        if isinstance(instance, dict):
            yield from violation(instance, base, _names(pod.obj))

    return check_pod


def _containers_check(violation: _Judge, kind_ok: Callable[[Any], bool], gpu: Any) -> Any:
    """The check of a rule whose ``target`` is ``container``."""

    def check_containers(pod: Any, ctx: RuleContext) -> Iterator[Violation]:
        if not kind_ok(pod.obj):
            return
        from gpulint.k8s.resources import container_gpu, gpu_demand

        registry = ctx.registry
        demand = gpu_demand(pod, registry, ctx.claims) if gpu is not None else None
        for container in pod.containers:
            if container.section == "ephemeralContainers":
                continue
            if demand is not None and container_gpu(container, demand, registry) is not gpu:
                continue
            values = _names(pod.obj)
            values["container"] = container.name or ""
            yield from violation(container.data, container.path, values)

    return check_containers
