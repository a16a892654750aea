"""The types a DRA selector's CEL is checked with, and the parse tree's shapes.

A type is a string (a CEL type name) or a tuple: ``("list", elem)``, ``("map", key,
value)``, ``("attrs", domain)`` / ``("caps", domain)`` (one domain's attributes or
capacities, with the domain when the key was a literal, else ``""``), ``("attrmap",)``,
``("capmap",)``. The declarations are those of the environment Kubernetes compiles
selectors in (:mod:`gpulint.k8s.cel`).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

#: ``resource.CELSelectorExpressionMaxLength`` (bytes).
MAX_LENGTH = 10 * 1024


class CelProblem(NamedTuple):
    """What is wrong with one expression: at ``offset`` (0-based, in characters of the
    expression), ``length`` characters long."""

    offset: int
    length: int
    message: str
    #: "error" (the API server rejects the object) or "warning" (accepted, never matches).
    severity: str


# ---------------------------------------------------------------------------------------
# Types. A type is a string (a CEL type name) or a tuple: ("list", elem), ("map", key,
# value), ("attrs", domain) / ("caps", domain) (one domain's attributes or capacities,
# with the domain when the key was a literal, else ""), ("attrmap",), ("capmap",).

DYN = "dyn"
_ERR = "!"  # already reported: judged as dyn from there on, so one mistake is one finding
_NUMERIC = ("int", "uint", "double")
_ORDERED = (*_NUMERIC, "string", "bytes", "bool", "timestamp", "duration")

_DEVICE_FIELDS: dict[str, Any] = {
    "driver": "string",
    "attributes": ("attrmap",),
    "capacity": ("capmap",),
    "allowMultipleAllocations": "bool",
}

#: Global functions: name -> result type (None: the result depends on the argument).
_GLOBALS: dict[str, Any] = {
    "size": "int",
    "int": "int",
    "uint": "uint",
    "double": "double",
    "string": "string",
    "bytes": "bytes",
    "bool": "bool",
    "dyn": DYN,
    "type": "type",
    "duration": "duration",
    "timestamp": "timestamp",
    "matches": "bool",
    "quantity": "quantity",
    "isQuantity": "bool",
    "semver": "semver",
    "isSemver": "bool",
    "url": "url",
    "isURL": "bool",
    "ip": "ip",
    "isIP": "bool",
    "cidr": "cidr",
    "isCIDR": "bool",
    "format": DYN,
}

#: Namespaced functions (``ns.fn(...)``) of the libraries the base environment loads.
_NAMESPACED = {
    "sets.contains": "bool",
    "sets.equivalent": "bool",
    "sets.intersects": "bool",
    "strings.quote": "string",
    "optional.of": DYN,
    "optional.ofNonZeroValue": DYN,
    "optional.none": DYN,
    "math.greatest": DYN,
    "math.least": DYN,
    "jsonpatch.escapeKey": "string",
}

#: Methods by receiver type: name -> result type.
_STRING_METHODS = {
    "contains": "bool",
    "startsWith": "bool",
    "endsWith": "bool",
    "matches": "bool",
    "size": "int",
    "charAt": "string",
    "indexOf": "int",
    "lastIndexOf": "int",
    "lowerAscii": "string",
    "upperAscii": "string",
    "replace": "string",
    "split": ("list", "string"),
    "substring": "string",
    "trim": "string",
    "format": "string",
    "reverse": "string",
    "find": "string",
    "findAll": ("list", "string"),
}
_QUANTITY_METHODS = {
    "isGreaterThan": "bool",
    "isLessThan": "bool",
    "compareTo": "int",
    "add": "quantity",
    "sub": "quantity",
    "isInteger": "bool",
    "asInteger": "int",
    "asApproximateFloat": "double",
    "sign": "int",
}
_SEMVER_METHODS = {
    "isGreaterThan": "bool",
    "isLessThan": "bool",
    "compareTo": "int",
    "major": "int",
    "minor": "int",
    "patch": "int",
}
_LIST_METHODS = {
    "size": "int",
    "isSorted": "bool",
    "sum": DYN,
    "min": DYN,
    "max": DYN,
    "indexOf": "int",
    "lastIndexOf": "int",
    "slice": DYN,
    "join": "string",
    "distinct": DYN,
    "flatten": DYN,
    "reverse": DYN,
    "sort": DYN,
    "first": DYN,
    "last": DYN,
}
_MAP_METHODS = {"size": "int"}
#: Macros: receiver.macro(var, [var2,] expr).
_MACROS = {
    "all": "bool",
    "exists": "bool",
    "exists_one": "bool",
    "existsOne": "bool",
    "map": DYN,
    "filter": DYN,
    "transformList": DYN,
    "transformMap": DYN,
    "transformMapEntry": DYN,
    "sortBy": DYN,
}
#: Methods of the other types a library declares (URL, IP, CIDR, duration, timestamp,
#: optional, bytes): a call of one on dyn is known.
_OTHER_METHODS = {
    "getScheme",
    "getHost",
    "getHostname",
    "getPort",
    "getEscapedPath",
    "getQuery",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "containsIP",
    "containsCIDR",
    "masked",
    "prefixLength",
    "getHours",
    "getMinutes",
    "getSeconds",
    "getMilliseconds",
    "getFullYear",
    "getMonth",
    "getDayOfYear",
    "getDayOfMonth",
    "getDate",
    "getDayOfWeek",
    "hasValue",
    "value",
    "orValue",
    "or",
    "optMap",
    "optFlatMap",
    "fieldSelector",
    "labelSelector",
}
_ALL_METHODS = frozenset(
    (*_STRING_METHODS, *_QUANTITY_METHODS, *_SEMVER_METHODS, *_LIST_METHODS, *_MACROS)
) | frozenset(_OTHER_METHODS)


def _no_overload(function: str, *types: Any) -> str:
    """cel-go's words for a call no overload of which takes these argument types."""
    shown = ", ".join(_name(t) for t in types)
    return f"found no matching overload for '{function}' applied to '({shown})'"


