"""A chart that stops at a ``required`` value (``{{ .Values.server.model | required "..."
}}``, ``{{ required "..." .Values.cache.dir }}``) is reported (GL200) at the values line that
leaves it empty, or at the mapping it goes under when no values file sets it; a value given
by ``--set`` stays at helm's template line. The fixture chart
tests/fixtures/render/charts/required is rendered with the real helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

REQUIRED = FIXTURES / "render" / "charts" / "required"
HELMS = helms()


def _gl200(tmp_path: Path, helm_path: str, *args: str) -> dict[str, Any]:
    shutil.copytree(REQUIRED, tmp_path / "required")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, "required",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    (found,) = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "GL200"]
    return dict(found)


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_an_empty_required_value_is_at_its_values_line(tmp_path: Path, helm_path: str) -> None:
    f = _gl200(tmp_path, helm_path)
    assert (f["path"], f["line"], f["column"]) == ("required/values.yaml", 4, 3)
    assert (
        "`required` at templates/deployment.yaml:1 asks for .Values.server.model" in (f["message"])
    )


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_required_key_no_file_sets_is_at_its_mapping(tmp_path: Path, helm_path: str) -> None:
    f = _gl200(tmp_path, helm_path, "--set", "server.model=meta-llama/Llama-3.1-8B-Instruct")
    assert (f["path"], f["line"]) == ("required/values.yaml", 6)
    assert "which no values file sets: add dir under cache here" in f["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_required_value_set_empty_by_a_flag_stays_at_helm_s_line(
    tmp_path: Path, helm_path: str
) -> None:
    f = _gl200(tmp_path, helm_path, "--set", "server.model=")
    assert (f["path"], f["line"]) == ("required/templates/deployment.yaml", 1)


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_placeholder_tpl_cannot_run_is_at_its_values_line(tmp_path: Path, helm_path: str) -> None:
    """A Grafana dashboard kept in values, its legend `{{instance}}`, run through `tpl`."""
    chart = tmp_path / "dash"
    (chart / "templates").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: dash\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(
        "dashboards:\n  gpu:\n    title: GPU utilisation\n"
        '    legend: "{{instance}} / {{gpu}}"   # GL200: tpl reads it as a template\n'
    )
    (chart / "templates" / "dashboards.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\ndata:\n"
        "  gpu.json: |\n    {{- tpl (toJson .Values.dashboards.gpu) . | nindent 4 }}\n"
    )
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "dash", cwd=tmp_path
    )
    (f,) = json.loads(proc.stdout)["findings"]
    assert (f["rule"], f["path"], f["line"], f["column"]) == ("GL200", "dash/values.yaml", 4, 13)
    assert (
        "`{{instance}}` here is run as a template by `tpl` at templates/dashboards.yaml:7"
        in (f["message"])
    )
