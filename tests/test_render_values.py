"""Values that reach a chart's manifests through template logic are put on their values line.

``range`` variables, ``dict``/``merge``, ``include`` helpers, ``concat`` and templated keys
hide which values path wrote a rendered scalar from a line-by-line reading of the template;
a second ``helm template`` run with a marker in every string value says it
(:mod:`gpulint.render.helm.markers`). A finding goes to the values line only when the value
rendered is the text written there; else it stays on the template line. A finding about a
field the object lacks goes to the values key the template reads for that field.

The fixture chart (tests/fixtures/render/charts/traced) carries ``# expect: CODE`` next to
each line a finding must point at, rendered with the real helm (``make tools``' helm 4 and
helm 3, and any named in $GPULINT_TEST_HELMS).
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path
from typing import Any

import pytest

from gpulint.render.helm import markers
from tests.conftest import FIXTURES, ROOT, gpulint_in_process
from tests.externals import helm, needs_helm
from tests.test_render import expected, found
from tests.test_render_exec import HELMS

CHART = FIXTURES / "render" / "charts" / "traced"


def _check(helm_path: str, *args: Any, cwd: Path = ROOT) -> list[dict[str, Any]]:
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, cwd=cwd
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return findings


def _at(findings: list[dict[str, Any]], rule: str, needle: str) -> dict[str, Any]:
    return next(f for f in findings if f["rule"] == rule and needle in f["message"])


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_every_finding_points_at_the_line_that_writes_its_value(helm_path: str) -> None:
    findings = _check(helm_path, CHART.relative_to(ROOT))
    report = {"findings": findings}
    assert found(report) == expected(CHART), json.dumps(findings, indent=1)


@needs_helm
def test_positions_and_what_the_findings_say() -> None:
    path = helm()
    assert path is not None
    findings = _check(path, CHART.relative_to(ROOT))
    values = CHART.relative_to(ROOT).as_posix() + "/values.yaml"
    template = CHART.relative_to(ROOT).as_posix() + "/templates/"

    def where(f: dict[str, Any]) -> tuple[str, int, int]:
        return f["path"], f["line"], f["column"]

    # concat of two values lists, written out by toYaml
    concat = _at(findings, "GPU022", "inference.tolerations.0.effect")
    assert where(concat) == (values, 17, 15)
    assert (
        "(used by templates/inference.yaml:15 as .Values.inference.tolerations.0.effect)"
        in (concat["message"])
    )
    assert [r["kind"] for r in concat["related"]] == ["template", "rendered"]
    # merge into a dict, passed to an include helper that writes it as a key
    key = _at(findings, "GPU010", "inference.gpu.resource")
    assert where(key) == (values, 19, 15)
    assert "as .Values.inference.gpu.resource)" in key["message"]
    # a range variable's item
    ranged = _at(findings, "GPU022", 'effect "NoExecut"')
    assert where(ranged) == (values, 32, 17)
    assert "as .Values.workers.trainer.tolerations.1.effect)" in ranged["message"]
    # a key of a values mapping a range variable's toYaml writes whole: the values key
    scorer = next(
        f for f in findings if f["rule"] == "GPU010" and f["path"] == values and f["line"] != 19
    )
    assert where(scorer) == (values, 46, 9)
    assert "as .Values.workers.scorer.resources.limits.nvidia.com/gpus)" in scorer["message"]
    # two groups render that mapping alike: the template's line, not a guess between them
    both = [f for f in findings if f["rule"] == "GPU010" and f["path"] != values]
    assert [where(f) for f in both] == [(template + "workers.yaml", 25, 11)] * 2
    assert not any(".Values." in f["message"] for f in both)
    # the umbrella's values of an unpacked subchart
    sub = _at(findings, "GPU022", "charts/sidecar")
    assert where(sub) == (values, 73, 15)
    assert "as .Values.sidecar.tolerations.0.effect)" in sub["message"]
    # `| title` rendered another text than the values line's: the template line, no values
    titled = _at(findings, "GPU022", 'effect "Noschedul"')
    assert where(titled) == (template + "workers.yaml", 20, 19)
    assert ".Values." not in titled["message"]
    assert [r["kind"] for r in titled["related"]] == ["rendered"]
    # a toleration missing as `with .Values.agent.tolerations` skips the empty list
    missing = _at(findings, "GPU020", "agent.tolerations")
    assert where(missing) == (values, 68, 3)
    assert (
        "(used by templates/agent.yaml:14 as .Values.agent.tolerations, which is empty"
        in (missing["message"])
    )
    assert missing["related"][0]["path"] == template + "agent.yaml"
    assert missing["related"][0]["line"] == 14
    # a container without volumeMounts, which `with .Values.trainer.volumeMounts` skips
    shm = _at(findings, "GPU042", "container trainer")
    assert where(shm) == (values, 76, 3)
    assert (
        "(used by templates/trainer.yaml:17 as .Values.trainer.volumeMounts, which is"
        in (shm["message"])
    )


PACKED_CHART = """\
apiVersion: v2
name: packed
version: 0.1.0
"""
PACKED_VALUES = """\
gpu:
  resource: nvidia.com/gpu
