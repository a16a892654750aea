"""Which template a rendered finding is put on: only the one helm's own header names.

helm starts every document it prints with ``---`` and ``# Source: <chart>/templates/...``. A
template can print ``# Source:`` lines of its own; they must never move a finding to the file
they name (a file outside the chart, a README, a workflow, a file under a ``per-file-ignores``
glob). The headers helm writes are checked too: a name that is not a template file in the
chart's folder leaves the finding at the chart's Chart.yaml, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from gpulint.render import ChartOptions
from gpulint.render.helm.chart import HelmRendered
from tests.conftest import gpulint_in_process
from tests.externals import helm, needs_helm

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 1
"""

#: What a hostile template prints before its pod, each naming another file.
FORGED = {
    "escape": "# Source: demo/../../../etc/passwd\n",
    "absolute": "# Source: /etc/passwd\n",
    "repository-file": "# Source: demo/templates/../../README.md\n",
    "workflow": "# Source: demo/templates/../../.github/workflows/ci.yaml\n",
    "ignored-template": "# Source: demo/templates/ignored.yaml\n",
    "after-a-marker": "---\n# Source: demo/templates/ignored.yaml\n",
    "mid-document": None,  # the header inside the pod, below `metadata:`
}


def _chart(repo: Path, name: str = "demo", folder: str = "demo") -> Path:
    chart = repo / folder
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n", encoding="utf-8"
    )
    return chart


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yaml").write_text("on: push\n", encoding="utf-8")
    (repo / "README.md").write_text("# demo\n", encoding="utf-8")
    chart = _chart(repo)
    (chart / "templates" / "ignored.yaml").write_text(POD.format(name="vendored"), encoding="utf-8")
    (repo / ".gpulint.yaml").write_text(
        "per-file-ignores:\n  demo/templates/ignored.yaml: [ALL]\n", encoding="utf-8"
    )
    return repo


def _run(repo: Path, fmt: str) -> str:
    path = helm()
    assert path is not None
    proc = gpulint_in_process(
        "check", "--render", "--helm", path, "--format", fmt, "--fail-on", "info", "demo", cwd=repo
    )
    # (GPU020 on gpulint's assumed taint is info: --fail-on info still counts it.)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


@needs_helm
@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_source_line_a_template_prints_never_moves_its_findings(
    case: str, tmp_path: Path
) -> None:
    repo = _repository(tmp_path)
    forged = FORGED[case]
    pod = POD.format(name="train")
    if forged is None:
        text = pod.replace("spec:\n", "# Source: demo/templates/ignored.yaml\nspec:\n")
    else:
        text = forged + pod
    (repo / "demo" / "templates" / "pod.yaml").write_text(text, encoding="utf-8")

    report = json.loads(_run(repo, "json"))
    own = [f for f in report["findings"] if f["object"]["name"] == "train"]
    assert own, report["findings"]
    for f in own:
        assert f["path"] == "demo/templates/pod.yaml", f
        assert not f["suppressed"], f  # the ignored template's glob does not reach it

    text_lines = [line for line in _run(repo, "text").splitlines() if "Pod/train" in line]
    assert text_lines and all(line.startswith("demo/templates/pod.yaml:") for line in text_lines)

    github = [line for line in _run(repo, "github").splitlines() if "Pod/train" in line]
    assert github and all(
        line.startswith(
            tuple(f"::{k} file=demo/templates/pod.yaml," for k in ("error", "warning", "notice"))
        )
        for line in github
    ), github

    sarif = json.loads(_run(repo, "sarif"))
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in sarif["runs"][0]["results"]
        if "Pod 'train'" in result["message"]["text"]
        for loc in result["locations"]
    }
    assert uris == {"demo/templates/pod.yaml"}, uris
    every = _uris(sarif["runs"][0]["results"])
    assert not [u for u in every if any(w in u for w in ("passwd", "README", "workflows"))]


