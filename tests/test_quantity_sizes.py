"""Quantities of any size: exact, compact in every message, and never an exception.

Kubernetes accepts decimal exponents up to 2^31-1 (``"1e2147483647"``) and does not cap a
DecimalSI value; gpulint parses such values into compact Decimals. These properties pin that
no rule reading quantities (GPU002-GPU005, GPU011, GPU031, GPU040) raises on them or writes
them out in full.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from gpulint.k8s.quantity.arith import add, is_multiple
from gpulint.k8s.quantity.display import SHOWN_DIGITS, format_quantity
from gpulint.k8s.quantity.parse import parse_quantity
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules

LINTER = Linter(load_rules())
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RESOURCES = [
    "nvidia.com/gpu",
    "tencent.com/vcuda-core",
    "tencent.com/vcuda-memory",
    "aliyun.com/gpu-mem",
    "nvidia.com/gpu.shared",
    "amd.com/gpu",
]
#: The longest message any rule may write for these small manifests.
MESSAGE_LIMIT = 1_500

exponents = st.one_of(
    st.integers(-(2**31) + 1, 2**31 - 1),
    st.integers(-40, 40),
    st.sampled_from([999_990, 999_999, 1_000_000, -999_999, 2**31 - 1, -(2**31) + 1]),
)


# The parts of a quantity, built once (a strategy built inside the composite is built and
# validated again for every quantity drawn). The whole and fractional digits are the strings
# of the regexes [0-9]{1,25} and \.[0-9]{0,12}, drawn as text over the digits: one draw
# each, where from_regex drew them character by character.
DIGITS = "0123456789"
SIGNS = st.sampled_from(["", "", "", "-", "+"])
WHOLES = st.text(DIGITS, min_size=1, max_size=25)
FRACTIONS = st.one_of(st.just(""), st.text(DIGITS, max_size=12).map(".".__add__))
SUFFIXES = st.one_of(
    exponents.map(lambda e: f"e{e}"),
    st.sampled_from(["", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Ei", "n"]),
)


@st.composite
def quantities(draw: st.DrawFn) -> str:
    sign = draw(SIGNS)
    whole = draw(WHOLES)
    fraction = draw(FRACTIONS)
    suffix = draw(SUFFIXES)
    return f"{sign}{whole}{fraction}{suffix}"


def pod(values: list[tuple[str, str, str]]) -> str:
    """A Pod with one init, one sidecar and two containers, and a LimitRange and a
    ResourceQuota over the same values."""
    slots = ["init", "side", "a", "b"]
    limits: dict[str, list[str]] = {s: [] for s in slots}
    requests: dict[str, list[str]] = {s: [] for s in slots}
    for i, (resource, limit, request) in enumerate(values):
        slot = slots[i % 4]
        limits[slot].append(f'"{resource}": "{limit}"')
        requests[slot].append(f'"{resource}": "{request}"')

    def container(name: str, extra: str = "") -> str:
        return (
            f"  - name: {name}\n    image: x\n{extra}    resources:\n"
            f"      limits: {{{', '.join(limits[name])}}}\n"
            f"      requests: {{{', '.join(requests[name])}}}\n"
        )

    default = ", ".join(f'"{r}": "{limit}"' for r, limit, _ in values)
    default_request = ", ".join(f'"{r}": "{req}"' for r, _, req in values)
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  initContainers:\n"
        + container("init")
        + container("side", "    restartPolicy: Always\n")
        + "  containers:\n"
        + container("a")
        + container("b")
        + "---\napiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n"
        f"  - type: Container\n    default: {{{default}}}\n"
        f"    defaultRequest: {{{default_request}}}\n"
        "---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n"
        f"  hard: {{{', '.join(f'requests.{r}: {chr(34)}{v}{chr(34)}' for r, v, _ in values)}}}\n"
    )


@SETTINGS
@given(
    st.lists(
        st.tuples(st.sampled_from(RESOURCES), quantities(), quantities()), min_size=1, max_size=6
    )
)
def test_every_quantity_rule_survives_any_size(values: list[tuple[str, str, str]]) -> None:
    text = pod(values)
    found = LINTER.lint_text("p.yaml", text)  # a RuleError would fail the test
    for finding in found:
        assert len(finding.message) <= MESSAGE_LIMIT, finding.message[:300]


@pytest.mark.parametrize(
    ("resource", "value"),
    [
        ("nvidia.com/gpu", "1e999990"),
        ("nvidia.com/gpu", "1e1000000"),
        ("tencent.com/vcuda-core", "1e30"),
        ("tencent.com/vcuda-core", "1e2147483647"),
        ("nvidia.com/gpu", "-1e2147483647"),
        ("nvidia.com/gpu", "1e-2147483647"),
    ],
)
def test_the_reported_values_are_findings_with_short_messages(resource: str, value: str) -> None:
    text = pod([(resource, value, "1"), (resource, value, value)])
    found = LINTER.lint_text("p.yaml", text)
    assert found
    assert max(len(f.message) for f in found) <= MESSAGE_LIMIT


def test_gpu040_shows_a_huge_total_compactly() -> None:
    text = pod([("nvidia.com/gpu", "1e999990", "1e999990")])
    [gpu040] = [f for f in LINTER.lint_text("p.yaml", text) if f.rule == "GPU040"]
    assert "1e999990" in gpu040.message
    assert len(gpu040.message) < 400


# -- the helpers, against exact integer arithmetic where that is affordable ------------------


def dec(mantissa: int, exp: int) -> Decimal:
    """``mantissa * 10**exp`` exactly (``scaleb`` would round to the context's 28 digits)."""
    return Decimal(f"{mantissa}E{exp}")


@given(st.integers(-(10**60), 10**60), st.integers(-30, 30))
def test_format_quantity_is_short_and_exact_when_not_elided(mantissa: int, exp: int) -> None:
    value = dec(mantissa, exp)
    shown = format_quantity(value)
    assert len(shown) <= SHOWN_DIGITS + 20
    if "..." not in shown:
        assert Decimal(shown) == value


@given(exponents)
def test_format_quantity_of_a_power_of_ten(exp: int) -> None:
    shown = format_quantity(parse_quantity(f"1e{exp}"))
    value = parse_quantity(f"1e{exp}")
    assert Decimal(shown) == value
    assert len(shown) <= 22


@given(st.integers(0, 10**40), st.integers(0, 60), st.integers(1, 1000))
def test_is_multiple_matches_integer_arithmetic(mantissa: int, exp: int, step: int) -> None:
    value = dec(mantissa, exp)
    assert is_multiple(value, step) == ((mantissa * 10**exp) % step == 0)


def test_is_multiple_at_any_size() -> None:
    assert is_multiple(parse_quantity("1e2147483647"), 100)
    assert not is_multiple(parse_quantity("7e2147483647"), 3)
    assert not is_multiple(parse_quantity("1.5"), 1)


@given(
    st.integers(-(10**30), 10**30),
    st.integers(-20, 20),
    st.integers(-(10**30), 10**30),
    st.integers(-20, 20),
)
def test_add_is_exact(a: int, ea: int, b: int, eb: int) -> None:
    x, y = dec(a, ea), dec(b, eb)
    low = min(ea, eb)
    exact = dec(a * 10 ** (ea - low) + b * 10 ** (eb - low), low)
    assert add(x, y) == exact


def test_add_far_apart_stays_bounded() -> None:
    total: Any = add(parse_quantity("1e2147483647"), Decimal(1))
    assert total > parse_quantity("1e2147483647")
    assert format_quantity(total).endswith("e2147483647")
