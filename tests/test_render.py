"""Helm charts and Kustomize overlays: rendered with the real programs, findings on the line
to edit.

The fixture charts and overlays (tests/fixtures/render/, and the folder fixtures of GL200,
GL201 and GL202 in tests/fixtures/rules/) carry ``# expect: CODE`` next to the template,
values or patch line each finding must point at. helm comes from `make tools` (.tools/helm);
the tests that need a program skip, saying so, where it cannot be had.
"""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import (
    FIXTURES,
    RENDER_RULES,
    ROOT,
    RULE_FIXTURES,
    expectation_list,
    gpulint_in_process,
    gpulint_subprocess,
    rule_fixtures,
    said,
)
from tests.externals import (
    assert_schema_valid,
    describe,
    helm,
    multitool_validate,
    needs_helm,
    needs_kustomize,
)

RENDER = FIXTURES / "render"
CHART = RENDER / "charts" / "inference"
OVERLAYS = RENDER / "kustomize"
REPORT_SCHEMA = ROOT / "schemas" / "report.schema.json"


def expected(folder: Path) -> Counter[tuple[str, int, str]]:
    """(file relative to the repository, line, code) of every ``# expect:`` in the folder."""
    out: Counter[tuple[str, int, str]] = Counter()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            for line, code, _ in expectation_list(path.read_text(encoding="utf-8")):
                out[(path.relative_to(ROOT).as_posix(), line, code)] += 1
    return out


def check_json(*args: Any, cwd: Path = ROOT) -> tuple[dict[str, Any], int]:
    proc = gpulint_in_process("check", "--format", "json", *args, cwd=cwd)
    assert proc.returncode in (0, 1, 2), proc.stderr
    report = json.loads(proc.stdout)
    Draft202012Validator(json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))).validate(report)
    return report, proc.returncode


def found(report: dict[str, Any]) -> Counter[tuple[str, int, str]]:
    return Counter((f["path"], f["line"], f["rule"]) for f in report["findings"])


def helm_args() -> list[str]:
    path = helm()
    assert path is not None
    return ["--render", "--helm", path]


# -- charts ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chart_report() -> tuple[dict[str, Any], int]:
    """``gpulint check --format json --render CHART``: one run (and helm render) for the
    tests that read its report."""
    return check_json(*helm_args(), CHART.relative_to(ROOT))


@needs_helm
def test_chart_findings_point_at_the_template_or_values_line(
    chart_report: tuple[dict[str, Any], int],
) -> None:
    report, code = chart_report
    assert found(report) == expected(CHART), json.dumps(report["findings"], indent=1)
    assert code == 1
    for f in report["findings"]:
        # (The evidence of a taint, a node pool of the repository's files, is a place too.)
        kinds = [r["kind"] for r in f["related"] if r["kind"] != "evidence"]
        assert kinds[-1] == "rendered", f  # every finding keeps its rendered place
        assert f["related"][-1]["path"] == CHART.relative_to(ROOT).as_posix()
        if f["path"].endswith("values.yaml"):  # a value: the template using it is named
            assert kinds == ["template", "rendered"], f
            assert "used by " in said(f) and ".Values." in said(f)
            assert (ROOT / f["related"][0]["path"]).is_file()


@needs_helm
def test_a_value_finding_names_the_template_line_that_uses_it(
    chart_report: tuple[dict[str, Any], int],
) -> None:
    report, _ = chart_report
    gpu004 = next(f for f in report["findings"] if f["rule"] == "GPU004")
    values = (CHART / "values.yaml").read_text(encoding="utf-8").splitlines()
    assert values[gpu004["line"] - 1].strip().startswith("count: 0.5")
    assert values[gpu004["line"] - 1][gpu004["column"] - 1 :].startswith("0.5")
    template = gpu004["related"][0]
    lines = (ROOT / template["path"]).read_text(encoding="utf-8").splitlines()
    assert "{{ .Values.gpu.count }}" in lines[template["line"] - 1]
    # The subchart's value is set in the parent's values.yaml, under the subchart's name.
    gpu021 = next(f for f in report["findings"] if f["rule"] == "GPU021")
    assert gpu021["path"].endswith("inference/values.yaml")
    assert "charts/metrics/templates/deployment.yaml" in gpu021["message"]


@needs_helm
def test_show_rendered_prints_the_rendered_place() -> None:
    proc = gpulint_in_process(
        "check", *helm_args(), "--show-rendered", CHART.relative_to(ROOT), cwd=ROOT
    )
    lines = proc.stdout.splitlines()
    rendered = [line for line in lines if line.startswith("    rendered: ")]
    assert len(rendered) == sum(expected(CHART).values())
    assert all("output of `helm template`" in line for line in rendered)
    plain = gpulint_in_process("check", *helm_args(), CHART.relative_to(ROOT), cwd=ROOT)
    assert not any(line.startswith("    ") for line in plain.stdout.splitlines())


