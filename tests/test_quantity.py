"""Tests for gpulint.k8s.quantity.parse: a port of Go resource.ParseQuantity.

Expected values come from reading the Go source (quantity.go parseQuantityString /
ParseQuantity, suffix.go interpret, inf.Dec.scan); each quirk row names its Go line in
gpulint/k8s/quantity/parse.py. The hypothesis tests check the parser against an independent
model (a regular expression for the scanner plus Fraction arithmetic), and against the
Python client's kubernetes.utils.quantity.parse_quantity on the inputs where both agree.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from gpulint.k8s.quantity.arith import is_integer, milli_round_up
from gpulint.k8s.quantity.parse import (
    QuantityError,
    go_trim_space,
    parse_quantity,
    parse_quantity_json,
)

MAX_INT32 = 2**31 - 1
MAX_INT64 = 2**63 - 1
DEC_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BIN_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- tables

VALID: list[tuple[str, Decimal]] = [
    # the grammar's four number forms, with and without a sign
    ("1", Decimal(1)),
    ("1.5", Decimal("1.5")),
    ("1.", Decimal(1)),
    (".5", Decimal("0.5")),
    ("+1", Decimal(1)),
    ("-1", Decimal(-1)),
    ("+1.5", Decimal("1.5")),
    ("-.5", Decimal("-0.5")),
    ("0", Decimal(0)),
    ("-0", Decimal(0)),
    ("00", Decimal(0)),
    ("007", Decimal(7)),
    ("0.0", Decimal(0)),
    ("2.0", Decimal(2)),
    # decimal SI
    ("1n", Decimal("1e-9")),
    ("1u", Decimal("1e-6")),
    ("500m", Decimal("0.5")),
    ("1k", Decimal(1000)),
    ("1M", Decimal(10**6)),
    ("1G", Decimal(10**9)),
    ("1T", Decimal(10**12)),
    ("1P", Decimal(10**15)),
    ("1E", Decimal(10**18)),  # E alone is exa, not an exponent
    ("1.01E", Decimal(101 * 10**16)),
    ("8.1k", Decimal(8100)),
    # binary SI
    ("1Ki", Decimal(1024)),
    ("1Mi", Decimal(2**20)),
    ("1Gi", Decimal(2**30)),
    ("1Ti", Decimal(2**40)),
    ("1Pi", Decimal(2**50)),
    ("1Ei", Decimal(2**60)),
    ("1.5Gi", Decimal(3 * 2**29)),
    (".5Ki", Decimal(512)),
    ("1.Ki", Decimal(1024)),
    ("100.035Ki", Decimal("102435.84")),
    ("7Ei", Decimal(7 * 2**60)),
    # decimal exponent
    ("1e3", Decimal(1000)),
    ("1E3", Decimal(1000)),
    ("1e+3", Decimal(1000)),
    ("1e-3", Decimal("0.001")),
    ("1E-3", Decimal("0.001")),
    ("1e0", Decimal(1)),
    ("1e-0", Decimal(1)),
    ("1e007", Decimal(10**7)),
    ("1.5e2", Decimal(150)),
    ("1.e3", Decimal(1000)),
    ("-1.1e-3", Decimal("-0.0011")),
    ("1e" + "0" * 6000 + "3", Decimal(1000)),  # ParseInt ignores leading zeros
    # big decimal values are not capped (only BinarySI is)
    ("9223372036854775807", Decimal(MAX_INT64)),
    ("18446744073709551616", Decimal(2**64)),
    ("123456789012345678901234567890", Decimal("123456789012345678901234567890")),
    ("1e999999999", Decimal("1e999999999")),
    ("1e2147483647", Decimal("1e2147483647")),
]

# Go quirks: each is what ParseQuantity returns, not what the grammar suggests.
QUIRKS: list[tuple[str, Decimal]] = [
    # scanner: the Zeroes loop reaches the end -> num = "0"; value = num
    ("+", Decimal(0)),
    ("-", Decimal(0)),
    # scanner: `if len(num) == 0 { num = "0" }`, empty denominator allowed
    (".", Decimal(0)),
    ("+.", Decimal(0)),
    ("-.", Decimal(0)),
    # a bare suffix takes the fast path with num "0" (apimachinery#165)
    ("E", Decimal(0)),
    ("k", Decimal(0)),
    ("m", Decimal(0)),
    ("n", Decimal(0)),
    ("Ki", Decimal(0)),
    ("Mi", Decimal(0)),
    ("Gi", Decimal(0)),
    ("Ti", Decimal(0)),
    ("e3", Decimal(0)),
    ("E3", Decimal(0)),
    ("e-9", Decimal(0)),
    ("-e-9", Decimal(0)),
    (".k", Decimal(0)),
    ("0Pi", Decimal(0)),  # slow path, but "0" has a digit
    ("0e-100", Decimal(0)),
    # "TODO: we currently allow 1.G"
    ("1.G", Decimal(10**9)),
    (".5G", Decimal(5 * 10**8)),
    # slow path: amount.Round(amount, Nano.infScale(), inf.RoundUp) -- away from zero
    ("0.9n", Decimal("1e-9")),
    ("1.5n", Decimal("2e-9")),
    ("-1.5n", Decimal("-2e-9")),
    ("1e-10", Decimal("1e-9")),
    ("-1e-10", Decimal("-1e-9")),
    ("1.0000000001", Decimal("1.000000001")),
    ("0.000000000001Ki", Decimal("2e-9")),
    ("1e-999999999", Decimal("1e-9")),  # Go would build 10**999999990 first
    ("1e-2147483647", Decimal("1e-9")),
    # slow path: `if format == BinarySI && amount.Cmp(maxAllowed.Dec) > 0` -- cap at 2^63-1
    ("8Ei", Decimal(MAX_INT64)),
    ("-8Ei", Decimal(-MAX_INT64)),
    ("9223372036854775807Ki", Decimal(MAX_INT64)),
    ("9" * 5000 + "Ei", Decimal(MAX_INT64)),
]

INVALID: list[tuple[str, str]] = [
    # ErrFormatWrong from the scanner or the empty-string check
    ("", "format"),
    (" 1", "format"),
    ("1 ", "format"),
    (" ", "format"),
    ("1\n", "format"),
    ("\t1", "format"),
    ("1_0", "format"),
    ("1_000", "format"),
    ("1,5", "format"),
    ("Infinity", "format"),
    ("+Inf", "format"),
    ("inf", "format"),
    ("NaN", "format"),
    ("nan", "format"),
    ("1.1.M", "format"),
    ("1..5", "format"),
    ("..", "format"),
    ("1.2.3", "format"),
    ("1e3e3", "format"),
    ("1e3.5", "format"),
    ("1e1.5", "format"),
    ("1e.5", "format"),
    ("1e3k", "format"),
    ("1E3Ki", "format"),
    ("1+1.0M", "format"),
    ("0.1am", "format"),
    ("aoeu", "format"),
    ("0x10", "format"),
    ("1/2", "format"),
    ("\uff11", "format"),  # fullwidth 1
    ("\u0663", "format"),  # Arabic-Indic 3
    ("\u22121", "format"),  # minus sign
    ("1\x00", "format"),
    ("1\u00b5", "format"),  # micro sign is not "u"
    ("1 Ki", "format"),
    ("++1", "suffix"),  # scanner: number "+", suffix "+1"
    (".-.", "format"),
    # ErrNumeric (no digit reaches inf.Dec.SetString on the slow path): 'format'
    ("Pi", "format"),
    ("Ei", "format"),
    (".Pi", "format"),
    ("+Ei", "format"),
    ("e-10", "format"),
    (".e-10", "format"),
    ("-e-10", "format"),
    ("E-12", "format"),
    # ErrSuffix from interpret
    ("1K", "suffix"),
    ("1ki", "suffix"),
    ("1KI", "format"),  # "I" is not a scanner suffix character
    ("1KiB", "format"),
    ("1kb", "format"),
    ("1mi", "suffix"),
    ("0.1mi", "suffix"),
    ("1i", "suffix"),
    (".5i", "suffix"),
    ("-3.01i", "suffix"),
    ("1e", "suffix"),
    ("1E+", "suffix"),
    ("1e+", "suffix"),
    ("1e-", "suffix"),
    ("-3.01e-", "suffix"),
    ("1e+-3", "format"),
    ("1EE", "suffix"),
    ("1ee3", "suffix"),
    ("1Ki3", "suffix"),
    ("1m3", "suffix"),
    ("1-", "suffix"),
    ("1+5", "suffix"),
    ("1-1", "suffix"),
    ("--", "suffix"),
    ("--1", "suffix"),
    ("+-1", "suffix"),
    ("1Z", "format"),
    ("1MM", "suffix"),
    # exponent outside int64 (ParseInt error) and outside int32 (PR #141203)
    ("1e9223372036854775808", "suffix"),
    ("1e-9223372036854775809", "suffix"),
    ("1e99999999999999999999", "suffix"),
    ("0e99999999999999999999", "suffix"),
    ("1e9223372036854775807", "suffix"),  # released Go: int32 wrap -> 0.1
    ("1e4294967297", "suffix"),  # released Go: int32 wrap -> 1e1
    ("1e2147483648", "suffix"),
    ("1e-2147483648", "suffix"),
    # int32 scale arithmetic in ParseQuantity would wrap (Go: wrong value or hang)
    ("1.5e-2147483647", "suffix"),
    ("1.55e-2147483646", "suffix"),
]


@pytest.mark.parametrize(("text", "expected"), VALID + QUIRKS)
def test_valid(text: str, expected: Decimal) -> None:
    got = parse_quantity(text)
    assert got == expected
    assert got.is_finite()
    assert not (got == 0 and got.is_signed()), "no negative zero"


@pytest.mark.parametrize(("text", "reason"), INVALID)
def test_invalid(text: str, reason: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.reason == reason
    assert info.value.text == text
    assert isinstance(info.value, ValueError)


def test_error_texts_are_gos() -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity("1 ")
    assert info.value.go_error == (
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    assert str(info.value).startswith(info.value.go_error)
    with pytest.raises(QuantityError) as info:
        parse_quantity("1K")
    assert info.value.go_error == "unable to parse quantity's suffix"
    with pytest.raises(QuantityError) as info:
        parse_quantity("Ei")
    assert info.value.go_error == "unable to parse numeric part of quantity"


def test_non_str_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_quantity(1)  # type: ignore[arg-type]


def test_sign_and_plus_variants_of_the_go_table() -> None:
    # quantity_test.go re-runs its table with "-" and "+" prepended.
    for text, expected in VALID:
        if text[:1] in "+-" or not text:
            continue
        assert parse_quantity("+" + text) == expected
        assert parse_quantity("-" + text) == expected.copy_negate()


HOSTILE = [
    "1e999999999",
    "1e-999999999",
    "-1e2147483647",
    "1e-2147483647",
    "1" * 100_000 + "e999999999",
    "1" * 100_000 + "e-999999999",
    "0." + "0" * 100_000 + "1",
    "9" * 100_000 + "Ei",
    "9" * 100_000 + "." + "9" * 100_000 + "Ki",
    "1e" + "0" * 100_000 + "1",
    "1e" + "9" * 100_000,
    "1." * 50_000,
    "e" * 100_000,
    "-" + "0" * 100_000,
]


@pytest.mark.parametrize("text", HOSTILE, ids=lambda t: f"{t[:12]}..{len(t)}")
def test_hostile_input_is_a_value_or_a_quantity_error(text: str) -> None:
    """Parsed or refused, never another exception; that it stays linear in the digits is
    bench/scaling.py's ``hostile-quantities`` row (n and 4n), not a timer here."""
    try:
        value = parse_quantity(text)
    except QuantityError:
        return
    is_integer(value)
    milli_round_up(value)
    assert (value > 0) or (value <= 0)


