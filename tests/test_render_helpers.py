"""A pod without tolerations whose template writes them through an ``include``d helper
(``{{- include "serving.scheduling" . }}``, the helper reading ``.Values.tolerations``) is
reported at that values key when the values file helm applies last sets it empty, naming
the helper's line; a value no file holds (``--set``) leaves it at the template. The fixture
chart tests/fixtures/render/charts/serving is rendered with the real helm (3 and 4)."""

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


def _gpu020(tmp_path: Path, helm_path: str, *args: str) -> dict[str, Any]:
    shutil.copytree(SERVING, tmp_path / "serving")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, "serving", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stderr
    hits = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "GPU020"]
    assert len(hits) == 1, json.dumps(hits, indent=1)
    found: dict[str, Any] = hits[0]
    return found


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_tolerations_a_helper_writes_are_at_their_values_key(
    tmp_path: Path, helm_path: str
) -> None:
    f = _gpu020(tmp_path, helm_path)
    assert (f["path"], f["line"], f["column"]) == ("serving/values.yaml", 7, 1)
    assert (
        "(used by templates/_helpers.tpl:7, included by templates/deployment.yaml as "
        ".Values.tolerations, which is empty here" in f["message"]
    )
    helper = [r for r in f["related"] if r["kind"] == "template"]
    assert [(r["path"], r["line"]) for r in helper] == [("serving/templates/_helpers.tpl", 7)]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_tolerations_no_values_file_holds_stay_at_the_template(
    tmp_path: Path, helm_path: str
) -> None:
    f = _gpu020(tmp_path, helm_path, "--set", "tolerations[0].key=node.kubernetes.io/not-ready")
    assert (f["path"], f["line"]) == ("serving/templates/deployment.yaml", 14)
    assert "used by" not in f["message"]
