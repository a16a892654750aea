"""``gpulint inspect``: workloads, pod specs, lines and effective GPU requests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gpulint.commands.inspect import Inspector, render_json, render_text
from tests.conftest import CORPUS, FIXTURES, ROOT, gpulint_in_process, needs_corpus
from tests.externals import helm, needs_helm, needs_kustomize

SCHEMA = json.loads((ROOT / "schemas" / "inspect.schema.json").read_text())

MANIFEST = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ddp
  namespace: ml
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          tolerations:
          - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
          initContainers:
          - name: warmup
            image: cuda
            resources:
              limits:
                nvidia.com/gpu: 4
          - name: proxy
            image: envoy
            restartPolicy: Always
          containers:
          - name: pytorch
            image: pytorch
            resources:
              limits:
                nvidia.com/gpu: 2
                cpu: "8"
          - name: exporter
            image: exporter
            resources:
              limits:
                nvidia.com/gpu: 1
---
apiVersion: example.com/v1
kind: GPUJob
metadata:
  name: custom
spec:
  worker:
    replicas: 2
    limits:
      nvidia.com/gpu: 2
"""


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(SCHEMA)
    return Draft202012Validator(SCHEMA)


def test_pod_specs_lines_and_effective_request() -> None:
    entry = Inspector().inspect_text("job.yaml", MANIFEST)
    (workload,) = entry["workloads"]
    assert (workload["kind"], workload["name"], workload["namespace"]) == (
        "PyTorchJob",
        "ddp",
        "ml",
    )
    assert (workload["line"], workload["column"]) == (1, 1)
    (pod,) = workload["pods"]
    assert pod["path"] == "spec.pytorchReplicaSpecs.Worker.template.spec"
    assert (pod["line"], pod["column"]) == (11, 9)
    assert pod["pattern"] == "spec.pytorchReplicaSpecs.*.template.spec"
    assert [(c["name"], c["role"], c["line"]) for c in pod["containers"]] == [
        ("warmup", "init", 15),
        ("proxy", "sidecar", 20),
        ("pytorch", "container", 24),
        ("exporter", "container", 30),
    ]
    # max(2 + 1, 4) = 4: the init container's GPUs are reused by the main containers
    assert pod["effective_gpu_request"] == {"nvidia.com/gpu": "4"}
    assert pod["tolerations"] == {
        "path": "spec.pytorchReplicaSpecs.Worker.template.spec.tolerations",
        "count": 1,
        "inherited": False,
    }
    assert pod["gpu"] is True


def test_unknown_kinds_with_gpu_keys_are_listed_as_a_hint() -> None:
    entry = Inspector().inspect_text("job.yaml", MANIFEST)
    (hint,) = entry["unrecognised"]
    assert hint["kind"] == "GPUJob"
    # Not a ResourceRequirements (limits beside other fields, as a Karpenter NodePool's
    # spec.limits): nothing is found by shape, and the object stays a hint.
    assert hint["gpu_keys"] == [{"path": "spec.worker.limits.nvidia.com/gpu", "line": 44}]
    text = render_text(_report(entry))
    assert "GPUJob/custom (example.com/v1) is not a known workload kind" in text
    assert "1 workload, 1 pod spec (1 with a GPU request) in 1 file." in text


CLOUD_RUN_JOB = """\
apiVersion: run.googleapis.com/v1
kind: Job
metadata:
  name: transcribe
spec:
  template:
    spec:
      template:
        spec:
          containers:
          - image: us-docker.pkg.dev/acme/jobs/whisper:1.4
            resources:
              limits:
                nvidia.com/gpu: "1"
          nodeSelector:
            run.googleapis.com/accelerator: nvidia-l4
"""


def test_another_platforms_objects_are_neither_workloads_nor_hints() -> None:
    # A Cloud Run job runs on Cloud Run: no workloads row would make it a cluster's pod.
    entry = Inspector().inspect_text("job.yaml", CLOUD_RUN_JOB)
    assert entry["workloads"] == [] and entry["unrecognised"] == []


