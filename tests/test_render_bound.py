"""A template that binds a module's values to a variable once (``{{- $module := index
.Values "modules" "text-embedder" -}}``), writes its documents inside ``{{ if index $module
"enabled" }} ... {{ else }} ... {{ end }}`` and reads ``index $module "tolerations" |
default .Values.tolerations``: the finding is at the module's own key in values.yaml, the
chain named. The fixture chart tests/fixtures/render/charts/bound is rendered with
the real helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

BOUND = FIXTURES / "render" / "charts" / "bound"
HELMS = helms()


def _findings(tmp_path: Path, helm_path: str, *args: str) -> list[dict[str, Any]]:
    shutil.copytree(BOUND, tmp_path / "bound")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, "bound", cwd=tmp_path
    )
    assert proc.returncode in (0, 1), proc.stderr
    findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return findings


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_bound_module_s_own_key_is_the_place(tmp_path: Path, helm_path: str) -> None:
    (found,) = _findings(tmp_path, helm_path)
    assert found["rule"] == "GPU020"
    assert (found["path"], found["line"], found["column"]) == ("bound/values.yaml", 11, 5)
    message = found["message"]
    assert "as .Values.modules.text-embedder.tolerations, this object's own" in message
    assert "else .Values.tolerations: both are empty here" in message
    assert "only from" not in message
