"""A tree 1,200 folders deep, inside a Helm chart (hidden from helm by its ``.helmignore``)
and beside it, through every command: ``check``, ``check --render``, ``inspect`` (plain and
rendered), ``rules``, ``config`` and the language server's render. Each ends as it would
without the deep folders -- no traceback, its usual exit code, findings at their lines --
because every walk of a folder holds its folders on a list (``os.walk`` recursed once per
level: the values tracer, the chart's inserted files and the language server's render stamp
stopped with a ``RecursionError``, and the finding fell back to the chart's first line).
``--render --fix`` and ``--diff`` are tested with the fix check's own copy of the chart."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import gpulint_subprocess
from tests.externals import helm, needs_helm
from tests.lsp_support import SERVER
from tests.test_deep_folders import build_deep, remove_deep
from tests.test_lsp import _start, diagnostics_for, open_file
from tests.test_lsp_render import ENV

#: Past Python's 1,000 frames, so that a walk recursing once per level fails; no deeper:
#: every path a walk stats is resolved level by level by the system, so a run's time grows
#: with the square of the depth (2,000 levels took four times as long and proved no more).
LEVELS = 1_200

VALUES = "workers:\n  a: {gpus: 0.5, image: registry.example/train:1}\n"
TEMPLATE = """\
{{- range $name, $w := .Values.workers }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ $name }}
spec:
  containers:
  - name: main
    image: {{ $w.image }}
    resources:
      limits:
        nvidia.com/gpu: {{ $w.gpus }}
{{- end }}
"""
#: Where GPU004 belongs: the values line that writes 0.5 (values.yaml:2:13).
AT_VALUES = ("chart/values.yaml", 2, 13)
#: Under templates/, so that every walk of the chart meets it (the tracer's of templates/,
#: the render stamp's of the chart). ``check`` on a deep tree beside a chart:
#: tests/test_deep_folders.py.
DEEP = ("chart/templates/deep",)


def _repo(top: Path) -> Path:
    (top / ".git").mkdir(parents=True, exist_ok=True)
    chart = top / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(VALUES, encoding="utf-8")
    (chart / "templates" / "pods.yaml").write_text(TEMPLATE, encoding="utf-8")
    (chart / ".helmignore").write_text("deep/\n", encoding="utf-8")
    for rel in DEEP:
        build_deep(top / rel, LEVELS)
    return top


@pytest.fixture(scope="module")
def repo() -> Iterator[Path]:
    """The repository in a folder of a short name: the deepest paths (2,400 characters of
    folders) then stay under the system's PATH_MAX, so every folder is walked, not refused."""
    top = Path(tempfile.mkdtemp(prefix="gl", dir="/tmp"))
    try:
        yield _repo(top)
    finally:
        for rel in DEEP:
            if (top / rel).exists():
                remove_deep(top / rel)
        shutil.rmtree(top)


def _run(repo: Path, *args: str) -> tuple[int, str, str]:
    proc = gpulint_subprocess(*args, cwd=repo, timeout=300)
    for out in (proc.stdout, proc.stderr):
        assert "Traceback" not in out and "internal error" not in out, out[-3000:]
        assert "RecursionError" not in out, out[-3000:]
    return proc.returncode, proc.stdout, proc.stderr


def _findings(stdout: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(stdout)["findings"]
    return found


def test_check_lints_a_chart_holding_a_deep_tree(repo: Path) -> None:
    """Without --render the chart is one GL201; the pod at the bottom of the hidden tree is
    part of the chart's folder, not a manifest of its own (helm never reads it)."""
    code, out, _ = _run(repo, "check", "--format", "json", ".")
    assert code == 0
    assert [f["rule"] for f in _findings(out)] == ["GL201"]


@needs_helm
def test_check_render_maps_a_chart_holding_a_deep_tree(repo: Path) -> None:
    code, out, _ = _run(
        repo, "check", "--format", "json", "--render", "--helm", str(helm()), "chart"
    )
    assert code == 1
    [found] = [f for f in _findings(out) if f["rule"] == "GPU004"]
    assert (found["path"], found["line"], found["column"]) == AT_VALUES, found["message"]


@needs_helm
def test_inspect_plain_and_rendered(repo: Path) -> None:
    code, out, _ = _run(repo, "inspect", "--format", "json", ".")
    assert code == 0 and json.loads(out)
    code, out, _ = _run(repo, "inspect", "--render", "--helm", str(helm()), "chart")
    assert code == 0 and "Pod/a" in out


@pytest.mark.parametrize("command", [["rules"], ["config"], ["config", "--format", "json"]])
def test_rules_and_config(repo: Path, command: list[str]) -> None:
    code, out, _ = _run(repo, *command)
    assert code == 0 and out


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV))
async def server(lsp_client: LanguageClient, tmp_path: Path) -> Any:
    await _start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


@needs_helm
@pytest.mark.asyncio
async def test_the_language_server_renders_a_chart_holding_a_deep_tree(
    server: LanguageClient, repo: Path
) -> None:
    """The render stamp (the newest change under the chart, rendered again when it moves)
    walks the chart: the values line still gets its finding. The module's tree: the
    server only reads it."""
    server.workspace_did_change_configuration(
        t.DidChangeConfigurationParams(settings={"gpulint": {"render": True}})
    )
    uri = open_file(server, repo / "chart" / "values.yaml")
    got = await diagnostics_for(server, uri)
    codes = {(d.code, d.range.start.line + 1, d.range.start.character + 1) for d in got}
    assert ("GPU004", *AT_VALUES[1:]) in codes, got


@needs_helm
def test_a_values_file_1500_levels_deep_is_traced(tmp_path: Path) -> None:
    """The values merged, marked and written for the tracing render are walked with a list
    (they recursed once per level, and json's encoder too): the finding is at its values
    line beside a value 1,500 lists deep (Python stops at 1,000 frames). The lists are
    written in block style (``- - - ...``): the same nested value as ``[[[...]]]``, which
    ruamel's scanner reads in time quadratic in its flow depth (25 s here), a cost of the
    parser that this test is not about."""
    (tmp_path / ".git").mkdir()
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    deep = "deep:\n" + "- " * 1_500 + "[]\n"
    (chart / "values.yaml").write_text(VALUES + deep, encoding="utf-8")
    (chart / "templates" / "pods.yaml").write_text(TEMPLATE, encoding="utf-8")
    code, out, _ = _run(
        tmp_path, "check", "--format", "json", "--render", "--helm", str(helm()), "chart"
    )
    assert code == 1
    [found] = [f for f in _findings(out) if f["rule"] == "GPU004"]
    assert (found["path"], found["line"], found["column"]) == AT_VALUES, found["message"]


@pytest.mark.parametrize("command", [["check", "."], ["config"], ["inspect", "."]])
def test_a_configuration_thousands_of_levels_deep_is_a_configuration_error(
    tmp_path: Path, command: list[str]
) -> None:
    """Its digest (``repr``) and the schema's validation recursed once per level: an
    internal error. Now it is refused, at its line, before anything walks it."""
    (tmp_path / ".git").mkdir()
    deep = "[" * 3_000 + "]" * 3_000
    (tmp_path / ".gpulint.yaml").write_text(f"rules:\n  GPU001: {deep}\n", encoding="utf-8")
    code, _, err = _run(tmp_path, *command)
    assert code == 2
    assert err.startswith(
        "gpulint: error: .gpulint.yaml:2: rules.GPU001: nested more than 64 levels deep"
    ), err
