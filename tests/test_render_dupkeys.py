"""A key helm's output holds twice (YML002) is reported at the template line that writes the
repeat, its message naming the first copy's template line -- never a line of the rendered
output. A repeat the one ``range`` over values in its block wrote is at that values key when
it holds the rendered value; else it is shown at the copy the template writes, saying so.
The fixture chart tests/fixtures/render/charts/serving is rendered with the real helm (3
and 4)."""

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


def _findings(tmp_path: Path, helm_path: str, *args: str) -> list[dict[str, Any]]:
    shutil.copytree(SERVING, tmp_path / "serving")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, "serving", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stderr
    found: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return [f for f in found if f["rule"] == "YML002"]


def _one(findings: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    hits = [f for f in findings if f["object"]["kind"] == kind]
    assert len(hits) == 1, json.dumps(findings, indent=1)
    return hits[0]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_key_the_template_writes_twice_is_at_its_second_line(
    tmp_path: Path, helm_path: str
) -> None:
    f = _one(_findings(tmp_path, helm_path), "Service")
    # the second `selector:` (template line 12), the first named by its template line (6);
    # in the output they are lines 19 and 25
    assert (f["path"], f["line"], f["column"]) == ("serving/templates/service.yaml", 12, 3)
    assert f["message"].startswith("duplicate key 'selector' (first at line 6):")
    assert "shown at" not in f["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_repeat_a_range_writes_is_at_its_values_key(tmp_path: Path, helm_path: str) -> None:
    f = _one(_findings(tmp_path, helm_path), "ConfigMap")
    # `env.HF_HOME` in values.yaml, written by the range of configmap.yaml:8 after the
    # template's own HF_HOME (line 7)
    assert (f["path"], f["line"], f["column"]) == ("serving/values.yaml", 5, 3)
    assert f["message"].startswith(
        "duplicate key 'HF_HOME' (first at serving/templates/configmap.yaml:7):"
    )
    assert (
        "(written by serving/templates/configmap.yaml:8, its range over .Values.env)"
        in (f["message"])
    )


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_repeat_no_values_line_holds_says_it_is_not_at_the_line(
    tmp_path: Path, helm_path: str
) -> None:
    # --set gives the repeat a value no values file holds: no line is proven to write it
    f = _one(_findings(tmp_path, helm_path, "--set", "env.HF_HOME=/scratch/hf"), "ConfigMap")
    assert (f["path"], f["line"], f["column"]) == ("serving/templates/configmap.yaml", 7, 3)
    assert "first at line" not in f["message"]  # the output's line 9 is in no file
    assert "shown at the copy serving/templates/configmap.yaml writes, line 7" in f["message"]
    assert "it is not at this line" in f["message"]
