"""Kubernetes ``resource.Quantity`` parsing, mirroring the Go implementation.

Port of k8s.io/apimachinery ``pkg/api/resource``:

* ``quantity.go``: ``parseQuantityString`` (the scanner) and ``ParseQuantity``
  (fast int64 path, slow ``inf.Dec`` path, nano round-up, BinarySI cap);
* ``suffix.go``: ``(*suffixHandler).interpret`` / ``fastLookup.interpret``;
* ``gopkg.in/inf.v0`` ``(*Dec).scan``, which the slow path uses
  (``amount.SetString(value)``).

Go sources read (kubernetes/kubernetes
``staging/src/k8s.io/apimachinery/pkg/api/resource/{quantity,suffix,amount,math}.go``
and kubernetes/apimachinery ``pkg/api/resource/quantity.go``). Comments below
quote the Go line each branch comes from.

Grammar (quantity.go doc comment)::

    <quantity>     ::= <signedNumber><suffix>
    <number>       ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
    <suffix>       ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>     ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>    ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>

The scanner is more permissive than that grammar. Quirks mirrored here (each
one is also a test case):

* ``"+"``, ``"-"``, ``"."``, ``"+."`` parse as 0: the scanner substitutes
  ``num = "0"`` when no digit was read and the fast path parses that.
* A bare suffix parses as 0: ``"E"``, ``"k"``, ``"m"``, ``"Ki"``, ``"Ti"``,
  ``"e3"``, ``"e-9"`` (reported upstream as kubernetes/apimachinery#165,
  closed unfixed). But a bare suffix that forces the slow path is an
  error (ErrNumeric, because ``inf.Dec.SetString`` needs a digit): ``"Pi"``,
  ``"Ei"``, ``"e-10"``, ``".e-10"``.
* ``"1."`` is 1 and ``"1.G"`` is 1e9 (Go: "TODO: we currently allow 1.G").
* ``"1E"`` is 1 exa (10^18), not an exponent; ``"1e"`` and ``"1E+"`` are
  suffix errors. ``"1e+3"``, ``"1e-3"`` and ``"1e0003"`` are fine
  (``strconv.ParseInt`` takes a sign and leading zeros).
* ``K`` is not a suffix (``"1K"`` is a suffix error); suffix lookup is
  case-sensitive (``"1ki"`` is a suffix error). Letters outside
  ``eEinumkKMGTP`` stop the scanner, so ``"1KI"``, ``"1KiB"`` and ``"1Z"`` are
  format errors, not suffix errors.
* A value finer than 1n is rounded *away from zero* to nano:
  ``"0.9n"`` -> 1n, ``"1e-10"`` -> 1n, ``"1.0000000001"`` -> 1.000000001.
* A BinarySI value is capped at 2^63-1 in magnitude: ``"8Ei"`` ->
  9223372036854775807. Decimal values are not capped.
* No whitespace anywhere (``" 1"``, ``"1 "`` are format errors) and no
  underscores, ``Infinity`` or ``NaN``.

Decimal exponents (``e<int>``) -- how Go limits them:

* ``suffix.go``: ``strconv.ParseInt(string(s[1:]), 10, 64)``, so an exponent
  outside int64 is a suffix error.
* Released Go then narrows with ``int32(parsed)``: an exponent outside int32
  silently wraps (``1e4294967297`` parses as ``1e1``). kubernetes/kubernetes
  PR #141203 (merged) replaces the wrap with a rejection of exponents outside
  ``[-MaxInt32, MaxInt32]``. This module follows the fixed behaviour: those
  exponents are a ``'suffix'`` error, never a wrapped value.
* Inside that range, ``ParseQuantity`` still does int32 scale arithmetic
  (``scale -= int32(len(denom))`` and
  ``amount.Scale() + Scale(exponent).infScale()``), which wraps when
  ``exponent - len(fraction digits) < -MaxInt32``. Go then returns a huge
  wrong value or hangs (see the open PR #141306). Those inputs are rejected as
  ``'suffix'`` errors here.
* Go's slow path calls ``inf.Dec.Round``, which builds ``10**|scale|`` as a
  big.Int. For a large exponent (``1e-999999999`` or a number with 19 or more
  digits and ``e999999999``) the API server takes a very long time.
  The value it would reach is computed here directly, from the digit strings
  (1n in the first case). No large power of ten is ever built. The returned
  ``Decimal`` stays compact, e.g. ``Decimal('1E+999999999')``. Callers must
  not call ``int()`` on it or use context arithmetic without bounding the
  magnitude first.

JSON whitespace (``Quantity.UnmarshalJSON``): the API server **does** trim
whitespace. kubernetes/kubernetes
``staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`` (and the
same file in kubernetes/apimachinery ``pkg/api/resource/quantity.go``)::

    // UnmarshalJSON implements the json.Unmarshaller interface.
    // TODO: Remove support for leading/trailing whitespace
    func (q *Quantity) UnmarshalJSON(value []byte) error {
        ...
        if l >= 2 && value[0] == '"' && value[l-1] == '"' {
            value = value[1 : l-1]
        }
        parsed, err := ParseQuantity(strings.TrimSpace(string(value)))

``UnmarshalCBOR`` does the same (``ParseQuantity(strings.TrimSpace(*s))``).
So ``nvidia.com/gpu: "2 "`` sent by kubectl as JSON is accepted as 2, while
``ParseQuantity("2 ")`` itself (and hence :func:`parse_quantity`) rejects it.
The trim works on the *raw* JSON bytes: the quotes are sliced off without
JSON-unescaping. So whitespace that the client escapes (``\\t``, ``\\n``,
``\\r``, ``\\f``, ``\\v``, U+2028, U+2029 -- Go's encoding/json always escapes
these) is not trimmed and the value is rejected. See
:func:`parse_quantity_json`.
"""

