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
        # Renamed by a /metadata/name JSON patch, then suffixed: still the base's object.
        ("renamed", {("base/server.yaml", 19, 31, "GPU004", False)}),
        # Written by a replacement, which is not followed: the entry naming the object's
        # file, and the message says so (server.yaml's own value is another).
        ("replaced", {("kustomization.yaml", 7, 1, "GPU004", True)}),
    ],
)  # fmt: skip
def test_a_finding_is_where_its_value_is_written(
    case: str, expected: set[tuple[str, int, int, str, bool]]
) -> None:
    assert placed(CASES / case) == expected