"""
PACKED_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {{ .Release.Name }}-packed
spec:
  tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule
  containers:
    - name: main
      image: registry.example/packed:1.0.0
      resources:
        limits:
          {{ .Values.gpu.resource }}: 1
"""


def _tgz(target: Path) -> None:
    with tarfile.open(target, "w:gz") as tar:
        for name, text in (
            ("packed/Chart.yaml", PACKED_CHART),
            ("packed/values.yaml", PACKED_VALUES),
            ("packed/templates/pod.yaml", PACKED_POD),
        ):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_packaged_subchart_s_value_goes_to_the_umbrella_values_line(
    helm_path: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    chart = repo / "umbrella"
    (chart / "charts").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(
        "apiVersion: v2\nname: umbrella\nversion: 1.0.0\n"
        "dependencies:\n  - name: packed\n    version: 0.1.0\n",
        encoding="utf-8",
    )
    (chart / "values.yaml").write_text(
        "packed:\n  gpu:\n    resource: nvidia.com/gpus\n", encoding="utf-8"
    )
    _tgz(chart / "charts" / "packed-0.1.0.tgz")
    findings = _check(helm_path, "umbrella", cwd=repo)
    gpu010 = _at(findings, "GPU010", "nvidia.com/gpus")
    assert (gpu010["path"], gpu010["line"], gpu010["column"]) == ("umbrella/values.yaml", 3, 15)
    # The template is inside the archive: it is named by the archive's path.
    assert "(used by charts/packed-0.1.0.tgz:1 as .Values.packed.gpu.resource)" in gpu010["message"]


@needs_helm
def test_a_value_the_command_line_sets_is_not_put_on_the_values_file(tmp_path: Path) -> None:
    """``--set`` wins over every values file: the rendered text is not values.yaml's."""
    path = helm()
    assert path is not None
    findings = _check(
        path, "--set", "inference.gpu.resource=nvidia.com/gpuz", CHART.relative_to(ROOT)
    )
    key = _at(findings, "GPU010", "nvidia.com/gpuz")
    assert key["path"].endswith("templates/_helpers.tpl") or key["path"].endswith(
        "templates/inference.yaml"
    ), key
    assert ".Values.inference.gpu.resource" not in key["message"]


@needs_helm
def test_the_marked_render_runs_only_when_a_finding_needs_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHART, repo / "traced")
    for template in ("workers.yaml", "inference.yaml", "agent.yaml"):
        (repo / "traced" / "templates" / template).unlink()
    shutil.rmtree(repo / "traced" / "charts")
    (repo / "traced" / "Chart.yaml").write_text(
        "apiVersion: v2\nname: traced\nversion: 0.3.0\n", encoding="utf-8"
    )
    calls: list[str] = []
    real = markers.Tracer._marked_docs

    def counted(self: markers.Tracer) -> Any:
        calls.append("marked")
        return real(self)

    monkeypatch.setattr(markers.Tracer, "_marked_docs", counted)
    path = helm()
    assert path is not None
    findings = _check(path, "traced", cwd=repo)
    # GPU042 on the trainer: found by reading the template, no second render (GPU082 says
    # the values of the templates removed above are read by none)
    found = [(f["rule"], f["path"]) for f in findings if f["rule"] != "GPU082"]
    assert found == [("GPU042", "traced/values.yaml")]
    assert calls == []