def test_huge_values_stay_compact() -> None:
    value = parse_quantity("1e999999999")
    assert value.as_tuple().digits == (1,)
    assert value.as_tuple().exponent == 999999999
    assert is_integer(value)
    assert milli_round_up(value) == value


# --------------------------------------------------------------------------- JSON / trim


def test_go_trim_space_matches_unicode_isspace() -> None:
    assert go_trim_space(" \t\n\v\f\r2\x85\xa0\u3000") == "2"
    assert go_trim_space("\u2000\u200a\u2028\u2029\u202f\u205f\u16802") == "2"
    # Python's isspace() says yes, Go's unicode.IsSpace says no
    assert go_trim_space("\x1c2\x1f") == "\x1c2\x1f"
    assert go_trim_space("\u200b2") == "\u200b2"  # zero width space is not White_Space


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 ", Decimal(2)),
        (" 2", Decimal(2)),
        ("  2  ", Decimal(2)),
        ("2\xa0", Decimal(2)),
        ("\u30002", Decimal(2)),
        ("500m ", Decimal("0.5")),
    ],
)
def test_json_string_whitespace_is_trimmed(text: str, expected: Decimal) -> None:
    # Quantity.UnmarshalJSON: ParseQuantity(strings.TrimSpace(string(value)))
    assert parse_quantity_json(text) == expected
    with pytest.raises(QuantityError):  # ParseQuantity itself does not trim
        parse_quantity(text)


