"""Kustomize overlays from a hostile pull request: never a network request, a hang or a leak.

kustomize reads a kustomization's fields ignoring case (``Resources:``, ``re\u017fources:``: it
decodes with Go's encoding/json) and fetches a URL or clones a git repository named in any
field that holds paths (``configurations``, ``openapi.path``, generator files, ...); gpulint
refuses all of them before ``kubectl kustomize`` runs, and reads the kustomization file itself
as it reads a manifest. Each case runs the real program and a local listener that must see no
connection.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_cmd, gpulint_in_process
from tests.externals import Listener, needs_kustomize

SECRET = "s3cr3t-token-7f1d2e"


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


def _repository(tmp_path: Path, kustomization: str) -> Path:
    repo = tmp_path / "repo"
    overlay = repo / "overlay"
    overlay.mkdir(parents=True)
    (repo / ".git").mkdir()
    (overlay / "kustomization.yaml").write_text(kustomization, encoding="utf-8")
    (overlay / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
        "    - name: c\n      image: busybox:1.36\n",
        encoding="utf-8",
    )
    return repo


def _findings(repo: Path) -> tuple[list[dict[str, Any]], str]:
    proc = gpulint_in_process("check", "--render", "--format", "json", "overlay", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"], proc.stdout + proc.stderr


def _decoy(repo: Path, text: str) -> None:
    """A local file where the remote reference would point as a path: kustomize still fetches
    (it tries a URL or git repository first), so its existence must not let the overlay pass."""
    for found in re.findall(r"((?:[A-Za-z]+://|//|git@|github\.com)[^\s'\"\]]*)", text):
        path = Path(os.path.normpath(repo / "overlay" / found))
        if path.is_relative_to(repo):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("kind: ConfigMap\n", encoding="utf-8")


REMOTE = [
    ("Resources:\n  - pod.yaml\n  - http://127.0.0.1:{port}/x.yaml\n", 3),
    ("RESOURCES:\n  - https://127.0.0.1:{port}/x.yaml\n", 2),
    # the long s (U+017F) folds to "s" in Go, as the Kelvin sign does to "k"
    ("re\u017fources:\n  - http://127.0.0.1:{port}/x.yaml\n", 2),
    ("resources:\n  - pod.yaml\nconfigurations:\n  - http://127.0.0.1:{port}/c.yaml\n", 4),
    ("resources:\n  - pod.yaml\nopenapi:\n  path: http://127.0.0.1:{port}/o.json\n", 4),
    ("resources:\n  - git@127.0.0.1:x/y.git\n", 2),
    ('resources:\n  - "ssh://127.0.0.1:{port}/x"\n', 2),
    ("resources:\n  - github.com/org/repo//dir?ref=v1\n", 2),
    ("resources:\n  - HTTP://127.0.0.1:{port}/x.yaml\n", 2),
    ("resources:\n  - //127.0.0.1:{port}/x.yaml\n", 2),
    ("resources:\n  - pod.yaml\npatches:\n  - Path: http://127.0.0.1:{port}/p.yaml\n", 4),
    ("resources:\n  - pod.yaml\npatchesJson6902:\n  - path: http://127.0.0.1:{port}/p\n", 4),
    ("resources: [pod.yaml]\npatchesStrategicMerge:\n  - http://127.0.0.1:{port}/p\n", 3),
    ("resources: [pod.yaml]\nreplacements:\n  - path: http://127.0.0.1:{port}/r\n", 3),
    ("resources: [pod.yaml]\ncrds:\n  - http://127.0.0.1:{port}/crd.yaml\n", 3),
    (
        "resources: [pod.yaml]\nconfigMapGenerator:\n  - name: c\n"
        "    FILES:\n      - k=http://127.0.0.1:{port}/f\n",
        5,
    ),
    (
        "resources: [pod.yaml]\nsecretGenerator:\n  - name: s\n    env: http://127.0.0.1:{port}/e\n",
        4,
    ),
    (
        "resources: [pod.yaml]\nconfigMapGenerator:\n  - name: c\n"
        "    envs: ['http://127.0.0.1:{port}/e']\n",
        4,
    ),
]


@needs_kustomize
@pytest.mark.parametrize(("text", "line"), REMOTE, ids=[str(i) for i in range(len(REMOTE))])
def test_a_remote_reference_in_any_spelling_or_field_is_refused(
    tmp_path: Path, listener: Listener, text: str, line: int
) -> None:
    repo = _repository(tmp_path, text.format(port=listener.port))
    _decoy(repo, text.format(port=listener.port))
    findings, _ = _findings(repo)
    listener.close()
    assert listener.connections == 0
    assert [(f["rule"], f["path"], f["line"]) for f in findings] == [
        ("GL200", "overlay/kustomization.yaml", line)
    ]
    assert f"kustomization.yaml:{line}:" in findings[0]["message"]
    assert "never fetches remote bases" in findings[0]["message"]


@needs_kustomize
def test_a_local_folder_named_like_a_git_url_is_refused(tmp_path: Path) -> None:
    # kustomize tries a git URL before a local folder of the same name
    repo = _repository(tmp_path, "resources:\n  - github.com/org/repo\n")
    base = repo / "overlay" / "github.com" / "org" / "repo"
    base.mkdir(parents=True)
    (base / "kustomization.yaml").write_text("resources: []\n", encoding="utf-8")
    findings, _ = _findings(repo)
    assert [f["rule"] for f in findings] == ["GL200"]
    assert "URL or git repository" in findings[0]["message"]


@needs_kustomize
@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("resources:\n  - pod.yaml\nresourcess:\n  - x.yaml\n", 3),
        ("resources:\n  - pod.yaml\nre\u017f\u00f3urces:\n  - x.yaml\n", 3),
        ("resources:\n  - pod.yaml\npatches:\n  - paths: x.yaml\n", 4),
    ],
)
def test_a_key_that_is_no_kustomize_field_is_refused(tmp_path: Path, text: str, line: int) -> None:
    repo = _repository(tmp_path, text)
    findings, _ = _findings(repo)
    assert [(f["rule"], f["line"]) for f in findings] == [("GL200", line)]
    assert "unknown field" in findings[0]["message"]


@needs_kustomize
@pytest.mark.parametrize(
    "text",
    [
        # go-yaml decodes !!binary: kustomize would read http://127.0.0.1:9/x.yaml
        "resources:\n  - pod.yaml\n  - !!binary aHR0cDovLzEyNy4wLjAuMTo5L3gueWFtbA==\n",
        "resources:\n  - pod.yaml\nresources:\n  - http://127.0.0.1:9/x.yaml\n",
        "resources:\n  - pod.yaml\n---\n: : [\n",
        "resources:\n  - 0o17\n",
    ],
    ids=["binary-tag", "duplicate-key", "later-document-error", "not-a-string"],
)
def test_yaml_kustomize_may_read_otherwise_is_refused(tmp_path: Path, text: str) -> None:
    repo = _repository(tmp_path, text)
    (repo / "overlay" / "aHR0cDovLzEyNy4wLjAuMTo5L3gueWFtbA==").write_text("", encoding="utf-8")
    _decoy(repo, text)
    findings, _ = _findings(repo)
    assert [f["rule"] for f in findings] == ["GL200"]
    assert findings[0]["message"].startswith("not built: overlay/kustomization.yaml:")


@needs_kustomize
def test_a_kustomization_over_the_size_bound_is_refused(tmp_path: Path) -> None:
    padding = "# padding\n" * ((1 << 20) // 10 + 1)
    repo = _repository(tmp_path, padding + "resources:\n  - http://127.0.0.1:9/x.yaml\n")
    findings, _ = _findings(repo)
    assert [f["rule"] for f in findings] == ["GL200"]
    assert "larger than 1 MiB" in findings[0]["message"]


@needs_kustomize
def test_a_kustomization_linked_to_stdin_finishes_promptly(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "")
    kustomization = repo / "overlay" / "kustomization.yaml"
    kustomization.unlink()
    kustomization.symlink_to("/dev/stdin")
    proc = subprocess.Popen(
        [*gpulint_cmd(), "check", "--render", "--format", "json", "overlay"],
        cwd=repo,
        stdin=subprocess.PIPE,  # never written to nor closed: a read of it never ends
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        assert proc.stdin is not None
        proc.stdin.close()
    assert proc.returncode == 1, err
    findings = json.loads(out)["findings"]
    assert [(f["rule"], f["path"]) for f in findings] == [("GL200", "overlay/kustomization.yaml")]
    assert "outside the repository" in findings[0]["message"]


@needs_kustomize
@pytest.mark.parametrize("where", ["overlay", "base"])
def test_a_kustomization_linked_outside_is_refused_unread(tmp_path: Path, where: str) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(f"resources:\n  - {SECRET}.yaml\n", encoding="utf-8")
    repo = _repository(tmp_path, "resources:\n  - ../base\n" if where == "base" else "")
    (repo / "base").mkdir()
    kustomization = repo / where / "kustomization.yaml"
    kustomization.unlink(missing_ok=True)
    kustomization.symlink_to(outside)
    findings, output = _findings(repo)
    assert SECRET not in output
    assert [f["rule"] for f in findings] == ["GL200"]
    assert "outside the repository" in findings[0]["message"]


@needs_kustomize
def test_a_patch_linked_to_a_device_is_refused(tmp_path: Path) -> None:
    repo = _repository(tmp_path, "resources: [pod.yaml]\npatches:\n  - path: patch.yaml\n")
    os.symlink("/dev/zero", repo / "overlay" / "patch.yaml")
    findings, _ = _findings(repo)
    assert [(f["rule"], f["line"]) for f in findings] == [("GL200", 3)]
    assert "outside the repository" in findings[0]["message"]


@needs_kustomize
def test_an_overlay_in_mixed_case_still_builds(tmp_path: Path) -> None:
    # kustomize reads these fields: the overlay is built, not refused
    repo = _repository(tmp_path, "Resources:\n  - pod.yaml\nnamePrefix: a-\n")
    findings, _ = _findings(repo)
    assert not any(f["rule"] == "GL200" for f in findings)
