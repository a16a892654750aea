"""Plain scalars resolved as Kubernetes' YAML decoder (go-yaml v2) resolves them, and the tags
the loader accepts without comment."""

from __future__ import annotations

import math
import re
from typing import Any

TAG_PREFIX = "tag:yaml.org,2002:"
#: The tag the loader gives plain scalars without an explicit tag, so that ``!!str 2`` (a
#: string) stays distinguishable from ``2`` (resolved to an int as go-yaml does).
PLAIN_TAG = "tag:gpulint,2024:plain"
#: Standard tags that only say what the plain resolver would say anyway.
STD_TAGS = {
    TAG_PREFIX + t
    for t in ("str", "int", "float", "bool", "null", "map", "seq", "merge", "timestamp", "value")
} | {PLAIN_TAG}

# go-yaml v2 resolve.go: the YAML 1.1 plain-scalar table Kubernetes uses.
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
_FALSE = frozenset({"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
_INF = frozenset({".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"})
_NEG_INF = frozenset({"-.inf", "-.Inf", "-.INF"})
_NAN = frozenset({".nan", ".NaN", ".NAN"})
_FLOAT_RE = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
# strconv.ParseInt(s, 0, 64) syntax: 0x/0o/0b prefixes (either case), a leading 0 for octal.
_INT_RE = re.compile(r"^[-+]?(0[xX][0-9a-fA-F]+|0[oObB][0-9]+|0[0-7]*|[1-9][0-9]*)$")
_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
# Characters that can start a number or special value; anything else is a string at once.
_NUMERIC_START = frozenset("0123456789+-.")


def _go_int(plain: str) -> int | None:
    """strconv.ParseInt(plain, 0, 64), then ParseUint; None where both fail (go-yaml then
    tries a float, so ``08`` is the float 8 and ``2**64`` a float too)."""
    match = _INT_RE.match(plain)
    if match is None:
        return None
    body = match.group(1)
    try:
        if body[:2].lower() in ("0x", "0o", "0b"):
            value = int(body, 0)
        else:
            value = int(body, 8) if len(body) > 1 and body[0] == "0" else int(body)
    except ValueError:  # 0o9, 0b2: the prefix is right but a digit is not
        return None
    if plain[0] == "-":
        value = -value
    if _INT64_MIN <= value <= _INT64_MAX:
        return value
    if plain[0] not in "+-" and value <= _UINT64_MAX:
        return value
    return None


def resolve_plain(text: str) -> Any:
    """Resolve a plain (unquoted) scalar as go-yaml v2 does for Kubernetes."""
    if text in _NULLS:
        return None
    first = text[0]
    if first not in _NUMERIC_START:
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        return text
    plain = text.replace("_", "")
    number = _go_int(plain)
    if number is not None:
        return number
    if _FLOAT_RE.match(plain):
        try:
            value = float(plain)
        except ValueError:  # pragma: no cover - the regex admits only valid floats
            return text
        # strconv.ParseFloat fails with ErrRange past the largest float64, and go-yaml
        # then keeps the text: ``2e70684`` (a short git commit) is a string to Kubernetes.
        return text if math.isinf(value) else value
    if text in _INF:
        return math.inf
    if text in _NEG_INF:
        return -math.inf
    if text in _NAN:
        return math.nan
    return text
