"""The GitHub Action (action.yml): checked by actionlint, and its bash steps run as a runner does.

- The workflow docs/ci.md documents (``uses: ./``, the action from the repository) passes
  actionlint, which also reads the local action's metadata and checks the inputs the
  workflow gives it; the same check fails on an input the action does not have.
- Each ``shell: bash`` step of the action runs the way the runner runs it: its script in a
  file, ``bash --noprofile --norc -eo pipefail FILE``, the ``${{ ... }}`` of its ``env:``
  evaluated from the inputs (the documented ones, else the defaults), ``GITHUB_ACTION_PATH``
  the action's files and ``GITHUB_OUTPUT`` a file the next steps read, in a fixture
  repository. setup-python's ``python-path`` output is a fresh venv's python (setup-python
  itself is GitHub's and is not run; neither is upload-sarif, whose condition is checked).
  The install step makes its own venv with that python and installs gpulint from the
  action's files into it without the network: ``PIP_NO_INDEX``, no build isolation, and
  gpulint's dependencies (and setuptools, to build it) on ``PYTHONPATH`` from a folder of
  links to this environment's copies, gpulint itself left out. The install step reads no
  input and no workspace file (only setup-python's output and ``runner.temp``, the same for
  the whole module), so it runs once for the module and each test's steps begin with that
  run's result; running it per test only reinstalled the same wheel over itself.
- helm is never downloaded: ``curl`` is a stand-in on ``PATH`` that serves files from a
  folder the test fills (a tarball of the local helm, its checksum), or fails as
  ``curl -f`` does on a 404.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, bare_venv_with
from tests.externals import assert_schema_valid, helm, needs_helm

ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
#: What the action's own files must hold to install gpulint (a clone at the action's ref).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "gpulint", "rules", "schemas", "action.yml")
BAD = (ROOT / "examples" / "bad-inference.yaml").read_text(encoding="utf-8")
GOOD = (ROOT / "examples" / "good-training-job.yaml").read_text(encoding="utf-8")


def _documented_workflows() -> list[str]:
    text = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    return [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S) if "uses: ./" in b]


def _documented_workflow() -> str:
    """The first workflow of the section: the one that uploads SARIF."""
    return _documented_workflows()[0]


def _actionlint() -> str:
    exe = Path(sys.executable).with_name("actionlint")
    if not exe.exists():
        pytest.skip("actionlint is not installed: `make venv` installs the test extra")
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


@pytest.mark.parametrize("index", [0, 1], ids=["sarif", "charts"])
def test_the_documented_workflows_pass_actionlint(tmp_path: Path, index: int) -> None:
    workflows = _documented_workflows()
    assert len(workflows) == 2
    proc = _lint_workflow(tmp_path, workflows[index])
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
    """The action's files, setup-python's stand-in (a venv's python), the runner's temporary
    folder, the folder of links to gpulint's dependencies, the folder the stand-in ``curl``
    serves, and the results (and outputs) of the steps that run once for the module."""

    action: Path
    python: Path
    temp: Path
    deps: Path
    served: Path
    fakebin: Path
    once: dict[int, tuple[subprocess.CompletedProcess[str], dict[str, str]]] = field(
        default_factory=dict
    )


#: The stand-in for curl: ``curl [options] -o FILE URL`` copies the file named as the URL's
#: last part from $FAKE_CURL_SERVES, or fails with curl -f's exit code for an HTTP error.
FAKE_CURL = """\
#!/usr/bin/env bash
out=""; url=""
while [ $# -gt 0 ]; do
  case "$1" in -o) out="$2"; shift 2 ;; -*) shift ;; *) url="$1"; shift ;; esac
