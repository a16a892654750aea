"""What helm reads when a chart is rendered stays inside the repository: values files and the
chart's own entries are resolved with their links, and only regular files are read.

The chart here copies what it reads into a GPU resource name (``nvidia.com/<what it
read>``), which a finding's message quotes: a file it must not read would show in the
report. Every refusal is checked with the real helm and with the secret absent from every
byte gpulint prints; the controls show that, read, the text would appear.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import gpulint_in_process, gpulint_subprocess
from tests.externals import helm, needs_helm

SECRET = "hunter2registrytoken"

TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata:
  name: leak
spec:
  containers:
  - name: train
    image: registry.example.com/train:1.0
    resources:
      requests:
        nvidia.com/{{ .Values.token }}{{ .Files.Get "d/s" | trim }}: 1
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """``repo/chart`` printing ``.Values.token`` and ``.Files.Get "d/s"`` into a resource
    name; ``outside/`` (not in the repository) holds the secret as YAML and as text."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "registry.yaml").write_text(f"token: {SECRET}\n", encoding="utf-8")
    (outside / "secret").write_text(f"{SECRET}\n", encoding="utf-8")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "chart" / "templates").mkdir(parents=True)
    (root / "chart" / "Chart.yaml").write_text(
        "apiVersion: v2\nname: leak\nversion: 0.1.0\n", encoding="utf-8"
    )
    (root / "chart" / "values.yaml").write_text("token: gpu\n", encoding="utf-8")
    (root / "chart" / "templates" / "pod.yaml").write_text(TEMPLATE, encoding="utf-8")
    (root / "ci").mkdir()
    return root


def check(repo: Path, *args: str, in_process: bool = True) -> tuple[str, int]:
    """Everything gpulint prints for ``check --render chart``, and its exit status."""
    path = helm()
    assert path is not None
    argv = ("check", "--render", "--helm", path, *args, "chart")
    if in_process:
        proc = gpulint_in_process(*argv, cwd=repo)
    else:
        proc = gpulint_subprocess(*argv, cwd=repo, timeout=120)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    return out, proc.returncode


def refused(out: str, code: int, *words: str) -> None:
    assert SECRET not in out
    assert code == 1 and " GL200 " in out, out
    for word in words:
        assert word in out, out


# -- values files (item 2) --------------------------------------------------------------------


@needs_helm
def test_a_values_file_inside_is_read_the_control(repo: Path) -> None:
    (repo / "ci" / "values.yaml").write_text(f"token: {SECRET}\n", encoding="utf-8")
    out, code = check(repo, "--values", "ci/values.yaml")
    assert code == 1 and f"nvidia.com/{SECRET}" in out  # what a leak would look like


@needs_helm
def test_a_values_file_linking_out_of_the_repository_is_refused(repo: Path) -> None:
    (repo / "ci" / "values.yaml").symlink_to(repo.parent / "outside" / "registry.yaml")
    out, code = check(repo, "--values", "ci/values.yaml")
    refused(out, code, "values file ci/values.yaml is a symbolic link to a file outside")


@needs_helm
def test_a_configured_values_link_out_is_a_config_error_with_its_line(repo: Path) -> None:
    (repo / "ci" / "values.yaml").symlink_to(repo.parent / "outside" / "registry.yaml")
    (repo / ".gpulint.yaml").write_text(
        "# charts rendered in CI\nrender:\n  values:\n  - ci/values.yaml\n", encoding="utf-8"
    )
    out, code = check(repo)
    assert SECRET not in out and code == 2, out
    assert (
        ".gpulint.yaml:4: render values file 'ci/values.yaml' is a symbolic link to a file "
        "outside the configuration's folder"
    ) in out
    # Through a linked folder of the repository, the same.
    (repo / "ci" / "values.yaml").unlink()
    (repo / "ci" / "up").symlink_to(repo.parent / "outside")
    (repo / ".gpulint.yaml").write_text("render:\n  values: [ci/up/registry.yaml]\n")
    out, code = check(repo)
    assert SECRET not in out and code == 2 and ".gpulint.yaml:2: " in out, out


@needs_helm
def test_a_configured_values_fifo_is_a_config_error(repo: Path) -> None:
    os.mkfifo(repo / "ci" / "values.yaml")
    (repo / ".gpulint.yaml").write_text("render:\n  values: [ci/values.yaml]\n")
    out, code = check(repo, in_process=False)
    assert code == 2 and "'ci/values.yaml' is not a regular file" in out, out


SPECIAL = ["fifo", "dev-stdin", "proc", "folder"]


def special(repo: Path, kind: str) -> Path:
    target = {
        "fifo": repo / "ci" / "pipe",
        "dev-stdin": Path("/dev/stdin"),
        "proc": Path("/proc/self/environ"),
        "folder": repo / "ci",
    }[kind]
    if kind == "fifo":
        os.mkfifo(target)
    return target


@needs_helm
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_values_file_that_is_not_a_regular_file_is_refused(repo: Path, kind: str) -> None:
    """Named on the command line too: helm would wait on a FIFO, read its own stdin or a
    process's environment. (``check`` refuses a --values path that is not a file at once,
    exit 2; what gets past it, /proc's files, is refused at render time.)"""
    target = special(repo, kind)
    (repo / "ci" / "values.yaml").symlink_to(target)
    for given in ("ci/values.yaml", str(target)):
        out, code = check(repo, "--values", given, in_process=False)
        assert SECRET not in out
        if code == 2:
            assert f"--values: {given}: no such file" in out, out
        else:
            refused(out, code, f"values file {given} is ")