@pytest.mark.parametrize("text", ["2\t", "\n2", "2\r", "2\u2028", "\u20292", "2 1", " ", "1K "])
def test_json_escaped_whitespace_is_not_trimmed(text: str) -> None:
    # encoding/json escapes these, so UnmarshalJSON sees a backslash sequence.
    with pytest.raises(QuantityError):
        parse_quantity_json(text)


# --------------------------------------------------------------------------- integers, milli


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal(1), True),
        (Decimal("2.0"), True),
        (Decimal("2.000"), True),
        (Decimal("1E+3"), True),
        (Decimal("1e999999999"), True),
        (Decimal("-0.0"), True),
        (Decimal(0), True),
        (Decimal("0.5"), False),
        (Decimal("1.001"), False),
        (Decimal("1e-9"), False),
        (Decimal("-1.5"), False),
        (Decimal("NaN"), False),
        (Decimal("Infinity"), False),
    ],
)
def test_is_integer(value: Decimal, expected: bool) -> None:
    assert is_integer(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("1.0001"), Decimal("1.001")),  # docs/domain.md#quantities: 1.0001 is 1001m
        (Decimal("-1.0001"), Decimal("-1.001")),  # away from zero, like negativeScaleInt64
        (Decimal("9.01"), Decimal("9.01")),  # quantity_test.go TestQuantityRoundUp
        (Decimal("-9.01"), Decimal("-9.01")),
        (Decimal("0.0001"), Decimal("0.001")),
        (Decimal("1e-9"), Decimal("0.001")),
        (Decimal("0.999"), Decimal("0.999")),
        (Decimal("0.9991"), Decimal("1.000")),
        (Decimal("1.5"), Decimal("1.5")),
        (Decimal("1000"), Decimal(1000)),
        (Decimal("0.000"), Decimal(0)),
        (Decimal("1e-2147483647"), Decimal("0.001")),
        (Decimal("99.9999"), Decimal(100)),
        (3, Decimal(3)),
    ],
)
def test_milli_round_up(value: Decimal | int, expected: Decimal) -> None:
    assert milli_round_up(value) == expected


