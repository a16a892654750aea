"""Memory that does not grow with the corpus: lazy discovery and reports written per file.

The ratio itself (peak RSS at 20,000 files against 2,000) is measured by bench/compare.py;
these tests pin the behaviour it rests on: directories are walked as files are linted, each
file's findings leave as soon as the file is done, and nothing is kept when the report
streams.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.runner import run
from gpulint.model import Finding
from gpulint.util.discover import Target, targets

from .test_cli import GPU_POD


def _pod(n: int) -> str:
    """test_cli's GPU pod (requests without limits, no toleration), named apart."""
    return GPU_POD.replace("name: trainer\n", f"name: trainer-{n}\n", 1)


def _tree(root: Path, files: int) -> list[Path]:
    paths = []
    for n in range(files):
        path = root / "k8s" / f"pod-{n:03d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_pod(n), encoding="utf-8")
        paths.append(path)
    return paths


def test_directories_are_walked_as_targets_are_consumed(tmp_path: Path) -> None:
    _tree(tmp_path, 2)
    found, missing = targets([str(tmp_path / "k8s"), str(tmp_path / "nowhere")])
    assert missing == [str(tmp_path / "nowhere")]  # known before anything is walked
    (tmp_path / "k8s" / "pod-999.yaml").write_text(_pod(999), encoding="utf-8")
    names = [Path(t.label).name for t in found]
    assert names == ["pod-000.yaml", "pod-001.yaml", "pod-999.yaml"]


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        (["k8s", "k8s/pod-000.yaml"], ["k8s/pod-000.yaml", "k8s/pod-001.yaml"]),
        (["k8s/pod-001.yaml", "k8s"], ["k8s/pod-001.yaml", "k8s/pod-000.yaml"]),
        (["k8s", "k8s"], ["k8s/pod-000.yaml", "k8s/pod-001.yaml"]),
        (["k8s", "./k8s/pod-000.yaml"], ["k8s/pod-000.yaml", "k8s/pod-001.yaml"]),
        ([".", "k8s"], ["k8s/pod-000.yaml", "k8s/pod-001.yaml", "other/x.yaml"]),
        (["k8s/pod-000.yaml", "k8s/../k8s/pod-000.yaml"], ["k8s/pod-000.yaml"]),
        (["k8s/pod-000.yaml", "other"], ["k8s/pod-000.yaml", "other/x.yaml"]),
    ],
)
def test_each_file_is_listed_once_whatever_the_paths_overlap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paths: list[str], expected: list[str]
) -> None:
    _tree(tmp_path, 2)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.yaml").write_text("a: 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    found, missing = targets(paths)
    assert not missing
    assert [t.label for t in found] == [os.path.normpath(p) for p in expected]


def _recording(paths: list[Path], log: list[str]) -> Iterator[Target]:
    for path in paths:
        log.append(f"walk {path.name}")
        yield Target(str(path), str(path))


def test_each_file_is_reported_before_the_next_is_walked(tmp_path: Path, linter: Linter) -> None:
    paths = _tree(tmp_path, 3)
    log: list[str] = []

    def on_file(findings: list[Finding]) -> None:
        log.append(f"report {Path(findings[0].path).name}")

    report = run(linter, _recording(paths, log), jobs=1, on_file=on_file, keep_findings=False)
    assert log == [f"{step} pod-{n:03d}.yaml" for n in range(3) for step in ("walk", "report")]
    assert report.findings == []  # streamed, not kept
    assert report.files == 3


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_streamed_run_counts_what_a_kept_run_holds(
    tmp_path: Path, linter: Linter, jobs: int
) -> None:
    """Enough files for worker processes with ``jobs=2``: the same findings, in order."""
    paths = _tree(tmp_path, 70)
    (tmp_path / "k8s" / "pod-005.yaml").write_text(
        "# gpulint: disable-file=GPU020\n" + _pod(5), encoding="utf-8"
    )
    kept = run(linter, (Target(str(p), str(p)) for p in paths), jobs=1)
    streamed: list[Finding] = []
    report = run(
        linter,
        (Target(str(p), str(p)) for p in paths),
        jobs=jobs,
        on_file=streamed.extend,
        keep_findings=False,
    )
    assert streamed == kept.findings
    assert report.findings == []
    assert report.counts() == kept.counts()
    assert report.suppressed == kept.suppressed == 1
    assert report.files == kept.files == 70
    assert report.failed(max(f.severity for f in kept.findings))