@pytest.mark.parametrize("kind", SPECIAL)
def test_refused_file_names_why(repo: Path, kind: str) -> None:
    from gpulint.render.helm.inputs import refused_file

    target = special(repo, kind)
    (repo / "ci" / "values.yaml").symlink_to(target)
    linked = refused_file(str(repo / "ci" / "values.yaml"), str(repo))
    named = refused_file(str(target), str(repo))  # the path itself, as a user may name it
    if kind in ("fifo", "folder"):
        assert linked == named == "is not a regular file (a folder, a FIFO, a device or a socket)"
    else:
        assert linked is not None and linked.startswith("is a symbolic link to a file outside")
        assert named is not None and named.startswith("is one of the system's files")
    (repo / "ci" / "values.yaml").unlink()
    (repo / "ci" / "values.yaml").write_text("token: gpu\n", encoding="utf-8")
    assert refused_file(str(repo / "ci" / "values.yaml"), str(repo)) is None
    assert refused_file(str(repo / "ci" / "missing.yaml"), str(repo)) is None  # helm says so


@needs_helm
def test_the_charts_own_values_linking_out_is_refused(repo: Path) -> None:
    (repo / "chart" / "values.yaml").unlink()
    (repo / "chart" / "values.yaml").symlink_to(repo.parent / "outside" / "registry.yaml")
    out, code = check(repo)
    refused(out, code, "chart/values.yaml is a symbolic link to a file outside the repository")


# -- links to folders in a chart (item 3) -----------------------------------------------------


@needs_helm
def test_a_folder_link_inside_the_repository_is_followed_the_control(repo: Path) -> None:
    (repo / "other").mkdir()
    (repo / "other" / "s").write_text("shared\n", encoding="utf-8")
    (repo / "chart" / "d").symlink_to("../other")
    out, code = check(repo)
    assert code == 1 and "nvidia.com/gpushared" in out, out  # helm follows the folder link


@needs_helm
def test_a_link_out_through_a_linked_folder_is_refused(repo: Path) -> None:
    (repo / "other").mkdir()
    (repo / "other" / "s").symlink_to(repo.parent / "outside" / "secret")
    (repo / "chart" / "d").symlink_to("../other")
    out, code = check(repo, in_process=False)
    refused(out, code, "chart/d/s is a symbolic link to a file outside the repository")


@needs_helm
def test_a_linked_folder_out_of_the_repository_is_refused(repo: Path) -> None:
    (repo / "chart" / "d").symlink_to(repo.parent / "outside")
    out, code = check(repo)
    refused(out, code, "chart/d is a symbolic link to a file outside the repository")


def _fifo_ignored(chart: Path) -> None:
    (chart / ".helmignore").write_text("d\n", encoding="utf-8")
    os.mkfifo(chart / "d")


HOLDS = "is a symbolic link to a folder the chart already holds"
LINK = "is a symbolic link to"
#: (what the chart gets, the refusal): helm v4 loops until the path is too long, fails on
#: some; older helm waits on a FIFO. gpulint refuses each before helm runs.
UNSAFE = {
    "loop": (lambda c: (c / "d").symlink_to("."), f"chart/d {HOLDS} (.)"),
    "parent": (lambda c: (c / "d").symlink_to(".."), f"chart/d/chart {HOLDS} (.)"),
    "twice": (lambda c: (c / "d").symlink_to("templates"), f"chart/templates {HOLDS} (d)"),
    "dangling": (lambda c: (c / "d").symlink_to("nowhere"), f"chart/d {LINK} nothing"),
    "dev-zero": (lambda c: (c / "d").symlink_to("/dev/zero"), f"chart/d {LINK} a file outside"),
    "fifo": (lambda c: os.mkfifo(c / "d"), "chart/d is not a regular file or folder"),
    "helmignored-fifo": (_fifo_ignored, "chart/d is not a regular file or folder"),
}  # fmt: skip


@needs_helm
@pytest.mark.parametrize("kind", UNSAFE)
def test_links_helm_would_loop_on_or_wait_on_are_refused(repo: Path, kind: str) -> None:
    make, words = UNSAFE[kind]
    make(repo / "chart")
    out, code = check(repo, in_process=False)
    refused(out, code, words)


def test_the_link_walk_ends_on_a_web_of_links(tmp_path: Path) -> None:
    """Each real folder is listed once: 30 folders each linking twice to the next would be
    2^30 paths to a walk that follows links blindly."""
    from gpulint.render.helm.inputs import links_outside

    (tmp_path / ".git").mkdir()
    chart = tmp_path / "chart"
    chart.mkdir()
    for i in range(30):
        (tmp_path / f"f{i}").mkdir()
    (chart / "x").symlink_to("../f0")
    for i in range(29):
        (tmp_path / f"f{i}" / "a").symlink_to(f"../f{i + 1}")
    assert links_outside(str(chart), str(tmp_path)) is None
    for i in range(29):
        (tmp_path / f"f{i}" / "b").symlink_to(f"../f{i + 1}")
    found = links_outside(str(chart), str(tmp_path))
    assert found == (
        str(chart / "x" / "b"),
        "is a symbolic link to a folder the chart already holds (x/a), which helm would read again",
    )
