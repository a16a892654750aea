"""Every rule fixture lints to exactly the findings written next to its lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpulint.engine import Linter
from gpulint.rule import load_rules
from tests.conftest import RULE_FIXTURES, expectations

FIXTURE_FILES = sorted(RULE_FIXTURES.glob("*/*.yaml"))


@pytest.fixture(scope="module")
def linter() -> Linter:
    return Linter(load_rules())


@pytest.mark.parametrize(
    "path", FIXTURE_FILES, ids=[f"{p.parent.name}/{p.name}" for p in FIXTURE_FILES]
)
def test_fixture(path: Path, linter: Linter) -> None:
    raw = path.read_bytes()
    expected = expectations(raw.decode("utf-8", "replace"))
    if path.name.startswith("pass"):
        assert not expected, "pass fixtures carry no expectations"
    else:
        assert any(code == path.parent.name for _, code, _ in expected), (
            f"a fail fixture of {path.parent.name} must expect {path.parent.name}"
        )
    # Suppressed findings do not count (a fixture may show a suppression at work).
    findings = [f for f in linter.lint_bytes(str(path), raw) if f.suppression is None]
    got = {(f.line, f.rule) for f in findings}
    want = {(line, code) for line, code, _ in expected}
    assert got == want, "\n".join(
        [
            f"unexpected: {f.line}:{f.column} {f.rule} {f.message}"
            for f in findings
            if (f.line, f.rule) not in want
        ]
        + [f"missing: {line} {code}" for line, code in sorted(want - got)]
    )
    columns = {(f.line, f.rule, f.column) for f in findings}
    for line, code, col in expected:
        if col is not None:
            assert (line, code, col) in columns, f"{code} at line {line} not at column {col}"