def test_milli_round_up_rejects_non_finite() -> None:
    with pytest.raises(ValueError):
        milli_round_up(Decimal("NaN"))


@pytest.mark.parametrize(
    ("text", "integer_after_defaulting"),
    [
        ("1", True),
        ("2.0", True),
        ("1e3", True),
        ("1Ki", True),
        ("0.5", False),
        ("500m", False),
        ("1.5", False),
        ("1.0001", False),
        ("1000m", True),
        ("1.0000000001", False),
    ],
)
def test_domain_integer_check(text: str, integer_after_defaulting: bool) -> None:
    assert is_integer(milli_round_up(parse_quantity(text))) is integer_after_defaulting


@given(st.decimals(allow_nan=False, allow_infinity=False, places=12))
@FAST
def test_milli_round_up_properties(value: Decimal) -> None:
    rounded = milli_round_up(value)
    exact = Fraction(value)
    got = Fraction(rounded)
    assert (got * 1000).denominator == 1
    assert abs(got) >= abs(exact)
    assert abs(got - exact) < Fraction(1, 1000)
    assert got == 0 or (got > 0) == (exact > 0)
    assert milli_round_up(rounded) == rounded
    if (exact * 1000).denominator == 1:
        assert got == exact


# --------------------------------------------------------------------------- model


