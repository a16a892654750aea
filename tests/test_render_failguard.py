"""A chart's guarded ``fail`` at the values key that made it run (gpulint/render/helm/failcalls.py):
NVIDIA's DRA driver refuses ``resources.gpus.enabled: true`` with ``{{- if and
.Values.resources.gpus.enabled (not .Values.gpuResourcesEnabledOverride) }}{{- fail ...}}``;
the user edits values.yaml, not the template. Guards that prove no key keep helm's line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpulint.render.helm.failcalls import guard_keys
from tests.conftest import FIXTURES
from tests.externals import helms, needs_helm
from tests.test_render_helm_sources import BATCH, _check

HELMS = helms()

GUARDS = [
    # (template, the fail's line, the keys proven true)
    ('{{- if .Values.gpu.shared }}\n{{- fail "no" }}\n{{- end }}\n', 2, [("gpu", "shared")]),
    (
        '{{- if and .Values.a.on (not .Values.b) $.Values.c }}\n{{ fail (printf "x") }}\n{{ end }}',
        2,
        [("a", "on"), ("c",)],
    ),
    ('{{ if (.Values.a) }}{{ fail "x" }}{{ end }}', 1, [("a",)]),
    # nothing proven: or, not, eq, an else branch, a range, a fail outside any block
    ('{{ if or .Values.a .Values.b }}\n{{ fail "x" }}\n{{ end }}', 2, []),
    ('{{ if not .Values.a }}\n{{ fail "x" }}\n{{ end }}', 2, []),
    ('{{ if eq .Values.a "b" }}\n{{ fail "x" }}\n{{ end }}', 2, []),
    ('{{ if .Values.a }}\nok\n{{ else }}\n{{ fail "x" }}\n{{ end }}', 4, []),
    ('{{ if .Values.a }}{{ range .Values.l }}\n{{ fail "x" }}\n{{ end }}{{ end }}', 2, []),
    ('{{ fail "x" }}\n', 1, []),
    # the block that holds the fail, not an earlier one
    (
        '{{ if .Values.a }}{{ end }}\n{{ if .Values.b }}\n{{/* c */}}{{ fail "x" }}{{ end }}',
        3,
        [("b",)],
    ),
]


@pytest.mark.parametrize(("text", "line", "keys"), GUARDS)
def test_the_keys_a_fail_s_if_proves_true(
    text: str, line: int, keys: list[tuple[str, ...]]
) -> None:
    assert guard_keys(text, line) == keys


GUARDED = """\
{{- if and .Values.gpu.shared (not .Values.allowShared) }}
{{- fail "gpu.shared needs allowShared: the chart's pods would share GPUs unmetered" }}
{{- end }}
"""


def _guarded(tmp_path: Path, values: str) -> Path:
    chart = tmp_path / "batch"
    shutil.copytree(BATCH, chart)
    (tmp_path / ".git").mkdir()
    shutil.rmtree(chart / "worker")
    shutil.rmtree(chart / "examples")  # linted as it is, no part of what helm renders
    text = (chart / "Chart.yaml").read_text(encoding="utf-8")
    (chart / "Chart.yaml").write_text(text.split("dependencies:")[0], encoding="utf-8")
    (chart / "values.yaml").write_text("gpu:\n  count: 1\n" + values, encoding="utf-8")
    (chart / "templates" / "validation.yaml").write_text(GUARDED, encoding="utf-8")
    return chart


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_guarded_fail_is_at_the_values_line_that_made_it_run(
    tmp_path: Path, helm_path: str
) -> None:
    _guarded(tmp_path, "  shared: true\nallowShared: false\n")
    findings = _check(tmp_path, "batch", helm_path=helm_path)
    assert [f["rule"] for f in findings] == ["GL200"]
    f = findings[0]
    assert (f["path"], f["line"], f["column"]) == ("batch/values.yaml", 3, 11)
    assert "gpu.shared needs allowShared" in f["message"]
    assert (
        "`fail` at templates/validation.yaml:2 runs because .Values.gpu.shared is true"
        in (f["message"])
    )
    # a values file given with -f that sets it: there, as helm applies it last
    (tmp_path / "prod.yaml").write_text("# prod\ngpu:\n  shared: yes\n", encoding="utf-8")
    f = _check(tmp_path, "--values", "prod.yaml", "batch", helm_path=helm_path)[0]
    assert (f["path"], f["line"]) == ("prod.yaml", 3)
    # set by --set: no file holds it, so at helm's line, naming the flag
    f = _check(tmp_path, "--set", "gpu.shared=true", "--values", "prod.yaml", "batch")[0]
    assert (f["path"], f["line"]) == ("batch/templates/validation.yaml", 2)
    assert "set by --set gpu.shared=true" in f["message"]


@needs_helm
def test_a_fail_no_values_key_is_proven_to_run_stays_at_helm_s_line(tmp_path: Path) -> None:
    chart = _guarded(tmp_path, "  shared: true\n")
    guard = GUARDED.replace("and .Values.gpu.shared", "or .Values.gpu.shared")
    (chart / "templates" / "validation.yaml").write_text(guard, encoding="utf-8")
    f = _check(tmp_path, "batch")[0]
    assert (f["rule"], f["path"], f["line"]) == ("GL200", "batch/templates/validation.yaml", 2)
    assert "runs because" not in f["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_kube_version_the_chart_refuses_is_at_its_kube_version_line(
    tmp_path: Path, helm_path: str
) -> None:
    chart = _guarded(tmp_path, "  shared: false\n")
    text = (chart / "Chart.yaml").read_text(encoding="utf-8")
    (chart / "Chart.yaml").write_text(text + 'kubeVersion: ">= 1.21.0-0 < 1.22.0-0"\n', "utf-8")
    f = _check(tmp_path, "batch", helm_path=helm_path)[0]
    line = len(text.splitlines()) + 1
    assert (f["rule"], f["path"], f["line"], f["column"]) == ("GL200", "batch/Chart.yaml", line, 14)
    assert "requires kubeVersion" in f["message"]
    assert f["message"].endswith(
        "with --kube-version, or `render: kube-version:` in the configuration)"
    )


GPU_COMPARE = FIXTURES / "render" / "charts" / "gpu-compare"


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_comparison_helm_refuses_names_the_set_flag_that_gave_the_value(
    tmp_path: Path, helm_path: str
) -> None:
    """leapfrogai's charts compare the GPU limit with ``gt $gpuLimit 0.0``: a values file's
    ``1`` is a decimal to helm and renders, ``--set ...=1`` is a whole number and the render
    fails. GL200 stays at the line helm names (no file holds the flag) and names the flag;
    the same number in a values file renders."""
    shutil.copytree(GPU_COMPARE, tmp_path / "whisper")
    (tmp_path / ".git").mkdir()
    flag = "--set=resources.limits.nvidia\\.com/gpu=1"
    (found,) = _check(tmp_path, flag, "whisper", helm_path=helm_path)
    assert (found["rule"], found["path"], found["line"]) == (
        "GL200",
        "whisper/templates/deployment.yaml",
        19,
    )
    assert (
        "the value `gt` compares, .Values.resources.limits.nvidia.com/gpu, is --set "
        "resources.limits.nvidia\\.com/gpu=1 on the command line"
    ) in found["message"]
    gpu = tmp_path / "gpu.yaml"
    gpu.write_text("resources:\n  limits:\n    nvidia.com/gpu: 1\n")
    assert _check(tmp_path, f"--values={gpu}", "whisper", helm_path=helm_path) == []


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_placeholder_helm_reads_as_a_function_is_said_to_be_one(
    tmp_path: Path, helm_path: str
) -> None:
    """A template another tool fills in (``{{api_key}}``, Jinja): helm stops at it as a call
    of an unknown function; GL200 is at the placeholder, saying what it is."""
    shutil.copytree(FIXTURES / "render" / "charts" / "jinja", tmp_path / "jinja")
    (tmp_path / ".git").mkdir()
    (found,) = _check(tmp_path, "jinja", helm_path=helm_path)
    assert (found["path"], found["line"], found["column"]) == (
        "jinja/templates/template.yaml",
        3,
        12,
    )
    assert found["message"].endswith(
        "({{api_key}} is a placeholder another tool fills in, not a Helm action: helm renders "
        "this template only once it is filled in)"
    )
