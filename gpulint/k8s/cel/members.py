"""Names, fields, indexes and calls of a DRA selector's CEL, typed (:mod:`gpulint.k8s.cel`)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from gpulint.k8s.cel.types import (
    _ALL_METHODS,
    _DEVICE_FIELDS,
    _ERR,
    _GLOBALS,
    _LIST_METHODS,
    _MACROS,
    _MAP_METHODS,
    _NAMESPACED,
    _QUANTITY_METHODS,
    _SEMVER_METHODS,
    _STRING_METHODS,
    DYN,
    Base,
    CelProblem,
    Ref,
    _args,
    _ident_name,
    _is_list,
    _is_map,
    _is_selection,
    _loose,
    _name,
    _no_overload,
    _string_literal,
    _valid_literal,
)

#: Methods only strings have, each taking one string and giving a bool (cel-go's standard
#: library: contains, startsWith, endsWith, matches).
_STRING_ONLY = frozenset({"contains", "startsWith", "endsWith", "matches"})


def _methods_of(t: Any) -> Mapping[str, Any] | None:
    """The methods of a value of type ``t`` (None: a type without methods)."""
    if t == "string":
        return _STRING_METHODS
    if t == "quantity":
        return _QUANTITY_METHODS
    if t == "semver":
        return _SEMVER_METHODS
    if _is_list(t):
        return _LIST_METHODS
    if _is_map(t):
        return _MAP_METHODS
    return None


class Members(Base):
    """The node kinds that name things: identifiers, fields, indexes, calls, literals of
    lists and maps."""

    def t_ident(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        name = str(node.children[0])
        if name in scope:
            bound = scope[name]
            if isinstance(bound, tuple) and bound[0] == "bound":
                return types.get(id(bound[1]), DYN)
            return bound
        if name == "device":
            return "device"
        if name in (
            "int",
            "uint",
            "double",
            "string",
            "bytes",
            "bool",
            "list",
            "map",
            "null_type",
            "type",
        ):
            return "type"
        return self.error(node, f"undeclared reference to '{name}' (in container '')")

    def t_dot_ident(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        name = str(node.children[0])
        if name == "device":
            return "device"
        return self.error(node, f"undeclared reference to '.{name}' (in container '')")

    def t_member_dot(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        target, field = node.children[0], str(node.children[1])
        t = types.get(id(target), DYN)
        if t == _ERR and _ident_name(target) in ("sets", "strings", "optional", "math", "cel"):
            return DYN
        if _loose(t):
            return DYN
        if t == "device":
            found = _DEVICE_FIELDS.get(field)
            if found is None:
                close = difflib.get_close_matches(field, list(_DEVICE_FIELDS), n=1)
                hint = f"; did you mean {close[0]}?" if close else ""
                return self.error(
                    node.children[1],
                    f"undefined field '{field}' (device has driver, attributes, capacity "
                    f"and allowMultipleAllocations){hint}",
                )
            return found
        if isinstance(t, tuple):
            if t[0] in ("attrs", "caps"):
                offset, length = self._span(node.children[1])
                if t[1]:
                    self.refs.append(
                        Ref(
                            "attribute" if t[0] == "attrs" else "capacity",
                            t[1],
                            field,
                            offset,
                            length,
                        )
                    )
                return DYN if t[0] == "attrs" else "quantity"
            if t[0] == "attrmap":
                return ("attrs", "")
            if t[0] == "capmap":
                return ("caps", "")
            if t[0] == "map":
                return t[2]
            return self.error(node, f"type '{_name(t)}' does not support field selection")
        return self.error(node, f"type '{_name(t)}' does not support field selection")

    def t_member_index(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        target, index = node.children
        t = types.get(id(target), DYN)
        key_type = types.get(id(index), DYN)
        literal = _string_literal(index)
        if _loose(t):
            return DYN
        if isinstance(t, tuple):
            if t[0] in ("attrmap", "capmap"):
                if not _loose(key_type) and key_type != "string":
                    return self.error(
                        node,
                        _no_overload("_[_]", t, key_type),
                    )
                domain = literal if literal is not None else ""
                if domain:
                    offset, length = self._span(index)
                    self.refs.append(
                        Ref(
                            "domain",
                            domain,
                            "attributes" if t[0] == "attrmap" else "capacity",
                            offset,
                            length,
                        )
                    )
                return ("attrs" if t[0] == "attrmap" else "caps", domain)
            if t[0] in ("attrs", "caps"):
                if literal is not None and t[1]:
                    offset, length = self._span(index)
                    self.refs.append(
                        Ref(
                            "attribute" if t[0] == "attrs" else "capacity",
                            t[1],
                            literal,
                            offset,
                            length,
                        )
                    )
                return DYN if t[0] == "attrs" else "quantity"
            if t[0] == "list":
                if not _loose(key_type) and key_type not in ("int", "uint"):
                    return self.error(
                        node,
                        _no_overload("_[_]", t, key_type),
                    )
                return t[1]
            if t[0] == "map":
                return t[2]
        return self.error(
            node,
            _no_overload("_[_]", t, key_type),
        )

    def t_member_dot_arg(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        target, method = node.children[0], str(node.children[1])
        args = _args(node)
        receiver = _ident_name(target)
        if receiver == "cel" and method == "bind":
            if len(args) != 3 or not _ident_name(args[0]):
                return self.error(
                    node,
                    "cel.bind() takes a variable name, an init expression and a result expression",
                )
            return types.get(id(args[2]), DYN)
        if receiver is not None and receiver not in scope and receiver != "device":
            qualified = f"{receiver}.{method}"
            if qualified in _NAMESPACED:
                return _NAMESPACED[qualified]
        t = types.get(id(target), DYN)
        if method in _MACROS:
            if not _loose(t) and not (_is_list(t) or _is_map(t)):
                return self.error(
                    node, f"found no matching overload for '{method}' applied to '{_name(t)}'"
                )
            result = _MACROS[method]
            if method == "map" or method == "filter":
                return ("list", DYN)
            return result
        if method in _STRING_ONLY and (_loose(t) or t == "string"):
            # Only strings have them, and each takes one string: a literal of another type
            # matches no overload, whatever the receiver turns out to be.
            shown = [_name(types.get(id(a), DYN)) for a in args]
            kinds = [types.get(id(a), DYN) for a in args]
            if len(args) != 1 or not (_loose(kinds[0]) or kinds[0] == "string"):
                return self.error(
                    node,
                    f"found no matching overload for '{method}' applied to "
                    f"'{_name(t)}.({', '.join(shown)})'",
                )
            return "bool"
        if _loose(t):
            if method in _ALL_METHODS:
                return DYN
            return self.error(node, f"undeclared reference to '{method}' (in container '')")
        table = _methods_of(t)
        if table is None:
            if method in _ALL_METHODS:
                return DYN
            return self.error(node, f"undeclared reference to '{method}' (in container '')")
        if method not in table:
            if method in _ALL_METHODS:
                return self.error(
                    node, f"found no matching overload for '{method}' applied to '{_name(t)}'"
                )
            return self.error(node, f"undeclared reference to '{method}' (in container '')")
        result = table[method]
        if t in ("quantity", "semver") and method in (
            "isGreaterThan",
            "isLessThan",
            "compareTo",
            "add",
            "sub",
        ):
            for arg in args:
                at = types.get(id(arg), DYN)
                allowed = (t, "int") if method in ("add", "sub") else (t,)
                if not _loose(at) and at not in allowed:
                    return self.error(
                        node,
                        _no_overload(method, t, at),
                    )
        return result

    def t_ident_arg(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        name = str(node.children[0])
        args = _args(node)
        if name == "has":
            if len(args) != 1 or not _is_selection(args[0]):
                return self.error(node, "invalid argument to has() macro")
            return "bool"
        if name not in _GLOBALS:
            return self.error(node, f"undeclared reference to '{name}' (in container '')")
        if name in ("quantity", "semver", "isQuantity", "isSemver", "url", "ip", "cidr"):
            for arg in args[:1]:
                at = types.get(id(arg), DYN)
                if not _loose(at) and at != "string":
                    return self.error(
                        node, f"found no matching overload for '{name}' applied to '({_name(at)})'"
                    )
            if name in ("quantity", "semver") and len(args) == 1:
                literal = _string_literal(args[0])
                if literal is not None and not _valid_literal(name, literal):
                    what = (
                        "quantity" if name == "quantity" else "semantic version (MAJOR.MINOR.PATCH)"
                    )
                    offset, length = self._span(args[0])
                    self.problems.append(
                        CelProblem(
                            offset,
                            length,
                            f"'{literal}' is not a valid {what}: {name}() fails when the "
                            "scheduler evaluates the selector, and no device is allocated",
                            "warning",
                        )
                    )
        return _GLOBALS[name]

    def t_list_lit(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        items = _args(node)
        kinds = {types.get(id(i), DYN) for i in items}
        if len(kinds) == 1:
            return ("list", kinds.pop())
        return ("list", DYN)

    def t_map_lit(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        return ("map", DYN, DYN)

    def t_paren(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        return types.get(id(node.children[0]), DYN)