@needs_helm
def test_values_and_set_options_reach_helm(tmp_path: Path) -> None:
    override = tmp_path / "gpu.yaml"
    override.write_text("gpu:\n  count: 2\n", encoding="utf-8")
    report, _ = check_json(*helm_args(), "--values", override, CHART.relative_to(ROOT))
    assert "GPU004" not in {f["rule"] for f in report["findings"]}
    report, _ = check_json(
        *helm_args(), "--set", "warmup.enabled=false", "--release-name", "prod",
        "--namespace", "ml", "--kube-version", "1.31.0", CHART.relative_to(ROOT),
    )  # fmt: skip
    assert "GPU001" not in {f["rule"] for f in report["findings"]}
    names = {(f["object"]["name"], f["object"]["namespace"]) for f in report["findings"]}
    assert names == {("prod-inference", None), ("prod-metrics-gateway", "ml")}


@needs_helm
def test_values_file_override_is_the_line_pointed_at(tmp_path: Path) -> None:
    override = tmp_path / "half.yaml"
    override.write_text("gpu:\n  count: 1.5\n", encoding="utf-8")
    report, _ = check_json(*helm_args(), "--values", override, CHART.relative_to(ROOT))
    gpu004 = next(f for f in report["findings"] if f["rule"] == "GPU004")
    assert (gpu004["path"], gpu004["line"]) == (str(override), 2)


