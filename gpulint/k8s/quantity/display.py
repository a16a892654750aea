"""Quantities written short for people, at any size (``2``, ``0.5``, ``1e999990``), and a
resource's amount as a user writes it in a manifest (``12Gi`` of memory, ``500m`` of cpu)."""

from __future__ import annotations

from decimal import Decimal

from gpulint.k8s.quantity.arith import digits_exponent

__all__ = ["PLAIN_WIDTH", "SHOWN_DIGITS", "format_quantity", "format_resource"]

#: Plain notation up to this many characters (every int64 fits); scientific beyond.
PLAIN_WIDTH = 21
#: Significant digits shown in scientific notation before the rest is elided with "...".
SHOWN_DIGITS = 20


def format_quantity(value: Decimal) -> str:
    """A value as a person reads it, short at any size: ``2``, ``0.5``,
    ``9223372036854775807``, ``1e999990``, ``1.5e-30``, ``1.2345678901234567890...e40``.

    Plain notation while it takes at most PLAIN_WIDTH characters, else scientific with the
    significant digits (at most SHOWN_DIGITS, the rest elided with "..."). Never uses a
    decimal context, so no size rounds, overflows or expands.
    """
    if not value.is_finite():
        return str(value)
    sign, coefficient, exp = digits_exponent(value)
    if coefficient == "0":
        return "0"
    minus = "-" if sign else ""
    if exp >= 0:
        width = len(coefficient) + exp
        if width <= PLAIN_WIDTH:
            return minus + coefficient + "0" * exp
    else:
        point = len(coefficient) + exp  # digits before the decimal point
        width = max(point, 1) + 1 + max(-point, 0) + min(len(coefficient), -exp)
        if width <= PLAIN_WIDTH:
            if point > 0:
                return f"{minus}{coefficient[:point]}.{coefficient[point:]}"
            return f"{minus}0.{'0' * -point}{coefficient}"
    exponent = exp + len(coefficient) - 1
    head, tail = coefficient[0], coefficient[1:]
    if len(tail) > SHOWN_DIGITS - 1:
        tail = tail[: SHOWN_DIGITS - 1] + "..."
    return f"{minus}{head}{'.' + tail if tail else ''}e{exponent}"


#: Resources counted in bytes: their amounts are written with a suffix (``12Gi``, ``500M``).
_BYTES = ("memory", "ephemeral-storage", "storage")
#: The suffixes of resource.Quantity, largest first (binary, then decimal SI).
_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def format_resource(value: Decimal, name: str) -> str:
    """An amount of resource ``name`` as a user writes it in a manifest: bytes with the
    suffix that divides them exactly (``12Gi``, ``1536Mi``, ``16G``; the shortest, binary
    first on a tie), cpu in millicores below a whole core's multiple (``500m``, ``1500m``),
    anything else as format_quantity writes it (``8``, ``0.5``). An amount no suffix divides
    is written as format_quantity writes it.
    """
    if not value.is_finite() or value <= 0:
        return format_quantity(value)
    if name == "cpu":
        if value != value.to_integral_value():
            milli = value * 1000
            if milli == milli.to_integral_value() and milli.adjusted() < PLAIN_WIDTH:
                return f"{int(milli)}m"
        return format_quantity(value)
    if (name in _BYTES or name.startswith("hugepages-")) and (
        value == value.to_integral_value() and value.adjusted() < PLAIN_WIDTH
    ):
        count = int(value)
        best = format_quantity(value)
        for suffix, size in (*_BINARY, *_DECIMAL):
            if count % size == 0:
                written = f"{count // size}{suffix}"
                if len(written) < len(best):
                    best = written
        return best
    return format_quantity(value)
