"""Every configuration file is read and parsed once per run, however many folders' searches
meet it, and a TOML configuration is size-capped as a YAML one is (1 MiB): a large
pyproject.toml that holds no ``[tool.gpulint]`` is not a configuration, and is left alone.

The assertions count parses, never time.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_in_process

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
spec:
  containers:
  - name: jupyter
    image: jupyter/tensorflow-notebook:latest
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def tree(root: Path, pyproject: str, folders: int = 5) -> Path:
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text(pyproject)
    for i in range(folders):
        (root / f"team{i}").mkdir()
        (root / f"team{i}" / "pod.yaml").write_text(POD)
    return root


def findings(root: Path, *args: str) -> tuple[int, list[str], str]:
    proc = gpulint_in_process("check", "-f", "json", *args, ".", cwd=root)
    rules = [f["rule"] for f in json.loads(proc.stdout)["findings"]] if proc.stdout else []
    return proc.returncode, rules, proc.stderr


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times a TOML text is parsed, and how many times each YAML configuration."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]
    import gpulint.loader.ownfiles as ownfiles

    counted: Counter[str] = Counter()

    def wrap(module: Any, name: str, key: Any) -> None:
        real = getattr(module, name)

        def counting(arg: Any, *rest: Any, **kw: Any) -> Any:
            counted[key(arg)] += 1
            return real(arg, *rest, **kw)

        monkeypatch.setattr(module, name, counting)

    wrap(tomllib, "load", lambda _: "toml")
    wrap(tomllib, "loads", lambda _: "toml")
    wrap(ownfiles, "load_one_document", lambda path: Path(path).name)
    return counted


def test_a_root_pyproject_that_only_mentions_gpulint_is_parsed_once(
    tmp_path: Path, parses: Counter[str]
) -> None:
    root = tree(tmp_path, '# tool.gpulint is configured elsewhere\n[project]\nname = "x"\n')
    code, rules, _ = findings(root)
    assert code == 0 and rules == ["GPU020"] * 5  # the defaults: no table here
    assert parses["toml"] == 1


def test_nested_configurations_are_each_read_once(tmp_path: Path, parses: Counter[str]) -> None:
    root = tree(tmp_path, '[tool.gpulint]\nignore = ["GPU020"]\n')
    (root / "team0" / ".gpulint.yaml").write_text("ignore: []\n")
    (root / "team0" / "sub").mkdir()
    (root / "team0" / "sub" / "pod.yaml").write_text(POD)
    code, rules, _ = findings(root)
    # team0 and team0/sub have their own configuration, the others the root's
    assert code == 0 and rules == ["GPU020", "GPU020"]
    assert parses["toml"] == 1 and parses[".gpulint.yaml"] == 1


def large(table: str) -> str:
    rows = "".join(f'dep{i} = "{"x" * 1_000}"\n' for i in range(1_100))  # > 1 MiB
    return f"# tool.gpulint is configured elsewhere\n[project]\n{rows}{table}"


def test_a_large_pyproject_without_a_gpulint_table_is_left_alone(
    tmp_path: Path, parses: Counter[str]
) -> None:
    root = tree(tmp_path, large(""))
    code, rules, stderr = findings(root)
    assert code == 0 and rules == ["GPU020"] * 5, stderr
    assert stderr == "" and parses["toml"] == 0  # never parsed, nothing to say


@pytest.mark.parametrize(
    "table", ['[tool.gpulint]\nignore = ["GPU020"]\n', "[tool]\ngpulint = {}\n"]
)
def test_a_large_pyproject_with_a_gpulint_table_is_a_configuration_error(
    tmp_path: Path, table: str
) -> None:
    root = tree(tmp_path, large(table))
    for args in ((), ("--config", "pyproject.toml")):
        code, rules, stderr = findings(root, *args)
        assert code == 2 and rules == []
        assert stderr == (
            "gpulint: error: pyproject.toml: larger than 1 MiB, the most a configuration file "
            "may be: not read (write gpulint's configuration in a .gpulint.yaml)\n"
        )
