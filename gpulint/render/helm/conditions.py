"""Whether a template's ``{{ if ... }}`` around a document held, from the values helm used.

A template of several documents often writes some only when a value says so (``{{- if
.Values.vllm.enabled }}``); knowing which held tells which documents the template wrote
(:mod:`gpulint.render.helm.documents`). The condition is evaluated only when it is made of
``.Values`` paths (``$.Values`` too; ``index .Values "a" "b"``; a variable the template
binds once to such a path, :mod:`gpulint.render.helm.bindings`), string, number and boolean
literals, ``and``, ``or``, ``not``, ``eq``, ``ne`` and ``empty``, with parentheses; the
values are the chart's merged values and ``--values`` files, as helm merges them. A
condition that holds anything else (a pipeline, ``include``, another variable, another
function), or reads a path a ``--set`` flag sets, is not known (None).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpulint.render import ChartOptions

_TOKEN = re.compile(r"""\s*(\(|\)|"(?:[^"\\]|\\.)*"|`[^`]*`|[^\s()]+)""")
_PATH = re.compile(r"^\$?\.Values((?:\.[A-Za-z0-9_-]+)+)$")
_NUMBER = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?$")
_FUNCS = frozenset(("and", "or", "not", "eq", "ne", "empty"))
_VAR = re.compile(r"^\$([A-Za-z0-9_]+)((?:\.[A-Za-z0-9_-]+)*)$")
_Bindings = dict[str, tuple[str, ...]]


class _Unknown(Exception):
    pass


def truth(
    condition: str,
    values: Any,
    is_set: Callable[[tuple[str, ...]], bool],
    bindings: _Bindings | None = None,
) -> bool | None:
    """Did ``{{ if condition }}`` hold, with ``values`` the template's ``.Values``
    (``is_set``: does a ``--set`` flag set this path; ``bindings``: the template's variables
    that name a values path)? None when that is not known."""
    tokens = [m.group(1) for m in _TOKEN.finditer(condition)]
    if not tokens or "|" in tokens:
        return None
    if bindings:
        tokens = [_bound(t, bindings) for t in tokens]
    try:
        value, rest = _expr(tokens, values, is_set)
    except (_Unknown, IndexError, RecursionError):
        return None
    return None if rest else truthy(value)


def _bound(token: str, bindings: _Bindings) -> str:
    """A variable naming a values path (``$module``, ``$module.enabled``) as that path."""
    m = _VAR.match(token)
    if m is None or m.group(1) not in bindings:
        return token
    return ".Values." + ".".join(bindings[m.group(1)]) + m.group(2)


def _expr(
    tokens: list[str], values: Any, is_set: Callable[[tuple[str, ...]], bool]
) -> tuple[Any, list[str]]:
    """A command: a function and its arguments, or one operand (to the closing parenthesis)."""
    if tokens[0] == "index" and len(tokens) > 2:
        m = _PATH.match(tokens[1])
        if m is None and tokens[1] not in (".Values", "$.Values"):
            raise _Unknown
        path = tuple(m.group(1)[1:].split(".")) if m else ()
        rest = tokens[2:]
        while rest and rest[0].startswith('"'):
            path, rest = (*path, rest[0][1:-1]), rest[1:]
        return _lookup(values, path, is_set), rest
    if tokens[0] in _FUNCS:
        name, args, rest = tokens[0], [], tokens[1:]
        while rest and rest[0] != ")":
            arg, rest = _operand(rest, values, is_set)
            args.append(arg)
        return _call(name, args), rest
    return _operand(tokens, values, is_set)


def _operand(
    tokens: list[str], values: Any, is_set: Callable[[tuple[str, ...]], bool]
) -> tuple[Any, list[str]]:
    token = tokens[0]
    if token == "(":
        value, rest = _expr(tokens[1:], values, is_set)
        if not rest or rest[0] != ")":
            raise _Unknown
        return value, rest[1:]
    if token.startswith(('"', "`")):
        return token[1:-1], tokens[1:]
    if token in ("true", "false"):
        return token == "true", tokens[1:]
    if _NUMBER.match(token):
        return float(token), tokens[1:]
    m = _PATH.match(token)
    if m is None:
        raise _Unknown
    return _lookup(values, tuple(m.group(1)[1:].split(".")), is_set), tokens[1:]


def _lookup(values: Any, path: tuple[str, ...], is_set: Callable[[tuple[str, ...]], bool]) -> Any:
    if any(is_set(path[: i + 1]) for i in range(len(path))):
        raise _Unknown
    node = values
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return node


def _call(name: str, args: list[Any]) -> Any:
    if name == "not" and len(args) == 1:
        return not truthy(args[0])
    if name == "empty" and len(args) == 1:
        return not truthy(args[0])
    if name == "and" and args:
        return next((a for a in args if not truthy(a)), args[-1])
    if name == "or" and args:
        return next((a for a in args if truthy(a)), args[-1])
    if name in ("eq", "ne") and len(args) >= 2:
        same = any(_same(args[0], other) for other in args[1:])
        return same if name == "eq" else not same
    raise _Unknown


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    raise _Unknown  # helm's eq of other kinds (nil, maps) is not modelled


def truthy(value: object) -> bool:
    """Go template truth: not false, 0, nil, or an empty string, list or map."""
    return value not in (None, False, 0, "") and value != [] and value != {}


def chart_truth(
    folder: str, options: ChartOptions
) -> Callable[[str, tuple[str, ...], _Bindings | None], bool | None]:
    """:func:`truth` for the templates of the chart ``folder`` rendered with ``options``:
    the condition and the prefix of the template's values in the chart's (a subchart's
    name). The values are merged the first time a condition is asked about."""
    from gpulint.render.helm.setflags import set_by
    from gpulint.render.helm.values import chart_values, merged, plain

    tree: list[Any] = []

    def held(
        condition: str, prefix: tuple[str, ...], bindings: _Bindings | None = None
    ) -> bool | None:
        if not tree:
            files = [*chart_values(folder), *((os.path.abspath(v), ()) for v in options.values)]
            tree.append(plain(merged(files)))
        node = tree[0]
        for part in prefix:
            node = node.get(part) if isinstance(node, dict) else None

        def is_set(path: tuple[str, ...]) -> bool:
            return set_by(options.set, (*prefix, *path), options.configured_set) is not None

        return truth(condition, node, is_set, bindings)

    return held
