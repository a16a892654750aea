"""Mapping the findings of a large template costs its size once, not once per document or
finding: a template of several documents holding a 3.6 MB Go comment took 28.5 s to map
100 pods (0.55 s without the comment), each document's cut copying and indexing the whole
template again, and each range read scanning it whole. Counted as the template lines that
are indexed (the work), never with a timer; the places are those of the template cut
the slow way, and of the same template without the comment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import gpulint.render.helm.templatetext as textmap
from tests.conftest import gpulint_in_process
from tests.externals import helm, needs_helm

POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
spec:
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 0.5
"""
COMMENT_LINES = 20_000
PODS = 40


def _chart(tmp_path: Path, comment: bool) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    head = "{{/*\n" + ("x" * 99 + "\n") * COMMENT_LINES + "*/}}\n" if comment else ""
    body = "".join(POD.format(i=i) for i in range(PODS))
    (chart / "templates" / "pods.yaml").write_text(head + body, encoding="utf-8")
    return tmp_path


def _places(cwd: Path) -> list[tuple[str, int, int, str]]:
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", str(helm()), "--select", "GPU004",
        "chart", cwd=cwd,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    found: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return sorted((f["path"], f["line"], f["column"], f["object"]["name"]) for f in found)


@needs_helm
def test_a_large_template_of_many_documents_is_indexed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    indexed: list[int] = []
    lines = textmap._lines

    def counting(text: str) -> list[textmap.Line]:
        indexed.append(text.count("\n"))
        return lines(text)

    monkeypatch.setattr(textmap, "_lines", counting)
    places = _places(_chart(tmp_path / "big", comment=True))
    assert len(places) == PODS
    # The template is indexed once (and the chart's other files), not once per document.
    assert sum(indexed) < 2 * (COMMENT_LINES + PODS * POD.count("\n"))
    # Each pod at its own line: the places of the template without the comment, moved down.
    plain = _places(_chart(tmp_path / "small", comment=False))
    shift = COMMENT_LINES + 2
    assert places == [(p, line + shift, col, name) for p, line, col, name in plain]
