"""Every rule fixture lints to exactly the findings written next to its lines.

All rules run on every fixture, so a fixture written for one rule also proves that the other
rules stay quiet on it. Findings are compared as a multiset of (line, code): aliased content
used twice is reported twice, at the anchor, and must be expected twice.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gpulint.engine import Linter
from gpulint.rule import load_rules
from tests.conftest import RULE_FIXTURES, expectation_list

FIXTURE_FILES = sorted(RULE_FIXTURES.glob("*/*.yaml"))


@pytest.fixture(scope="module")
def linter() -> Linter:
    return Linter(load_rules())


def test_every_rule_has_fail_and_pass_fixtures() -> None:
    codes = sorted(r.code for r in load_rules())
    for code in codes:
        folder = RULE_FIXTURES / code
        assert sorted(folder.glob("fail-*.yaml")), f"{code} has no fail-*.yaml fixture"
    # Pass fixtures prove the absence of false alarms; every GPU rule needs its own.
    for code in (c for c in codes if c.startswith("GPU")):
        assert sorted((RULE_FIXTURES / code).glob("pass-*.yaml")), f"{code} has no pass fixture"


@pytest.mark.parametrize(
    "path", FIXTURE_FILES, ids=[f"{p.parent.name}/{p.name}" for p in FIXTURE_FILES]
)
def test_fixture(path: Path, linter: Linter) -> None:
    raw = path.read_bytes()
    expected = expectation_list(raw.decode("utf-8", "replace"))
    if path.name.startswith("pass"):
        assert not expected, "pass fixtures carry no expectations"
    else:
        assert path.name.startswith("fail-"), "fixtures are named fail-*.yaml or pass-*.yaml"
        assert any(code == path.parent.name for _, code, _ in expected), (
            f"a fail fixture of {path.parent.name} must expect {path.parent.name}"
        )
    # Suppressed findings do not count (a fixture may show a suppression at work).
    findings = [f for f in linter.lint_bytes(str(path), raw) if f.suppression is None]
    got = Counter((f.line, f.rule) for f in findings)
    want = Counter((line, code) for line, code, _ in expected)
    assert got == want, "\n".join(
        [f"unexpected: {line} {code} x{n}" for (line, code), n in sorted((got - want).items())]
        + [
            f"  {f.line}:{f.column} {f.rule} {f.message}"
            for f in findings
            if (f.line, f.rule) in got - want
        ]
        + [f"missing: {line} {code} x{n}" for (line, code), n in sorted((want - got).items())]
    )
    columns = {(f.line, f.rule, f.column) for f in findings}
    for line, code, col in expected:
        if col is not None:
            assert (line, code, col) in columns, f"{code} at line {line} not at column {col}"
    for f in findings:
        assert f.object is not None or f.rule.startswith("YML"), (
            f"{f.rule} at line {f.line} names no object"
        )