OPERATORS = """\
apiVersion: serving.example.com/v1
kind: LLMService
metadata:
  name: llama
spec:
  image:
    repository: nvcr.io/nim/meta/llama-3.1-8b-instruct
  resources:
    limits:
      nvidia.com/gpu: 1
---
apiVersion: example.com/v1
kind: ModelServer
metadata:
  name: server
spec:
  engine:
    template:
      metadata:
        labels: {app: server}
      spec:
        containers:
        - name: engine
          image: vllm/vllm-openai
          resources:
            limits:
              nvidia.com/gpu: 2
"""


def test_pod_specs_found_by_shape_say_so(validator: Draft202012Validator) -> None:
    entry = Inspector().inspect_text("operators.yaml", OPERATORS)
    assert entry["unrecognised"] == []
    nim, server = entry["workloads"]
    assert (nim["kind"], nim["found_by"], nim["table_row"]) == ("LLMService", "shape", None)
    (resources,) = nim["pods"]
    assert (resources["location"], resources["path"], resources["found_by"]) == (
        "resources",
        "spec.resources",
        "shape",
    )
    assert resources["effective_gpu_request"] == {"nvidia.com/gpu": "1"}
    (pod,) = server["pods"]
    assert (pod["location"], pod["path"], pod["pattern"]) == (
        "pod",
        "spec.engine.template.spec",
        "",
    )
    assert pod["effective_gpu_request"] == {"nvidia.com/gpu": "2"}
    report = _report(entry)
    text = render_text(report)
    assert (
        "LLMService/llama (serving.example.com/v1, no workload row: pod specs found by shape)"
        in text
    )
    assert "pod spec spec.engine.template.spec (line 21, column 7, found by shape)" in text
    data = json.loads(render_json(report))
    errors = list(validator.iter_errors(data))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


_CHART_GPUS = """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: ollama}
spec:
  values:
    ollama:
      gpu: {enabled: true, type: nvidia, number: 2}
    resources:
      limits: {memory: 8Gi}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: vllm}
spec:
  values:
    servingEngineSpec:
      modelSpec:
      - name: llama
        repository: vllm/vllm-openai
        tag: v0.10.1
        modelURL: meta-llama/Llama-3.1-8B-Instruct
        requestGPU: 4
        requestGPUType: nvidia.com/mig-3g.40gb
"""


def test_gpus_a_chart_writes_from_its_own_fields_are_shown(
    validator: Draft202012Validator,
) -> None:
    """The GPUs a chart writes into its container from a field of its own (the Ollama chart's
    enabled gpu: block, a production stack model's requestGPU of requestGPUType) are the
    container's and the pod's request in inspect, as every rule reads them."""
    entry = Inspector().inspect_text("charts.yaml", _CHART_GPUS)
    ollama, vllm = entry["workloads"]
    (pod,) = ollama["pods"]
    assert pod["containers"][0]["gpu_requests"] == {"nvidia.com/gpu": "2"}
    assert pod["effective_gpu_request"] == {"nvidia.com/gpu": "2"}
    (model,) = vllm["pods"]
    assert model["path"] == "spec.values.servingEngineSpec.modelSpec.0"
    assert [c["name"] for c in model["containers"]] == ["llama"]
    assert model["effective_gpu_request"] == {"nvidia.com/mig-3g.40gb": "4"}
    errors = list(validator.iter_errors(json.loads(render_json(_report(entry)))))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def _report(entry: dict[str, Any]) -> Any:
    from gpulint.commands.inspect import InspectReport

    return InspectReport([entry])


def test_text_output_names_every_pod_and_container() -> None:
    path = FIXTURES / "workloads" / "argo.yaml"
    report = Inspector().inspect_targets(_targets(path))
    text = render_text(report)
    assert "Workflow/pipeline- (argoproj.io/v1alpha1)" in text
    assert "pod spec spec.templates.1 [train] (line 14, column 5)" in text
    assert "tolerations: 1 from spec.tolerations" in text
    assert "effective GPU request: nvidia.com/gpu: 1" in text


def _targets(*paths: Path) -> list[Any]:
    from gpulint.util.discover import targets

    found, missing = targets([str(p) for p in paths])
    assert not missing
    return list(found)


def test_json_output_matches_its_schema_on_fixtures(validator: Draft202012Validator) -> None:
    paths = sorted((FIXTURES / "workloads").glob("*.yaml")) + sorted(
        (FIXTURES / "rules").glob("*/*.yaml")
    )
    data = json.loads(render_json(Inspector().inspect_targets(_targets(*paths))))
    errors = list(validator.iter_errors(data))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    assert data["summary"]["files"] == len(paths)