def test_strings_a_template_may_test_are_kept() -> None:
    assert markers.markable("nvidia.com/gpu")
    assert markers.markable("NoSchedule")
    for kept in ("", " ", "1.2.0", "v1.30.2", "true", "no", "42", "{{ .Release.Name }}", "a\nb"):
        assert not markers.markable(kept), kept
    assert not markers.markable(1)
    assert not markers.markable(True)


def test_values_merge_as_helm_merges_them(tmp_path: Path) -> None:
    sub = tmp_path / "sub.yaml"
    sub.write_text("a: {b: x, c: [w]}\nd: z\n", encoding="utf-8")
    top = tmp_path / "top.yaml"
    top.write_text("s:\n  a: {b: X}\n  d: null\n", encoding="utf-8")
    tree = markers.merged([(str(sub), ("s",)), (str(top), ())])
    origins: list[markers.Origin] = []
    data = markers.marked(tree, origins)
    assert data == {"s": {"a": {"b": "gplv000000x", "c": ["gplv000001x"]}}}
    assert origins[0] == markers.Origin(str(top), ("s", "a", "b"), ("s", "a", "b"))
    assert origins[1] == markers.Origin(str(sub), ("a", "c", 0), ("s", "a", "c", 0))


def test_values_the_templates_compare_are_not_marked(tmp_path: Path) -> None:
    """``eq .Values.engine.type "vllm"`` with a marker would render nothing of the template."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "a.yaml").write_text(
        '{{- if and (eq .Values.engine.type "vllm") (ne $.Values.mode "off") }}\n'
        "image: {{ .Values.image.name }}\n{{- end }}\n",
        encoding="utf-8",
    )
    (tmp_path / "values.yaml").write_text(
        "engine: {type: vllm}\nmode: on-demand\nimage: {name: vllm/vllm-openai}\n",
        encoding="utf-8",
    )
    names = markers.compared_names([str(tmp_path)])
    assert {"type", "mode"} <= names and "name" not in names
    origins: list[markers.Origin] = []
    data = markers.marked(markers.merged([(str(tmp_path / "values.yaml"), ())]), origins, names)
    assert data["engine"] == {"type": "vllm"} and data["mode"] == "on-demand"
    assert data["image"] == {"name": "gplv000000x"}


def test_a_field_read_from_something_else_too_is_not_put_on_values() -> None:
    from gpulint.render.helm.fieldreads import field_reads

    one = "{{- with .Values.worker.tolerations }}\ntolerations:\n  {{- toYaml . | nindent 2 }}"
    assert field_reads(one, "tolerations") == {("worker", "tolerations")}
    assert field_reads("{{ toYaml $.Values.tolerations }}", "tolerations") == {("tolerations",)}
    both = "{{- $t := concat .Values.spec.tolerations ($model.tolerations | default list) }}"
    assert field_reads(both, "tolerations") is None  # the model's own may be the place
    assert field_reads("{{- with .Values.worker }}{{ toYaml .tolerations }}", "tolerations") is None
    two = "{{ toYaml (concat .Values.global.tolerations .Values.tolerations) }}"
    assert field_reads(two, "tolerations") == {("global", "tolerations"), ("tolerations",)}


DOCUMENTS = FIXTURES / "render" / "charts" / "documents"


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_numbers_in_a_template_of_several_documents_are_at_their_values_lines(
    helm_path: str,
) -> None:
    """tests/fixtures/render/charts/documents: one template writes a range of Deployments
    and then three more; each GPU count is a number written through range, include with
    dict, with or default, and each finding is at its values line (or, for the missing
    toleration, at its own Deployment's pod spec, not the range's). A missing toleration
    read from a range variable's entry is at that entry's `tolerations: []`; one no values
    file sets, at the mapping it goes under."""
    findings = _check(helm_path, DOCUMENTS.relative_to(ROOT))
    assert found({"findings": findings}) == expected(DOCUMENTS), json.dumps(findings, indent=1)
    shared = next(f for f in findings if f["object"]["name"] == "release-name-shared")
    assert shared["message"].endswith("(used by templates/workers.yaml:62 as .Values.shared.count)")
    a100 = next(f for f in findings if f["object"]["name"] == "release-name-a100")
    assert "as .Values.pools.a100.tolerations, which is empty here" in a100["message"]
    batch = next(f for f in findings if f["object"]["name"] == "release-name-batch")
    assert batch["message"].endswith(
        "(used by templates/batch.yaml:9 as .Values.batch.tolerations, which no values file "
        "sets: the template writes tolerations only from it; add it under batch here)"
    )


SUBCHART_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-{{ .Chart.Name }}
spec:
  selector:
    matchLabels: {app: embed}
  template:
    metadata:
      labels: {app: embed}
    spec:
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: server
          image: ghcr.io/huggingface/text-embeddings-inference:1.5
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
"""


