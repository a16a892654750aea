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

The count is taken in the validator's ``evolve``, which jsonschema calls for every
subschema it enters (``descend``, ``is_valid`` and the ``unevaluated*`` keywords' own walk).
The ``evolve`` installed here also keeps the validator's class: jsonschema's picks the class
from a subschema's ``$schema``, so ``$schema: draft-07`` inside a rule would have swapped in
the stock validator, with Python's backtracking ``re`` in place of RE2.
"""

from __future__ import annotations

from typing import Any

#: The most schemas a rule's schema may expand to through its references. The example
#: rules expand to 3 and 4; a flat schema of 50,000 properties is 50,001 and takes 0.3 s to
#: measure. A chain of two references per level passes it at 16 levels (196,606).
MAX_EXPANDED = 100_000

#: The most subschemas one validation of one object may enter. The example rules enter 3
#: on every object of the test corpus; a pod of 200 containers against a rule of 20
#: subschemas per container enters some 4,000. 10,000 steps take ~0.3 s and ~20 MB.
MAX_STEPS = 10_000


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
