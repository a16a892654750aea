"""What a declarative rule's JSON Schema may cost: its size with every ``$ref`` followed,
measured when the rule loads, and the steps one validation may take, counted as it runs.

A schema is a tree, but ``$ref`` makes it a graph, and the work of validating a value is
the size of that graph unrolled: ``a0: {anyOf: [{$ref: a1}, {$ref: a1}]}``, ``a1: {anyOf:
[{$ref: a2}, {$ref: a2}]}``, ... is a few lines per level and doubles per level (18 levels
took 18 s and 1.6 GB per container). Two bounds, because neither alone is enough:

- :func:`expanded_size` counts the schemas the rule's schema expands to when every ``$ref``
  and ``$dynamicRef`` is inlined, each target measured once (memoised), so measuring is
  linear in the file; a reference back to a schema being measured (recursion, as in a tree
  type) counts one. A rule over :data:`MAX_EXPANDED` is a load error.
- :class:`Budget` counts the subschemas one validation enters (each ``anyOf``/``oneOf``/
  ``allOf`` branch, ``not``, ``if``/``then``/``else``, ``dependentSchemas``, each property,
  pattern property and item, each reference followed): recursion through the value, which
  no measure of the schema alone sees, is bounded too. Past :data:`MAX_STEPS` for one
  object the validation stops with :class:`BudgetExceeded`, which the engine reports as a
  GL900 finding on that object; every other object, rule and file is still checked.

A third bound is on the patterns' matching, which neither count sees. RE2 is linear in the
value, but with a factor of the pattern's program: ``^(?:a|b)*a(?:a|b){450}$`` compiles in
0.2 ms to 454 instructions, and scanning a 1 MB value with it takes 3 s (its DFA would need
a state per set of the last 450 positions; the cache thrashes and RE2 falls back to its NFA,
whose work is the value's length times the program's). Lowering RE2's ``max_mem`` only
makes the fallback come sooner. So :class:`PatternWork` counts what a search may cost,
characters scanned times instructions, against a budget per file that grows with the
file's size (:data:`PATTERN_WORK_PER_CHAR`), shared by every declarative rule: many rules
or many patterns on a file cost at most a constant per character of it. A search that
would pass it is not run: :class:`BudgetExceeded`, a GL900 finding on that object, and the
rules that use patterns skip the rest of that file. The count depends only on the file, so
its verdict never depends on the run's other files.

The count is taken in the validator's ``evolve``, which jsonschema calls for every
subschema it enters (``descend``, ``is_valid`` and the ``unevaluated*`` keywords' own walk).
The ``evolve`` installed here also keeps the validator's class: jsonschema's picks the class
from a subschema's ``$schema``, so ``$schema: draft-07`` inside a rule would have swapped in
the stock validator, with Python's backtracking ``re`` in place of RE2.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Mapping
from typing import Any

#: The most schemas a rule's schema may expand to through its references. The example
#: rules expand to 3 and 4; a flat schema of 50,000 properties is 50,001 and takes 0.3 s to
#: measure. A chain of two references per level passes it at 16 levels (196,606).
MAX_EXPANDED = 100_000

#: The most subschemas one validation of one object may enter. The example rules enter 3
#: on every object of the test corpus; a pod of 200 containers against a rule of 20
#: subschemas per container enters some 4,000. 10,000 steps take ~0.3 s and ~20 MB.
MAX_STEPS = 10_000


#: Pattern work (characters scanned x RE2 instructions) the declarative rules may spend per
#: character of the file they check: at RE2's slowest (its NFA, ~7 ns a unit) ~1.7 s per MB
#: of file. A DNS-label pattern (``^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$``) is 251
#: instructions: two such rules on every label key and value, and one on every image, spend
#: ~30 per character of a file of pods.
PATTERN_WORK_PER_CHAR = 256
#: Pattern work every file may spend whatever its size (~0.03 s at RE2's slowest).
PATTERN_WORK_BASE = 4_000_000
#: Characters a search is charged on top of its value's (setting up the search).
SEARCH_CHARGE = 8


class BudgetExceeded(Exception):
    """A validation entered more subschemas than its budget allows."""


class Budget:
    """The steps left to one validation; :meth:`reset` before each object."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int = MAX_STEPS) -> None:
        self.limit = limit
        self.left = limit

    def reset(self) -> None:
        self.left = self.limit

    def step(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise BudgetExceeded(
                f"checking this object entered more than {self.limit:,} JSON Schema "
                "subschemas (references and anyOf/oneOf/allOf chains that multiply): "
                "the rule's schema was not finished on it"
            )


def budgeted(cls: Any, budget: Budget) -> Any:
    """``cls`` (a class of :func:`jsonschema.validators.extend`'s, owned by the caller) with
    an ``evolve`` that spends one step of ``budget`` and never changes the class."""
    import attrs

    fields = [(f.name, f.alias) for f in attrs.fields(cls) if f.init]

    def evolve(self: Any, **changes: Any) -> Any:
        budget.step()
        changes.setdefault("schema", self.schema)
        for name, alias in fields:
            if alias not in changes:
                changes[alias] = getattr(self, name)
        return cls(**changes)

    cls.evolve = evolve
    return cls


def expanded_size(schema: Any, resolver: Any, bound: int = MAX_EXPANDED) -> int:
    """How many schemas ``schema`` is with every reference inlined, counting to just past
    ``bound`` at most (a larger result means "more than ``bound``").

    ``resolver`` is a :mod:`referencing` resolver rooted at ``schema`` (every reference is
    known to resolve inside it). Each schema is expanded once: a target met again adds its
    memoised size, a target still being expanded (a cycle) adds one. The walk keeps its own
    stack, so a deep schema is not a deep Python recursion.
    """
    from referencing.jsonschema import DRAFT202012

    memo: dict[int, int] = {}
    # A frame: [key, children still to add, running total]; a child is (resource, resolver).
    root = DRAFT202012.create_resource(schema)
    stack: list[list[Any]] = [[id(root.contents), _children(root, resolver), 1]]
    active = {id(root.contents)}
    while stack:
        frame = stack[-1]
        children = frame[1]
        if frame[2] > bound:
            return int(frame[2]) + sum(int(f[2]) for f in stack[:-1])
        if not children:
            stack.pop()
            active.discard(frame[0])
            memo[frame[0]] = frame[2]
            if not stack:
                return int(frame[2])
            stack[-1][2] += frame[2]
            continue
        resource, inner = children.pop()
        key = id(resource.contents)
        if key in memo:
            frame[2] += memo[key]
        elif key in active:
            frame[2] += 1
        else:
            active.add(key)
            stack.append([key, _children(resource, inner), 1])
    return 0  # not reached: the root's frame returns


def _children(resource: Any, resolver: Any) -> list[tuple[Any, Any]]:
    """The subschemas of ``resource`` and the targets of its references, each with the
    resolver to read it with."""
    out = [(sub, resolver.in_subresource(sub)) for sub in resource.subresources()]
    node = resource.contents
    if isinstance(node, dict):
        from referencing.jsonschema import DRAFT202012

        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if isinstance(ref, str):
                resolved = resolver.lookup(ref)
                target = DRAFT202012.create_resource(resolved.contents)
                out.append((target, resolved.resolver))
    return out


class PatternWork:
    """The pattern work left to the file being checked (see the module's docstring)."""

    __slots__ = ("left", "limit", "spent")

    def __init__(self, size: int = 2**20) -> None:
        self.begin(size)

    def begin(self, size: int) -> None:
        """A new file of ``size`` characters."""
        self.limit = PATTERN_WORK_BASE + PATTERN_WORK_PER_CHAR * max(size, 0)
        self.left = self.limit
        #: A search was refused in this file: the rules that use patterns skip the rest.
        self.spent = False

    def spend(self, chars: int, program: int) -> None:
        """Count one search of ``chars`` characters with a pattern of ``program`` RE2
        instructions, before it runs; :class:`BudgetExceeded` when it would pass the budget."""
        cost = (chars + SEARCH_CHARGE) * program
        if cost > self.left:
            self.spent = True
            self.left = 0
            raise BudgetExceeded(
                f"the declarative rules' patterns would scan more than this file's budget "
                f"of {self.limit:,} (characters scanned x RE2 instructions, "
                f"{PATTERN_WORK_PER_CHAR} per character of the file): the rule was not "
                "finished on this object, and rules with patterns skip the rest of the file"
            )
        self.left -= cost


_local = threading.local()


def pattern_work() -> PatternWork:
    """This thread's :class:`PatternWork` (a file is checked in one thread)."""
    work: PatternWork | None = getattr(_local, "work", None)
    if work is None:
        work = _local.work = PatternWork()
    return work


def begin_file(size: int) -> None:
    """The engine starts a file of ``size`` characters: its pattern budget starts."""
    pattern_work().begin(size)


def has_patterns(schema: Any) -> bool:
    """Whether a schema holds ``pattern`` or ``patternProperties`` anywhere."""
    todo = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str) or node.get("patternProperties"):
                return True
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return False


