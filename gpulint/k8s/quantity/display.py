"""Quantities written short for people, at any size (``2``, ``0.5``, ``1e999990``)."""

from __future__ import annotations

from decimal import Decimal

from gpulint.k8s.quantity.arith import digits_exponent

__all__ = ["PLAIN_WIDTH", "SHOWN_DIGITS", "format_quantity"]

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