done
echo "$url" >> "$FAKE_CURL_SERVES/requested"
name="${url##*/}"
[ -f "$FAKE_CURL_SERVES/$name" ] || { echo "curl: (22) 404: $url" >&2; exit 22; }
cp "$FAKE_CURL_SERVES/$name" "$out"
"""


def _dependency_links(folder: Path) -> Path:
    """Links to this environment's copies of gpulint's dependencies (transitively) and of
    setuptools, for a venv's PYTHONPATH: gpulint itself is not among them."""
    from importlib import metadata

    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    env = default_environment()
    todo = [
        Requirement(r).name
        for r in metadata.requires("gpulint") or []
        if Requirement(r).marker is None or Requirement(r).marker.evaluate({**env, "extra": ""})
    ] + ["setuptools"]
    seen: set[str] = set()
    folder.mkdir()
    while todo:
        dist = metadata.distribution(todo.pop())
        name = dist.metadata["Name"].lower()
        if name in seen:
            continue
        seen.add(name)
        for file in dist.files or []:
            top = file.parts[0]
            source = Path(str(dist.locate_file(top)))
            if top.endswith(".pth") or top == ".." or (folder / top).exists():
                continue
            if source.exists():
                (folder / top).symlink_to(source)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({**env, "extra": ""}):
                todo.append(req.name)
    return folder


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """The action's files (a copy of the repository's) and a venv for setup-python's python."""
    base = tmp_path_factory.mktemp("action")
    action, python, _ = bare_venv_with(SOURCES, base)
    fakebin = base / "fakebin"
    fakebin.mkdir()
    (fakebin / "curl").write_text(FAKE_CURL, encoding="utf-8")
    (fakebin / "curl").chmod(0o755)
    served = base / "served"
    served.mkdir()
    temp = base / "runner-temp"
    temp.mkdir()
    return Runner(action, python, temp, _dependency_links(base / "deps"), served, fakebin)


