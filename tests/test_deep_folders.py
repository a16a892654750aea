"""A folder thousands of levels deep is walked (or reported), never a RecursionError.

``os.walk`` recursed once per level before Python 3.12, so a pull request committing a tree
1,500 folders deep ended the whole run with a traceback. The walks of the linted tree use
:func:`gpulint.util.walk.walk` instead; these tests run the real command line on such trees, and
check that the walk is ``os.walk``'s, folder for folder, on an ordinary tree.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpulint.util.walk import Listings, walk
from tests.conftest import gpulint_subprocess

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: train
    image: registry.example.com/train:1.0
    resources:
      limits:
        nvidia.com/gpu: 1.5
"""

_DIR = os.O_RDONLY | os.O_DIRECTORY


def build_deep(top: Path, levels: int, name: str = "a") -> None:
    """``top/a/a/.../a/pod.yaml``, ``levels`` folders deep. Built through folder descriptors:
    the deepest paths are longer than the system takes (and os.makedirs recurses)."""
    top.mkdir()
    fd = os.open(top, _DIR)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("pod.yaml", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        with os.fdopen(out, "w", encoding="utf-8") as fh:
            fh.write(POD.format(name="deep"))
    finally:
        os.close(fd)


def remove_deep(top: Path, name: str = "a") -> None:
    """Undo :func:`build_deep` without recursion (shutil.rmtree recurses before 3.12)."""
    fds = [os.open(top, _DIR)]
    try:
        while True:
            try:
                fds.append(os.open(name, _DIR, dir_fd=fds[-1]))
            except FileNotFoundError:
                break
        while len(fds) > 1:
            inner = fds.pop()
            for entry in os.listdir(inner):
                os.unlink(entry, dir_fd=inner)
            os.close(inner)
            os.rmdir(name, dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[tuple[Path, list[int]]]:
    """A repository whose ``k8s`` holds a pod on top and deep trees added by the test."""
    (tmp_path / ".git").mkdir()
    k8s = tmp_path / "k8s"
    k8s.mkdir()
    (k8s / "top.yaml").write_text(POD.format(name="top"), encoding="utf-8")
    trees: list[int] = []
    yield tmp_path, trees
    for levels in trees:
        top = k8s / f"d{levels}"
        (name,) = os.listdir(top)  # the tree's first folder: its folders' name
        remove_deep(top, name)


def check(repo: Path, *args: str) -> tuple[dict[str, object], int, str]:
    proc = gpulint_subprocess("check", "--format", "json", *args, "k8s", cwd=repo, timeout=300)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout), proc.returncode, proc.stderr


#: Past Python's 1,000 frames, so that a walk recursing once per level fails; no deeper:
#: every path a walk stats is resolved level by level by the system, so a run's time grows
#: with the square of the depth (tests/test_deep_commands.py, LEVELS).
LEVELS = 1_200
#: A folder name long enough that a path passes the system's PATH_MAX (4,096 bytes) past
#: Python's 1,000 frames but not much further: four bytes a level, so at about the 1,020th.
#: With one-letter names it took 2,040 levels, and four times the time.
LONG = "aaa"


@pytest.mark.parametrize("render", [False, True], ids=["plain", "render"])
def test_a_pod_1200_folders_deep_is_linted(deep: tuple[Path, list[int]], render: bool) -> None:
    repo, trees = deep
    build_deep(repo / "k8s" / f"d{LEVELS}", LEVELS)
    trees.append(LEVELS)
    report, code, _ = check(repo, *(["--render"] if render else []))
    findings = report["findings"]
    assert isinstance(findings, list)
    where = {(f["object"]["name"], f["rule"]) for f in findings}
    assert {("top", "GPU004"), ("deep", "GPU004")} <= where
    bottom = next(f["path"] for f in findings if f["object"]["name"] == "deep")
    assert bottom == f"k8s/d{LEVELS}/" + "a/" * LEVELS + "pod.yaml"
    assert code == 1


def test_a_folder_deeper_than_the_system_takes_is_reported(deep: tuple[Path, list[int]]) -> None:
    """1,100 levels of three-letter names: the path passes PATH_MAX (at about the 1,020th
    level) before the pod, so the folder where the system refuses the path is reported
    (YML005), and everything else is still linted."""
    repo, trees = deep
    levels = 1_100
    assert len(f"k8s/d{levels}/" + f"{LONG}/" * levels) > 4_096
    build_deep(repo / "k8s" / f"d{levels}", levels, LONG)
    trees.append(levels)
    report, code, _ = check(repo)
    findings = report["findings"]
    assert isinstance(findings, list)
    [refused] = [f for f in findings if f["rule"] == "YML005"]
    assert "File name too long" in refused["message"]
    assert refused["path"].startswith(f"k8s/d{levels}/{LONG}/{LONG}/")
    assert {f["object"]["name"] for f in findings if f["rule"] == "GPU004"} == {"top"}
    assert code == 1


def test_the_walk_is_os_walk_folder_for_folder(tmp_path: Path) -> None:
    """Same folders, same order, same ``onerror`` calls at the same moment, pruning and
    reordering in place honoured, links to folders listed but not followed."""
    for folder in ("b/x", "a/y/z", "c", "skip/inner", "locked/inner"):
        (tmp_path / folder).mkdir(parents=True)
    for file in ("a/1.yaml", "a/y/z/2.yml", "b/x/3.yaml", "top.yaml", "skip/inner/4.yaml"):
        (tmp_path / file).write_text("a: 1\n", encoding="utf-8")
    (tmp_path / "link").symlink_to("a")
    (tmp_path / "dangling").symlink_to("nowhere")
    (tmp_path / "locked").chmod(0)
    try:

        def run(walker: object, *listings: Listings) -> list[object]:
            events: list[object] = []
            for dirpath, dirnames, filenames in walker(  # type: ignore[operator]
                str(tmp_path), lambda e: events.append(("error", e.filename)), *listings
            ):
                events.append((dirpath, sorted(dirnames), sorted(filenames)))
                dirnames[:] = sorted((d for d in dirnames if d != "skip"), reverse=True)
            return events

        ours = run(walk)
        assert ours == run(os.walk)
        if os.geteuid() != 0:  # root lists a folder whatever its mode
            assert ("error", str(tmp_path / "locked")) in ours
        # A run's walks share its listings: every walk after the first reuses them, with
        # the same steps (the walk before's pruning not carried over).
        listings = Listings()
        assert run(walk, listings) == ours
        assert run(walk, listings) == ours
        assert listings.get(str(tmp_path / "a" / "y")) is not None
    finally:
        (tmp_path / "locked").chmod(0o755)
