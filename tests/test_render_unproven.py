"""A finding left at a template line whose value is an action (``nvidia.com/gpu: {{ .gpus
}}`` inside ``range .Values.workers``) that no values line was traced to says the value is
not written there; a value the template writes as ``.Values.x`` is at its values line, as
before. The fixture chart tests/fixtures/render/charts/serving is rendered with the real
helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

SERVING = FIXTURES / "render" / "charts" / "serving"
HELMS = helms()


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_number_a_range_writes_says_it_is_not_at_the_line(tmp_path: Path, helm_path: str) -> None:
    shutil.copytree(SERVING, tmp_path / "serving")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "serving", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stderr
    hits = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "GPU004"]
    assert len(hits) == 1, json.dumps(hits, indent=1)
    f = hits[0]
    # the template line that writes it (workers.yaml:23), saying the value is not there
    assert (f["path"], f["line"], f["column"]) == ("serving/templates/workers.yaml", 23, 31)
    assert f["message"].endswith(
        "(shown at the template line that writes it, `{{ .gpus }}`: the value comes from the "
        "values through it, and no values line was traced as the one that holds it)"
    )