def _name(t: Any) -> str:
    """A type as cel-go prints it."""
    if isinstance(t, tuple):
        kind = t[0]
        if kind == "list":
            return f"list({_name(t[1])})"
        if kind == "map":
            return f"map({_name(t[1])}, {_name(t[2])})"
        if kind == "attrs":
            return "map(string, dyn)"
        if kind == "caps":
            return "map(string, Quantity)"
        if kind == "attrmap":
            return "map(string, map(string, dyn))"
        return "map(string, map(string, Quantity))"
    names: dict[str, str] = {
        "quantity": "Quantity",
        "semver": "Semver",
        "device": "kubernetes.DRADevice",
        "null": "null_type",
        "url": "URL",
        "ip": "net.IP",
        "cidr": "net.CIDR",
        "timestamp": "google.protobuf.Timestamp",
        "duration": "google.protobuf.Duration",
    }
    return names.get(t, str(t))


def _loose(t: Any) -> bool:
    """A type nothing can be said about (dyn, or an already reported mistake)."""
    return t in (DYN, _ERR)


class Located(NamedTuple):
    """A node whose mistake is reported at ``where`` (an operator), not over the node."""

    node: Any
    where: tuple[int, int]


class Ref(NamedTuple):
    """An attribute or capacity name read from a literal domain."""

    what: str  # "attribute" or "capacity"
    domain: str
    name: str
    offset: int
    length: int


def _is_list(t: Any) -> bool:
    return isinstance(t, tuple) and t[0] == "list"


def _is_map(t: Any) -> bool:
    return isinstance(t, tuple) and t[0] in ("map", "attrs", "caps", "attrmap", "capmap")


def _args(node: Any) -> list[Any]:
    """The argument expressions of a call node (its exprlist's children)."""
    for child in node.children:
        if hasattr(child, "data") and child.data in ("exprlist", "mapinits"):
            return [c for c in child.children if hasattr(c, "data")]
    return []


def _unwrap(node: Any) -> Any:
    """The node a chain of one-child wrappers (expr, conditionalor, …, member, primary)
    stands for."""
    while (
        hasattr(node, "data")
        and node.data
        in (
            "expr",
            "conditionalor",
            "conditionaland",
            "relation",
            "addition",
            "multiplication",
            "unary",
            "member",
            "primary",
        )
        and len(node.children) == 1
        and hasattr(node.children[0], "data")
    ):
        node = node.children[0]
    return node


def _ident_name(node: Any) -> str | None:
    node = _unwrap(node)
    if hasattr(node, "data") and node.data == "ident":
        return str(node.children[0])
    return None


def _is_selection(node: Any) -> bool:
    node = _unwrap(node)
    return hasattr(node, "data") and node.data == "member_dot"


def _string_literal(node: Any) -> str | None:
    node = _unwrap(node)
    if not (hasattr(node, "data") and node.data == "literal"):
        return None
    token = node.children[0]
    if token.type != "STRING_LIT":
        return None
    text = str(token)
    raw = text[:1] in "rR"
    body = text[2:-1] if raw else text[1:-1]
    if not raw and "\\" in body:
        return None  # an escape: not judged
    return body


_QUANTITY = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[numkMGTPE])?$")
_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)


def _valid_literal(function: str, text: str) -> bool:
    """Whether a literal argument of ``quantity()`` or ``semver()`` parses. The Kubernetes
    libraries check a literal when the expression is compiled (a literal that does not
    parse is a compile error, ``library.Quantity``, ``library.SemverLib``)."""
    if function == "quantity":
        return bool(_QUANTITY.match(text))
    return bool(_SEMVER.match(text))


def _offset(lines: list[int], line: int | None, column: int | None) -> int:
    if not line or not column:
        return 0
    line = min(max(line, 1), len(lines))
    return lines[line - 1] + column - 1


class Base:
    """Positions and reports, shared by the checker's parts."""

    def __init__(self, text: str, lines: list[int]) -> None:
        self.text = text
        self.lines = lines
        self.problems: list[CelProblem] = []
        self.refs: list[Ref] = []

    # -- positions --------------------------------------------------------------------

    def _span(self, node: Any) -> tuple[int, int]:
        if isinstance(node, Located):
            return node.where
        meta = getattr(node, "meta", None)
        if meta is not None and not getattr(meta, "empty", True):
            start = _offset(self.lines, meta.line, meta.column)
            end = _offset(self.lines, meta.end_line, meta.end_column)
            return start, max(end - start, 1)
        line, column = getattr(node, "line", None), getattr(node, "column", None)
        if line:
            return _offset(self.lines, line, column), max(len(str(node)), 1)
        return 0, len(self.text)

    def at_operator(self, left: Any, symbol: str) -> tuple[int, int]:
        """Where the operator after ``left`` is written (cel-go reports an operator's
        overload error there)."""
        start, length = self._span(left)
        found = self.text.find(symbol, start + length)
        return (found, len(symbol)) if found >= 0 else (start, length)

    def error(self, node: Any, message: str, where: tuple[int, int] | None = None) -> str:
        offset, length = where if where is not None else self._span(node)
        self.problems.append(
            CelProblem(
                offset,
                length,
                f"the API server rejects this selector: compilation failed: {message}",
                "error",
            )
        )
        return _ERR