from __future__ import annotations

import decimal
from decimal import Decimal

from gpulint.k8s.quantity.arith import make_decimal, round_away_to_exponent

__all__ = [
    "QuantityError",
    "go_trim_space",
    "parse_quantity",
    "parse_quantity_json",
]

# quantity.go: splitREString, quoted verbatim by ErrFormatWrong.
_SPLIT_RE_STRING = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
# The exact Go error texts, which the API server puts in its messages.
GO_ERR_FORMAT_WRONG = "quantities must match the regular expression '" + _SPLIT_RE_STRING + "'"
GO_ERR_NUMERIC = "unable to parse numeric part of quantity"
GO_ERR_SUFFIX = "unable to parse quantity's suffix"

_DIGITS = frozenset("0123456789")
# quantity.go parseQuantityString: strings.ContainsAny(str[i:i+1], "eEinumkKMGTP")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")

_MAX_INT32 = 2**31 - 1
_MAX_INT64 = 2**63 - 1
_MIN_INT64 = -(2**63)
# quantity.go / math.go: maxInt64Factors = 18
_MAX_INT64_FACTORS = 18
# amount.go: Nano Scale = -9
_NANO = -9
# math.go: maxAllowed = infDecAmount{inf.NewDec((1<<63)-1, 0)} // == max int64
_MAX_ALLOWED = Decimal(_MAX_INT64)

_DECIMAL_SI = "DecimalSI"
_BINARY_SI = "BinarySI"
_DECIMAL_EXPONENT = "DecimalExponent"

# suffix.go newSuffixer / fastLookup.interpret: the only suffixes in the tables.
_DECIMAL_SUFFIXES: dict[str, int] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: dict[str, int] = {
    "Ki": 10,
    "Mi": 20,
    "Gi": 30,
    "Ti": 40,
    "Pi": 50,
    "Ei": 60,
}

# Go unicode.IsSpace (used by strings.TrimSpace): Latin-1 '\t' '\n' '\v' '\f'
# '\r' ' ' U+0085 U+00A0, plus the Unicode White_Space property above Latin-1.
# (Python's str.isspace differs: it also treats U+001C..U+001F as space.)
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# The part of _GO_SPACE that Go's encoding/json writes raw inside a string
# (it escapes control characters < 0x20 and, unconditionally, U+2028/U+2029).
_GO_SPACE_RAW_IN_JSON = "".join(c for c in _GO_SPACE if c >= " " and c not in "\u2028\u2029")