@needs_helm
def test_a_packaged_subchart_s_missing_toleration_is_under_its_key_in_the_parent(
    tmp_path: Path,
) -> None:
    """A packaged subchart (its values inside the archive, which no editor opens) whose
    template reads ``.Values.tolerations``: GPU020 is at the subchart's key in the parent's
    values (``tei:``, its alias), where the GPU request is written and the toleration goes,
    not at the archive's first line."""
    import subprocess

    path = helm()
    assert path is not None
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    packed = tmp_path / "embeddings"
    (packed / "templates").mkdir(parents=True)
    (packed / "Chart.yaml").write_text(
        "apiVersion: v2\nname: embeddings\nversion: 0.1.8\n", encoding="utf-8"
    )
    (packed / "values.yaml").write_text("resources: {}\ntolerations: []\n", encoding="utf-8")
    (packed / "templates" / "deployment.yaml").write_text(SUBCHART_DEPLOYMENT, encoding="utf-8")
    stack = repo / "stack"
    (stack / "charts").mkdir(parents=True)
    (stack / "Chart.yaml").write_text(
        "apiVersion: v2\nname: stack\nversion: 0.4.3\ndependencies:\n"
        "  - {name: embeddings, version: 0.1.8, alias: tei, condition: tei.enabled}\n",
        encoding="utf-8",
    )
    (stack / "values.yaml").write_text(
        "# the embeddings server\n"
        "tei:\n"
        "  enabled: true\n"
        "  resources:\n"
        "    limits:\n"
        "      nvidia.com/gpu: 1\n",
        encoding="utf-8",
    )
    subprocess.run(
        [path, "package", str(packed), "-d", str(stack / "charts")], check=True, capture_output=True
    )
    findings = _check(path, "stack", cwd=repo)
    gpu020 = [f for f in findings if f["rule"] == "GPU020"]
    assert [(f["path"], f["line"], f["column"]) for f in gpu020] == [("stack/values.yaml", 2, 1)]
    assert "as .Values.tolerations of the subchart" in gpu020[0]["message"]
    assert gpu020[0]["message"].endswith("add it under tei here)")


@needs_helm
def test_tolerations_a_packaged_library_reads_are_under_the_subchart_s_key(
    tmp_path: Path,
) -> None:
    """A packaged subchart whose pod its own packaged library chart renders (bjw-s'
    common: ``{{ include "common.loader.all" . }}``, helpers included with ``-}}``), the
    library reading ``.Values.tolerations``: GPU020 is at the subchart's key in the parent's
    values, naming the library's member and line, not at the archive's first line."""
    import subprocess

    path = helm()
    assert path is not None
    packaged = FIXTURES / "render" / "packaged"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(packaged / "catalog", repo / "catalog")
    (repo / "catalog" / "charts").mkdir()
    subprocess.run(
        [path, "package", str(packaged / "streaming"), "-d", str(repo / "catalog" / "charts")],
        check=True,
        capture_output=True,
    )
    findings = _check(path, "catalog", cwd=repo)
    gpu020 = [f for f in findings if f["rule"] == "GPU020"]
    assert [(f["path"], f["line"], f["column"]) for f in gpu020] == [("catalog/values.yaml", 3, 1)]
    assert (
        "used by streaming/charts/common/templates/lib/_pod.tpl:2 in charts/streaming-2.0.0.tgz "
        "as .Values.tolerations of the subchart"
    ) in gpu020[0]["message"]
    assert gpu020[0]["message"].endswith("add it under streaming here)")
    (related,) = [r for r in gpu020[0]["related"] if r["kind"] == "template"]
    assert (related["path"], related["line"]) == ("catalog/charts/streaming-2.0.0.tgz", 1)