def _uris(data: object) -> list[str]:
    """Every ``uri`` in a piece of SARIF."""
    if isinstance(data, dict):
        own = [data["uri"]] if isinstance(data.get("uri"), str) else []
        return own + [u for v in data.values() for u in _uris(v)]
    if isinstance(data, list):
        return [u for v in data for u in _uris(v)]
    return []


# -- the headers helm writes, checked ------------------------------------------------------------


def _rendered(chart: Path, name: str) -> HelmRendered:
    return HelmRendered("demo", str(chart), f"---\n# Source: {name}\n{POD}", ChartOptions())


@pytest.mark.parametrize(
    "name",
    [
        "demo/../../../etc/passwd",
        "/etc/passwd",
        "demo/templates/../../README.md",
        "demo/templates/./pod.yaml",
        "demo/templates//pod.yaml",
        "demo\\templates\\pod.yaml",
        "other/templates/pod.yaml",  # not the chart's name
        "demo/values.yaml",  # not a template
        "demo/templates",
        "demo/templates/missing.yaml",
        "demo/templates/sub",  # a folder
        "demo/templates/link.yaml",  # a link out of the chart
        "demo/charts/nosuch/templates/pod.yaml",
        "demo/templates/pod.yaml\x00",
    ],
)
def test_a_header_that_is_not_a_template_of_the_chart_falls_back(name: str, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    chart = _chart(repo)
    (repo / "README.md").write_text("# demo\n", encoding="utf-8")
    (chart / "values.yaml").write_text("x: 1\n", encoding="utf-8")
    (chart / "templates" / "pod.yaml").write_text(POD.format(name="p"), encoding="utf-8")
    (chart / "templates" / "sub").mkdir()
    os.symlink(repo / "README.md", chart / "templates" / "link.yaml")
    got = _rendered(chart, name).template_of(3)
    assert isinstance(got, str), got
    assert "not a template file in the chart's folder" in got
    assert got.isprintable()
    ok = _rendered(chart, "demo/templates/pod.yaml").template_of(3)
    assert getattr(ok, "path", None) == str(chart / "templates" / "pod.yaml")


def test_a_template_text_before_the_first_header_has_no_template(tmp_path: Path) -> None:
    chart = _chart(tmp_path)
    assert _rendered(chart, "demo/templates/pod.yaml").template_of(1) is None


@needs_helm
def test_subcharts_are_found_by_the_names_helm_prints(tmp_path: Path) -> None:
    """helm names a subchart by its Chart.yaml ``name:`` (or its ``alias``), not its folder;
    a packaged subchart's templates are members of its archive: its findings are at the
    archive, naming the member (never at the chart's Chart.yaml without a word)."""
    path = helm()
    assert path is not None
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    chart = _chart(repo)
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n"
        "- {name: inner, version: 0.1.0, alias: renamed}\n",
        encoding="utf-8",
    )
    sub = _chart(chart / "charts", "inner", "sub-folder")
    (sub / "templates" / "pod.yaml").write_text(POD.format(name="in-sub"), encoding="utf-8")
    deep = _chart(sub / "charts", "deepest", "deep-folder")
    (deep / "templates" / "pod.yaml").write_text(POD.format(name="in-deep"), encoding="utf-8")
    packed = _chart(tmp_path, "packed", "packed")
    (packed / "templates" / "pod.yaml").write_text(POD.format(name="in-tgz"), encoding="utf-8")
    subprocess.run(
        [path, "package", str(packed), "-d", str(chart / "charts")],
        check=True,
        capture_output=True,
    )
    report = json.loads(_run(repo, "json"))
    where = {f["object"]["name"]: f for f in report["findings"]}
    assert where["in-sub"]["path"] == "demo/charts/sub-folder/templates/pod.yaml"
    assert where["in-deep"]["path"] == (
        "demo/charts/sub-folder/charts/deep-folder/templates/pod.yaml"
    )
    tgz = where["in-tgz"]
    assert tgz["path"] == "demo/charts/packed-0.1.0.tgz"
    assert "member packed/templates/pod.yaml" in tgz["message"]
    assert "inside an archive" in tgz["message"]
