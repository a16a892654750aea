"""The recipes in docs/ci.md and docs/editors.md, run as written.

- The VS Code problem matcher's regexp, read from docs/editors.md, matches every finding
  line of real text output (and its groups are the finding's fields) and no summary line.
- The CI commands, read from docs/ci.md, run with bash in scratch folders and git
  repositories: they produce the files the upload steps name, valid for their consumers,
  and the changed-files recipes lint exactly the YAML files a branch added or modified.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.externals import assert_schema_valid, gpulint, junit_schema

DOCS = ROOT / "docs"
BAD = (ROOT / "examples" / "bad-inference.yaml").read_text(encoding="utf-8")
GOOD = (ROOT / "examples" / "good-training-job.yaml").read_text(encoding="utf-8")


def _blocks(doc: str, lang: str) -> list[str]:
    text = (DOCS / doc).read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


# -- docs/editors.md ----------------------------------------------------------------------------


def _matcher() -> dict[str, Any]:
    (tasks_json,) = _blocks("editors.md", "json")
    tasks = json.loads(tasks_json)
    (task,) = tasks["tasks"]
    assert task["command"] == "gpulint" and "--color" in task["args"]
    matcher: dict[str, Any] = task["problemMatcher"]
    return matcher


def test_the_problem_matcher_reads_every_finding_of_real_output(tmp_path: Path) -> None:
    matcher = _matcher()
    assert matcher["fileLocation"][0] == "autoDetect"
    pattern = matcher["pattern"]
    regexp = re.compile(pattern["regexp"])  # the JSON string, as VS Code's RegExp gets it

    odd = tmp_path / "odd: dir"
    odd.mkdir()
    shutil.copy(ROOT / "examples" / "bad-inference.yaml", odd / "my file.yaml")
    runs = [
        (("examples", "tests/fixtures/rules"), ROOT),
        (("odd: dir",), tmp_path),
        ((str(odd / "my file.yaml"),), tmp_path),  # absolute paths
    ]
    for args, cwd in runs:
        text = gpulint("check", "--color", "never", *args, cwd=cwd).stdout.splitlines()
        found = json.loads(gpulint("check", "--format", "json", *args, cwd=cwd).stdout)
        # Suppressed findings are in JSON but, by design, not in the text output.
        findings = [f for f in found["findings"] if not f["suppressed"]]
        matches = [regexp.match(line) for line in text]
        assert matches[-1] is None, text[-1]  # the summary is not a problem
        matched = [m for m in matches if m]
        assert len(matched) == len(findings) > 0
        for m, f in zip(matched, findings, strict=True):
            assert m.group(pattern["file"]) == f["path"]
            assert int(m.group(pattern["line"])) == f["line"]
            assert int(m.group(pattern["column"])) == f["column"]
            assert m.group(pattern["code"]) == f["rule"]
            assert m.group(pattern["severity"]) == f["severity"]
            # The text report says a long aside once per run, then "(as above)": the rest of
            # the message is the finding's, in order.
            first, *rest = m.group(pattern["message"]).split("(as above)")
            assert f["message"].startswith(first) or (not rest and first.startswith(f["message"]))
            at = len(first)
            for piece in rest:
                piece = piece.split(" [")[0]  # the object label follows the message
                at = f["message"].index(piece, at) + len(piece)


def test_the_sample_output_line_is_real() -> None:
    """The finding line docs/editors.md shows is a line of `gpulint check examples/`."""
    (sample,) = _blocks("editors.md", "text")
    real = gpulint("check", "--color", "never", "examples", cwd=ROOT).stdout.splitlines()
    for line in sample.strip().splitlines():
        # The message is shortened with " ... " (the docs show the shape of a line).
        head, _, tail = line.partition(" ... ")
        assert any(r.startswith(head) and r.endswith(tail) for r in real), line


def test_the_clean_summary_is_not_a_problem() -> None:
    regexp = re.compile(_matcher()["pattern"]["regexp"])
    out = gpulint("check", "--color", "never", "examples/good-training-job.yaml", cwd=ROOT)
    (line,) = out.stdout.splitlines()
    assert line.startswith("All checks passed") and regexp.match(line) is None


# -- docs/ci.md ---------------------------------------------------------------------------------


def _ci_yaml() -> list[Any]:
    return [yaml.safe_load(block) for block in _blocks("ci.md", "yaml")]


def _bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = dict(os.environ)
    environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + environ.get("PATH", "")
    environ.update(env)
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _workflows() -> list[dict[str, Any]]:
    return [doc for doc in _ci_yaml() if isinstance(doc, dict) and "jobs" in doc]


def _gitlab_jobs() -> list[dict[str, Any]]:
    return [
        job
        for doc in _ci_yaml()
        if isinstance(doc, dict) and "jobs" not in doc
        for job in doc.values()
        if isinstance(job, dict) and "script" in job
    ]


def _step(workflow: dict[str, Any], needle: str) -> dict[str, Any]:
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if needle in str(s.get("run", s.get("uses", "")))]
    return dict(step)


@pytest.fixture(scope="module")
def repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch repository: main with two manifests, a branch that changes YAML files.
    Built once with git (a dozen processes); each test lints a copy of its own."""
    repo = tmp_path_factory.mktemp("recipes") / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    script = f"""
        git init -q -b main
        mkdir -p k8s docs
        cat > k8s/old-bad.yaml <<'EOF'
{BAD}EOF
        cp k8s/old-bad.yaml k8s/removed.yaml
        cat > k8s/train.yaml <<'EOF'
{GOOD}EOF
        git add -A && git commit -q -m base
        git update-ref refs/remotes/origin/main main
        git checkout -q -b feature
        cp k8s/old-bad.yaml "k8s/new bad.yaml"
        sed -i 's/name: bert-finetune/name: bert-finetune-2/' k8s/train.yaml
        git rm -q k8s/removed.yaml
        echo '# notes' > docs/notes.md
        git add -A && git commit -q -m change
    """
    proc = _bash(script, repo, **env)
    assert proc.returncode == 0, proc.stderr
    return repo