@needs_helm
def test_a_value_whose_marker_a_template_refuses_is_kept_and_the_rest_traced(
    tmp_path: Path,
) -> None:
    """A chart whose template checks that a container's ``dependsOn`` names another
    container (``fail`` when it does not, as bjw-s' common library does), through a
    variable no reading of the template ties to a values name: the marked render fails,
    naming the marker it refused; that value is kept as written and the chart rendered once
    more, so the env value is traced to its values line."""
    path = helm()
    assert path is not None
    (tmp_path / ".git").mkdir()
    shutil.copytree(FIXTURES / "render" / "charts" / "checked", tmp_path / "checked")
    findings = _check(path, "checked", cwd=tmp_path)
    (gpu016,) = [f for f in findings if f["rule"] == "GPU016"]
    assert (gpu016["path"], gpu016["line"], gpu016["column"]) == ("checked/values.yaml", 5, 31)


def test_values_a_packaged_library_compares_are_not_marked(tmp_path: Path) -> None:
    """A library chart packaged in ``charts/`` (bjw-s' common) validates the values it
    renders: ``has $controllerValues.type $allowedControllerTypes``; ``type`` is kept as
    written, as for the chart's own templates."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "common.yaml").write_text(
        '{{ include "common.loader.all" . }}\n', encoding="utf-8"
    )
    (tmp_path / "charts").mkdir()
    text = (
        b'{{- define "common.controller.validate" -}}\n'
        b"{{- if not (has $controllerValues.type $allowedControllerTypes) -}}\n"
        b'{{- fail "Not a valid controller.type" -}}\n{{- end -}}\n{{- end -}}\n'
    )
    with tarfile.open(tmp_path / "charts" / "common-5.0.1.tgz", "w:gz") as tar:
        for name, data in (
            ("common/Chart.yaml", b"apiVersion: v2\nname: common\ntype: library\nversion: 5.0.1\n"),
            ("common/templates/lib/controller/_validate.tpl", text),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert "type" in markers.compared_names([str(tmp_path)])


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_an_api_every_cluster_serves_is_the_one_rendered(tmp_path: Path, helm_path: str) -> None:
    """prometheus-adapter asks ``.Capabilities.APIVersions.Has "apiregistration.k8s.io/v1"``;
    helm's offline default set lacks the aggregator's group, so the chart rendered the
    ``v1beta1`` APIService no cluster has served since 1.22, and was warned for it. The
    same object written as ``v1beta1`` in a plain file still is."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(FIXTURES / "render" / "charts" / "adapter", tmp_path / "adapter")
    (tmp_path / "legacy.yaml").write_text(
        "apiVersion: apiregistration.k8s.io/v1beta1\nkind: APIService\n"
        "metadata:\n  name: v1beta1.custom.metrics.k8s.io\nspec:\n"
        "  service: {name: adapter, namespace: monitoring}\n  group: custom.metrics.k8s.io\n"
        "  version: v1beta1\n  groupPriorityMinimum: 100\n  versionPriority: 100\n",
        encoding="utf-8",
    )
    found = _check(helm_path, "adapter", "legacy.yaml", cwd=tmp_path)
    assert [f["path"] for f in found if "v1beta1 APIService" in f["message"]] == ["legacy.yaml"]


@needs_helm
def test_a_missing_toleration_read_from_empty_pod_options_is_under_them(tmp_path: Path) -> None:
    """A pod whose tolerations a helper reads by name from the controller's ``pod`` options,
    else ``defaultPodOptions`` (bjw-s' ``getOption``): no template text or empty list
    traces them, so the values' empty ``defaultPodOptions: {}`` is given one marked
    toleration in a render of its own; the pod renders it, so the finding is at that key,
    saying to add tolerations under it."""
    path = helm()
    assert path is not None
    (tmp_path / ".git").mkdir()
    shutil.copytree(FIXTURES / "render" / "charts" / "podoptions", tmp_path / "podoptions")
    (gpu020,) = [f for f in _check(path, "podoptions", cwd=tmp_path) if f["rule"] == "GPU020"]
    assert (gpu020["path"], gpu020["line"], gpu020["column"]) == ("podoptions/values.yaml", 2, 1)
    assert gpu020["message"].endswith(
        "(as .Values.defaultPodOptions.tolerations, which no values file sets: "
        "templates/deployment.yaml writes this object's tolerations from "
        ".Values.defaultPodOptions through template logic; add tolerations under it here)"
    )
