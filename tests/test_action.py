"""The GitHub Action (action.yml): checked by actionlint, and its bash steps run as a runner does.

- The workflow docs/ci.md documents (``uses: ./``, the action from the repository) passes
  actionlint, which also reads the local action's metadata and checks the inputs the
  workflow gives it; the same check fails on an input the action does not have.
- Each ``shell: bash`` step of the action runs the way the runner runs it: its script in a
  file, ``bash --noprofile --norc -eo pipefail FILE``, the ``${{ ... }}`` of its ``env:``
  evaluated from the inputs (the documented ones, else the defaults), ``GITHUB_ACTION_PATH``
  the action's files and ``GITHUB_OUTPUT`` a file the next steps read, in a fixture
  repository. ``python`` is a fresh venv (standing in for actions/setup-python) that borrows
  this environment's packages, so the install step builds and installs gpulint from the
  action's files without the network (``PIP_NO_INDEX``, no build isolation). The ``uses:``
  steps (setup-python, upload-sarif) are GitHub's and are not run; the upload's condition is
  checked. The install step reads no input, output or workspace file, so it runs once for
  the module, into the fresh venv (a runner's job starts from a fresh setup-python), and
  each test's steps begin with that run's result; running it per test only reinstalled the
  same wheel over itself.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, bare_venv_with
from tests.externals import assert_schema_valid

ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
#: What the action's own files must hold to install gpulint (a clone at the action's ref).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "gpulint", "rules", "schemas", "action.yml")
BAD = (ROOT / "examples" / "bad-inference.yaml").read_text(encoding="utf-8")
GOOD = (ROOT / "examples" / "good-training-job.yaml").read_text(encoding="utf-8")


def _documented_workflow() -> str:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S) if "uses: ./" in b]
    return str(block)


def _actionlint() -> str:
    exe = Path(sys.executable).with_name("actionlint")
    if not exe.exists():
        pytest.fail("actionlint is not installed: `make venv` installs the test extra")
    return str(exe)


def _lint_workflow(tmp_path: Path, workflow: str) -> subprocess.CompletedProcess[str]:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    shutil.copy(ROOT / "action.yml", repo / "action.yml")
    (repo / ".github" / "workflows" / "gpulint-action.yml").write_text(workflow, encoding="utf-8")
    return subprocess.run(
        [_actionlint(), "-no-color"], cwd=repo, capture_output=True, text=True, timeout=120
    )


def test_the_documented_workflow_passes_actionlint(tmp_path: Path) -> None:
    proc = _lint_workflow(tmp_path, _documented_workflow())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_reads_the_local_action_s_inputs(tmp_path: Path) -> None:
    """Not vacuous: an input the action does not declare is an error."""
    workflow = _documented_workflow().replace("paths: k8s", "paths: k8s\n          pathz: k8s")
    proc = _lint_workflow(tmp_path, workflow)
    assert proc.returncode == 1
    assert 'input "pathz" is not defined in action' in proc.stdout, proc.stdout


def test_the_action_declares_what_the_docs_list() -> None:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    table = text.split("## GitHub Actions: the gpulint action", 1)[1].split("```", 1)[0]
    documented = re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.M)
    assert documented == list(ACTION["inputs"])
    assert ACTION["runs"]["using"] == "composite"
    uses = [s["uses"].split("@")[0] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python", "github/codeql-action/upload-sarif"]
    upload = next(s for s in ACTION["runs"]["steps"] if "upload-sarif" in s.get("uses", ""))
    assert "!cancelled()" in upload["if"] and "inputs.sarif-upload == 'true'" in upload["if"]


# -- running the bash steps ------------------------------------------------------------------


@dataclass
class Runner:
    """The action's files, the venv's bin folder (`python`), a temporary folder, and the
    results of the steps that run once for the module (by step index)."""

    action: Path
    bin: Path
    temp: Path
    once: dict[int, subprocess.CompletedProcess[str]] = field(default_factory=dict)


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """The action's files (a copy of the repository's) and a venv for `python`."""
    action, python, purelib = bare_venv_with(SOURCES, tmp_path_factory.mktemp("action"))
    # pip, setuptools and gpulint's dependencies from this environment, after the venv's own.
    borrowed = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (purelib / "zz-borrowed.pth").write_text("\n".join(borrowed) + "\n", encoding="utf-8")
    return Runner(action, python.parent, action.parent)


def _runs_once(step: dict[str, Any]) -> bool:
    """The install step, while it reads no input, output or workspace file (no `env:`, no
    expression, no `id`, no variable but the action's path), so that its result is the same
    for every test of the module."""
    script = str(step["run"])
    return (
        step.get("name") == "Install gpulint"
        and not ({"env", "id", "if"} & set(step))
        and "${{" not in script
        and set(re.findall(r"\$\{?(\w+)", script)) == {"GITHUB_ACTION_PATH"}
    )


def _evaluate(
    value: Any, inputs: dict[str, str], outputs: dict[str, dict[str, str]], temp: Path
) -> str:
    """A ``${{ ... }}`` value as the runner evaluates the few expressions the action uses."""

    def one(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        head, _, rest = expr.partition(".")
        if head == "inputs":
            return inputs[rest]
        if expr == "runner.temp":
            return str(temp)
        if head == "steps":
            step, _, name = rest.partition(".outputs.")
            return outputs.get(step, {}).get(name, "")
        raise AssertionError(f"an expression this test does not evaluate: {expr}")

    return re.sub(r"\$\{\{(.*?)\}\}", one, str(value))


def _run_action(
    runner: Runner, repo: Path, given: dict[str, str]
) -> tuple[list[subprocess.CompletedProcess[str]], dict[str, dict[str, str]]]:
    """Every bash step in order, as the runner would, until one fails."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    temp = runner.temp / f"runner-temp-{len(list(runner.temp.glob('runner-temp-*')))}"
    temp.mkdir()
    outputs: dict[str, dict[str, str]] = {}
    done = []
    for n, step in enumerate(ACTION["runs"]["steps"]):
        if "run" not in step:
            continue
        assert step["shell"] == "bash"
        if n in runner.once:
            done.append(runner.once[n])
            continue
        script = temp / f"step-{n}.sh"
        script.write_text(step["run"], encoding="utf-8")
        output = temp / f"output-{n}"
        output.touch()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PIP_"))}
        env.update(
            PATH=f"{runner.bin}{os.pathsep}{env.get('PATH', '')}",
            GITHUB_ACTION_PATH=str(runner.action),
            GITHUB_OUTPUT=str(output),
            GITHUB_WORKSPACE=str(repo),
            # Offline: pip finds every dependency installed, and builds with this setuptools.
            PIP_NO_INDEX="1",
            PIP_NO_BUILD_ISOLATION="0",
        )
        for key, value in step.get("env", {}).items():
            env[key] = _evaluate(value, inputs, outputs, temp)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        done.append(proc)
        if _runs_once(step) and proc.returncode == 0:
            runner.once[n] = proc
        if "id" in step:
            lines = output.read_text(encoding="utf-8").splitlines()
            outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        if proc.returncode != 0:
            break
    return done, outputs


def _fixture_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "k8s").mkdir(parents=True)
    (repo / "k8s" / "inference.yaml").write_text(BAD, encoding="utf-8")
    (repo / "k8s" / "train.yaml").write_text(GOOD, encoding="utf-8")
    (repo / "README.md").write_text("not linted\n", encoding="utf-8")
    return repo


