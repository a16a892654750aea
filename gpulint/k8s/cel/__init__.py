"""DRA CEL selectors compiled before they reach a cluster: syntax, types and attribute names.

A DeviceClass or a claim's request selects devices with CEL expressions
(``selectors[].cel.expression``). The API server compiles each one when the object is created
and rejects the object when it does not compile (``compilation failed: …``) or when its type
is neither ``bool`` nor the unknown type (``must evaluate to bool or the unknown type``):
kubernetes ``staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go``
(``CompileCELExpression``, ``newCompiler``) and ``pkg/apis/resource/validation/validation.go``
(``validateCELExpression``: at most 10 Ki).

The expression is parsed with cel-python's CEL grammar (the ``celpy`` package, a maintained
pure-Python implementation of the CEL specification: it runs wherever gpulint runs; the CEL
runtimes that wrap cel-cpp ship wheels for one platform only), imported only when a file has
a selector. Its parse tree is then type-checked here against the environment Kubernetes
declares for selectors, without recursion (an expression nested thousands of levels deep
is checked in a loop):

- ``device``: ``driver`` (string), ``attributes`` (map of domain to a map of name to a value
  whose type the driver chooses: dyn), ``capacity`` (map of domain to a map of name to
  Quantity), ``allowMultipleAllocations`` (bool); no other variable;
- CEL's standard functions and macros, ``cel.bind``, and the Kubernetes libraries of the base
  environment (Quantity, semver, lists, strings, regex, URLs, IP, CIDR, sets, format).

Only what is certain is reported: a value the driver types at run time (an attribute) is
``dyn`` and never judged, and an operator applied to it never is either. A name that is not
declared, a field ``device`` does not have, an operator no overload of which takes the
operands' types (``<`` on Quantities, ``&&`` on an int), a method the receiver's type does not
have, and a result that is not ``bool`` are errors, as the API server says them.

Attribute and capacity names: a selector that reads ``device.attributes[DOMAIN].NAME`` (or
``device.capacity[...]``, ``[DOMAIN][NAME]``, or through ``cel.bind``) for a domain a known
driver publishes (``gpulint/data/dra-attributes.json``) and a name it does not publish is a
warning with did-you-mean: the lookup fails when the scheduler evaluates it, and no device
is ever allocated. A domain that is a near miss of a known one (``nvidia.com`` for
``gpu.nvidia.com``) is a warning too. Anything else (a domain gpulint does not know, a key
that is not a literal) is not guessed at.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, NamedTuple

from gpulint.data import data_path
from gpulint.k8s.cel.types import MAX_LENGTH, CelProblem, Ref, _loose, _name, _offset
from gpulint.loader.inscalar import line_starts
from gpulint.util.nearmiss import one_typo_from

__all__ = ["MAX_LENGTH", "CelProblem", "check_selector_expression", "domains"]


class Domain(NamedTuple):
    attributes: frozenset[str]
    capacity: frozenset[str]
    capacity_patterns: tuple[re.Pattern[str], ...]
    source: str
    #: A domain no one driver owns (Kubernetes' standard ``resource.kubernetes.io``): any
    #: driver may publish more names in it than the table lists.
    shared: bool = False


@cache
def domains() -> Mapping[str, Domain]:
    """The attribute and capacity names each known domain publishes."""
    with open(data_path("gpulint.data", "dra-attributes.json"), encoding="utf-8") as f:
        data = json.load(f)
    out: dict[str, Domain] = {}
    for row in data["domains"]:
        out[row["domain"]] = Domain(
            frozenset(row["attributes"]),
            frozenset(row["capacity"]),
            tuple(re.compile(p) for p in row.get("capacity_patterns", ())),
            row["source"],
            row.get("driver") is None,
        )
    return out


# ---------------------------------------------------------------------------------------


@cache
def _parser() -> Any:
    from celpy.celparser import CELParser

    CELParser()
    return CELParser.CEL_PARSER


def check_selector_expression(expression: str) -> list[CelProblem]:
    """What the API server refuses in ``expression`` (errors), and attribute or capacity
    names its known domains do not publish (warnings)."""
    size = len(expression.encode("utf-8", "surrogatepass"))
    if size > MAX_LENGTH:
        return [
            CelProblem(
                0,
                len(expression),
                f"the API server rejects this selector: the expression is {size} bytes, "
                f"more than its limit of {MAX_LENGTH} ({MAX_LENGTH // 1024} Ki); split it "
                "into several selectors (all must match)",
                "error",
            )
        ]
    if not expression.strip():
        return [CelProblem(0, len(expression), "the API server rejects an empty selector", "error")]
    lines = line_starts(expression)
    try:
        tree = _parser().parse(expression)
    except Exception as exc:  # lark's UnexpectedInput family, or a lexer error
        return [_syntax_problem(exc, expression, lines)]
    from gpulint.k8s.cel.checker import Checker

    checker = Checker(expression, lines)
    result = checker.run(tree)
    problems = checker.problems
    if not problems and not _loose(result) and result != "bool":
        problems.append(
            CelProblem(
                0,
                len(expression),
                "the API server rejects this selector: it must evaluate to bool or the "
                f"unknown type, not {_name(result)}",
                "error",
            )
        )
    problems.extend(_judge_refs(checker.refs))
    return problems


def _syntax_problem(exc: Exception, expression: str, lines: list[int]) -> CelProblem:
    offset = _offset(lines, getattr(exc, "line", None), getattr(exc, "column", None))
    offset = min(max(offset, 0), len(expression))
    token = getattr(exc, "token", None)
    if token is not None and getattr(token, "type", "") == "$END":
        what = "the expression ends too early"
    elif token is not None:
        what = f"unexpected {str(token)!r}"
    else:
        char = expression[offset : offset + 1]
        what = f"unexpected character {char!r}" if char else "the expression ends too early"
    line = expression.count("\n", 0, offset) + 1
    column = offset - lines[line - 1] + 1
    return CelProblem(
        offset,
        1,
        f"the API server rejects this selector: compilation failed: syntax error at "
        f"{line}:{column} of the expression: {what}",
        "error",
    )


def _judge_refs(refs: list[Ref]) -> Iterator[CelProblem]:
    known = domains()
    for ref in refs:
        if ref.what == "domain":
            if ref.domain in known or ("." not in ref.domain and "/" not in ref.domain):
                continue
            close = _near_domain(ref.domain, known)
            if close:
                yield CelProblem(
                    ref.offset,
                    ref.length,
                    f"no DRA driver gpulint knows publishes {ref.name} in domain "
                    f"'{ref.domain}', and it is one slip from '{close}' "
                    f"(device.{ref.name}['{close}']); a domain no device publishes reads as an "
                    "empty map, so the selector never matches",
                    "warning",
                )
            continue
        domain = known.get(ref.domain)
        if domain is None:
            continue
        names = domain.attributes if ref.what == "attribute" else domain.capacity
        if ref.name in names:
            continue
        if ref.what == "capacity" and any(p.fullmatch(ref.name) for p in domain.capacity_patterns):
            continue
        other = domain.capacity if ref.what == "attribute" else domain.attributes
        if domain.shared:
            # Any driver may publish its own names in the standard domain (a memory
            # driver's pageSize): only a near miss of a listed name is worth a word.
            matches = difflib.get_close_matches(ref.name, sorted(names), n=1, cutoff=0.8)
            if matches and ref.name not in other:
                yield CelProblem(
                    ref.offset,
                    ref.length,
                    f"'{ref.name}' is not a standard {ref.what} of '{ref.domain}' that "
                    f"gpulint knows; did you mean {matches[0]}? (a driver may publish names of "
                    "its own there; a name no device publishes makes the selector fail)",
                    "info",
                )
            continue
        if ref.name in other:
            place = "capacity" if ref.what == "attribute" else "attributes"
            hint = f"; it is read as device.{place}['{ref.domain}'].{ref.name}"
        else:
            matches = difflib.get_close_matches(ref.name, sorted(names), n=1, cutoff=0.6)
            hint = f"; did you mean {matches[0]}?" if matches else ""
        yield CelProblem(
            ref.offset,
            ref.length,
            f"'{ref.domain}' devices publish no {ref.what} '{ref.name}'{hint} (reading a "
            f"missing {ref.what} fails when the scheduler evaluates the selector: no device "
            "is allocated)",
            "warning",
        )


def _near_domain(domain: str, known: Mapping[str, Domain]) -> str | None:
    """A known domain ``domain`` is a near miss of (``nvidia.com`` for ``gpu.nvidia.com``)."""
    return one_typo_from(domain, known)
