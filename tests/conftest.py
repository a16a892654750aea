"""Shared test helpers.

Fixture convention (tests/fixtures/rules/<CODE>/fail-*.yaml and pass-*.yaml): the expected
finding is written as a comment on the line it is reported at::

    nvidia.com/gpu: 0.5   # expect: GPU004
    nvidia.com/gpu: 0.5   # expect: GPU004:29      (also pins the column)
    nvidia.com/gpu: one   # expect: GPU005, GPU010
    nvidia.com/gpu: 1     # expect: GPU001, GPU001 (aliased content used twice)

Every finding of every rule must be expected, and every expectation found, as many times as it
is written; a pass-*.yaml file has no expectations and must lint clean with all rules on.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
FIXTURES = ROOT / "tests" / "fixtures"
RULE_FIXTURES = FIXTURES / "rules"

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[A-Z0-9:, ]+?)\s*$")


def expectations(text: str) -> set[tuple[int, str, int | None]]:
    """(line, code, column or None) written in ``# expect:`` comments."""
    return set(expectation_list(text))


def expectation_list(text: str) -> list[tuple[int, str, int | None]]:
    """Like :func:`expectations`, keeping repeats (one finding per item written)."""
    out: list[tuple[int, str, int | None]] = []
    # Only \n, \r\n and \r end a line here, as in an editor (str.splitlines also splits on
    # form feeds and Unicode separators).
    for number, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        match = _EXPECT.search(line)
        if not match:
            continue
        for item in match.group("codes").split(","):
            item = item.strip()
            if not item:
                continue
            code, _, col = item.partition(":")
            out.append((number, code, int(col) if col else None))
    return out


def gpulint_cmd() -> list[str]:
    """The installed console script, run as a real subprocess."""
    exe = Path(sys.executable).with_name("gpulint")
    if not exe.exists():
        pytest.skip("gpulint is not installed in this interpreter's environment")
    return [str(exe)]


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The run's own cache folder (valid configurations), not the user's ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GPULINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        yield
