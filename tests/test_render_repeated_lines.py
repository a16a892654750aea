"""A finding on a line whose text its template holds more than once (a CRD's description
repeated in each version, as controller-gen writes them) is at the template line of the same
rank when helm's output of that template holds the text as many times; it was at the file's
first line. The fixture chart tests/fixtures/render/charts/crds is rendered with the real
helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

CRDS = FIXTURES / "render" / "charts" / "crds"
HELMS = helms()


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_each_repeat_is_at_its_own_template_line(tmp_path: Path, helm_path: str) -> None:
    shutil.copytree(CRDS, tmp_path / "crds")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "crds", cwd=tmp_path
    )
    assert proc.returncode in (0, 1), proc.stderr
    found = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "YML001"]
    assert [(f["path"], f["line"], f["column"]) for f in found] == [
        ("crds/templates/gpuslices.yaml", 21, 13),
        ("crds/templates/gpuslices.yaml", 33, 13),
    ]
    assert not any("first line" in f["message"] for f in found)