@needs_corpus
def test_json_output_matches_its_schema_on_the_corpus(validator: Draft202012Validator) -> None:
    report = Inspector().inspect_targets(_targets(CORPUS))
    data = json.loads(render_json(report))
    errors = list(validator.iter_errors(data))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    assert data["summary"]["gpu_pod_specs"] > 200


def test_cli_inspect_text_and_json(tmp_path: Path) -> None:
    manifest = tmp_path / "job.yaml"
    manifest.write_text(MANIFEST)
    text = gpulint_in_process("inspect", manifest)
    assert text.returncode == 0, text.stderr
    assert f"{manifest}:1:1: PyTorchJob/ddp (kubeflow.org/v1, namespace ml)" in text.stdout
    assert "effective GPU request: nvidia.com/gpu: 4" in text.stdout
    js = gpulint_in_process(
        "inspect", "--format", "json", "-", "--stdin-filename", "in.yaml", stdin=MANIFEST
    )
    assert js.returncode == 0, js.stderr
    data = json.loads(js.stdout)
    assert data["files"][0]["path"] == "in.yaml"
    assert data["summary"]["gpu_pod_specs"] == 1


def test_cli_inspect_missing_path_and_broken_yaml(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nspec: [unclosed\n")
    result = gpulint_in_process("inspect", broken, tmp_path / "nope.yaml")
    assert result.returncode == 2
    assert "nope.yaml: no such file or directory" in result.stderr
    assert f"{broken}: not inspected: " in result.stdout
    assert "Traceback" not in result.stderr


def test_cli_inspect_honours_exclude(tmp_path: Path) -> None:
    (tmp_path / ".gpulint.yaml").write_text("exclude: [rendered/]\n")
    for folder in ("k8s", "rendered"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "job.yaml").write_text(MANIFEST)
    result = gpulint_in_process("inspect", "--format", "json", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [f["path"] for f in json.loads(result.stdout)["files"]] == ["k8s/job.yaml"]


def test_a_row_that_names_a_pod_template_gets_a_hint() -> None:
    from gpulint.k8s.workloads import builtin_table, parse_row

    row = parse_row({"group": "example.com", "kind": "Trainer", "pods": ["spec.worker"]})
    inspector = Inspector(table=builtin_table().extended([row]))
    text = """\
apiVersion: example.com/v1
kind: Trainer
metadata: {name: t}
spec:
  worker:
    metadata: {labels: {app: t}}
    spec:
      containers: [{name: main, image: cuda}]
"""
    entry = inspector.inspect_text("t.yaml", text)
    (pod,) = entry["workloads"][0]["pods"]
    assert pod["containers"] == []
    assert pod["hints"] == [
        "this is a pod template (metadata + spec), not a pod spec: the pattern "
        "'spec.worker' should end in '.spec'"
    ]
    assert "    hint: this is a pod template" in render_text(_report(entry))


def test_scheduling_fixes_write_quantities_as_a_manifest_does(tmp_path: Path) -> None:
    """A node's allocatable is shown with the suffix a user writes (``313046540Ki``,
    ``47060m``), never as a bare count of bytes or a fraction of a core."""
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: big\nspec:\n"
        "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists}\n"
        "  containers:\n  - name: main\n    image: pytorch/pytorch:2.3.0\n"
        "    resources:\n      limits:\n"
        '        nvidia.com/gpu: 4\n        cpu: "64"\n        memory: 400Gi\n'
    )
    nodes = str(FIXTURES / "cluster" / "gke-a100-12.yaml")
    text = gpulint_in_process("inspect", "--isolated", "--cluster", nodes, "pod.yaml", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "request at most 47060m cpu (its allocatable)" in text.stdout
    assert "request at most 313046540Ki memory (its allocatable)" in text.stdout
    assert not re.search(r"request at most \d{7,} memory", text.stdout), text.stdout


@pytest.mark.parametrize(
    ("value", "name", "written"),
    [
        ("12884901888", "memory", "12Gi"),
        ("1610612736", "memory", "1536Mi"),
        ("16000000000", "memory", "16G"),
        ("320559656960", "memory", "313046540Ki"),
        ("1025", "memory", "1025"),
        ("1024", "ephemeral-storage", "1Ki"),
        ("2147483648", "hugepages-1Gi", "2Gi"),
        ("47.06", "cpu", "47060m"),
        ("0.5", "cpu", "500m"),
        ("8", "cpu", "8"),
        ("0.0005", "cpu", "0.0005"),
        ("4", "nvidia.com/gpu", "4"),
        ("1024", "nvidia.com/gpu", "1024"),
        ("0", "memory", "0"),
        ("1E+999990", "memory", "1e999990"),
    ],
)
def test_format_resource_writes_the_manifest_s_suffix(value: str, name: str, written: str) -> None:
    from decimal import Decimal

    from gpulint.k8s.quantity.display import format_resource

    assert format_resource(Decimal(value), name) == written


DRA_POD = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: efa.networking.k8s.aws
spec:
  selectors:
  - cel:
      expression: device.driver == "dra.net"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-and-nic
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.intel.com
          count: 2
      - name: nic
        exactly:
          deviceClassName: efa.networking.k8s.aws
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: rdma
spec:
  devices:
    requests:
    - name: nic
      exactly:
        deviceClassName: efa.networking.k8s.aws
        allocationMode: All
---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata:
  name: domain
spec:
  numNodes: 2
  channel:
    resourceClaimTemplate:
      name: domain-channel
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: tpus
spec:
  spec:
    devices:
      requests:
      - name: chips
        exactly:
          deviceClassName: tpu.google.com
          count: 4
      - name: other
        exactly:
          deviceClassName: fpga.example.com
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: main
    image: trainer
    resources:
      claims:
      - name: gpus
      - name: rdma
  resourceClaims:
  - name: gpus
    resourceClaimTemplateName: gpu-and-nic
  - name: rdma
    resourceClaimName: rdma
  - name: channel
    resourceClaimTemplateName: domain-channel
  - name: tpu
    resourceClaimTemplateName: tpus
  - name: amd
    resourceClaimTemplateName: amd-gpus
  - name: broken
"""


def test_inspect_lists_every_claim_of_a_pod_and_what_its_requests_resolve_to(
    tmp_path: Path, validator: Draft202012Validator
) -> None:
    """Not only GPU claims: a NIC (a DeviceClass of the project selecting dra.net), a
    ComputeDomain's IMEX channel, a TPU claim, a claim the project does not define and an
    entry that names nothing, each in the pod's order, with what each request gets."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.yaml").write_text(DRA_POD)
    proc = gpulint_in_process("inspect", "--format", "json", "train.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    validator.validate(report)
    (pod,) = [p for w in report["files"][0]["workloads"] for p in w["pods"]]
    claims = {c["name"]: c for c in pod["dra_claims"]}
    assert list(claims) == ["gpus", "rdma", "channel", "tpu", "amd", "broken"]
    gpus = claims["gpus"]
    assert (gpus["kind"], gpus["claim"], gpus["device_class"], gpus["hardware"]) == (
        "ResourceClaimTemplate",
        "gpu-and-nic",
        "gpu.intel.com",
        "intel",
    )
    assert gpus["resolved"] == "project" and gpus["defined_at"] == "train.yaml:11"
    assert [
        (r["name"], r["devices"], [d["devices"] for d in r["resolves_to"]])
        for r in gpus["requests"]
    ] == [("gpu", 2, ["accelerator"]), ("nic", 1, ["other"])]
    nic = gpus["requests"][1]["resolves_to"][0]
    assert (nic["drivers"], nic["known_from"]) == (["dra.net"], "project")
    rdma = claims["rdma"]
    assert (rdma["kind"], rdma["device_class"], rdma["hardware"]) == ("ResourceClaim", None, None)
    assert rdma["requests"][0]["devices"] is None  # allocationMode: All
    channel = claims["channel"]["requests"][0]["resolves_to"][0]
    assert (channel["device_class"], channel["devices"], channel["known_from"]) == (
        "compute-domain-default-channel.nvidia.com",
        "other",
        "registry",
    )
    tpu = claims["tpu"]
    assert (tpu["device_class"], tpu["hardware"]) == ("tpu.google.com", "google-tpu")
    assert [d["devices"] for r in tpu["requests"] for d in r["resolves_to"]] == [
        "accelerator",
        "unknown",
    ]
    amd = claims["amd"]
    assert (amd["resolved"], amd["defined_at"], amd["requests"]) == ("not found", None, [])
    assert (claims["broken"]["kind"], claims["broken"]["claim"]) == (None, None)
    proc = gpulint_in_process("inspect", "train.yaml", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    for line in (
        "    GPU through DRA: claim 'gpus' -> ResourceClaimTemplate gpu-and-nic (device class "
        "gpu.intel.com, line 77; defined at train.yaml:11)",
        "      request gpu: 2 devices of gpu.intel.com",
        "      request nic: 1 device of efa.networking.k8s.aws (efa.networking.k8s.aws: "
        "devices of driver dra.net, not accelerators)",
        "    DRA claim 'rdma' -> ResourceClaim rdma (line 79; defined at train.yaml:27)",
        "      request nic: all matching devices of efa.networking.k8s.aws "
        "(efa.networking.k8s.aws: devices of driver dra.net, not accelerators)",
        "    DRA claim 'channel' -> ResourceClaimTemplate domain-channel (line 81; defined at "
        "train.yaml:39)",
        "      request channel: 1 device of compute-domain-default-channel.nvidia.com "
        "(compute-domain-default-channel.nvidia.com: devices, not accelerators)",
        "      request other: 1 device of fpga.example.com (fpga.example.com: not known what "
        "it hands out)",
        "    DRA claim 'amd' -> ResourceClaimTemplate amd-gpus (line 85; not in this project: "
        "it may exist in the cluster)",
        "    DRA claim 'broken': names no claim or template (line 87)",
    ):
        assert line in lines, line
    # docs/cluster.md shows these lines of this run.
    doc = (ROOT / "docs" / "cluster.md").read_text()
    shown = doc.split("Every entry of a pod's `resourceClaims` is listed", 1)[1]
    shown = shown.split("```console\n", 1)[1].split("```", 1)[0]
    assert shown.strip() and all(line in lines for line in shown.splitlines()), shown


# -- charts and Kustomize overlays ---------------------------------------------------------

RENDER = FIXTURES / "render"


def _inspect_json(*args: str) -> dict[str, Any]:
    proc = gpulint_in_process("inspect", "--format", "json", *args, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    Draft202012Validator(SCHEMA).validate(report)
    return report


def test_a_chart_without_render_is_one_line_and_its_templates_are_never_read() -> None:
    chart = (RENDER / "charts" / "inference").relative_to(ROOT).as_posix()
    proc = gpulint_in_process("inspect", chart, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        f"{chart}/Chart.yaml: not inspected: 1:1: GL201 a Helm chart: its templates are not "
        "YAML until rendered, and only what they write as plain text was checked; pass "
        "--render to lint what it renders (runs helm template)"
    )
    # Then the facts of its project (this repository), and the summary.
    assert lines[1] == "project .: the repository (.git)"
    assert lines[-1] == "0 workloads, 0 pod specs (0 with a GPU request) in 1 file."
    # A template named on the command line is its chart, as for check.
    named = _inspect_json(f"{chart}/templates/deployment.yaml")
    assert [f["path"] for f in named["files"]] == [f"{chart}/Chart.yaml"]
    files = json.dumps(named["files"])  # (the picture is its project's: this repository's)
    assert "YML001" not in files and "{{" not in files


@needs_helm
def test_inspect_render_labels_each_object_with_its_template_and_values_line() -> None:
    chart = (RENDER / "charts" / "inference").relative_to(ROOT).as_posix()
    helm_path = helm()
    assert helm_path is not None
    report = _inspect_json("--render", "--helm", helm_path, chart)
    [entry] = report["files"]
    assert entry["path"] == chart and entry["rendered"] == "helm template"
    by_name = {w["name"]: w for w in entry["workloads"]}
    server = by_name["release-name-inference"]
    assert server["source"] == {
        "path": f"{chart}/templates/deployment.yaml",
        "line": 2,  # kind: Deployment
        "column": 1,
        "fallback": False,
        "note": None,
    }
    [container] = server["pods"][0]["containers"]
    # The GPU value is written in values.yaml (gpu.count: 0.5), line 8, column 10.
    assert container["source"] == {
        "path": f"{chart}/values.yaml",
        "line": 8,
        "column": 10,
        "fallback": False,
        "note": "used by templates/deployment.yaml:28 as .Values.gpu.count",
    }
    # A subchart's object, at the subchart's template.
    gateway = by_name["release-name-metrics-gateway"]
    assert gateway["source"]["path"] == f"{chart}/charts/metrics/templates/deployment.yaml"
    # --set: no file holds the value; the template line using it, saying so.
    report = _inspect_json("--render", "--helm", helm_path, "--set", "gpu.count=2", chart)
    server = {w["name"]: w for w in report["files"][0]["workloads"]}["release-name-inference"]
    source = server["pods"][0]["containers"][0]["source"]
    assert (source["path"], source["line"], source["column"]) == (
        f"{chart}/templates/deployment.yaml",
        28,
        31,
    )
    assert source["note"].startswith("set by --set gpu.count=2 on the command line")
    text = gpulint_in_process("inspect", "--render", "--helm", helm_path, chart, cwd=ROOT).stdout
    assert f"{chart}: rendered with `helm template`" in text
    assert (
        f"      from {chart}/values.yaml:8:10 (used by templates/deployment.yaml:28 as "
        ".Values.gpu.count)"
    ) in text.splitlines()


@needs_kustomize
def test_inspect_render_builds_an_overlay_and_names_the_patch_line() -> None:
    overlay = (RENDER / "kustomize" / "overlays" / "gpu").relative_to(ROOT).as_posix()
    report = _inspect_json("--render", overlay)
    [entry] = report["files"]
    assert entry["rendered"] == "kubectl kustomize"
    by_name = {w["name"]: w for w in entry["workloads"]}
    base = (RENDER / "kustomize" / "base" / "embedder.yaml").relative_to(ROOT).as_posix()
    assert by_name["prod-embedder"]["source"]["path"] == base
    [container] = by_name["prod-vllm"]["pods"][0]["containers"]
    assert container["source"] == {
        "path": f"{overlay}/gpu-patch.yaml",
        "line": 14,
        "column": 31,
        "fallback": False,
        "note": None,
    }


def test_inspect_render_failure_is_a_problem_at_the_chart(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text("kind: Job\nmetadata: {name: {{ .x }}}\n")
    missing = tmp_path / "no-helm"
    proc = gpulint_in_process("inspect", "--render", "--helm", str(missing), "chart", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("chart/Chart.yaml: not inspected: 1:1: GL202 "), proc.stdout


@needs_kustomize
def test_inspect_render_says_when_a_place_is_a_fallback() -> None:
    # The GPU value is written by a patch whose target selects by label (not followed).
    case = (RENDER / "kpos" / "selected").relative_to(ROOT).as_posix()
    [entry] = _inspect_json("--render", case)["files"]
    [workload] = entry["workloads"]
    assert workload["source"]["fallback"] is False  # the object: server.yaml's kind:
    assert workload["source"]["path"] == f"{case}/server.yaml"
    source = workload["pods"][0]["containers"][0]["source"]
    assert (source["path"], source["line"], source["column"], source["fallback"]) == (
        f"{case}/kustomization.yaml",
        6,
        1,
        True,
    )
    assert "gpulint could not tell which file writes this value" in source["note"]
    text = gpulint_in_process("inspect", "--render", case, cwd=ROOT).stdout
    assert f"      from {case}/kustomization.yaml:6:1 (a fallback: no closer line" in text


@needs_helm
def test_the_docs_render_example() -> None:
    """docs/usage.md's `inspect --render` block is the real output (with the helm of the
    tests, which the documented command finds on PATH)."""
    import shlex

    from tests.docblocks import assert_output, block, console

    b = block("docs/usage.md", "Seeing what gpulint sees: `gpulint inspect`", "console", 1)
    [(command, expected)] = console(b.text)
    argv = shlex.split(command)
    assert argv[:3] == ["gpulint", "inspect", "--render"]
    helm_path = helm()
    assert helm_path is not None
    proc = gpulint_in_process(*argv[1:3], "--helm", helm_path, *argv[3:], cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert_output(expected, proc.stdout, True, command)
