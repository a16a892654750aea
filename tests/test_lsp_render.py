"""``gpulint lsp`` on a Helm chart and a Kustomize overlay, with a real client (pytest-lsp)
and the real helm and kubectl: a template is never linted as YAML (GL201, not YML001);
with the ``gpulint.render`` setting the chart is rendered and the findings that map into
the open file are the ones ``gpulint check --render`` reports there."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helm, needs_helm, needs_kustomize
from tests.lsp_support import SERVER
from tests.test_lsp import _start, diagnostics_for, open_file

CHART = FIXTURES / "render" / "charts" / "inference"
OVERLAY = FIXTURES / "render" / "kustomize"

_HELM = helm()
#: The server finds helm on its PATH, as `gpulint check --render` without --helm does.
ENV = {
    **os.environ,
    "PATH": os.pathsep.join(
        [str(Path(_HELM).parent)] if _HELM and Path(_HELM).name == "helm" else []
    )
    + os.pathsep
    + os.environ.get("PATH", ""),
}


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(CHART, tmp_path / "inference")
    return tmp_path / "inference"


def _cli(folder: Path, file: Path) -> list[tuple[str, int, int]]:
    """(code, 0-based line, 0-based column) of `check --render` findings in ``file``."""
    tool = ["--helm", _HELM] if _HELM else []
    proc = gpulint_in_process("check", "--format", "json", "--render", *tool, ".", cwd=folder)
    assert proc.returncode in (0, 1), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    rel = file.relative_to(folder).as_posix()
    return sorted(
        (f["rule"], f["line"] - 1, f["column"] - 1)
        for f in report["findings"]
        if f["path"] == rel and not f["suppressed"]
    )


def _got(diagnostics: Any) -> list[tuple[str, int, int]]:
    return sorted((d.code, d.range.start.line, d.range.start.character) for d in diagnostics)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=ENV))
async def plain(lsp_client: LanguageClient, tmp_path: Path) -> Any:
    """A server with the default settings (no rendering)."""
    await _start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_template_is_never_linted_as_yaml(plain: LanguageClient, tmp_path: Path) -> None:
    chart = _copy(tmp_path)
    for file in (chart / "templates" / "deployment.yaml", chart / "values.yaml"):
        uri = open_file(plain, file)
        got = await diagnostics_for(plain, uri)
        assert [(d.code, d.severity, d.range.start.line) for d in got] == [
            ("GL201", t.DiagnosticSeverity.Information, 0)
        ], got
        assert got[0].message.startswith("part of the Helm chart ")
        assert "`gpulint.render` setting" in got[0].message
    # A manifest in the chart that helm does not render is linted as it is, as by check.
    example = chart / "examples" / "job.yaml"
    example.parent.mkdir()
    example.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [\n")
    got = await diagnostics_for(plain, open_file(plain, example))
    assert [d.code for d in got] == ["YML001"]


@needs_helm
@pytest.mark.asyncio
async def test_the_render_setting_renders_the_chart(plain: LanguageClient, tmp_path: Path) -> None:
    chart = _copy(tmp_path)
    values, job = chart / "values.yaml", chart / "templates" / "warmup-job.yaml"
    uri = open_file(plain, values)
    assert [d.code for d in await diagnostics_for(plain, uri)] == ["GL201"]
    plain.workspace_did_change_configuration(
        t.DidChangeConfigurationParams(settings={"gpulint": {"render": True}})
    )
    got = await diagnostics_for(plain, uri)
    assert _got(got) == _cli(chart, values)
    assert ("GPU004", 7, 9) in _got(got)  # count: 0.5, values.yaml:8:10
    job_uri = open_file(plain, job)
    got = await diagnostics_for(plain, job_uri)
    assert _got(got) == _cli(chart, job) and ("GPU001", 19, 14) in _got(got)
    # A template that no longer renders: the failure, on the open file's first line.
    broken = job.read_text(encoding="utf-8").replace("{{", "{{ .Nope.nope ", 1)
    job.write_text(broken, encoding="utf-8")
    plain.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri=job_uri)))
    for _ in range(4):
        got = await diagnostics_for(plain, job_uri)
        if any(d.code == "GL200" for d in got):
            break
    assert [d.code for d in got] == ["GL200"]
    # Off again: GL201.
    plain.workspace_did_change_configuration(
        t.DidChangeConfigurationParams(settings={"gpulint": {"render": False}})
    )
    got = await diagnostics_for(plain, uri)
    assert [d.code for d in got] == ["GL201"]


@needs_kustomize
@pytest.mark.asyncio
async def test_an_overlay_patch_shows_what_the_build_maps_into_it(
    plain: LanguageClient, tmp_path: Path
) -> None:
    shutil.copytree(OVERLAY, tmp_path / "kustomize")
    patch = tmp_path / "kustomize" / "overlays" / "gpu" / "gpu-patch.yaml"
    uri = open_file(plain, patch)
    # Without the setting, a patch is linted as the file it is (as check without --render).
    assert "GPU004" in {d.code for d in await diagnostics_for(plain, uri)}
    plain.workspace_did_change_configuration(
        t.DidChangeConfigurationParams(settings={"gpulint": {"render": True}})
    )
    got = await diagnostics_for(plain, uri)
    assert _got(got) == _cli(tmp_path, patch)
    assert ("GPU004", 13, 30) in _got(got)  # gpu-patch.yaml:14:31, the value it writes


@pytest.mark.asyncio
async def test_without_render_a_template_shows_what_it_writes_as_text(
    plain: LanguageClient, tmp_path: Path
) -> None:
    """Without the render setting, the open template and values file get GL201 and what
    `gpulint check` (without --render) reports there: the lines written as plain text
    (GPU024, GPU025, GPU010, GPU046) and the values no template reads (GPU082)."""
    project = FIXTURES / "projects" / "gpu024-fail-chart-templates-as-written"
    shutil.copytree(project, tmp_path / "p")
    chart = tmp_path / "p" / "charts" / "triton"
    proc = gpulint_in_process("check", "--format", "json", ".", cwd=chart)
    report: dict[str, Any] = json.loads(proc.stdout)
    for file in (chart / "templates" / "deployment.yaml", chart / "templates" / "hpa.yaml"):
        rel = file.relative_to(chart).as_posix()
        want = sorted(
            (f["rule"], f["line"] - 1, f["column"] - 1)
            for f in report["findings"]
            if f["path"] == rel
        )
        got = await diagnostics_for(plain, open_file(plain, file))
        assert want and _got(got) == sorted([("GL201", 0, 0), *want])