def _runs_once(step: dict[str, Any]) -> bool:
    """The install step, while it reads no input and no workspace file (only setup-python's
    output and the runner's temporary folder, the same for the whole module), so that its
    result is the same for every test of the module."""
    script = str(step["run"])
    expressions = {e.strip() for v in step.get("env", {}).values()
                   for e in re.findall(r"\$\{\{(.*?)\}\}", str(v))}  # fmt: skip
    return (
        step.get("name") == "Install gpulint"
        and "if" not in step
        and "${{" not in script
        and expressions <= {"steps.python.outputs.python-path", "runner.temp"}
        and set(re.findall(r"\$\{?(\w+)", script)) - set(step.get("env", {}))
        <= {"GITHUB_ACTION_PATH", "GITHUB_OUTPUT", "bin"}
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
    # Each run's scripts and outputs in a folder of its own; `runner.temp` is the module's.
    temp = runner.temp.parent / f"run-{len(list(runner.temp.parent.glob('run-*')))}"
    temp.mkdir()
    outputs: dict[str, dict[str, str]] = {}
    done = []
    for n, step in enumerate(ACTION["runs"]["steps"]):
        if step.get("uses", "").startswith("actions/setup-python@"):
            outputs[step["id"]] = {"python-path": str(runner.python)}
        if "run" not in step:
            continue
        assert step["shell"] == "bash"
        if n in runner.once:
            proc, out = runner.once[n]
            done.append(proc)
            outputs[step["id"]] = out
            continue
        script = temp / f"step-{n}.sh"
        script.write_text(step["run"], encoding="utf-8")
        output = temp / f"output-{n}"
        output.touch()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PIP_"))}
        env.update(
            PATH=f"{runner.fakebin}{os.pathsep}{env.get('PATH', '')}",
            GITHUB_ACTION_PATH=str(runner.action),
            GITHUB_OUTPUT=str(output),
            GITHUB_WORKSPACE=str(repo),
            RUNNER_TEMP=str(runner.temp),
            # Offline: pip finds every dependency installed, and builds with this setuptools.
            PIP_NO_INDEX="1",
            PIP_NO_BUILD_ISOLATION="0",
            PYTHONPATH=str(runner.deps),
            FAKE_CURL_SERVES=str(runner.served),
        )
        for key, value in step.get("env", {}).items():
            env[key] = _evaluate(value, inputs, outputs, runner.temp)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        done.append(proc)
        if "id" in step:
            lines = output.read_text(encoding="utf-8").splitlines()
            outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        if _runs_once(step) and proc.returncode == 0:
            runner.once[n] = (proc, outputs[step["id"]])
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
    install, helm_step, lint, finish = done
    assert helm_step.returncode == 0 and helm_step.stdout == ""  # no --render: no helm
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
    assert [p.returncode for p in done] == [0, 0, 0, 0], [p.stderr for p in done]
    assert outputs["lint"] == {"exit-code": "0"}
    assert "All checks passed" in done[2].stdout


def test_paths_config_and_fail_on_reach_gpulint(runner: Runner, tmp_path: Path) -> None:
    repo = _fixture_repo(tmp_path)
    (repo / "other").mkdir()
    (repo / "other" / "bad.yaml").write_text(BAD, encoding="utf-8")
    (repo / "ci.yaml").write_text("ignore: [GPU001]\n", encoding="utf-8")
    inputs = {"paths": "k8s/inference.yaml\nk8s/train.yaml", "config": "ci.yaml",
              "fail-on": "warning", "format": "github"}  # fmt: skip
    done, outputs = _run_action(runner, repo, inputs)
    lint = done[2]
    assert "::error file=k8s/inference.yaml," in lint.stdout
    assert "other/bad.yaml" not in lint.stdout  # only the paths given
    assert "title=GPU001" not in lint.stdout  # the configuration was read
    assert outputs["lint"]["exit-code"] == "1"
    assert done[-1].returncode == 1


# -- gpulint's own venv, `args`, helm ------------------------------------------------------------


def test_the_job_s_python_is_left_alone(runner: Runner, tmp_path: Path) -> None:
    """setup-python does not change the job's environment; gpulint runs from a venv of its
    own under the runner's temporary folder."""
    (setup,) = [s for s in ACTION["runs"]["steps"] if "setup-python" in s.get("uses", "")]
    assert setup["with"]["update-environment"] is False
    repo = _fixture_repo(tmp_path)
    done, outputs = _run_action(runner, repo, {})
    assert all(p.returncode == 0 for p in done[:3]), [p.stderr for p in done]
    venv_bin = Path(outputs["install"]["bin"])
    assert venv_bin.parent == runner.temp / "gpulint-venv"
    proc = subprocess.run(
        [str(venv_bin / "python"), "-c", "import gpulint; print(gpulint.__file__)"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(runner.deps)},
        cwd=tmp_path, check=True,
    )  # fmt: skip
    assert Path(proc.stdout.strip()).is_relative_to(runner.temp / "gpulint-venv")
    assert not (runner.python.parent / "gpulint").exists()  # nothing in setup-python's


def test_args_are_split_into_words_and_never_run(runner: Runner, tmp_path: Path) -> None:
    repo = _fixture_repo(tmp_path)
    args = "--ignore GPU001   --set 'note=$(touch pwned) `touch pwned2`; touch pwned3'"
    done, _ = _run_action(runner, repo, {"args": args, "paths": "k8s"})
    lint = done[2]
    assert lint.returncode == 0, lint.stderr
    assert "title=GPU001" not in lint.stdout  # --ignore GPU001 reached gpulint
    assert "::error file=k8s/inference.yaml," in lint.stdout  # ...and the paths still did
    assert not [p for p in (repo, tmp_path, Path.cwd()) for p in p.glob("pwned*")]
    assert done[1].stdout == ""  # no --render: helm is not installed


def test_args_that_cannot_be_split_fail_the_step(runner: Runner, tmp_path: Path) -> None:
    done, _ = _run_action(runner, _fixture_repo(tmp_path), {"args": "--set 'x=1"})
    assert done[2].returncode == 2
    assert "::error title=gpulint::the args input cannot be split: No closing quotation" in (
        done[2].stdout
    )


def _helm_tarball(runner: Runner, version: str) -> tuple[str, str]:
    """A release tarball of the local helm as get.helm.sh names it, served by the stand-in
    curl: (its name, its SHA-256)."""
    import hashlib
    import platform
    import tarfile

    local = helm()
    assert local is not None
    system = platform.system().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    name = f"helm-{version}-{system}-{arch}.tar.gz"
    # Built once for the module and served under each version's name (a link): gzip's
    # fastest level, as the action only checks and unpacks it (60 MB at level 9 took 20 s).
    built = runner.served.parent / "helm.tar.gz"
    if not built.exists():
        with tarfile.open(built, "w:gz", compresslevel=1) as tar:
            tar.add(local, arcname=f"{system}-{arch}/helm")
    if not (runner.served / name).exists():
        os.link(built, runner.served / name)
    digest = hashlib.sha256(built.read_bytes()).hexdigest()
    return name, digest


def _chart_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "tests" / "fixtures" / "render" / "charts", repo / "charts")
    return repo


