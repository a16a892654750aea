"""Rendered findings at the place helm took the value from: a ``--set`` flag, a packaged
``.tgz`` subchart, a file a template inserts (``.Files.Get``), and helm's own errors at the
template and line they name; a manifest in a chart folder that helm never reads, named on
the command line, is linted as it is. Each shape renders the fixture chart
tests/fixtures/render/charts/batch with the real helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helm, helms, needs_helm

BATCH = FIXTURES / "render" / "charts" / "batch"
HELMS = helms()


def _chart(tmp_path: Path) -> Path:
    """The batch chart with its worker subchart packaged into charts/ (as `helm dependency
    build` leaves it), in a repository of its own."""
    chart = tmp_path / "batch"
    shutil.copytree(BATCH, chart)
    (tmp_path / ".git").mkdir()
    path = helm()
    assert path is not None
    (chart / "charts").mkdir()
    subprocess.run(
        [path, "package", str(chart / "worker"), "-d", str(chart / "charts")],
        check=True,
        capture_output=True,
    )
    shutil.rmtree(chart / "worker")
    return chart


def _check(tmp_path: Path, *args: str, helm_path: str | None = None) -> list[dict[str, Any]]:
    proc = gpulint_in_process(
        "check",
        "--format",
        "json",
        "--render",
        "--helm",
        helm_path or helm() or "",
        *args,
        cwd=tmp_path,
    )
    assert proc.returncode in (0, 1), proc.stderr
    findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return findings


def _at(findings: list[dict[str, Any]], rule: str, path: str) -> dict[str, Any]:
    hits = [f for f in findings if f["rule"] == rule and f["path"] == path]
    assert len(hits) == 1, json.dumps(findings, indent=1)
    return hits[0]


@needs_helm
def test_a_value_set_by_the_set_flag_is_the_flags_at_the_template_line(tmp_path: Path) -> None:
    _chart(tmp_path)
    plain = _check(tmp_path, "batch")
    assert not [f for f in plain if f["rule"] == "GPU004" and "server" in f["path"]]
    findings = _check(tmp_path, "--set", "gpu.count=0.5", "batch")
    f = _at(findings, "GPU004", "batch/templates/server.yaml")
    assert (f["line"], f["column"]) == (19, 31)  # `{{ .Values.gpu.count }}`, not `count: 1`
    assert "set by --set gpu.count=0.5" in f["message"]
    assert not [g for g in findings if g["path"] == "batch/values.yaml" and g["line"] == 4]
    # the last --set wins, and one flag may set several keys
    later = _check(tmp_path, "--set", "gpu.count=3", "--set", "x=1,gpu.count=0.5", "batch")
    assert (
        "set by --set gpu.count=0.5"
        in _at(later, "GPU004", "batch/templates/server.yaml")["message"]
    )


@needs_helm
def test_a_packaged_subchart_maps_to_the_parent_values_or_names_the_member(
    tmp_path: Path,
) -> None:
    _chart(tmp_path)
    findings = _check(tmp_path, "batch")
    value = _at(findings, "GPU004", "batch/values.yaml")  # worker.gpu.count in the parent
    assert (value["line"], value["column"]) == (7, 12)
    assert "member worker/templates/deployment.yaml, line 19" in value["message"]
    literal = _at(findings, "GPU020", "batch/charts/worker-0.1.0.tgz")
    assert (literal["line"], literal["column"]) == (1, 1)
    assert "member worker/templates/deployment.yaml, line 13" in literal["message"]
    assert "inside an archive" in literal["message"]
    assert not [f for f in findings if f["path"] == "batch/Chart.yaml"]
    # --set on the subchart's key: the flag's, shown at the archive with the member's line
    flagged = _check(tmp_path, "--set", "worker.gpu.count=0.25", "batch")
    f = _at(flagged, "GPU004", "batch/charts/worker-0.1.0.tgz")
    assert "member worker/templates/deployment.yaml, line 19" in f["message"]
    assert "set by --set worker.gpu.count=0.25 on the command line" in f["message"]
    assert "do not set it" not in f["message"]


@needs_helm
def test_a_file_a_template_inserts_is_where_its_value_is(tmp_path: Path) -> None:
    _chart(tmp_path)
    findings = _check(tmp_path, "batch")
    f = _at(findings, "GPU004", "batch/manifests/warmup-job.yaml")
    assert (f["line"], f["column"]) == (15, 31)
    assert "inserted by templates/warmup-job.yaml:1 with .Files.Get" in f["message"]
    # (.Files.Glob "agent/*").AsConfig: each file a ConfigMap key, its text the value
    f = _at(findings, "GL204", "batch/agent/pod-template.yaml")
    assert (f["line"], f["column"]) == (1, 1)
    assert "with .Files.Glob 'agent/*'" in f["message"]
    # A file whose value is not what was rendered is never pointed at.
    job = tmp_path / "batch" / "templates" / "warmup-job.yaml"
    job.write_text(
        '{{ .Files.Get "manifests/warmup-job.yaml" | replace "0.5" "0.25" }}\n', encoding="utf-8"
    )
    moved = _check(tmp_path, "batch")
    f = _at(moved, "GPU004", "batch/templates/warmup-job.yaml")
    assert (f["line"], f["column"]) == (1, 1)
    # tpl of the file: pointed at when what it rendered is what the file says
    job.write_text('{{ tpl (.Files.Get "manifests/warmup-job.yaml") . }}\n', encoding="utf-8")
    f = _at(_check(tmp_path, "batch"), "GPU004", "batch/manifests/warmup-job.yaml")
    assert (f["line"], f["column"]) == (15, 31)


ERRORS = [
    # (template text, line, column, words of the message)
    ('a: {{ fail "gpu.count is needed" }}\n', 1, 6, "gpu.count is needed"),
    ("a: 1\n{{ if }}\n", 2, 1, "missing value for if"),
    ("apiVersion: v1\nkind: ConfigMap\ndata:\n  a: {{ .Values.nope.x }}\n", 4, 15, "nil pointer"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n   bad: : x\n  - y\n", 4, 1, "line 4"),
]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
@pytest.mark.parametrize(("text", "line", "column", "words"), ERRORS)
def test_helm_errors_are_at_the_template_line_they_name(
    tmp_path: Path, helm_path: str, text: str, line: int, column: int, words: str
) -> None:
    chart = _chart(tmp_path)
    (chart / "templates" / "broken.yaml").write_text(text, encoding="utf-8")
    walked = _check(tmp_path, "batch", helm_path=helm_path)
    # examples/smoke-job.yaml is no part of the chart: linted as it is, beside the failure
    findings = [f for f in walked if not f["path"].startswith("batch/examples/")]
    assert [f["rule"] for f in findings] == ["GL200"]
    f = findings[0]
    assert (f["path"], f["line"], f["column"]) == ("batch/templates/broken.yaml", line, column)
    assert words in f["message"] and "\n" not in f["message"]
    assert "Use --debug" not in f["message"]


@needs_helm
def test_a_manifest_outside_templates_named_on_the_command_line_is_linted(
    tmp_path: Path,
) -> None:
    _chart(tmp_path)
    findings = _check(tmp_path, "batch/examples/smoke-job.yaml")
    f = _at(findings, "GPU004", "batch/examples/smoke-job.yaml")
    assert (f["line"], f["column"]) == (17, 31)
    assert not [f for f in findings if f["path"].startswith("batch/") and "tgz" in f["path"]]
    # a file a template inserts is the chart's: its findings are mapped to it
    inserted = _check(tmp_path, "batch/manifests/warmup-job.yaml")
    f = _at(inserted, "GPU004", "batch/manifests/warmup-job.yaml")
    assert "inserted by templates/warmup-job.yaml:1" in f["message"]
    assert {f["path"] for f in inserted} >= {"batch/templates/server.yaml"}
    # a template named so is still its chart's
    rendered = _check(tmp_path, "batch/templates/server.yaml")
    assert {f["path"] for f in rendered} >= {"batch/templates/server.yaml", "batch/values.yaml"}
    # walking the folder says the same of each file: the example as it is, the inserted
    # file as the chart's
    walked = _check(tmp_path, "batch")
    f = _at(walked, "GPU004", "batch/examples/smoke-job.yaml")
    assert (f["line"], f["column"]) == (17, 31)
    f = _at(walked, "GPU004", "batch/manifests/warmup-job.yaml")
    assert "inserted by templates/warmup-job.yaml:1" in f["message"]
    # and walking the example's own folder lints it alone, not the chart around it
    alone = _check(tmp_path, "batch/examples")
    assert {f["path"] for f in alone} == {"batch/examples/smoke-job.yaml"}
    assert "GPU004" in {f["rule"] for f in alone} and "GL201" not in {f["rule"] for f in alone}


def test_helm_error_lines_are_joined_into_one_readable_line() -> None:
    from gpulint.render.helm.sources import readable

    # a chart's `fail` message over several lines (NVIDIA's device plugin, without --namespace)
    stderr = (
        "Error: execution error at (nvidia-device-plugin/templates/validation.yml:19:4): \n"
        "Running in the 'default' namespace is not recommended.\n"
        "Set 'allowDefaultNamespace=true' to bypass this error.\n\n"
        "Use --debug flag to render out invalid YAML\n"
    )
    assert readable(stderr, 1, True) == (
        "execution error: Running in the 'default' namespace is not recommended. "
        "Set 'allowDefaultNamespace=true' to bypass this error."
    )
    assert "validation.yml:19:4" in readable(stderr, 1, False)


@pytest.mark.parametrize(
    ("assignments", "path", "expected"),
    [
        (("gpu.count=2",), ("gpu", "count"), "gpu.count=2"),
        (("gpu=null",), ("gpu", "count"), "gpu=null"),  # a key above the value
        (("a=1,gpu.count=2",), ("gpu", "count"), "gpu.count=2"),
        (("gpu.count=1", "gpu.count=2"), ("gpu", "count"), "gpu.count=2"),  # the last wins
        (("limits.nvidia\\.com/gpu=1",), ("limits", "nvidia.com/gpu"), "limits.nvidia\\.com/gpu=1"),
        (("vols[0].name=x",), ("vols", 0, "name"), "vols[0].name=x"),
        (("vols[0].name=x",), ("vols", 1, "path"), "vols[0].name=x"),  # the list is replaced
        (("args={a,b}",), ("args",), "args={a,b}"),
        (("m[0][12].x=1",), ("m", 3), "m[0][12].x=1"),  # indexes after a name: its list
        (("a[b]=1",), ("a[b]",), "a[b]=1"),  # not an index: part of the name
        (("gpu.counter=2",), ("gpu", "count"), None),
        (("gpu.count.x=2",), ("gpu", "count"), None),  # below it: the file still holds the rest
    ],
)
def test_set_flags_are_read_as_helm_reads_them(
    assignments: tuple[str, ...], path: tuple[object, ...], expected: str | None
) -> None:
    from gpulint.render.helm.setflags import set_by

    found = set_by(assignments, path)
    assert found == (None if expected is None else f"--set {expected} on the command line")


def test_render_set_is_parsed_once_however_many_findings_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A configuration's `render: set:` of a megabyte and 150 findings took 22.8 s: every
    finding parsed every assignment again. Now each assignment is parsed once per run."""
    import gpulint.render.helm.setflags as sources

    parsed: list[str] = []
    real = sources.set_keys

    def counting(assignment: str) -> list[tuple[tuple[object, ...], str]]:
        parsed.append(assignment)
        return real(assignment)

    monkeypatch.setattr(sources, "set_keys", counting)
    configured = ",".join(f"workers.w{i}.gpus={i}" for i in range(2_000))
    assignments = (configured, f"run{id(parsed)}=1")  # text of its own: nothing parsed yet
    for i in range(0, 2_000, 10):
        found = sources.set_by(assignments, ("workers", f"w{i}", "gpus", "x"), 1)
        assert found == (
            f"workers.w{i}.gpus={i} in the configuration's `render: set:`, passed as --set"
        )
    assert sources.set_by(assignments, (f"run{id(parsed)}",), 1) is not None
    assert parsed == list(assignments)