def _nano_round_up(magnitude: Fraction) -> Fraction:
    """Go: amount.Round(amount, Nano.infScale(), inf.RoundUp) on a non-negative amount."""
    return Fraction(math.ceil(magnitude * 10**9), 10**9)


def _model_value(
    negative: bool, int_digits: str, frac_digits: str, base: int, power: int
) -> Fraction:
    """Independent value computation: exact Fraction, nano round-up, BinarySI cap."""
    magnitude = Fraction(int(int_digits + frac_digits or "0"), 10 ** len(frac_digits))
    magnitude *= Fraction(base) ** power
    magnitude = _nano_round_up(magnitude)
    if base == 2 and magnitude > MAX_INT64:
        magnitude = Fraction(MAX_INT64)
    return -magnitude if negative else magnitude


# The scanner, as one regular expression: sign? digits (. digits)? suffix-letters sign? digits
_SCANNER = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:(?P<dot>\.)(?P<frac>[0-9]*))?"
    r"(?P<suffix>[eEinumkKMGTP]*[+-]?[0-9]*)"
)
_EXPONENT = re.compile(r"[eE]([+-]?)([0-9]+)")


def _model(text: str) -> Fraction | str:
    """Second, independent model of ParseQuantity: a value, or 'format' / 'suffix'."""
    if not text:
        return "format"
    m = _SCANNER.fullmatch(text)
    if m is None:
        return "format"
    suffix = m["suffix"]
    int_digits, frac_digits = m["int"], m["frac"] or ""
    if suffix in DEC_SUFFIXES:
        base, power = 10, DEC_SUFFIXES[suffix]
    elif suffix in BIN_SUFFIXES:
        base, power = 2, BIN_SUFFIXES[suffix]
    else:
        e = _EXPONENT.fullmatch(suffix)
        if e is None:
            return "suffix"
        digits = e[2].lstrip("0") or "0"
        if len(digits) > 10:
            return "suffix"
        power = int(digits) * (-1 if e[1] == "-" else 1)
        if abs(power) > MAX_INT32:
            return "suffix"
        base = 10
    if base == 10 and power - len(frac_digits) < -MAX_INT32:
        return "suffix"
    if not int_digits and not frac_digits:
        # The number part has no digit: the fast path parses "0", the slow path
        # (inf.Dec.SetString) fails. Slow path = finer than nano, or Pi/Ei
        # (precision = 15 - 1 - exponent*3/10 - 1 < 0).
        if (base == 10 and power < -9) or (base == 2 and power >= 50):
            return "format"
        return Fraction(0)
    return _model_value(m["sign"] == "-", int_digits, frac_digits, base, power)


def _outcome(text: str) -> Fraction | str:
    try:
        return Fraction(parse_quantity(text))
    except QuantityError as exc:
        return exc.reason


QUANTITY_ALPHABET = "0123456789.+-eEinumkKMGTPi .0_1x"


@given(st.text(alphabet=QUANTITY_ALPHABET, max_size=12))
@FAST
@example("+")
@example(".")
@example("E")
@example("Pi")
@example("e-10")
@example("1e")
@example("0Pi")
@example("1E")
@example("-e-9")
def test_parser_matches_independent_model(text: str) -> None:
    assert _outcome(text) == _model(text)