class QuantityError(ValueError):
    """A string that ``resource.ParseQuantity`` rejects.

    ``reason`` is ``'format'`` (does not match the grammar: Go ErrFormatWrong,
    or ErrNumeric for a number part with no digit) or ``'suffix'`` (unknown
    suffix or unusable exponent: Go ErrSuffix). ``go_error`` is the exact Go
    error text; ``text`` is the rejected input.
    """

    reason: str
    go_error: str
    text: str

    def __init__(
        self, message: str, reason: str = "format", go_error: str = "", text: str = ""
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.go_error = go_error or message
        self.text = text


# str(error) is the Go error text, optionally followed by "; <detail>". It does not
# repeat the input (callers show it themselves); the input is in ``error.text``.
def _format_error(text: str, detail: str = "") -> QuantityError:
    msg = f"{GO_ERR_FORMAT_WRONG}; {detail}" if detail else GO_ERR_FORMAT_WRONG
    return QuantityError(msg, reason="format", go_error=GO_ERR_FORMAT_WRONG, text=text)


def _numeric_error(text: str) -> QuantityError:
    # Go ErrNumeric. The number part has no digit; reported as 'format'.
    msg = f"{GO_ERR_NUMERIC}; the number has no digits"
    return QuantityError(msg, reason="format", go_error=GO_ERR_NUMERIC, text=text)


def _suffix_error(text: str, detail: str = "") -> QuantityError:
    msg = f"{GO_ERR_SUFFIX}; {detail}" if detail else GO_ERR_SUFFIX
    return QuantityError(msg, reason="suffix", go_error=GO_ERR_SUFFIX, text=text)


# Over the function limits, and kept whole: a line-for-line port of Go's parser, read against
# its labels (Zeroes, Num, Suffix) in apimachinery's quantity.go.
def _scan(s: str) -> tuple[bool, str, str, str, str] | None:  # noqa: C901, PLR0912
    """Port of quantity.go ``parseQuantityString``.

    Returns ``(positive, value, num, denom, suffix)``, or None where Go returns
    ErrFormatWrong. ``value`` is the sign+number prefix handed to
    ``inf.Dec.SetString`` by the slow path. ``num`` has its leading zeros
    stripped and is ``"0"`` when there are no digits.
    """
    positive = True
    pos = 0
    end = len(s)

    # handle leading sign:  case '-': positive = false; pos++ / case '+': pos++
    if pos < end:
        if s[0] == "-":
            positive = False
            pos += 1
        elif s[0] == "+":
            pos += 1

    # strip leading zeros (label Zeroes). Reaching the end here returns
    # num = "0"; value = num. So "+", "-", "000" and "-0" are all 0.
    i = pos
    while True:
        if i >= end:
            return positive, "0", "0", "", ""
        if s[i] == "0":
            pos += 1
            i += 1
        else:
            break

    # extract the numerator (label Num)
    num = ""
    i = pos
    while True:
        if i >= end:
            # num = str[pos:end]; value = str[0:end]; return
            return positive, s[0:end], s[pos:end], "", ""
        if s[i] in _DIGITS:
            i += 1
            continue
        num = s[pos:i]
        pos = i
        break

    # "if we stripped all numerator positions, always return 0":
    # if len(num) == 0 { num = "0" }. That is why ".5", "." and "E" get a numerator.
    if not num:
        num = "0"

    # handle a denominator: if pos < end && str[pos] == '.'
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        i = pos
        while True:
            if i >= end:
                # denom = str[pos:end]; value = str[0:end]; return
                return positive, s[0:end], num, s[pos:end], ""
            if s[i] in _DIGITS:
                i += 1
                continue
            denom = s[pos:i]
            pos = i
            break
        # Go: "TODO: we currently allow 1.G, but we may not want to in the
        # future." -- an empty denominator is accepted.
    value = s[0:pos]

    # grab the elements of the suffix: any run of "eEinumkKMGTP" ...
    suffix_start = pos
    i = pos
    while True:
        if i >= end:
            return positive, value, num, denom, s[suffix_start:end]
        if s[i] not in _SUFFIX_CHARS:
            pos = i
            break
        i += 1
    # ... then one optional sign: case '-', '+': pos++
    if pos < end and s[pos] in "+-":
        pos += 1
    # ... then digits to the end (label Suffix)
    i = pos
    while i < end:
        if s[i] not in _DIGITS:
            # "we encountered a non decimal in the Suffix loop, but the last
            # character was not a valid exponent": err = ErrFormatWrong
            return None
        i += 1
    return positive, value, num, denom, s[suffix_start:end]


def _go_parse_int64(s: str) -> int | None:
    """``strconv.ParseInt(s, 10, 64)``: optional sign, ASCII digits, int64 range.

    Leading zeros are allowed and do not count towards the range. The
    digit-count check comes before ``int()``, so a long run of digits costs
    nothing and never hits Python's int-string limit.
    """
    neg = False
    if s[:1] in ("+", "-"):
        neg = s[0] == "-"
        s = s[1:]
    if not s or any(c not in _DIGITS for c in s):
        return None
    s = s.lstrip("0") or "0"
    if len(s) > 19:
        return None
    v = -int(s) if neg else int(s)
    if not _MIN_INT64 <= v <= _MAX_INT64:
        return None
    return v


def _interpret(text: str, suffix: str) -> tuple[int, int, str]:
    """Port of suffix.go ``interpret``: ``(base, exponent, format)`` or raise."""
    # Try lookup tables first (decSuffixes, then binSuffixes).
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], _DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], _BINARY_SI
    # if len(s) > 1 && (s[0] == 'E' || s[0] == 'e') {
    #     parsed, err := strconv.ParseInt(string(s[1:]), 10, 64)
    # "E" alone was already taken by the table (exa); "e" alone fails here.
    if len(suffix) > 1 and suffix[0] in "eE":
        parsed = _go_parse_int64(suffix[1:])
        if parsed is None:
            raise _suffix_error(text, "exponent is not an int64")
        # Released Go: return 10, int32(parsed), ... (silent wrap). Fixed Go
        # (PR #141203) rejects outside [-MaxInt32, MaxInt32]. Rejected here too.
        if not -_MAX_INT32 <= parsed <= _MAX_INT32:
            raise _suffix_error(text, "exponent outside the int32 range")
        return 10, parsed, _DECIMAL_EXPONENT
    raise _suffix_error(text)