def _documented_inputs() -> dict[str, str]:
    workflow = yaml.safe_load(_documented_workflow())
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("uses") == "./"]
    return {k: str(v) for k, v in step["with"].items()}


def test_the_documented_inputs_upload_sarif_and_fail_the_step(
    runner: Runner, tmp_path: Path
) -> None:
    inputs = _documented_inputs()
    assert inputs["sarif-upload"] == "true"
    done, outputs = _run_action(runner, _fixture_repo(tmp_path), inputs)
    install, lint, finish = done
    assert install.returncode == 0, install.stderr
    assert lint.returncode == 0, lint.stderr  # the lint step leaves failing to the last step
    assert "GPU001 error" in lint.stdout  # the log has the readable report
    assert outputs["lint"]["exit-code"] == "1"
    sarif = Path(outputs["lint"]["sarif-file"])
    log = json.loads(sarif.read_text(encoding="utf-8"))
    assert_schema_valid(log)
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}  # fmt: skip
    assert uris == {"k8s/inference.yaml"}  # relative to the repository root
    assert finish.returncode == 1  # ...and the job fails after the upload


def test_the_defaults_annotate_and_pass_a_clean_repository(runner: Runner, tmp_path: Path) -> None:
    repo = _fixture_repo(tmp_path)
    (repo / "k8s" / "inference.yaml").unlink()
    done, outputs = _run_action(runner, repo, {})
    assert [p.returncode for p in done] == [0, 0, 0], [p.stderr for p in done]
    assert outputs["lint"] == {"exit-code": "0"}
    assert "All checks passed" in done[1].stdout


def test_paths_config_and_fail_on_reach_gpulint(runner: Runner, tmp_path: Path) -> None:
    repo = _fixture_repo(tmp_path)
    (repo / "other").mkdir()
    (repo / "other" / "bad.yaml").write_text(BAD, encoding="utf-8")
    (repo / "ci.yaml").write_text("ignore: [GPU001]\n", encoding="utf-8")
    inputs = {"paths": "k8s/inference.yaml\nk8s/train.yaml", "config": "ci.yaml",
              "fail-on": "warning", "format": "github"}  # fmt: skip
    done, outputs = _run_action(runner, repo, inputs)
    lint = done[1]
    assert "::error file=k8s/inference.yaml," in lint.stdout
    assert "other/bad.yaml" not in lint.stdout  # only the paths given
    assert "title=GPU001" not in lint.stdout  # the configuration was read
    assert outputs["lint"]["exit-code"] == "1"
    assert done[-1].returncode == 1