@needs_helm
def test_a_value_set_in_the_configuration_says_so(tmp_path: Path) -> None:
    _chart(tmp_path)
    (tmp_path / ".gpulint.yaml").write_text("render:\n  set: [gpu.count=0.5]\n", encoding="utf-8")
    f = _at(_check(tmp_path, "batch"), "GPU004", "batch/templates/server.yaml")
    assert "gpu.count=0.5 in the configuration's `render: set:`" in f["message"]
    f = _at(
        _check(tmp_path, "--set", "gpu.count=0.25", "batch"),
        "GPU004",
        "batch/templates/server.yaml",
    )
    assert "set by --set gpu.count=0.25 on the command line" in f["message"]


@needs_helm
def test_a_template_of_several_documents_is_matched_in_the_finding_s_own(tmp_path: Path) -> None:
    _chart(tmp_path)
    f = _at(_check(tmp_path, "batch"), "GPU020", "batch/templates/gateway.yaml")
    assert f["line"] == 26  # the Deployment's pod `spec:`, not the Service's `spec:` at 8


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_missing_dependency_is_at_its_name_in_chart_yaml(tmp_path: Path, helm_path: str) -> None:
    chart = tmp_path / "batch"
    shutil.copytree(BATCH, chart)
    (tmp_path / ".git").mkdir()
    shutil.rmtree(chart / "worker")  # declared in Chart.yaml, not vendored into charts/
    walked = _check(tmp_path, "batch", helm_path=helm_path)
    findings = [f for f in walked if not f["path"].startswith("batch/examples/")]  # no part
    assert [(f["rule"], f["path"], f["line"], f["column"]) for f in findings] == [
        ("GL200", "batch/Chart.yaml", 7, 11)
    ]
    assert "helm dependency build" in findings[0]["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_v1_chart_s_missing_dependency_is_in_requirements_yaml(
    tmp_path: Path, helm_path: str
) -> None:
    chart = tmp_path / "rapids"
    (chart / "templates").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v1\nname: rapids\nversion: 0.1.0\n")
    (chart / "requirements.yaml").write_text(
        "dependencies:\n- name: dask\n  version: 4.5.0\n  repository: https://helm.dask.org/\n"
    )
    (chart / "values.yaml").write_text("{}\n")
    findings = _check(tmp_path, "rapids", helm_path=helm_path)
    assert [(f["rule"], f["path"], f["line"], f["column"]) for f in findings] == [
        ("GL200", "rapids/requirements.yaml", 2, 9)
    ]


def test_a_chart_s_files_linked_out_of_the_tree_are_never_read(tmp_path: Path) -> None:
    """Deciding which files of a chart's folder are the chart's reads its top files and
    templates, but never through a link: a top file linked to a template outside the
    repository is not taken for the chart's template (which would read it), and the walk
    refuses it as it refuses any link out of the repository."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\ndata:\n  a: {{ .Files.Get "examples/job.yaml" }}\n',
        encoding="utf-8",
    )
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    chart = repo / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n", "utf-8")
    (chart / "linked.yaml").symlink_to(outside / "secret.yaml")
    (chart / "templates" / "linked.yaml").symlink_to(outside / "secret.yaml")
    (chart / "examples").mkdir()
    (chart / "examples" / "job.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
        "  - name: c\n    image: nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 0.5\n",
        encoding="utf-8",
    )
    proc = gpulint_in_process("check", "--format", "json", "--no-cache", ".", cwd=repo)
    found = {(f["rule"], f["path"]) for f in json.loads(proc.stdout)["findings"]}
    assert ("YML005", "chart/linked.yaml") in found
    # the linked template's .Files.Get was not read: the example is linted as itself
    assert ("GPU004", "chart/examples/job.yaml") in found