@needs_helm
def test_per_chart_options_from_the_configuration(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(CHART, repo / "charts" / "inference")
    (repo / "ci").mkdir()
    (repo / "ci" / "gpu.yaml").write_text("gpu:\n  count: 4\n", encoding="utf-8")
    (repo / ".gpulint.yaml").write_text(
        "render:\n  charts:\n    charts/inference:\n      values: [ci/gpu.yaml]\n"
        "      set: [warmup.enabled=false]\n",
        encoding="utf-8",
    )
    report, _ = check_json(*helm_args(), "charts/inference", cwd=repo)
    # (GPU020 yields to GPU022 at the rejected operator: one cause, one finding.)
    assert {f["rule"] for f in report["findings"]} == {"GPU022", "GPU021"}
    (repo / ".gpulint.yaml").write_text("render:\n  values: [../outside.yaml]\n", encoding="utf-8")
    proc = gpulint_in_process("check", *helm_args(), "charts/inference", cwd=repo)
    assert proc.returncode == 2 and "outside the configuration's folder" in proc.stderr


# -- the rendering rules' folder fixtures -------------------------------------------------------


def _folder_fixtures() -> list[Any]:
    return [
        pytest.param(code, path, id=f"{code}/{path.name}")
        for code in RENDER_RULES
        for kind in ("fail", "pass")
        for path in rule_fixtures(code, kind)
    ]


@pytest.mark.parametrize(("code", "folder"), _folder_fixtures())
def test_rendering_rule_folder_fixture_expects_its_rule(code: str, folder: Path) -> None:
    """Not vacuous without helm either: a fail folder names its rule, a pass folder nothing;
    otherwise the comparison below would hold with both sides empty."""
    codes = {c for _, _, c in expected(folder)}
    assert code in codes if folder.name.startswith("fail") else not codes, (folder, codes)


@needs_helm
@pytest.mark.parametrize(("code", "folder"), _folder_fixtures())
def test_rendering_rule_fixture(code: str, folder: Path, tmp_path: Path) -> None:
    args: list[Any] = ["--render", "--helm", helm()]
    if code in ("GL201", "GL203") and folder.name.startswith("fail"):
        args = []  # not rendered: that is the finding
    if code == "GL202" and folder.name.startswith("fail"):
        args = ["--render", "--helm", tmp_path / "no-helm-here"]
    report, exit_code = check_json(*args, folder.relative_to(ROOT))
    assert found(report) == expected(folder), report["findings"]
    if code == "GL202" and folder.name.startswith("fail"):
        assert exit_code == 2
    if code == "GL200" and folder.name.startswith("fail"):
        (finding,) = report["findings"]
        assert "helm template failed" in said(finding)
        assert "missing in charts/ directory" in said(finding)  # helm's own words


def test_without_render_a_chart_is_one_info_line_and_its_templates_are_not_yaml() -> None:
    report, code = check_json(CHART.relative_to(ROOT))
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == [
        ("GL201", (CHART / "Chart.yaml").relative_to(ROOT).as_posix(), 1)
    ]
    assert "--render" in said(report["findings"][0])
    assert code == 0


def test_missing_helm_is_exit_2_and_the_rest_of_the_run_goes_on(tmp_path: Path) -> None:
    other = FIXTURES / "rules" / "GPU001" / "fail-list-items.yaml"
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = gpulint_in_process(
        "check", "--render", CHART.relative_to(ROOT), other.relative_to(ROOT),
        cwd=ROOT, env={**os.environ, "PATH": str(empty)},
    )  # fmt: skip
    assert proc.returncode == 2
    missing = [line for line in proc.stdout.splitlines() if " GL202 " in line]
    assert len(missing) == 1
    assert "install Helm" in missing[0] and "--helm PATH" in missing[0]
    assert any(" GPU001 " in line for line in proc.stdout.splitlines())  # still linted
    assert "tool error" in proc.stdout.splitlines()[-1]


# -- Kustomize ----------------------------------------------------------------------------------


@needs_kustomize
def test_overlay_findings_point_at_the_patch_or_base_line() -> None:
    report, code = check_json("--render", OVERLAYS.relative_to(ROOT))
    assert found(report) == expected(OVERLAYS), json.dumps(report["findings"], indent=1)
    assert code == 1
    assert report["summary"]["files"] == 1  # the overlay; its base and patch are not linted alone
    for f in report["findings"]:
        assert f["related"][-1]["kind"] == "rendered"
        assert (
            f["related"][-1]["path"] == (OVERLAYS / "overlays" / "gpu").relative_to(ROOT).as_posix()
        )


@needs_kustomize
def test_a_named_patch_or_base_builds_its_overlay() -> None:
    """pre-commit names the changed files: a changed patch re-lints the overlay using it."""
    patch = OVERLAYS / "overlays" / "gpu" / "gpu-patch.yaml"
    base = OVERLAYS / "base" / "deployment.yaml"
    report, _ = check_json("--render", patch.relative_to(ROOT), base.relative_to(ROOT), cwd=ROOT)
    assert found(report) == expected(OVERLAYS)
    assert report["summary"]["files"] == 1


def test_without_render_overlays_are_linted_file_by_file() -> None:
    report, _ = check_json(OVERLAYS.relative_to(ROOT))
    assert report["summary"]["files"] == 5
    # No chart or overlay places (a taint's evidence, a pool of the repository, may be named).
    assert not any(r["kind"] != "evidence" for f in report["findings"] for r in f["related"])
    # The patch is linted as a patch: its fractional GPU is reported, its missing
    # toleration is left to the overlay (GL203); the base object it completes too, while
    # the base's other Deployment, which no patch touches, keeps its GPU021.
    rules = {(Path(f["path"]).name, f["rule"]) for f in report["findings"]}
    assert rules == {
        ("gpu-patch.yaml", "GL203"),
        ("gpu-patch.yaml", "GPU004"),
        ("deployment.yaml", "GL203"),
        ("embedder.yaml", "GPU021"),
    }


GL203_FIXTURES = RULE_FIXTURES / "GL203"


def test_a_patch_named_alone_is_linted_as_a_patch() -> None:
    """pre-commit names the changed files: a patch named alone is still a patch (its
    repository is scanned for the kustomization that names it)."""
    patch = GL203_FIXTURES / "fail-base-tolerates" / "overlays" / "a100" / "gpu.yaml"
    report, _ = check_json(patch.relative_to(ROOT))
    assert [f["rule"] for f in report["findings"]] == ["GL203"]
    message = said(report["findings"][0])
    assert "Kustomize patch" in message and "kustomization.yaml:7" in message
    assert "`gpulint check --render`" in message


def test_without_a_kustomization_a_patch_shaped_file_is_linted_as_before(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    patch = GL203_FIXTURES / "fail-base-tolerates" / "overlays" / "a100" / "gpu.yaml"
    shutil.copy(patch, tmp_path / "gpu.yaml")
    report, _ = check_json(".", cwd=tmp_path)
    assert [f["rule"] for f in report["findings"]] == ["GPU020"]


def test_a_file_named_as_a_patch_is_linted_as_one(tmp_path: Path) -> None:
    """`kubectl patch` files carry a selector whose labels the cluster object's template
    has: named `*.patch.yaml` (or put in `patches/`), no kustomization needed, the selector
    check (GPU029) and the other whole-object checks are skipped, and the note says why."""
    (tmp_path / ".git").mkdir()
    named = GL203_FIXTURES / "fail-named-patch" / "manifests" / "kube-proxy.patch.yaml"
    shutil.copy(named, tmp_path / "kube-proxy.patch.yaml")
    (tmp_path / "patches").mkdir()
    shutil.copy(named, tmp_path / "patches" / "kube-proxy.yaml")
    shutil.copy(named, tmp_path / "kube-proxy.yaml")
    report, _ = check_json(".", cwd=tmp_path)
    got = sorted((f["path"], f["rule"]) for f in report["findings"])
    assert got == [
        ("kube-proxy.patch.yaml", "GL203"),
        ("kube-proxy.yaml", "GPU029"),  # the same object, named as a whole manifest
        ("patches/kube-proxy.yaml", "GL203"),
    ]
    note = next(f for f in report["findings"] if f["path"] == "kube-proxy.patch.yaml")
    assert "this file is named as a patch" in said(note) and "(:0)" not in said(note)


@pytest.mark.parametrize("field", ["patches", "patchesStrategicMerge"])
def test_a_patch_named_in_kustomize_v1s_patches_list_is_a_patch(tmp_path: Path, field: str) -> None:
    """kustomize reads a `patches:` list that holds a file name as `patchesStrategicMerge`
    (FixKustomizationPreUnmarshalling): the file it names is a patch, not a whole object."""
    (tmp_path / ".git").mkdir()
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    patch = GL203_FIXTURES / "fail-base-tolerates" / "overlays" / "a100" / "gpu.yaml"
    shutil.copy(patch, overlay / "gpu.yaml")
    (overlay / "kustomization.yaml").write_text(f"{field}:\n- gpu.yaml\n", encoding="utf-8")
    report, _ = check_json(".", cwd=tmp_path)
    assert [f["rule"] for f in report["findings"]] == ["GL203"]


_UMBRELLA_VALUES = """\
app-template:
  defaultPodOptions:
    runtimeClassName: nvidia
  controllers:
    main:
      containers:
        main:
          image:
            repository: lscr.io/linuxserver/jellyfin
            tag: 10.10.3
          env:
            NVIDIA_VISIBLE_DEVICES: all
"""


def _umbrella(repo: Path, folder: str, dependency: str, values: str, templates: bool) -> None:
    """A chart at ``folder`` of repository ``repo`` that hands the chart ``dependency`` its
    ``values``, with a template of its own when ``templates``."""
    (repo / ".git").mkdir()
    chart = repo / folder
    chart.mkdir(parents=True)
    meta = (
        f"apiVersion: v2\nname: {chart.name}\nversion: 0.1.0\ndependencies:\n- name: {dependency}\n"
    )
    (chart / "Chart.yaml").write_text(meta, encoding="utf-8")
    (chart / "values.yaml").write_text(values, encoding="utf-8")
    if templates:
        (chart / "templates").mkdir()
        (chart / "templates" / "extra.yaml").write_text("{{ .Values.x }}\n", encoding="utf-8")


@pytest.mark.parametrize("templates", [False, True])
def test_an_app_template_umbrella_charts_values_are_read_as_written(
    tmp_path: Path, templates: bool
) -> None:
    """A chart with no templates of its own that hands bjw-s app-template its values: without
    --render its values file is linted as written (GPU016 on a container under NVIDIA's
    runtime that requests no GPU), beside the chart's GL201; a chart with templates is left
    to rendering. Named alone, the file says the same (and the chart, which no longer
    reads it, is no target)."""
    dependency = (
        "app-template\n  version: 4.4.0\n  repository: https://bjw-s-labs.github.io/helm-charts"
    )
    _umbrella(tmp_path, "apps/jellyfin", dependency, _UMBRELLA_VALUES, templates)
    for target in (".", "apps/jellyfin/values.yaml"):
        report, _ = check_json(target, cwd=tmp_path)
        got = sorted((f["rule"], f["path"], f["line"]) for f in report["findings"])
        read = [("GPU016", "apps/jellyfin/values.yaml", 12)] if not templates else []
        whole = target == "." or templates
        note = [("GL201", "apps/jellyfin/Chart.yaml", 1)] if whole else []
        assert got == sorted([*note, *read])


_PRODUCTION_STACK_VALUES = """\
vllm-stack:
  servingEngineSpec:
    runtimeClassName: nvidia
    modelSpec:
    - name: llama31-8b
      repository: vllm/vllm-openai
      tag: v0.10.1
      modelURL: meta-llama/Llama-3.1-8B-Instruct
      requestCPU: 4
      requestMemory: 16Gi
      env:
      - name: NVIDIA_VISIBLE_DEVICES
        value: all
"""


@pytest.mark.parametrize("templates", [False, True])
def test_a_production_stack_charts_values_are_read_as_written(
    tmp_path: Path, templates: bool
) -> None:
    """A chart that hands vLLM production stack its models: without --render its values file
    is linted as written, with or without templates of its own (what the production stack
    makes of a model is known from its values alone), beside the chart's GL201."""
    dependency = "vllm-stack\n  version: 0.1.10\n  repository: https://vllm-project.github.io/production-stack"
    _umbrella(tmp_path, "helm/llm", dependency, _PRODUCTION_STACK_VALUES, templates)
    report, _ = check_json(".", cwd=tmp_path)
    got = sorted((f["rule"], f["path"], f["line"]) for f in report["findings"])
    assert got == [("GL201", "helm/llm/Chart.yaml", 1), ("GPU016", "helm/llm/values.yaml", 13)]


_UNLABELLED_BASE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: triton
spec:
  selector:
    matchLabels:
      app: triton
  template:
    spec:
      containers:
      - name: triton
        image: nvcr.io/nvidia/tritonserver:24.08-py3
        resources:
          limits:
            nvidia.com/gpu: 1
"""


@pytest.mark.parametrize(
    ("kustomization", "selector_judged"),
    [
        ("labels:\n- includeSelectors: true\n  pairs:\n    app: triton\n", False),
        ("commonLabels:\n  app: triton\n", False),
        ("labels:\n- pairs:\n    team: ml\n", True),  # metadata only: not the templates
        (None, True),
    ],
)
def test_a_base_whose_templates_a_kustomization_labels_is_not_judged_on_its_labels(
    tmp_path: Path, kustomization: str | None, selector_judged: bool
) -> None:
    """A Kustomize base writes the selector and leaves the template's labels to its
    kustomization's labels: GPU029 is not run on it without --render, the other rules are
    (GPU020 still tells the pod it lacks the GPU toleration); named alone, the same."""
    (tmp_path / ".git").mkdir()
    base = tmp_path / "apps" / "triton"
    base.mkdir(parents=True)
    (base / "deployment.yaml").write_text(_UNLABELLED_BASE, encoding="utf-8")
    if kustomization is not None:
        text = "resources:\n- deployment.yaml\n" + kustomization
        (base / "kustomization.yaml").write_text(text, encoding="utf-8")
    for target in (".", "apps/triton/deployment.yaml"):
        report, _ = check_json(target, cwd=tmp_path)
        rules = {f["rule"] for f in report["findings"]}
        assert ("GPU029" in rules) is selector_judged
        assert "GPU020" in rules


def test_a_suppression_of_a_skipped_rule_in_a_patch_is_not_stale(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    shutil.copytree(GL203_FIXTURES / "fail-base-tolerates", tree)
    (tree / ".git").mkdir()
    patch = tree / "overlays" / "a100" / "gpu.yaml"
    text = patch.read_text(encoding="utf-8")
    comment = "# alone, a GPU pod without the toleration: no GPU020"
    directive = "# gpulint: disable=GPU020 -- the toleration is in the base"
    patch.write_text(text.replace(comment, directive), encoding="utf-8")
    report, _ = check_json("--select", "ALL", ".", cwd=tree)
    assert "GL100" not in {f["rule"] for f in report["findings"]}


@needs_kustomize
@pytest.mark.parametrize(
    ("fixture", "rules"),
    [
        ("fail-base-tolerates", set()),  # the toleration of the base covers the patch's GPU
        (
            "fail-patch-without-toleration",  # rendered, the Job has no toleration
            {("gpu-patch.yaml", 9, "GPU020"), ("gpu-patch.yaml", 15, "GPU010")},
        ),
        ("pass-rendered", set()),
    ],
)  # fmt: skip
def test_rendered_an_overlay_has_the_whole_object_findings(
    fixture: str, rules: set[tuple[str, int, str]]
) -> None:
    report, _ = check_json("--render", (GL203_FIXTURES / fixture).relative_to(ROOT))
    assert {(Path(f["path"]).name, f["line"], f["rule"]) for f in report["findings"]} == rules
    assert report["summary"]["files"] == 1


@needs_kustomize
def test_remote_bases_and_plugins_are_refused(tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    (remote / "kustomization.yaml").write_text(
        "resources:\n  - github.com/example/gpu-base?ref=v1.0.0\n", encoding="utf-8"
    )
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "kustomization.yaml").write_text("generators:\n  - gen.yaml\n", encoding="utf-8")
    (plugin / "gen.yaml").write_text("kind: Exec\n", encoding="utf-8")
    report, _ = check_json("--render", remote, plugin, cwd=tmp_path)
    messages = {
        Path(f["path"]).parent.name: (f["rule"], f["line"], said(f)) for f in report["findings"]
    }
    assert messages["remote"][:2] == ("GL200", 2)
    assert "never fetches remote bases" in messages["remote"][2]
    assert messages["plugin"][0] == "GL200" and "`generators`" in messages["plugin"][2]


# -- walking a repository, pre-commit, --jobs ---------------------------------------------------


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHART, repo / "charts" / "inference")
    shutil.copytree(OVERLAYS, repo / "deploy")
    shutil.copy(FIXTURES / "rules" / "GPU001" / "fail-list-items.yaml", repo / "job.yaml")
    return repo


def test_walking_without_render_never_reads_a_template_as_yaml(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    report, _ = check_json(".", cwd=repo)
    paths = {f["path"] for f in report["findings"]}
    assert not any("/templates/" in p or p.endswith("values.yaml") for p in paths)
    assert [f["path"] for f in report["findings"] if f["rule"] == "GL201"] == [
        "charts/inference/Chart.yaml"
    ]
    assert "GPU005" not in {f["rule"] for f in report["findings"]}


def test_walking_a_folder_inside_a_chart_lints_the_chart_not_its_templates() -> None:
    """``gpulint check chart/templates`` (or a chart nested in another chart's templates/)
    says of every file what walking from above says: the outermost chart, one GL201. Its
    templates were read as plain YAML before (GPU020, and GPU007 on `{{ .Values.gpus }}`)."""
    chart = RULE_FIXTURES / "GL201" / "fail-chart-nested-in-templates"
    outer = [("GL201", (chart / "Chart.yaml").relative_to(ROOT).as_posix(), 1)]
    for folder in (chart, chart / "templates", chart / "templates" / "exporter"):
        report, code = check_json(folder.relative_to(ROOT))
        assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == outer, folder
        assert code == 0
    inside, _ = check_json(".", cwd=chart / "templates")
    assert [(f["rule"], f["line"]) for f in inside["findings"]] == [("GL201", 1)]
    assert Path(inside["findings"][0]["path"]).resolve() == chart / "Chart.yaml"


def test_a_chart_yaml_inside_templates_is_reported_with_render_too(tmp_path: Path) -> None:
    """A Chart.yaml beside the templates makes `templates/` a chart with none: helm would
    render nothing and the run passed; now one GL201 names the files, helm is not run."""
    folder = RULE_FIXTURES / "GL201" / "fail-chart-yaml-in-templates"
    for args in ([], ["--render", "--helm", tmp_path / "no-helm-here"]):
        report, code = check_json(*args, folder.relative_to(ROOT))
        (finding,) = report["findings"]
        assert (finding["rule"], finding["path"].rsplit("/", 2)[-2:]) == (
            "GL201",
            ["templates", "Chart.yaml"],
        )
        assert "deployment.yaml" in finding["message"] and "sits in templates/" in said(finding)
        assert code == 0


@needs_helm
@needs_kustomize
def test_walking_with_render_lints_charts_overlays_and_files(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    report, _ = check_json(*helm_args(), ".", cwd=repo)
    assert report["summary"]["files"] == 3  # the chart, the overlay, job.yaml
    rules = Counter(f["rule"] for f in report["findings"] if f["path"].startswith("deploy/"))
    assert rules == Counter(code for _, _, code in expected(OVERLAYS).elements())
    charts = found(report) - Counter(
        {k: v for k, v in found(report).items() if not k[0].startswith("charts/")}
    )
    assert sum(charts.values()) == sum(expected(CHART).values())


@needs_helm
def test_a_changed_template_or_values_file_relints_its_chart_once(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    named = [
        "charts/inference/templates/deployment.yaml",
        "charts/inference/values.yaml",
        "charts/inference/charts/metrics/templates/deployment.yaml",
    ]
    report, _ = check_json(*helm_args(), *named, cwd=repo)
    assert report["summary"]["files"] == 1
    assert sum(found(report).values()) == sum(expected(CHART).values())


def test_the_pre_commit_render_hook_passes_templates_and_helpers() -> None:
    import re

    import yaml  # type: ignore[import-untyped]

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    hook = hooks["gpulint-render"]
    assert hook["entry"] == "gpulint check --render --rendered-only"
    assert hook["require_serial"] is True
    pattern = re.compile(hook["files"])
    for name in ("charts/a/templates/deploy.yaml", "charts/a/templates/_helpers.tpl",
                 "charts/a/values.yaml", "overlays/prod/patch.yml"):  # fmt: skip
        assert pattern.search(name), name
    assert not pattern.search("README.md")


@needs_helm
def test_jobs_gives_the_same_report(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    for i in range(80):  # enough files for worker processes
        shutil.copy(repo / "job.yaml", repo / f"job-{i:02d}.yaml")
    args = ["check", "--format", "json", "--render", "--helm", str(helm())]
    # The serial run needs no process of its own (in-process runs are serial: conftest.py).
    serial = gpulint_in_process(*args, ".", cwd=repo)
    parallel = gpulint_subprocess(*args, "--jobs", "2", ".", cwd=repo)
    assert json.loads(serial.stdout)["findings"] == json.loads(parallel.stdout)["findings"]
    assert any(f["path"].startswith("charts/") for f in json.loads(parallel.stdout)["findings"])


# -- SARIF ------------------------------------------------------------------------------------


@needs_helm
def test_sarif_locations_are_repository_files(tmp_path: Path) -> None:
    proc = gpulint_in_process(
        "check", *helm_args(), "--format", "sarif", CHART.relative_to(ROOT), cwd=ROOT
    )
    log = json.loads(proc.stdout)
    assert_schema_valid(log)
    path = tmp_path / "rendered.sarif"
    path.write_text(proc.stdout, encoding="utf-8")
    assert multitool_validate([path], tmp_path) == [], describe(
        multitool_validate([path], tmp_path)
    )
    results = log["runs"][0]["results"]
    assert len(results) == sum(expected(CHART).values())
    for result in results:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert (ROOT / uri).is_file(), uri
        related = result["relatedLocations"]
        assert related[-1]["properties"]["kind"] == "rendered"
        for place in related[:-1]:
            assert (ROOT / place["physicalLocation"]["artifactLocation"]["uri"]).is_file()


# -- safety -------------------------------------------------------------------------------------


def _spy(tmp_path: Path) -> tuple[Path, Path]:
    """A program that records that it ran (standing in for a user's helm)."""
    marker = tmp_path / "ran"
    spy = tmp_path / "spy-helm"
    spy.write_text(f"#!/bin/sh\necho ran > {marker}\nexit 1\n", encoding="utf-8")
    spy.chmod(0o755)
    return spy, marker


def test_nothing_runs_without_render(tmp_path: Path) -> None:
    spy, marker = _spy(tmp_path)
    proc = gpulint_in_process("check", "--helm", spy, CHART.relative_to(ROOT), cwd=ROOT)
    assert proc.returncode == 0 and not marker.exists()
    proc = gpulint_in_process("check", "--render", "--helm", spy, CHART.relative_to(ROOT), cwd=ROOT)
    assert marker.exists() and " GL200 " in proc.stdout  # opted in: it ran, and failed


def test_a_chart_linking_outside_the_repository_is_not_rendered(tmp_path: Path) -> None:
    spy, marker = _spy(tmp_path)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHART, repo / "chart")
    secret = tmp_path / "secret.txt"
    secret.write_text("token", encoding="utf-8")
    (repo / "chart" / "files").mkdir()
    (repo / "chart" / "files" / "token").symlink_to(secret)
    report, _ = check_json("--render", "--helm", spy, "chart", cwd=repo)
    (finding,) = report["findings"]
    assert finding["rule"] == "GL200" and "outside the repository" in said(finding)
    assert not marker.exists()


def test_renderers_get_a_scrubbed_bounded_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpulint.render import tools

    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
    monkeypatch.setenv("KUBECONFIG", "/home/me/.kube/config")
    result = tools.run_tool(["/usr/bin/env"], cwd=str(ROOT))
    env = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["KUBECONFIG"] == os.devnull
    assert env["HTTPS_PROXY"].startswith("http://127.0.0.1:")
    assert env["HOME"] != os.environ.get("HOME")
    slow = tools.run_tool(["/bin/sleep", "5"], cwd=str(ROOT), timeout=0.2)
    assert slow.returncode is None and "stopped after" in (slow.reason or "")
    monkeypatch.setattr(tools, "MAX_OUTPUT_BYTES", 1 << 16)
    loud = tools.run_tool(["/usr/bin/yes"], cwd=str(ROOT))
    assert loud.returncode is None and "wrote more than" in (loud.reason or "")


def test_render_programs_are_never_named_by_the_configuration(tmp_path: Path) -> None:
    (tmp_path / ".gpulint.yaml").write_text("render:\n  helm: /tmp/evil\n", encoding="utf-8")
    (tmp_path / "pod.yaml").write_text("kind: ConfigMap\napiVersion: v1\n", encoding="utf-8")
    proc = gpulint_in_process("check", "pod.yaml", cwd=tmp_path)
    assert proc.returncode == 2 and "render" in proc.stderr


def test_kubectl_or_kustomize_missing_is_one_clear_line(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    proc = gpulint_in_process(
        "check", "--render", (OVERLAYS / "overlays" / "gpu").relative_to(ROOT),
        cwd=ROOT, env={**os.environ, "PATH": str(empty)},
    )  # fmt: skip
    assert proc.returncode == 2
    (line,) = [line for line in proc.stdout.splitlines() if " GL202 " in line]
    assert "install kubectl" in line and "--kustomize PATH" in line


@needs_helm
def test_suppressions_work_on_the_files_findings_point_at(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    (repo / ".gpulint.yaml").write_text(
        "per-file-ignores:\n  charts/inference/values.yaml: [GPU022]\n", encoding="utf-8"
    )
    job = repo / "charts" / "inference" / "templates" / "warmup-job.yaml"
    job.write_text(
        job.read_text(encoding="utf-8").replace(
            "# expect: GPU001", "# gpulint: disable=GPU001 -- warm-up pods share a GPU"
        ),
        encoding="utf-8",
    )
    report, _ = check_json(*helm_args(), "charts/inference", cwd=repo)
    silenced = {
        f["rule"]: f["suppression"]["source"] for f in report["findings"] if f["suppressed"]
    }
    assert silenced == {"GPU022": "config", "GPU001": "comment"}
    assert report["summary"]["suppressed"] == 2


@needs_helm
def test_two_charts_render_in_worker_processes(tmp_path: Path) -> None:
    """A rendered chart weighs as many files (runner.RENDER_WEIGHT): two are linted in two
    workers, with the report of a serial run."""
    for name in ("a", "b"):
        shutil.copytree(CHART, tmp_path / name)
    args = ["check", "--format", "json", "--render", "--helm", str(helm())]
    # The serial run needs no process of its own (in-process runs are serial: conftest.py).
    serial = gpulint_in_process(*args, "a", "b", cwd=tmp_path)
    parallel = gpulint_subprocess(*args, "--jobs", "2", "a", "b", cwd=tmp_path)
    assert json.loads(serial.stdout)["findings"] == json.loads(parallel.stdout)["findings"]
    assert json.loads(parallel.stdout)["summary"]["files"] == 2
    assert len(json.loads(parallel.stdout)["findings"]) == 2 * sum(expected(CHART).values())


@needs_helm
def test_a_literal_removed_version_is_judged_once_rendered_or_not() -> None:
    """Without --render GPU026 reads the template's literal apiVersion (in a template
    wrapped in a switch the values turn on, too); with it, the output: the same finding at
    the same template line, never both."""
    chart = FIXTURES / "projects" / "gpu026-fail-chart-template-versions" / "charts"
    chart = chart / "gpu-exporter"
    label = chart.relative_to(ROOT).as_posix()
    plain, _ = check_json(label)
    rendered, _ = check_json(*helm_args(), label)
    wanted = Counter(
        {(f"{label}/templates/daemonset.yaml", 1, "GPU026"): 1,
         (f"{label}/templates/ingress.yaml", 23, "GPU026"): 1,
         (f"{label}/templates/rbac.yaml", 2, "GPU026"): 1}
    )  # fmt: skip
    assert Counter({k: n for k, n in found(plain).items() if k[2] == "GPU026"}) == wanted
    assert Counter({k: n for k, n in found(rendered).items() if k[2] == "GPU026"}) == wanted


@needs_helm
def test_unread_values_are_reported_with_fix_too(tmp_path: Path) -> None:
    """--render --fix reports what --render does of a chart's values (GPU082: it fixes
    none of them)."""
    chart = tmp_path / "chart"
    shutil.copytree(RULE_FIXTURES / "GPU082" / "fail-hardcoded-gpu-limit", chart)
    (tmp_path / ".git").mkdir()
    plain, _ = check_json(*helm_args(), "chart", cwd=tmp_path)
    fixed, _ = check_json(*helm_args(), "--fix", "chart", cwd=tmp_path)
    assert [f["rule"] for f in plain["findings"]] == ["GPU082"] * 4
    assert found(fixed) == found(plain)


@needs_helm
def test_the_two_hooks_report_each_finding_of_a_chart_once() -> None:
    """pre-commit's gpulint hook (no --render) reports what a chart's templates write as
    plain text and its unread values; gpulint-render (--render --rendered-only) reports
    the rendered findings but those: each once between them."""
    chart = FIXTURES / "projects" / "gpu026-fail-chart-template-versions" / "charts"
    label = (chart / "gpu-exporter").relative_to(ROOT).as_posix()
    plain, _ = check_json(label)
    rendered, _ = check_json(*helm_args(), "--rendered-only", label)
    alone, _ = check_json(*helm_args(), label)
    places = found(plain)
    assert places and set(found(rendered)).isdisjoint(places)
    # What the render hook leaves out is what the plain hook reported.
    assert set(found(alone)) - set(found(rendered)) <= set(places)