def _documented_chart_inputs() -> dict[str, str]:
    workflow = yaml.safe_load(_documented_workflows()[1])
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("uses") == "./"]
    return {k: str(v) for k, v in step["with"].items()}


@needs_helm
def test_the_documented_chart_workflow_renders_with_the_installed_helm(
    runner: Runner, tmp_path: Path
) -> None:
    inputs = _documented_chart_inputs()
    assert "--render" in inputs["args"].split()
    # A version the action has no checksum of: it is checked against the published one.
    name, digest = _helm_tarball(runner, "v4.0.0-test")
    (runner.served / f"{name}.sha256sum").write_text(f"{digest}  {name}\n", encoding="utf-8")
    inputs["helm-version"] = "v4.0.0-test"
    done, outputs = _run_action(runner, _chart_repo(tmp_path), inputs)
    _, helm_step, lint, finish = done
    assert helm_step.returncode == 0, helm_step.stdout + helm_step.stderr
    assert "version.BuildInfo" in helm_step.stdout
    installed = Path(outputs["helm"]["path"])
    assert installed.is_relative_to(runner.temp) and os.access(installed, os.X_OK)
    requested = (runner.served / "requested").read_text(encoding="utf-8").splitlines()
    assert requested[-2:] == [
        f"https://get.helm.sh/{name}",
        f"https://get.helm.sh/{name}.sha256sum",
    ]
    # The findings are at the chart's values and templates: the chart was rendered.
    assert "::error file=charts/inference/values.yaml,line=8," in lint.stdout, lint.stdout
    assert "title=GL201" not in lint.stdout
    assert "[Job/inference-inference-warmup]" in lint.stdout  # --release-name reached it
    assert outputs["lint"]["exit-code"] == "1" and finish.returncode == 1


def test_the_pinned_checksum_refuses_another_tarball(runner: Runner, tmp_path: Path) -> None:
    """The default version is checked against the SHA-256 written in the action: a tarball
    that differs (here, a local helm served under its name) is not unpacked or run."""
    if helm() is None:
        pytest.skip("helm is not installed: `make tools` installs it into .tools/")
    version = str(ACTION["inputs"]["helm-version"]["default"])
    name, digest = _helm_tarball(runner, version)
    assert digest not in (ROOT / "action.yml").read_text(encoding="utf-8")
    done, _ = _run_action(runner, _chart_repo(tmp_path), {"args": "--render"})
    helm_step = done[1]
    assert len(done) == 2 and helm_step.returncode == 2  # the lint step does not run
    assert f"::error title=gpulint::{name} has SHA-256 {digest}, not " in helm_step.stdout
    assert not (runner.temp / "gpulint-helm" / name.removesuffix(".tar.gz")).exists()


def test_install_helm_false_uses_the_runner_s_helm(runner: Runner, tmp_path: Path) -> None:
    requested = runner.served / "requested"
    before = requested.read_text(encoding="utf-8") if requested.exists() else ""
    done, _ = _run_action(
        runner, _chart_repo(tmp_path), {"args": "--render", "install-helm": "false"}
    )
    assert done[1].returncode == 0 and done[1].stdout == ""
    after = requested.read_text(encoding="utf-8") if requested.exists() else ""
    assert after == before  # nothing was downloaded