def parse_quantity(text: str) -> Decimal:
    """Parse ``text`` exactly as Go ``resource.ParseQuantity`` does.

    Returns the exact value the API server stores (after Go's nano round-up and
    BinarySI cap), as a compact ``Decimal``. Raises :class:`QuantityError`
    (``reason`` 'format' or 'suffix') for anything Go rejects. Never slow.
    """
    if not isinstance(text, str):
        raise TypeError(f"quantity must be a str, not {type(text).__name__}")
    # if len(str) == 0 { return Quantity{}, ErrFormatWrong }
    if not text:
        raise _format_error(text, "empty string")
    # if str == "0" { return Quantity{Format: DecimalSI, s: str}, nil }
    if text == "0":
        return Decimal(0)

    scanned = _scan(text)
    if scanned is None:
        raise _format_error(text)
    positive, value, num, denom, suf = scanned

    # base, exponent, format, ok := quantitySuffixer.interpret(suffix(suf))
    # if !ok { return Quantity{}, ErrSuffix }
    base, exponent, fmt = _interpret(text, suf)

    # int32 scale arithmetic in ParseQuantity (`scale -= int32(len(denom))`
    # on the fast path, `amount.Scale() + Scale(exponent).infScale()` on the
    # slow one) wraps past this point. Go then gives a wrong value or hangs, so
    # such input is rejected.
    if base == 10 and exponent - len(denom) < -_MAX_INT32:
        raise _suffix_error(text, "exponent overflows Go's int32 scale")

    # precision := int32(0); scale := int32(0); mantissa := int64(1)
    precision = 0
    scale = 0
    mantissa = 1
    if fmt in (_DECIMAL_EXPONENT, _DECIMAL_SI):
        # scale = exponent
        # precision = maxInt64Factors - int32(len(num)+len(denom))
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    else:  # BinarySI
        if exponent >= 0 and not denom:
            # mantissa = int64(int64(mantissa) << uint64(exponent))
            # precision = 15 - int32(len(num)) - int32(float32(exponent)*3/10) - 1
            # (exponent is a multiple of 10, so the float32 maths is exact)
            mantissa = 1 << exponent
            precision = 15 - len(num) - (exponent * 3) // 10 - 1
        else:
            precision = -1

    # Fast path: if precision >= 0 { scale -= len(denom); if scale >= Nano {...
    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            # shifted := num + denom; value, err := strconv.ParseInt(shifted, 10, 64)
            # (at most 18 digits here, so ParseInt cannot fail)
            shifted = int(num + denom)
            # if result, ok := int64Multiply(value, int64(mantissa)); ok {
            result = shifted * mantissa
            if result <= _MAX_INT64:
                # if !positive { result = -result }
                return make_decimal(not positive, str(result), scale)
            # int64 overflow: fall through to the slow path, like Go.

    # Slow path: amount := new(inf.Dec); if _, ok := amount.SetString(value); !ok
    # { return Quantity{}, ErrNumeric }. inf.Dec.scan needs at least one digit
    # ("no digits read"). The scanner substitutes num = "0" but `value` is the
    # raw prefix, so "e-10", ".e-10", "-e-10", "Pi", "Ei" fail here while "e-9",
    # "e3", "Ki" and "Ti" took the fast path and are 0.
    if not any(c in _DIGITS for c in value):
        raise _numeric_error(text)

    coefficient = (num + denom).lstrip("0") or "0"
    if base == 10:
        # amount.SetScale(amount.Scale() + Scale(exponent).infScale())
        result_exp = exponent - len(denom)
    else:
        # numericSuffix := big.NewInt(1).Lsh(bigOne, uint(exponent))
        # amount.SetUnscaledBig(ub.Mul(ub, numericSuffix))
        ctx = decimal.Context(
            prec=len(coefficient) + 40,
            Emax=decimal.MAX_EMAX,
            Emin=decimal.MIN_EMIN,
            traps=[decimal.InvalidOperation, decimal.Inexact, decimal.Overflow],
        )
        product = ctx.multiply(Decimal(coefficient), Decimal(1 << exponent))
        coefficient = "".join(map(str, product.as_tuple().digits)).lstrip("0") or "0"
        result_exp = -len(denom)

    # if v, ok := amount.Unscaled(); v != int64(0) || !ok {
    #     amount.Round(amount, Nano.infScale(), inf.RoundUp)   // away from zero
    # }
    # (the sign was taken off first: `if sign == -1 { amount.Neg(amount) }`)
    coefficient, result_exp = round_away_to_exponent(coefficient, result_exp, _NANO)
    magnitude = make_decimal(False, coefficient, result_exp)

    # if format == BinarySI && amount.Cmp(maxAllowed.Dec) > 0 {
    #     amount.Set(maxAllowed.Dec) }           // cap at 2^63-1, magnitude
    if fmt == _BINARY_SI and magnitude > _MAX_ALLOWED:
        magnitude = _MAX_ALLOWED

    # if sign == -1 { amount.Neg(amount) }
    # (copy_negate, not unary minus: no context rounding or overflow on 1E+999999999)
    if not positive and magnitude != 0:
        return magnitude.copy_negate()
    return magnitude


def go_trim_space(text: str) -> str:
    """Go ``strings.TrimSpace``: strip Unicode white space (``unicode.IsSpace``)."""
    return text.strip(_GO_SPACE)


def parse_quantity_json(text: str) -> Decimal:
    """Parse ``text`` the way the API server does when a Go client sends it as a JSON string.

    This covers kubectl and helm, and YAML read by them. ``Quantity.UnmarshalJSON``
    slices the quotes off the *raw* bytes and calls
    ``ParseQuantity(strings.TrimSpace(...))``. Whitespace that Go's
    encoding/json writes raw (space, U+0085, U+00A0, U+3000, ...) is trimmed,
    so ``"2 "`` -> 2. Whitespace that it escapes (``\\t``, ``\\n``, ``\\r``,
    ``\\v``, ``\\f``, U+2028, U+2029) arrives as a backslash sequence, is not
    trimmed, and is rejected. Other encoders differ: Python's ``json.dumps``
    escapes all non-ASCII by default, so through it only ASCII space is
    trimmed.
    """
    return parse_quantity(text.strip(_GO_SPACE_RAW_IN_JSON))