def _repo(template: Path, tmp_path: Path) -> Path:
    """A copy of the scratch repository, on its branch ``feature``."""
    return Path(shutil.copytree(template, tmp_path / "repo", symlinks=True))


def test_github_workflow_fails_with_text_and_leaves_the_sarif_to_upload(tmp_path: Path) -> None:
    workflow = _workflows()[0]
    assert workflow["permissions"]["security-events"] == "write"
    lint = _step(workflow, "gpulint check")
    upload = _step(workflow, "github/codeql-action/upload-sarif")
    assert "!cancelled()" in upload["if"] or "always()" in upload["if"]
    sarif_file = upload["with"]["sarif_file"]
    assert f"--output {sarif_file}" in lint["run"]

    shutil.copytree(ROOT / "examples", tmp_path / "k8s")
    proc = _bash(lint["run"], tmp_path)
    assert proc.returncode == 1  # the step fails the check...
    assert "GPU001 error" in proc.stdout  # ...with the readable report in the log
    assert_schema_valid(json.loads((tmp_path / sarif_file).read_text(encoding="utf-8")))


def test_github_annotations_step() -> None:
    (block,) = [b for b in _blocks("ci.md", "yaml") if "--format github ." in b]
    (step,) = yaml.safe_load(block)
    proc = _bash(step["run"], ROOT / "examples")
    assert proc.returncode == 1
    assert "::error file=bad-inference.yaml,line=25," in proc.stdout
    assert "::notice file=bad-inference.yaml,line=16," in proc.stdout  # GPU020, assumed


def test_gitlab_job_writes_the_junit_report_it_declares(tmp_path: Path) -> None:
    job = _gitlab_jobs()[0]
    report = job["artifacts"]["reports"]["junit"]
    assert job["artifacts"]["when"] == "always"
    shutil.copytree(ROOT / "examples", tmp_path / "k8s")
    lines = [line for line in job["script"] if not line.startswith("pip install")]
    proc = _bash("\n".join(lines), tmp_path)
    assert proc.returncode == 1, proc.stderr
    junit_schema().validate(str(tmp_path / report))


def test_github_changed_files_recipe_lints_only_what_the_branch_changed(
    repo_template: Path, tmp_path: Path
) -> None:
    repo = _repo(repo_template, tmp_path)
    workflow = _workflows()[1]
    # PyYAML reads the `on:` key as YAML 1.1's boolean true.
    assert workflow[True] == {"pull_request": None}
    (job,) = workflow["jobs"].values()
    assert job["steps"][0]["with"]["fetch-depth"] == 0
    step = _step(workflow, "git diff")
    proc = _bash(step["run"], repo, GITHUB_BASE_REF="main")
    assert proc.returncode == 1, proc.stderr
    files = set(re.findall(r"^::\w+ file=([^,]+),", proc.stdout, flags=re.M))
    assert files == {"k8s/new bad.yaml"}  # train.yaml changed but is clean
    assert "in 2 files" in proc.stdout.splitlines()[-1]  # new bad.yaml and train.yaml

    # A branch that changes no YAML file runs nothing and passes.
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)
    proc = _bash(step["run"], repo, GITHUB_BASE_REF="main")
    assert proc.returncode == 0 and proc.stdout.strip() == "No YAML file changed."


@pytest.mark.parametrize("branch", ["feature", "main"])
def test_gitlab_changed_files_recipe(repo_template: Path, tmp_path: Path, branch: str) -> None:
    repo = _repo(repo_template, tmp_path)
    job = _gitlab_jobs()[1]
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]
    subprocess.run(["git", "checkout", "-q", branch], cwd=repo, check=True)
    base = subprocess.run(
        ["git", "rev-parse", "main"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    lines = [line for line in job["script"] if not line.startswith("pip install")]
    proc = _bash("\n".join(lines), repo, CI_MERGE_REQUEST_DIFF_BASE_SHA=base)
    report = repo / job["artifacts"]["reports"]["junit"]
    if branch == "main":
        assert proc.returncode == 0 and not report.exists()
        return
    assert proc.returncode == 1, proc.stderr
    junit_schema().validate(str(report))
    suites = re.findall(r'<testsuite name="([^"]+)"', report.read_text(encoding="utf-8"))
    assert suites == ["k8s/new bad.yaml", "k8s/train.yaml"]
