"""A nested ``.gpulint.yaml``: each file is linted with the closest configuration above it,
from the repository root (pre-commit, CI), from the nested folder, with pre-commit's list
of files and in worker processes alike (the language server: tests/test_lsp.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_in_process, gpulint_subprocess

#: A GPU pod with no toleration: GPU020 (the assumed cluster's GPU taint), among others.
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
    - name: trainer
      image: registry.example/trainer:1.0
      resources:
        limits:
          nvidia.com/gpu: 1
"""


def nested_tree(root: Path) -> Path:
    """repo/.gpulint.yaml ignores nothing; repo/team/.gpulint.yaml ignores GPU020."""
    repo = root / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "team").mkdir()
    (repo / ".gpulint.yaml").write_text("ignore: []\n", encoding="utf-8")
    (repo / "team" / ".gpulint.yaml").write_text("ignore: [GPU020]\n", encoding="utf-8")
    (repo / "pod.yaml").write_text(POD.format(name="root-pod"), encoding="utf-8")
    (repo / "team" / "pod.yaml").write_text(POD.format(name="team-pod"), encoding="utf-8")
    return repo


def codes_by_file(stdout: str, base: Path, cwd: Path) -> dict[str, set[str]]:
    """``{path relative to base: {codes}}`` of a ``--format json`` report run in ``cwd``."""
    out: dict[str, set[str]] = {}
    for f in json.loads(stdout)["findings"]:
        if f["suppressed"]:
            continue
        path = (cwd / f["path"]).resolve().relative_to(base.resolve())
        out.setdefault(path.as_posix(), set()).add(f["rule"])
    return out


def check(cwd: Path, *args: str) -> Any:
    out = gpulint_in_process("check", "--format", "json", *args, cwd=cwd)
    assert out.returncode in (0, 1), out.stderr
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return nested_tree(tmp_path)


def test_from_the_root_the_nested_configuration_applies_to_its_files(repo: Path) -> None:
    got = codes_by_file(check(repo, ".").stdout, repo, repo)
    assert "GPU020" in got["pod.yaml"]
    assert "GPU020" not in got.get("team/pod.yaml", set())
    assert got == {"pod.yaml": {"GPU020"}}  # the pod's one finding, ignored in team/


def test_root_nested_folder_and_precommit_file_list_agree(repo: Path) -> None:
    from_root = codes_by_file(check(repo, ".").stdout, repo, repo)
    # pre-commit runs from the repository root with the changed files named.
    precommit = codes_by_file(check(repo, "pod.yaml", "team/pod.yaml").stdout, repo, repo)
    team = repo / "team"
    from_team = codes_by_file(check(team, "pod.yaml", "../pod.yaml").stdout, repo, team)
    assert from_root == precommit == from_team


def test_stdin_is_linted_with_the_configuration_of_its_stdin_filename(repo: Path) -> None:
    text = (repo / "pod.yaml").read_text(encoding="utf-8")
    for name, codes in (("team/pod.yaml", set()), ("pod.yaml", {"GPU020"})):
        out = gpulint_in_process(
            "check", "--format", "json", "--stdin-filename", name, "-", cwd=repo, stdin=text
        )
        got = {f["rule"] for f in json.loads(out.stdout)["findings"]}
        assert got == codes, name


def test_workers_lint_each_file_with_its_own_configuration(repo: Path) -> None:
    # Enough files for worker processes (PARALLEL_MIN_FILES): each must get its linter.
    for i in range(48):
        (repo / f"pod{i}.yaml").write_text(POD.format(name=f"p{i}"), encoding="utf-8")
        (repo / "team" / f"pod{i}.yaml").write_text(POD.format(name=f"t{i}"), encoding="utf-8")
    out = gpulint_subprocess("check", "--format", "json", "--jobs", "2", ".", cwd=repo)
    assert out.returncode in (0, 1), out.stderr
    got = codes_by_file(out.stdout, repo, repo)
    # The pod's one finding is GPU020: every root file has it, no team file has it.
    assert got == {name: {"GPU020"} for name in ["pod.yaml", *(f"pod{i}.yaml" for i in range(48))]}
    serial = codes_by_file(check(repo, ".").stdout, repo, repo)
    assert got == serial


def test_config_option_and_isolated_override_discovery(repo: Path) -> None:
    # --config names the configuration of every file, as ruff's does; --isolated none.
    for args in (("--config", ".gpulint.yaml"), ("--isolated",)):
        got = codes_by_file(check(repo, *args, ".").stdout, repo, repo)
        assert "GPU020" in got["team/pod.yaml"], args
    # --config team's file from the root: its ignore applies to the root's pod too.
    got = codes_by_file(check(repo, "--config", "team/.gpulint.yaml", ".").stdout, repo, repo)
    assert "GPU020" not in got.get("pod.yaml", set())


def test_command_line_selection_applies_to_every_file(repo: Path) -> None:
    got = codes_by_file(check(repo, "--select", "GPU020", ".").stdout, repo, repo)
    # --select replaces each file's select; the team's ignore still holds.
    assert got == {"pod.yaml": {"GPU020"}}


def test_run_wide_keys_of_a_nested_configuration_are_named_and_left_out(repo: Path) -> None:
    (repo / "team" / ".gpulint.yaml").write_text("fail-on: info\n", encoding="utf-8")
    out = gpulint_in_process("check", "team/pod.yaml", cwd=repo)
    assert "team/.gpulint.yaml: fail-on decide the whole run" in out.stderr
    assert out.returncode == 0, out.stdout  # the root's fail-on (error), not the team's info
    # Run from team/, it is the run's configuration, and its fail-on applies.
    assert gpulint_in_process("check", "pod.yaml", cwd=repo / "team").returncode == 1


def test_a_broken_nested_configuration_stops_the_run_naming_it(repo: Path) -> None:
    (repo / "team" / ".gpulint.yaml").write_text("ignore: [GPU020]\nselcet: [GPU]\n")
    out = gpulint_in_process("check", ".", cwd=repo)
    assert out.returncode == 2
    assert "team/.gpulint.yaml:2" in out.stderr and "selcet" in out.stderr


def test_config_file_names_the_configuration_that_applies(repo: Path) -> None:
    out = gpulint_in_process("config", "team/pod.yaml", cwd=repo)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "# configuration file: team/.gpulint.yaml"
    assert lines[1] == "# applies to: team/pod.yaml (its closest configuration)"
    assert any(line.startswith("ignore:") and "GPU020" in line for line in lines)
    root = gpulint_in_process("config", "pod.yaml", cwd=repo)
    assert root.stdout.splitlines()[0] == "# configuration file: .gpulint.yaml"
    (repo / "team" / ".gpulint.yaml").unlink()
    (repo / ".gpulint.yaml").unlink()
    none = gpulint_in_process("config", "team/pod.yaml", cwd=repo)
    assert none.stdout.startswith("# configuration file: none")
    missing = gpulint_in_process("config", "nowhere.yaml", cwd=repo)
    assert missing.returncode == 2 and "nowhere.yaml: no such file" in missing.stderr
