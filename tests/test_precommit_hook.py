"""The pre-commit hook, proven with the real pre-commit, the way the README tells users.

A snapshot of this checkout (tracked and new files, as a clone at a commit would have them)
becomes a hook repository with one commit. A scratch project copies the README's local-clone
``.pre-commit-config.yaml`` snippet with ``/path/to/gpulint`` replaced by that snapshot and
``<commit>`` by its commit, runs ``pre-commit install``, and commits: a manifest with a GPU
mistake is refused with the finding in the output, the fixed manifest goes through; with
``args: [--fix]`` the hook fixes the file itself.
pre-commit builds the hook's virtualenv by installing this project from the snapshot, as it
does for a user: pip builds it in an isolated environment with setuptools and installs its
declared dependencies. They come from a folder of wheels, not from PyPI (``PIP_NO_INDEX``,
``PIP_FIND_LINKS``: this environment's copies packed back into wheels, ``dependency_wheels``
in tests/conftest.py), so the test needs no network and does not wait on an index.
The snapshot and PRE_COMMIT_HOME are the module's (a fixture): the tests differ in their
scratch projects and hook ``args``, not in the hook repository and revision, so pre-commit
builds the environment once, on the module's first commit, and the other commits run the
hook from it, as on a user's machine after the first commit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

BAD_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: train
        image: pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime
        resources:
          requests:
            nvidia.com/gpu: 2
"""
GOOD_JOB = BAD_JOB.replace("          requests:\n", "          limits:\n")
WORKFLOW = "name: ci\non: [push]\njobs: {}\n"  # YAML, not Kubernetes: passed and skipped


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout


def _env(base: Path, wheels: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT", "PIP_"))}
    env.update(
        PRE_COMMIT_HOME=str(base / "pre-commit-home"),
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
        # The user's and the system's git settings (signing, hooks paths) stay out of it.
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        # The machine's pip settings (indexes, constraints) stay out of it; every
        # distribution, setuptools for the isolated build included, comes from ``wheels``.
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels),
        # pip compiles none of the ~800 modules it installs (pygments, rich, ...) to bytecode;
        # the hook's runs compile the few they import, once (the environment is shared).
        PIP_COMPILE="false",
    )
    return env


