"""Shared test helpers.

Fixture convention (tests/fixtures/rules/<CODE>/fail-*.yaml and pass-*.yaml): the expected
finding is written as a comment on the line it is reported at::

    nvidia.com/gpu: 0.5   # expect: GPU004
    nvidia.com/gpu: 0.5   # expect: GPU004:29      (also pins the column)
    nvidia.com/gpu: one   # expect: GPU005, GPU010
    nvidia.com/gpu: 1     # expect: GPU001, GPU001 (aliased content used twice)

Every finding of every rule must be expected, and every expectation found, as many times as it
is written; a pass-*.yaml file has no expectations and must lint clean with all rules on.

Optional data folders (README, "Development"): the suite needs nothing outside the
repository, and two large third-party collections run only when named in the environment:

- ``GPULINT_CORPUS``: a folder of real-world manifests with ``MANIFEST.tsv`` and
  ``INVALID.tsv`` (the golden file ``tests/golden/corpus-findings.txt`` is its reviewed
  findings);
- ``GPULINT_YAML_TEST_SUITE``: the yaml-test-suite cases as ``*.yaml`` files, invalid ones
  named ``*.invalid.yaml``.

A test that needs an absent folder is skipped with the variable to set as its reason (a
parametrized one yields a single skipped case, never zero cases). A variable that names
something that is not a folder stops the run: a typo must not turn into silent skips.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
RULE_FIXTURES = FIXTURES / "rules"

#: The optional data folders: environment variable -> what it holds.
DATA_VARIABLES = {
    "GPULINT_CORPUS": "the real-world manifest corpus",
    "GPULINT_YAML_TEST_SUITE": "the yaml-test-suite cases",
}


def _data_dir(variable: str) -> Path | None:
    value = os.environ.get(variable, "")
    return Path(value).expanduser().resolve() if value else None


CORPUS = _data_dir("GPULINT_CORPUS")
YAML_TEST_SUITE = _data_dir("GPULINT_YAML_TEST_SUITE")


def missing_reason(variable: str) -> str:
    return f"needs {DATA_VARIABLES[variable]}: set {variable}=/path/to/it (README, Development)"


needs_corpus = pytest.mark.skipif(CORPUS is None, reason=missing_reason("GPULINT_CORPUS"))
needs_yaml_test_suite = pytest.mark.skipif(
    YAML_TEST_SUITE is None, reason=missing_reason("GPULINT_YAML_TEST_SUITE")
)


def data_cases(variable: str, values: Callable[[Path], Iterable[Any]]) -> list[Any]:
    """Parameters over an optional data folder: ``values(folder)``, or one skipped case that
    says which variable to set. A folder that yields no case is an error, never an empty
    parametrization."""
    folder = _data_dir(variable)
    if folder is None:
        return [pytest.param(None, id=f"no-{variable}", marks=pytest.mark.skip(
            reason=missing_reason(variable)))]  # fmt: skip
    cases = list(values(folder))
    assert cases, f"{variable}={os.environ[variable]} holds no test case"
    return cases


def pytest_configure(config: pytest.Config) -> None:
    for variable in DATA_VARIABLES:
        path = _data_dir(variable)
        if path is not None and not path.is_dir():
            raise pytest.UsageError(f"{variable}={os.environ[variable]}: not a directory")


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
