"""GL204: GPU content gpulint cannot place is said once per document, read lazily and
boundedly (gpulint/lint/unchecked.py); the shapes themselves are in tests/fixtures/rules/GL204."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.lint.unchecked import MAX_EMBEDDED
from gpulint.settings import Settings
from tests.conftest import gpulint_in_process, said

TEMPLATE = textwrap.dedent(
    """\
    spec:
      containers:
        - name: agent
          resources:
            limits:
              nvidia.com/gpu: 1
    """
)


def _gl204(text: str) -> list[tuple[int, str]]:
    linter = Linter(load_rules(), Settings(select=frozenset({"GL204"})))
    return [(f.line, said(f)) for f in linter.lint_text("x.yaml", text)]


def _config_map(data: dict[str, str], field: str = "data", kind: str = "ConfigMap") -> str:
    return json.dumps(
        {"apiVersion": "v1", "kind": kind, "metadata": {"name": "t"}, field: data}, indent=1
    )


def test_once_per_document_at_its_first_template() -> None:
    found = _gl204(_config_map({"a": TEMPLATE, "b": TEMPLATE}))
    assert len(found) == 1
    assert "inside ConfigMap/t key a" in found[0][1]


def test_a_text_over_the_size_limit_is_not_read() -> None:
    padded = TEMPLATE + "# " + "x" * MAX_EMBEDDED + "\n"
    assert _gl204(_config_map({"a": padded})) == []


def test_one_level_deep_only() -> None:
    inner = _config_map({"a": TEMPLATE})  # a ConfigMap's template inside a ConfigMap
    assert _gl204(_config_map({"outer": inner})) == []


def test_secret_string_data_counts_and_its_base64_data_does_not() -> None:
    assert len(_gl204(_config_map({"a": TEMPLATE}, "stringData", "Secret"))) == 1
    assert _gl204(_config_map({"a": "c3BlYzoK"}, "data", "Secret")) == []


def test_a_heredoc_without_a_gpu_is_quiet() -> None:
    script = "kubectl apply -f - <<EOF\nkind: Pod\nspec: {containers: [{name: a}]}\nEOF\n"
    assert _gl204(_config_map({"run.sh": script})) == []


def test_a_kustomize_patch_without_kind_names_its_kustomization(tmp_path: Path) -> None:
    (tmp_path / "deployment.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: vllm}\n"
        "spec:\n  template:\n    spec:\n      containers: [{name: vllm, image: v}]\n"
    )
    (tmp_path / "gpu.yaml").write_text("spec:\n  template:\n" + textwrap.indent(TEMPLATE, "    "))
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [deployment.yaml]\npatches:\n  - path: gpu.yaml\n"
        "    target: {kind: Deployment, name: vllm}\n"
    )
    result = gpulint_in_process("check", "-f", "json", "--select", "GL204", ".", cwd=tmp_path)
    findings = json.loads(result.stdout)["findings"]
    assert [(f["path"], f["line"]) for f in findings] == [("gpu.yaml", 8)]
    assert (
        "of this Kustomize patch (kustomization.yaml:3) was not checked: it has no apiVersion "
        "and kind" in said(findings[0])
    )