def _snapshot(dest: Path, env: dict[str, str]) -> str:
    """This checkout's files (tracked or new, not ignored) as a one-commit repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = ROOT / rel
        if source.is_file():  # a tracked file deleted in the working tree is skipped
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    _git("init", "-q", cwd=dest, env=env)
    _git("add", "-A", cwd=dest, env=env)
    _git("commit", "-q", "-m", "snapshot", cwd=dest, env=env)
    return _git("rev-parse", "HEAD", cwd=dest, env=env).strip()


@dataclass(frozen=True)
class HookRepo:
    """The snapshot hook repository, its commit, and the environment (with the shared
    PRE_COMMIT_HOME) the tests run git and pre-commit in."""

    path: Path
    rev: str
    env: dict[str, str]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, dependency_wheels: Path) -> HookRepo:
    base = tmp_path_factory.mktemp("pre-commit")
    env = _env(base, dependency_wheels)
    path = base / "gpulint-repo"
    path.mkdir()
    return HookRepo(path, _snapshot(path, env), env)


def _commit(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`git commit` in the project, the installed pre-commit hook running; never raises."""
    return subprocess.run(
        ["git", "commit", "-m", "Add the fine-tuning job"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def readme_snippets() -> tuple[str, str]:
    """The README's two ``.pre-commit-config.yaml`` snippets: from the hosting site, and
    from a local clone."""
    section = (ROOT / "docs" / "pre-commit.md").read_text(encoding="utf-8")
    hosted, local = re.findall(r"```yaml\n(.*?)```", section, flags=re.S)
    return str(hosted), str(local)


def test_the_hook_definition_is_what_the_readme_promises() -> None:
    import yaml

    hook, *others = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    # The second hook renders charts and overlays (tests/test_render.py checks it).
    assert [h["id"] for h in others] == ["gpulint-render"]
    assert hook["id"] == "gpulint"
    assert hook["entry"] == "gpulint check"
    assert hook["language"] == "python"
    # Staged YAML and Markdown (a README's fenced manifests) files.
    assert hook["types_or"] == ["yaml", "markdown"]
    assert hook.get("pass_filenames", True) is True
    hosted, local = (yaml.safe_load(s)["repos"] for s in readme_snippets())
    (repo,) = hosted
    assert repo["repo"] == "https://github.com/gpulint/gpulint"
    # No release tag exists yet: the snippet pins a commit, the placeholder says which.
    assert repo["rev"] == "<commit>"
    assert repo["hooks"] == [{"id": "gpulint"}]
    # The local-clone snippet (the one the next test runs) differs only in `repo`.
    assert local == [{**repo, "repo": "/path/to/gpulint"}]


def test_a_commit_with_a_gpu_mistake_is_refused_and_the_fix_goes_through(
    hook_repo: HookRepo, tmp_path: Path
) -> None:
    env, hooks_repo, rev = hook_repo.env, hook_repo.path, hook_repo.rev
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project, env=env)
    config = readme_snippets()[1]
    assert "/path/to/gpulint" in config and "<commit>" in config
    config = config.replace("/path/to/gpulint", hooks_repo.as_posix()).replace("<commit>", rev)
    (project / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    pre_commit = str(Path(sys.executable).with_name("pre-commit"))
    subprocess.run([pre_commit, "install"], cwd=project, env=env, check=True, capture_output=True)

    (project / "k8s").mkdir()
    (project / "k8s" / "train.yaml").write_text(BAD_JOB, encoding="utf-8")
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW, encoding="utf-8")
    _git("add", "-A", cwd=project, env=env)

    refused = _commit(project, env)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert re.search(r"^gpulint\.+Failed$", output, flags=re.M), output
    assert "k8s/train.yaml:16:13: GPU001 error: nvidia.com/gpu is requested without a limit" in (
        output
    )
    no_head = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=project, env=env, check=False
    )
    assert no_head.returncode != 0, "the commit must not have been made"

    (project / "k8s" / "train.yaml").write_text(GOOD_JOB, encoding="utf-8")
    _git("add", "k8s/train.yaml", cwd=project, env=env)
    accepted = _commit(project, env)
    output = accepted.stdout + accepted.stderr
    assert accepted.returncode == 0, output
    assert re.search(r"^gpulint\.+Passed$", output, flags=re.M), output
    assert _git("log", "--format=%s", cwd=project, env=env).strip() == "Add the fine-tuning job"


def test_args_fix_fixes_the_staged_file_and_pre_commit_reports_it(
    hook_repo: HookRepo, tmp_path: Path
) -> None:
    """`args: [--fix]`: the hook writes the fix, pre-commit fails the commit because the
    hook modified a file (and says so); once the fix is staged the commit goes through."""
    env, hooks_repo, rev = hook_repo.env, hook_repo.path, hook_repo.rev
    project = tmp_path / "project"
    project.mkdir()
    _git("init", "-q", cwd=project, env=env)
    config = readme_snippets()[1].replace("/path/to/gpulint", hooks_repo.as_posix())
    config = config.replace("<commit>", rev).replace(
        "      - id: gpulint\n", "      - id: gpulint\n        args: [--fix]\n"
    )
    assert "args: [--fix]" in config
    (project / ".pre-commit-config.yaml").write_text(config, encoding="utf-8")
    pre_commit = str(Path(sys.executable).with_name("pre-commit"))
    subprocess.run([pre_commit, "install"], cwd=project, env=env, check=True, capture_output=True)
    (project / "k8s").mkdir()
    (project / "k8s" / "train.yaml").write_text(BAD_JOB, encoding="utf-8")
    _git("add", "-A", cwd=project, env=env)

    first = _commit(project, env)
    output = first.stdout + first.stderr
    assert first.returncode != 0, output
    assert "files were modified by this hook" in output, output
    assert "Fixed 1 problem." in output, output
    assert (project / "k8s" / "train.yaml").read_text(encoding="utf-8") == GOOD_JOB
    _git("add", "k8s/train.yaml", cwd=project, env=env)
    second = _commit(project, env)
    output = second.stdout + second.stderr
    assert second.returncode == 0, output
    assert re.search(r"^gpulint\.+Passed$", output, flags=re.M), output
