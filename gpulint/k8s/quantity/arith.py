"""Exact arithmetic and comparison on parsed quantities (:mod:`gpulint.k8s.quantity.parse`).

Parsed quantities are compact Decimals whose exponent may be anything Go accepts
(|exponent| < 2^31), so everything here works on the digit strings and exponents and never
expands a value or leans on a decimal context's precision: whether a value is whole, the API
server's round-up to milli precision, a sum, a multiple of a step.
"""

from __future__ import annotations

import decimal
from decimal import Decimal

__all__ = [
    "SUM_DIGITS",
    "add",
    "digits_exponent",
    "is_integer",
    "is_multiple",
    "make_decimal",
    "milli_round_up",
    "round_away_to_exponent",
]


def _round_up_digits(digits: str) -> str:
    """Add one to a non-negative decimal digit string (no int() size limit)."""
    stripped = digits.rstrip("9")
    nines = len(digits) - len(stripped)
    if not stripped:
        return "1" + "0" * nines
    return stripped[:-1] + str(int(stripped[-1]) + 1) + "0" * nines


def round_away_to_exponent(coefficient: str, exponent: int, target: int) -> tuple[str, int]:
    """Round ``coefficient * 10**exponent`` away from zero to ``10**target``.

    ``coefficient`` has no sign and no leading zeros (``"0"`` for zero). Works
    on the digit string, so a big exponent gap costs nothing.
    """
    if exponent >= target or coefficient == "0":
        return coefficient, exponent
    drop = target - exponent
    if drop >= len(coefficient):
        # Whole value is below one unit of 10**target and non-zero.
        return "1", target
    keep, dropped = coefficient[:-drop], coefficient[-drop:]
    if dropped.strip("0"):
        keep = _round_up_digits(keep)
    return keep, target


def make_decimal(negative: bool, coefficient: str, exponent: int) -> Decimal:
    coefficient = coefficient.lstrip("0")
    if not coefficient:
        return Decimal(0)  # Go has no negative zero, and "0E+18" would only confuse
    sign = "-" if negative else ""
    return Decimal(f"{sign}{coefficient}E{exponent}")


def is_integer(value: Decimal) -> bool:
    """Whether ``value`` is a whole number (exact, context-free, cheap).

    Non-finite values are not integers. Works for compact huge values such as
    ``Decimal('1E+999999999')`` without expanding them.
    """
    if not value.is_finite():
        return False
    _sign, digits, exp = value.as_tuple()
    if not isinstance(exp, int) or exp >= 0:
        return True
    return not any(digits[exp:])


def milli_round_up(value: Decimal | int) -> Decimal:
    """Round ``value`` away from zero to a multiple of 0.001, as API defaulting does.

    Source: pkg/apis/core/v1/defaults.go (kubernetes/kubernetes)::

        func SetDefaults_ResourceList(obj *v1.ResourceList) {
            for key, val := range *obj {
                // TODO(#18538): We round up resource values to milli scale to maintain
                // API compatibility. In the future, we should instead reject values
                // that need rounding.
                const milliScale = -3
                val.RoundUp(milliScale)

    ``Quantity.RoundUp`` (quantity.go) calls ``int64Amount.AsScale``, which uses
    ``negativeScaleInt64`` ("The value returned, if not exact, is rounded away
    from zero"; amount.go), or ``infDecAmount.AsScale``, which uses
    ``tmp.Round(a.Dec, scale.infScale(), inf.RoundUp)`` (inf: "RoundUp rounds
    away from 0"). So 1.0001 -> 1.001 and -1.0001 -> -1.001. Values already at
    milli precision or coarser are returned unchanged. The defaulter runs on
    every v1 ResourceList (including pod templates) before validation. The
    integer check (validation.go ``ValidateResourceQuantityValue``:
    ``value.MilliValue()%int64(1000) != int64(0)`` -> "must be an integer")
    therefore sees the rounded value.
    """
    if isinstance(value, int):
        return Decimal(value)
    if not value.is_finite():
        raise ValueError(f"cannot round a non-finite quantity: {value!r}")
    sign, digits, exp = value.as_tuple()
    if not isinstance(exp, int) or exp >= -3:
        return value
    coefficient = "".join(map(str, digits)).lstrip("0") or "0"
    coefficient, new_exp = round_away_to_exponent(coefficient, exp, -3)
    return make_decimal(bool(sign), coefficient, new_exp)


# -- arithmetic that stays exact and small at any size ----------------------------------------
#
# Parsed quantities are compact Decimals whose exponent may be anything Go accepts
# (|exponent| < 2^31): ``Decimal('1E+999999999')``. Python's default decimal context (28
# digits, exponents up to 999,999) would round them, raise Overflow or InvalidOperation, and
# ``format(value, "f")`` would write a billion digits. Nothing below uses a context's
# precision on them.

#: A sum is exact while it needs at most this many significant digits. Two terms further
#: apart than that (1e999990 + 1) keep this many, rounded away from zero: a sum that large
#: is compared only with numbers below 2^63 (GPU040's node size), which it exceeds either
#: way, and shown with at most ``gpulint.k8s.quantity.display.SHOWN_DIGITS`` digits.
SUM_DIGITS = 10_000


def digits_exponent(value: Decimal) -> tuple[int, str, int]:
    """(sign, coefficient digits without trailing zeros, exponent) of a finite value."""
    sign, digits, exp = value.as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits)).lstrip("0")
    stripped = text.rstrip("0")
    return sign, stripped or "0", exp + len(text) - len(stripped)


def add(a: Decimal, b: Decimal) -> Decimal:
    """``a + b``, exact while the sum needs at most SUM_DIGITS digits (see there)."""
    if a.is_zero():
        return b
    if b.is_zero():
        return a
    exp_a, exp_b = a.as_tuple().exponent, b.as_tuple().exponent
    assert isinstance(exp_a, int) and isinstance(exp_b, int)
    needed = max(a.adjusted(), b.adjusted()) - min(exp_a, exp_b) + 2
    ctx = decimal.Context(
        prec=min(max(needed, 1), SUM_DIGITS),
        rounding=decimal.ROUND_UP,
        Emax=decimal.MAX_EMAX,
        Emin=decimal.MIN_EMIN,
        traps=[decimal.InvalidOperation, decimal.Overflow],
    )
    return ctx.add(a, b)


def is_multiple(value: Decimal, step: int) -> bool:
    """Is ``value`` a whole multiple of the positive integer ``step``? Exact at any size:
    ``coefficient * 10**exponent mod step`` from the digits, never the expanded number."""
    if not value.is_finite():
        return False
    _sign, coefficient, exp = digits_exponent(value)
    if coefficient == "0":
        return True
    if exp < 0:
        return False  # a fraction is no multiple of a whole step
    remainder = 0
    for start in range(0, len(coefficient), 1000):  # int() reads at most 4,300 digits
        chunk = coefficient[start : start + 1000]
        remainder = (remainder * pow(10, len(chunk), step) + int(chunk)) % step
    return remainder * pow(10, exp, step) % step == 0
