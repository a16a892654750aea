"""The walk over a DRA selector's parse tree, and its operators (:mod:`gpulint.k8s.cel`).

Each node is typed after its children, with one explicit stack: an expression nested
thousands of levels deep is checked in a loop, never by recursion.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.k8s.cel.members import Members
from gpulint.k8s.cel.types import (
    _ERR,
    _MACROS,
    _NAMESPACED,
    _NUMERIC,
    _ORDERED,
    DYN,
    CelProblem,
    Located,
    _args,
    _ident_name,
    _is_list,
    _is_map,
    _loose,
    _name,
    _no_overload,
)


class Checker(Members):
    """Types one parse tree bottom-up."""

    # -- the walk ---------------------------------------------------------------------

    def run(self, tree: Any) -> Any:
        """The type of ``tree``. Each node's children are typed before it (post-order, one
        explicit stack); the scope a macro or ``cel.bind`` opens is pushed with the node."""
        types: dict[int, Any] = {}
        stack: list[tuple[Any, dict[str, Any], bool]] = [(tree, {}, False)]
        while stack:
            node, scope, done = stack.pop()
            if not hasattr(node, "data"):  # a token
                continue
            if done:
                types[id(node)] = self._type(node, scope, types)
                continue
            stack.append((node, scope, True))
            for child, child_scope in reversed(list(self._children(node, scope, types))):
                stack.append((child, child_scope, False))
        return types.get(id(tree), DYN)

    def _children(
        self, node: Any, scope: dict[str, Any], types: dict[int, Any]
    ) -> Iterator[tuple[Any, dict[str, Any]]]:
        """Children with their scopes: a macro's or ``cel.bind``'s variables are in scope
        in its last argument (the init of ``cel.bind`` is typed first, and looked up when
        the variable is: ``("bound", node)``)."""
        if node.data == "member_dot_arg":
            target, method = node.children[0], str(node.children[1])
            args = _args(node)
            receiver = _ident_name(target)
            if (
                receiver is not None
                and receiver not in scope
                and f"{receiver}.{method}" in _NAMESPACED
            ):
                for arg in args:  # a library's namespace, not a variable
                    yield arg, scope
                return
            binding = receiver == "cel" and method == "bind" and "cel" not in scope
            if (method in _MACROS or binding) and len(args) >= 2:
                names = [_ident_name(a) for a in args[:-1]]
                inner = dict(scope)
                if binding and len(args) == 3 and names[0]:
                    inner[names[0]] = ("bound", args[1])
                    yield args[1], scope
                    yield args[2], inner
                    return
                yield target, scope
                for name in names:
                    if name:
                        inner[name] = DYN
                yield args[-1], inner
                return
        for child in node.children:
            yield child, scope

    def _type(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        kind = node.data
        ch = node.children
        handler = HANDLERS.get(kind)
        if handler is not None:
            return handler(self, node, scope, types)
        # Pass-through nodes (expr with one child, conditionalor with one, primary, member...)
        trees = [c for c in ch if hasattr(c, "data")]
        if len(trees) == 1:
            return types.get(id(trees[0]), DYN)
        return DYN

    # -- node kinds -------------------------------------------------------------------

    def t_expr(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        ch = node.children
        if len(ch) == 1:
            return types.get(id(ch[0]), DYN)
        cond, left, right = (types.get(id(c), DYN) for c in ch)
        if not _loose(cond) and cond != "bool":
            self.error(
                ch[0], f"found no matching overload for '_?_:_' applied to '({_name(cond)}, ...)'"
            )
        if left == right:
            return left
        return DYN

    def t_logic(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        ch = node.children
        if len(ch) == 1:
            return types.get(id(ch[0]), DYN)
        op = "_||_" if node.data == "conditionalor" else "_&&_"
        left, right = types.get(id(ch[0]), DYN), types.get(id(ch[1]), DYN)
        for t in (left, right):
            if not _loose(t) and t != "bool":
                return self.error(
                    node,
                    _no_overload(op, left, right),
                    self.at_operator(ch[0], op[1:-1]),
                )
        return "bool"

    def t_binary(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        """relation / addition / multiplication: [op_node(left), right] or [single]."""
        ch = node.children
        if len(ch) == 1:
            return types.get(id(ch[0]), DYN)
        op_node, right_node = ch
        op = op_node.data.split("_", 1)[1]
        left = types.get(id(op_node.children[0]), DYN)
        right = types.get(id(right_node), DYN)
        return self._operator(node, op, left, right, op_node.children[0])

    def _operator(self, node: Any, op: str, left: Any, right: Any, left_node: Any) -> Any:
        symbol = {
            "lt": "<",
            "le": "<=",
            "gt": ">",
            "ge": ">=",
            "eq": "==",
            "ne": "!=",
            "in": "@in",
            "add": "+",
            "sub": "-",
            "mul": "*",
            "div": "/",
            "mod": "%",
        }[op]
        comparison = op in ("lt", "le", "gt", "ge", "eq", "ne", "in")
        result: Any = "bool" if comparison else None
        if _loose(left) or _loose(right):
            typed = {left, right} & {"quantity", "semver"}
            if typed and op in ("lt", "le", "gt", "ge") and _ERR not in (left, right):
                kind = "Quantity" if "quantity" in typed else "Semver"
                offset, length = self.at_operator(left_node, symbol)
                self.problems.append(
                    CelProblem(
                        offset,
                        length,
                        f"a {kind} has no '{symbol}' operator, so this comparison fails when "
                        "the scheduler evaluates the selector and no device is allocated; "
                        "compare with compareTo, isGreaterThan or isLessThan",
                        "warning",
                    )
                )
            return result if result else DYN
        name = f"_{symbol}_" if symbol != "@in" else "@in"
        where = self.at_operator(left_node, "in" if symbol == "@in" else symbol)
        node = Located(node, where)
        mismatch = _no_overload(name, left, right)
        if op in ("eq", "ne"):
            if (
                left != right
                and not (left in _NUMERIC and right in _NUMERIC)
                and "null" not in (left, right)
                and not (_is_map(left) and _is_map(right))
                and not (_is_list(left) and _is_list(right))
            ):
                return self.error(node, mismatch)
            return "bool"
        if op in ("lt", "le", "gt", "ge"):
            ok = (left == right and left in _ORDERED) or (left in _NUMERIC and right in _NUMERIC)
            if not ok:
                hint = ""
                if "quantity" in (left, right) or "semver" in (left, right):
                    hint = (
                        "; compare Quantity and Semver with compareTo, isGreaterThan or "
                        "isLessThan (device.capacity['gpu.nvidia.com'].memory"
                        ".compareTo(quantity('40Gi')) >= 0)"
                    )
                return self.error(node, mismatch + hint)
            return "bool"
        if op == "in":
            if not (_is_list(right) or _is_map(right)):
                return self.error(node, mismatch)
            return "bool"
        if op == "add":
            if left == right and left in (*_NUMERIC, "string", "bytes", "duration"):
                return left
            if _is_list(left) and _is_list(right):
                return left if left == right else ("list", DYN)
            if {left, right} == {"timestamp", "duration"}:
                return "timestamp"
            return self.error(node, mismatch)
        if op in ("sub", "mul", "div"):
            if left == right and left in _NUMERIC:
                return left
            if op == "sub" and left == right and left in ("timestamp", "duration"):
                return "duration"
            if op == "sub" and (left, right) == ("timestamp", "duration"):
                return "timestamp"
            return self.error(node, mismatch)
        if left == right and left in ("int", "uint"):
            return left
        return self.error(node, mismatch)

    def t_unary(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        ch = node.children
        if len(ch) == 1:
            return types.get(id(ch[0]), DYN)
        op, operand = ch
        t = types.get(id(operand), DYN)
        if _loose(t):
            return DYN
        if op.data == "unary_not":
            if t != "bool":
                return self.error(
                    node, f"found no matching overload for '!_' applied to '({_name(t)})'"
                )
            return "bool"
        if t not in ("int", "double", "duration"):
            return self.error(
                node, f"found no matching overload for '-_' applied to '({_name(t)})'"
            )
        return t

    def t_literal(self, node: Any, scope: dict[str, Any], types: dict[int, Any]) -> Any:
        token = node.children[0]
        return {
            "INT_LIT": "int",
            "UINT_LIT": "uint",
            "FLOAT_LIT": "double",
            "STRING_LIT": "string",
            "MLSTRING_LIT": "string",
            "BYTES_LIT": "bytes",
            "BOOL_LIT": "bool",
            "NULL_LIT": "null",
        }.get(token.type, DYN)


HANDLERS: dict[str, Any] = {
    "expr": Checker.t_expr,
    "conditionalor": Checker.t_logic,
    "conditionaland": Checker.t_logic,
    "relation": Checker.t_binary,
    "addition": Checker.t_binary,
    "multiplication": Checker.t_binary,
    "unary": Checker.t_unary,
    "literal": Checker.t_literal,
    "ident": Checker.t_ident,
    "dot_ident": Checker.t_dot_ident,
    "member_dot": Checker.t_member_dot,
    "member_index": Checker.t_member_index,
    "member_dot_arg": Checker.t_member_dot_arg,
    "ident_arg": Checker.t_ident_arg,
    "list_lit": Checker.t_list_lit,
    "map_lit": Checker.t_map_lit,
    "paren_expr": Checker.t_paren,
}
