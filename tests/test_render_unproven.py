"""A number a ``range`` writes (``nvidia.com/gpu: {{ .gpus }}`` inside ``range
.Values.workers``) is at its values line, traced by the render that marks numbers
(gpulint/render/helm/markers.py); one no values line is traced to (a ``--set`` value, which
no file holds) stays at the template line and says the value is not written there. The
fixture chart tests/fixtures/render/charts/serving is rendered with the real helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

SERVING = FIXTURES / "render" / "charts" / "serving"
HELMS = helms()


def _gpu004(tmp_path: Path, helm_path: str, *args: str) -> dict[str, Any]:
    if not (tmp_path / "serving").exists():
        shutil.copytree(SERVING, tmp_path / "serving")
        (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, "serving",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    hits = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "GPU004"]
    assert len(hits) == 1, json.dumps(hits, indent=1)
    found: dict[str, Any] = hits[0]
    return found


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_number_a_range_writes_is_at_its_values_line(tmp_path: Path, helm_path: str) -> None:
    f = _gpu004(tmp_path, helm_path)
    # values.yaml:10 `gpus: 0.5`, the line to edit, not the template's `{{ .gpus }}`
    assert (f["path"], f["line"], f["column"]) == ("serving/values.yaml", 10, 11)
    assert f["message"].endswith("(used by templates/workers.yaml:23 as .Values.workers.0.gpus)")


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_number_no_values_line_holds_says_it_is_not_at_the_line(
    tmp_path: Path, helm_path: str
) -> None:
    f = _gpu004(tmp_path, helm_path, "--set", "workers[0].name=embed,workers[0].gpus=0.5")
    # the template line that writes it (workers.yaml:23), saying the value is not there
    assert (f["path"], f["line"], f["column"]) == ("serving/templates/workers.yaml", 23, 31)
    assert f["message"].endswith(
        "(shown at the template line that writes it, `{{ .gpus }}`: the value comes from the "
        "values through it, and no values line was traced as the one that holds it)"
    )
