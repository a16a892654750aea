"""``check --render --fix`` / ``--diff`` on a stranger's chart: checking a fix writes only in a
private temporary folder gpulint made, never through a link of the tree, whatever its depth.

Each test builds its repository under ``tmp_path`` and points Python's temporary folder at
``tmp_path/tmp`` (where a fix is checked), so that what a run leaves there, and in a
sentinel folder beside the repository, can be looked at. The charts are rendered with the
real helm (``make tools``' helm 4 and helm 3; skipped, saying so, when none is installed).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_kustomize

HELMS = helms()
TRAINER = FIXTURES / "render" / "fixvalues" / "trainer"

PARENT = """\
apiVersion: v2
name: platform
version: 0.1.0
dependencies:
  - name: trainer
    version: 0.1.0
"""

_DIR = os.O_RDONLY | os.O_DIRECTORY


def _tree(top: Path) -> dict[str, bytes | str]:
    """Every file (its bytes) and link (its target) under ``top``, without recursion and
    without following links; not the project's facts cache (``.gpulint_cache``), which
    ``--fix`` keeps as any run does (``--diff`` keeps none)."""
    out: dict[str, bytes | str] = {}
    stack = [top]
    while stack:
        folder = stack.pop()
        for entry in os.scandir(folder):
            path = Path(entry.path)
            rel = str(path.relative_to(top))
            if entry.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif entry.is_dir():
                if entry.name != ".gpulint_cache":
                    stack.append(path)
            else:
                out[rel] = path.read_bytes()
    return out


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Python's temporary folder for the run, under ``tmp_path`` (empty)."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _run(helm: str, *args: str, cwd: Path) -> tuple[int, str, str]:
    proc = gpulint_in_process("check", "--render", "--helm", helm, *args, cwd=cwd)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("mode", ["--diff", "--fix"])
@pytest.mark.parametrize("helm", HELMS)
def test_a_linked_subchart_leads_no_write_outside(
    helm: str, mode: str, tmp_path: Path, private_tmp: Path
) -> None:
    """``charts/trainer -> ../../../../trainer`` names a folder inside the repository; from a
    copy of the chart made at the temporary folder's depth the same link names
    ``tmp_path/trainer``, outside it, where the fixed ``values.yaml`` used to be written
    (``--diff`` too)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(TRAINER, repo / "a" / "b" / "c" / "trainer")
    chart = repo / "a" / "b" / "c" / "d" / "e" / "platform"
    (chart / "charts").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(PARENT)
    (chart / "charts" / "trainer").symlink_to("../../../../trainer")
    assert (chart / "charts" / "trainer").resolve() == repo / "a" / "b" / "c" / "trainer"
    sentinel = tmp_path / "trainer"  # where the link leads from tmp_path/tmp/<copy>/charts
    sentinel.mkdir()
    before = _tree(repo)
    code, out, err = _run(helm, mode, "a/b/c/d/e/platform", cwd=repo)
    assert list(sentinel.iterdir()) == []
    assert list(private_tmp.iterdir()) == []  # the private folder is gone
    assert _tree(repo) == before  # the fix is not written through the link either
    assert (
        "a/b/c/d/e/platform/charts/trainer/values.yaml:10:5: GPU001 not fixed: "
        "a/b/c/d/e/platform/charts/trainer is a symbolic link, and fixes are never written "
        "through one"
    ) in err, err
    assert code == (0 if mode == "--diff" else 1), out + err