#: The largest compiled pattern (RE2 program instructions) a rule may use. RE2's time is
#: linear in the value but also grows with the program once its DFA cache overflows: on a
#: 10,000-character value, ~15 ms at 1,000 instructions, 0.4 s at 2,000, 0.9 s at 5,000
#: (a rule runs on every value of every file). A usual pattern compiles to under 100; a list
#: of 200 image names in one alternation to ~1,500 (the limit is per pattern: split it into
#: several patterns under ``anyOf``).
MAX_PROGRAM = 1000


@functools.lru_cache(maxsize=1024)
def compiled_pattern(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (``re2.error`` when RE2 cannot run it).

    ``never_capture``: a rule only asks whether a pattern matches, and with capture groups
    RE2 keeps every group's position for every state, memory that grows with the square of
    the pattern: ``(((a*)*)*)*`` repeated 2,000 times took 1.1 GB and 2 s per value.
    """
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False  # RE2 logs to stderr by default; the error is raised anyway
    options.never_capture = True
    compiled = re2.compile(pattern, options)
    if compiled.programsize > MAX_PROGRAM:
        raise re2.error(
            f"it compiles to {compiled.programsize} RE2 instructions, more than the "
            f"{MAX_PROGRAM} a rule may use".encode()
        )
    return compiled


def pattern_search(pattern: str, text: Any) -> bool:
    """Whether ``pattern`` matches in ``text``, counted first against the file's pattern
    budget (:class:`PatternWork`)."""
    if not isinstance(text, str):
        return False
    compiled = compiled_pattern(pattern)
    pattern_work().spend(len(text), compiled.programsize)
    return compiled.search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not pattern_search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if pattern_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    """jsonschema's ``additionalProperties``, matching ``patternProperties`` with RE2."""
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in instance
        if key not in properties and not any(pattern_search(p, key) for p in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        shown = ", ".join(repr(each) for each in sorted(extras, key=str))
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{shown} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({shown} {verb} unexpected)"
            )


#: JSON Schema's pattern keywords with RE2 in place of ``re``, for ``jsonschema``'s
#: ``validators.extend``.
RE2_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}
