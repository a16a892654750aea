"""A finding on an item of a list a template writes (an engine's argument) is at that item's
line when the list is written item by item as text, at its values line when a ``range``
writes it from values, and at the list's key, saying so, when template logic writes items
before it and nothing traces it; a key path the template
writes only in part says it is shown at the deepest key written (gpulint/render/helm/untraced.py).
Rendered with the real helm (3 and 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_in_process
from tests.externals import helms, needs_helm

HELMS = helms()

POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
spec:
  selector: {{matchLabels: {{app: v}}}}
  template:
    metadata: {{labels: {{app: v}}}}
    spec:
      tolerations:
        - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.7.2
          args:
{args}
          resources:
            limits:
              nvidia.com/gpu: 1
"""
LITERAL = """\
            - --model
            - meta-llama/Llama-3.1-8B
            - --tensor-parallel-size
            - "4"   # expect: GPU041"""
RANGED = """\
            - --model
            - meta-llama/Llama-3.1-8B
            {{- range .Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}"""


def _one(
    tmp_path: Path, helm_path: str, rule: str, template: str, values: str, *flags: str
) -> dict[str, Any]:
    """The one ``rule`` finding of a chart ``c`` of one template, rendered with the real helm."""
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n", "utf-8")
    (chart / "values.yaml").write_text(values, encoding="utf-8")
    (chart / "templates" / "vllm.yaml").write_text(template, encoding="utf-8")
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *flags, "c", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (found,) = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == rule]
    return dict(found)


def _gpu041(
    tmp_path: Path, helm_path: str, args: str, values: str = "", *flags: str
) -> dict[str, Any]:
    return _one(tmp_path, helm_path, "GPU041", POD.format(args=args), values, *flags)


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_an_argument_written_as_text_is_at_its_line(tmp_path: Path, helm_path: str) -> None:
    f = _gpu041(tmp_path, helm_path, LITERAL)
    assert (f["path"], f["line"], f["column"]) == ("c/templates/vllm.yaml", 19, 15)
    assert "(shown at" not in f["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_an_argument_a_range_writes_is_at_its_values_line(tmp_path: Path, helm_path: str) -> None:
    values = 'extraArgs: ["--tensor-parallel-size", "4"]\n'
    f = _gpu041(tmp_path, helm_path, RANGED, values)
    # the "4" in values.yaml, traced by the numbers' marked render ("4" -> "4.000002")
    assert (f["path"], f["line"], f["column"]) == ("c/values.yaml", 1, 39)
    # which line of the template's list writes it is not known: no template line is named
    assert f["message"].endswith(" (as .Values.extraArgs.1)")


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_an_argument_no_values_line_is_traced_to_is_at_the_list_saying_so(
    tmp_path: Path, helm_path: str
) -> None:
    # given by --set, which helm applies after every values file: no file holds it
    f = _gpu041(tmp_path, helm_path, RANGED, "", "--set", "extraArgs={--tensor-parallel-size,4}")
    assert (f["path"], f["line"]) == ("c/templates/vllm.yaml", 15)  # `args:`
    assert f["message"].endswith(
        "(shown at `args:`: template logic writes items of this list, so which of its items "
        "in the template this one is is not known, and no values line was traced as the one "
        "that holds what it reports)"
    )


SIDECARS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: local-ai
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      containers:
        {{- range .Values.sidecars }}
        - name: {{ .name }}
          image: {{ .image }}
        {{- end }}
        - name: local-ai
          image: quay.io/go-skynet/local-ai:latest-gpu-nvidia-cuda-12
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
"""


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_container_after_a_range_of_containers_names_no_template_line(
    tmp_path: Path, helm_path: str
) -> None:
    # LocalAI's chart writes its sidecars' range before the main container: which template
    # item the rendered containers[0] is depends on the values, so no template line is named
    values = "sidecars: []\nresources:\n  requests:\n    nvidia.com/gpu: 1\n"
    f = _one(tmp_path, helm_path, "GPU001", SIDECARS, values)
    assert (f["path"], f["line"]) == ("c/values.yaml", 4)  # traced: `nvidia.com/gpu: 1`
    assert f["message"].endswith("(as .Values.resources.requests.nvidia.com/gpu)")
