"""Kustomize overlays built with the real ``kubectl kustomize``: each finding at the file,
line and column where its value is written, or at the kustomization entry that brings its
object in, saying it is a fallback (tests/fixtures/render/kpos/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, ROOT, gpulint_in_process
from tests.externals import needs_kustomize

CASES = FIXTURES / "render" / "kpos"
FALLBACK = "gpulint could not tell"


def placed(folder: Path, cwd: Path = ROOT) -> set[tuple[str, int, int, str, bool]]:
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", str(folder.relative_to(cwd)), cwd=cwd
    )
    assert proc.returncode in (0, 1, 2), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return {
        (
            Path(f["path"]).relative_to(folder.relative_to(cwd)).as_posix(),
            f["line"],
            f["column"],
            f["rule"],
            FALLBACK in f["message"],
        )
        for f in report["findings"]
    }


@needs_kustomize
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # Deployment/prod-vllm-router is router.yaml's vllm-router, not vllm.yaml's vllm
        # (whose name is part of it): names are matched exactly after the namePrefix.
        ("names", {("base/router.yaml", 20, 31, "GPU004", False)}),
        # The last writer of each value: a JSON6902 patch file after an earlier strategic
        # merge patch of another value, an inline strategic merge patch, an inline op list.
        (
            "patched",
            {
                ("gpu/trainer-gpus.yaml", 4, 10, "GPU004", False),
                ("gpu/kustomization.yaml", 21, 37, "GPU004", False),
                ("gpu/kustomization.yaml", 28, 16, "GPU004", False),
            },
        ),
        # Operations on list items by index, a later one moving the earlier one's item:
        # each named item is the one its operation wrote, wherever it is now.
        (
            "shifted",
            {
                ("server.yaml", 19, 31, "GPU004", False),
                ("kustomization.yaml", 20, 31, "GPU004", False),
            },
        ),
        # Renamed by a /metadata/name JSON patch, then suffixed: still the base's object.
        ("renamed", {("base/server.yaml", 19, 31, "GPU004", False)}),
        # Written by a component's patch (after the resources, before the namePrefix).
        ("component", {("a100/a100.yaml", 14, 31, "GPU004", False)}),
        # Written by a patch whose target selects by label (not followed): a fallback.
        ("selected", {("kustomization.yaml", 6, 1, "GPU004", True)}),
        # Written by a replacement, which is not followed: the entry naming the object's
        # file, and the message says so (server.yaml's own value is another).
        ("replaced", {("kustomization.yaml", 7, 1, "GPU004", True)}),
    ],
)  # fmt: skip
def test_a_finding_is_where_its_value_is_written(
    case: str, expected: set[tuple[str, int, int, str, bool]]
) -> None:
    assert placed(CASES / case) == expected


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    return repo


def _report(repo: Path) -> list[dict[str, Any]]:
    proc = gpulint_in_process("check", "--format", "json", "--render", ".", cwd=repo)
    assert proc.returncode in (0, 1, 2), proc.stderr
    findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return findings


SERVER = (CASES / "renamed" / "base" / "server.yaml").read_text(encoding="utf-8")


@needs_kustomize
def test_a_kustomize_error_is_at_the_file_and_line_it_names(tmp_path: Path) -> None:
    repo = _tree(
        tmp_path,
        {
            "broken/kustomization.yaml": "resources:\n  - server.yaml\n  - config.yaml\n",
            "broken/server.yaml": SERVER,
            "broken/config.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: [b\n",
            "twice/kustomization.yaml": "resources:\n  - server.yaml\n  - copy.yaml\n",
            "twice/server.yaml": SERVER,
            "twice/copy.yaml": SERVER,
        },
    )
    got = {(f["path"], f["line"], f["rule"]): f["message"] for f in _report(repo)}
    assert set(got) == {
        ("broken/config.yaml", 5, "GL200"),  # the YAML error's own line, in its own file
        ("twice/kustomization.yaml", 3, "GL200"),  # the entry that adds the object again
    }
    for message in got.values():
        assert (
            "\n" not in message and ";" not in message and "must build at directory" not in message
        )
    assert got[("twice/kustomization.yaml", 3, "GL200")].endswith(
        "copy.yaml: may not add resource with an already registered id: "
        "Deployment.v1.apps/vllm.[noNs]"
    )


@needs_kustomize
def test_a_missing_generator_file_is_not_blamed_on_remote_bases(tmp_path: Path) -> None:
    repo = _tree(
        tmp_path,
        {
            "app/kustomization.yaml": (
                "resources:\n  - server.yaml\nconfigMapGenerator:\n  - name: engine\n"
                "    files:\n      - engine.conf\n"
            ),
            "app/server.yaml": SERVER,
        },
    )
    [finding] = _report(repo)
    assert (finding["path"], finding["line"]) == ("app/kustomization.yaml", 6)
    assert "engine.conf' is not a file or folder in the repository" in finding["message"]
    assert "remote" not in finding["message"]


@needs_kustomize
def test_overlays_that_build_are_linted_when_the_root_naming_them_fails(tmp_path: Path) -> None:
    """A root that names every environment (kubeflow/manifests' example/) and fails on one
    of them: the failure is reported where it is, and the others are still linted."""
    repo = _tree(
        tmp_path,
        {
            "all/kustomization.yaml": "resources:\n  - ../gpu\n  - ../remote\n",
            "also/kustomization.yaml": "resources:\n  - ../remote\n  - ../gpu\n",
            "gpu/kustomization.yaml": "resources:\n  - server.yaml\n",
            "gpu/server.yaml": SERVER,
            "remote/kustomization.yaml": (
                "resources:\n  - https://github.com/kubernetes-sigs/lws//config/default?ref=v0.8.0\n"
            ),
        },
    )
    got = [(f["path"], f["line"], f["rule"]) for f in _report(repo)]
    # Two roots fail on the same base and both name gpu/: each finding once.
    assert sorted(got) == [
        ("gpu/server.yaml", 19, "GPU004"),
        ("remote/kustomization.yaml", 2, "GL200"),
    ]