def _platform(repo: Path) -> Path:
    """A parent chart whose subchart is a real folder holding a link to a folder elsewhere
    in the repository (``files -> ../../../../shared``: resolved in the real tree, the fix's
    render reads it as helm read it)."""
    (repo / ".git").mkdir(parents=True)
    (repo / "shared").mkdir()
    (repo / "shared" / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    chart = repo / "deploy" / "platform"
    sub = chart / "charts" / "trainer"
    shutil.copytree(TRAINER, sub)
    (sub / "files").symlink_to("../../../../shared")
    (chart / "Chart.yaml").write_text(PARENT)
    (chart / "values.yaml").write_text("# The platform's values: the trainer's own apply.\n")
    return chart


@pytest.mark.parametrize("helm", HELMS)
def test_a_subchart_values_fix_is_checked_without_writing_in_the_tree(
    helm: str, tmp_path: Path, private_tmp: Path
) -> None:
    repo = tmp_path / "repo"
    chart = _platform(repo)
    before = _tree(repo)
    code, out, err = _run(helm, "--diff", "deploy/platform", cwd=repo)
    values = "deploy/platform/charts/trainer/values.yaml"
    assert out.startswith(f"--- {values}\n+++ {values}\n"), out + err
    assert "+  limits:\n" in out
    assert err.endswith("Would fix 1 problem.\n"), err
    assert code == 1
    assert _tree(repo) == before  # --diff writes nothing in the tree
    assert list(private_tmp.iterdir()) == []
    code, out, err = _run(helm, "--fix", "deploy/platform", cwd=repo)
    assert "Fixed 1 problem." in out, out + err
    fixed = (chart / "charts" / "trainer" / "values.yaml").read_text()
    assert "  limits:\n    nvidia.com/gpu: 2" in fixed
    assert (chart / "charts" / "trainer" / "files").is_symlink()
    assert list(private_tmp.iterdir()) == []


@pytest.mark.parametrize("helm", HELMS)
def test_a_values_file_outside_the_chart_is_checked_in_the_private_folder(
    helm: str, tmp_path: Path, private_tmp: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    serving = TRAINER.parent / "serving"
    shutil.copytree(serving, repo / "serving")
    (repo / "env").mkdir()
    shutil.move(repo / "serving" / "values-h100.yaml", repo / "env" / "h100.yaml")
    before = _tree(repo)
    args = ("--values", "env/h100.yaml", "serving")
    code, out, err = _run(helm, "--diff", *args, cwd=repo)
    assert out.startswith("--- env/h100.yaml\n+++ env/h100.yaml\n"), out + err
    assert code == 1
    assert _tree(repo) == before
    assert list(private_tmp.iterdir()) == []
    code, out, err = _run(helm, "--fix", *args, cwd=repo)
    assert "Fixed 1 problem." in out, out + err
    assert "  limits:\n    nvidia.com/gpu: 1\n" in (repo / "env" / "h100.yaml").read_text()
    assert (repo / "serving" / "values.yaml").read_bytes() == (serving / "values.yaml").read_bytes()
    assert list(private_tmp.iterdir()) == []


def _deep(top: Path, levels: int, name: str = "d") -> None:
    """``top/d/d/.../d``, ``levels`` folders named ``name``, made through folder handles
    (the deepest path may be longer than the system takes)."""
    fd = os.open(top, _DIR)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def _undeep(top: Path, name: str = "d") -> None:
    """Remove :func:`_deep`'s folders without recursion."""
    fd = os.open(top, _DIR)
    depth = 0
    while name in os.listdir(fd):
        inner = os.open(name, _DIR, dir_fd=fd)
        os.close(fd)
        fd, depth = inner, depth + 1
    for _ in range(depth):
        parent = os.open("..", _DIR, dir_fd=fd)
        os.close(fd)
        fd = parent
        os.rmdir(name, dir_fd=fd)
    os.close(fd)


#: (levels, folder name): past Python's 1,000 frames, with a path helm still takes
#: (1,200 one-letter folders: 2,400 bytes); and past the system's PATH_MAX (4,096 bytes)
#: too, with three-letter names (4,400 bytes), which one-letter names pass only at
#: 2,000 levels, for about three times the time (each path the walks and copies stat is
#: resolved level by level).
DEEP_TREES = [
    pytest.param(1_200, "d", id="1200"),
    pytest.param(1_100, "ddd", id="past-path-max"),
]


@pytest.mark.parametrize(("levels", "name"), DEEP_TREES)
@pytest.mark.parametrize("helm", HELMS)
def test_a_deep_ignored_folder_in_a_chart_is_no_crash(
    helm: str, levels: int, name: str, tmp_path: Path, private_tmp: Path
) -> None:
    """``--render --diff``/``--fix`` on a chart holding an ignored folder more than a
    thousand levels deep: the fix is checked (or the chart refused, past the system's path
    length), never a RecursionError."""
    repo = tmp_path / "r"
    (repo / ".git").mkdir(parents=True)
    chart = repo / "c"
    shutil.copytree(TRAINER, chart)
    (chart / ".helmignore").write_text("cache/\n")
    (chart / "cache").mkdir()
    _deep(chart / "cache", levels, name)
    short = len(str(tmp_path / "r" / "c" / "cache") + f"/{name}" * levels) < 4_096
    assert short == (name == "d")
    try:
        code, out, err = _run(helm, "--diff", "c", cwd=repo)
        if short:  # short enough a path for helm: rendered, the fix checked
            assert out.startswith("--- c/values.yaml\n"), out + err
            assert code == 1
        else:  # past the system's path length: nothing rendered, nothing to fix
            assert (code, out, err) == (0, "", "No fixes to apply.\n")
        code, out, err = _run(helm, "--fix", "c", cwd=repo)
        if short:
            assert "Fixed 1 problem." in out, out + err
            assert code in (0, 1), out + err
        else:  # the chart refused, and said so
            assert out.startswith("c/Chart.yaml:1:1: GL200 error: not rendered: "), out + err
            assert "File name too long" in out, out + err
            assert code == 1
        assert list(private_tmp.iterdir()) == []
    finally:
        _undeep(chart / "cache", name)


JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-warmup
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: warmup
          image: vllm/vllm-openai:v0.6.3
          resources:
            {{- toYaml .Values.warmup.resources | nindent 12 }}
"""


@pytest.mark.parametrize("helm", HELMS)
def test_fixes_checked_together_fall_back_to_one_by_one(
    helm: str, tmp_path: Path, private_tmp: Path
) -> None:
    """Two fixes: the warmup Job's holds, the server's does not (values-gpu.yaml's request
    is merged back under the moved limit: GPU002). Checked together they fail, so each is
    checked on its own: the first is kept, the second says why not."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    chart = repo / "serving"
    shutil.copytree(TRAINER.parent / "serving", chart)
    (chart / "templates" / "warmup.yaml").write_text(JOB)
    with (chart / "values.yaml").open("a") as fh:
        fh.write("warmup:\n  resources:\n    requests:\n      nvidia.com/gpu: 1\n")
    files = ["--values", "serving/values-gpu.yaml", "--values", "serving/values-large.yaml"]
    code, out, err = _run(helm, *files, "--diff", "serving", cwd=repo)
    assert out.startswith("--- serving/values.yaml\n+++ serving/values.yaml\n"), out + err
    assert "values-large" not in out
    assert (
        "serving/values-large.yaml:4:5: GPU001 not fixed: rendered again with the fix, it "
        "reports GPU002"
    ) in err
    assert err.endswith("Would fix 1 problem.\n"), err
    assert code == 1
    assert list(private_tmp.iterdir()) == []


@needs_kustomize
def test_an_overlay_fix_is_checked_on_a_copy_of_what_kustomize_reads(
    tmp_path: Path, private_tmp: Path
) -> None:
    """An overlay whose base is named through a link (``base -> shared/real-base``): the
    kustomizations and the files they name are copied to the private folder, the link
    resolved in the real tree, and nothing is written in the tree by ``--diff``."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(TRAINER.parent / "kustomize", repo, dirs_exist_ok=True)
    (repo / "shared").mkdir()
    shutil.move(repo / "base", repo / "shared" / "real-base")
    (repo / "base").symlink_to("shared/real-base")
    before = _tree(repo)
    proc = gpulint_in_process("check", "--render", "--diff", "overlays/a100", cwd=repo)
    assert proc.stdout.startswith("--- overlays/a100/gpu.yaml\n"), proc.stdout + proc.stderr
    assert proc.stderr.endswith("Would fix 1 problem.\n"), proc.stderr
    assert _tree(repo) == before
    assert list(private_tmp.iterdir()) == []
    proc = gpulint_in_process("check", "--render", "--fix", "overlays/a100", cwd=repo)
    assert "Fixed 1 problem." in proc.stdout, proc.stdout + proc.stderr
    assert "limits:\n" in (repo / "overlays" / "a100" / "gpu.yaml").read_text()
    assert list(private_tmp.iterdir()) == []