@given(st.text(max_size=30))
@FAST
def test_arbitrary_text_only_raises_quantity_error(text: str) -> None:
    try:
        value = parse_quantity(text)
    except QuantityError as exc:
        assert exc.reason in {"format", "suffix"}
        return
    assert value.is_finite()
    assert set(text) <= set("0123456789.+-eEinumkKMGTP")


@given(st.text(alphabet=QUANTITY_ALPHABET, max_size=40))
@FAST
def test_alphabet_text_only_raises_quantity_error(text: str) -> None:
    try:
        parse_quantity(text)
    except QuantityError as exc:
        assert exc.reason in {"format", "suffix"}


@st.composite
def grammar_quantities(
    draw: st.DrawFn, max_digits: int = 25, exponents: tuple[int, int] = (-40, 40)
) -> tuple[str, Fraction, bool]:
    """A string of the documented grammar, its model value, and whether Go rounded it.

    <signedNumber><suffix> with at least one digit; suffix decimal SI, binary SI or
    e/E<signedNumber>.
    """
    sign = draw(st.sampled_from(["", "+", "-"]))
    int_digits = draw(st.text("0123456789", max_size=max_digits))
    form = draw(st.sampled_from(["int", "dot", "dot-frac"]))
    frac_digits = draw(st.text("0123456789", max_size=max_digits)) if form == "dot-frac" else ""
    if not int_digits and not frac_digits:
        int_digits = draw(st.text("0123456789", min_size=1, max_size=3))
    number = int_digits + ("." + frac_digits if form != "int" else "")
    kind = draw(st.sampled_from(["dec", "bin", "exp"]))
    if kind == "dec":
        suffix = draw(st.sampled_from(sorted(DEC_SUFFIXES)))
        base, power = 10, DEC_SUFFIXES[suffix]
    elif kind == "bin":
        suffix = draw(st.sampled_from(sorted(BIN_SUFFIXES)))
        base, power = 2, BIN_SUFFIXES[suffix]
    else:
        power = draw(st.integers(*exponents))
        exp_sign = "-" if power < 0 else draw(st.sampled_from(["", "+"]))
        zeros = "0" * draw(st.integers(0, 2))
        suffix = draw(st.sampled_from("eE")) + exp_sign + zeros + str(abs(power))
        base = 10
    text = sign + number + suffix
    exact = (
        Fraction(int(int_digits + frac_digits), 10 ** len(frac_digits)) * Fraction(base) ** power
    )
    value = _model_value(sign == "-", int_digits, frac_digits, base, power)
    adjusted = abs(value) != exact
    return text, value, adjusted


@given(grammar_quantities())
@FAST
def test_grammar_strings_always_parse_to_the_model_value(
    case: tuple[str, Fraction, bool],
) -> None:
    text, value, _ = case
    assert Fraction(parse_quantity(text)) == value


# --------------------------------------------------------------------------- oracle


def _client_parse(text: str) -> Decimal:
    kq = pytest.importorskip("kubernetes.utils.quantity")
    result: Decimal = kq.parse_quantity(text)
    return result


@given(grammar_quantities(max_digits=6, exponents=(-9, 12)))
@FAST
def test_oracle_python_client_agrees_on_strict_grammar(case: tuple[str, Fraction, bool]) -> None:
    text, _, adjusted = case
    # Where the grammars differ: Go rounds finer-than-nano values up and caps
    # BinarySI at 2^63-1; the client does neither.
    if adjusted:
        return
    assert parse_quantity(text) == _client_parse(text)


@pytest.mark.parametrize("text", ["1K", " 1 ", "1_0", "Infinity", "1 ", "NaN"])
def test_oracle_is_more_permissive_than_go(text: str) -> None:
    # The client (and Python's Decimal underneath it) accepts these; the API server does not.
    _client_parse(text)
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("text", ["+", ".", "E", "Ki", "e3"])
def test_oracle_rejects_go_bare_forms(text: str) -> None:
    # Go accepts these as 0; the client rejects them. Not part of the oracle domain.
    assert parse_quantity(text) == 0
    with pytest.raises(ValueError):
        _client_parse(text)
