"""The real corpus is the test: reviewed findings, and GPU requests found where the manifest is.

* Every file of the corpus (``GPULINT_CORPUS``, and its ``_invalid/``) lints without a
  crash, and its findings equal the reviewed golden file ``tests/golden/corpus-findings.txt``
  (regenerate with ``python -m tests.corpus``, then review the diff; see
  ``docs/corpus-review.md``).
* Coverage: every file whose ``gpu_in`` column in ``MANIFEST.tsv`` is not ``none`` yields at
  least one pod with a GPU request in ``gpulint inspect``; the exceptions are listed below
  with their reason. Files the manifest marks ``none`` where gpulint does find a GPU pod are
  listed too, so a change in either direction is noticed.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from gpulint.commands.inspect import Inspector
from tests.conftest import CORPUS, needs_corpus
from tests.corpus import GOLDEN, corpus_findings

pytestmark = needs_corpus

#: gpu_in is not "none", yet no pod asks for a GPU -- and that is right.
NO_GPU_REQUEST: dict[str, str] = {
    "NVIDIA__deepops/workloads__examples__k8s__cpu-test-job.yml": (
        "nvidia.com/gpu: 0 is an explicit zero: a CPU pod (the file is deepops' CPU baseline)"
    ),
    "NVIDIA__deepops/examples__k8s__cpu-test-job.yml": (
        "nvidia.com/gpu: 0 is an explicit zero: a CPU pod (older copy of the same file)"
    ),
}

#: gpu_in is "none" (the GPU is not under a plain container's limits/requests), yet gpulint
#: finds a pod that asks for a GPU: DRA claims, single-container predictors, Argo templates,
#: TrainJob's resourcesPerNode.
GPU_FOUND_BEYOND_MANIFEST: dict[str, str] = {
    "NVIDIA__k8s-dra-driver/demo__specs__quickstart__gpu-test-mps.yaml": "DRA gpu.nvidia.com",
    "NVIDIA__k8s-dra-driver/demo__specs__quickstart__gpu-test2.yaml": "DRA gpu.nvidia.com",
    "NVIDIA__k8s-dra-driver/demo__specs__quickstart__gpu-test5.yaml": "DRA gpu.nvidia.com",
    "NVIDIA__k8s-dra-driver/demo__specs__quickstart__gpu-test6.yaml": "DRA gpu.nvidia.com",
    "NVIDIA__k8s-dra-driver-gpu/demo__specs__quickstart__v1__gpu-test4.yaml": "DRA mig.nvidia.com",
    "NVIDIA__k8s-dra-driver-gpu/demo__specs__quickstart__v1beta1__imex-test1.yaml": (
        "DRA gpu.nvidia.com beside IMEX channels"
    ),
    "run-ai__fake-gpu-operator/"
    "test__e2e__mock__fixtures__manifests__nvidia-smi-resourceclaim-pod.yaml": (
        "DRA ResourceClaim gpu.nvidia.com"
    ),
    "kserve__kserve/docs__samples__accelerators__tensorflow-gpu.yaml": (
        "InferenceService spec.predictor.tensorflow (a single container)"
    ),
    "kserve__kserve/docs__samples__autoscaling__autoscale_gpu.yaml": (
        "InferenceService spec.predictor.tensorflow (a single container)"
    ),
    "kserve__kserve/docs__samples__fluid__fluid-isvc.yaml": (
        "InferenceService spec.predictor.model (a single container)"
    ),
    "kserve__kserve/docs__samples__llmisvc__dp-ep__deepseek-r1-gpu-rdma-roce__"
    "llm-inference-service-dp-ep-deepseek-r1-gpu-deepep-ht.yaml": (
        "LLMInferenceService spec.template / spec.worker pod specs"
    ),
    "kserve__kserve/docs__samples__llmisvc__precise-prefix-kv-cache-routing__"
    "llm-inference-service-qwen2-7b-gpu-kv-cache-routing.yaml": (
        "LLMInferenceService spec.template pod spec"
    ),
    "kserve__kserve/docs__samples__pytorch__eager__pytorch_gpu.yaml": (
        "serving.kubeflow.org/v1alpha2 spec.default.predictor.pytorch"
    ),
    "kserve__kserve/docs__samples__resource-requests.yaml": (
        "KFService spec.default.tensorflow (requests-only: GPU001)"
    ),
    "kubeflow__examples/demos__simple_pipeline__gpu-example-pipeline.yaml": (
        "Argo Workflow template container"
    ),
    "kubeflow__trainer/examples__flux__lammps-train-gpus.yaml": (
        "TrainJob spec.trainer.resourcesPerNode"
    ),
}


def _manifest() -> list[dict[str, str]]:
    with (CORPUS / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def test_corpus_findings_match_the_reviewed_golden_file() -> None:
    got = corpus_findings()
    want = GOLDEN.read_text(encoding="utf-8").splitlines()
    new = sorted(set(got) - set(want))
    gone = sorted(set(want) - set(got))
    assert not new and not gone, (
        "corpus findings changed; review, then regenerate with `python -m tests.corpus`\n"
        + "\n".join([f"+ {line}" for line in new] + [f"- {line}" for line in gone])
    )
    assert got == want  # same order and multiplicity


def test_every_corpus_file_is_in_the_golden_run() -> None:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml"))
    rows = _manifest()
    assert len(rows) == 226
    assert {r["file"] for r in rows} <= {p.relative_to(CORPUS).as_posix() for p in files}


def _gpu_files() -> dict[str, bool]:
    inspector = Inspector()
    out = {}
    for row in _manifest():
        entry = inspector.inspect_bytes(row["file"], (CORPUS / row["file"]).read_bytes())
        out[row["file"]] = any(p["gpu"] for w in entry["workloads"] for p in w["pods"])
    return out


@pytest.fixture(scope="module")
def gpu_files() -> dict[str, bool]:
    return _gpu_files()


def test_every_gpu_file_yields_a_pod_with_a_gpu_request(gpu_files: dict[str, bool]) -> None:
    rows = {r["file"]: r for r in _manifest()}
    missing = sorted(
        f for f, found in gpu_files.items() if rows[f]["gpu_in"] != "none" and not found
    )
    assert missing == sorted(NO_GPU_REQUEST), "\n".join(
        f"{f}: {rows[f]['kinds']} gpu_in={rows[f]['gpu_in']}" for f in missing
    )


def test_gpu_pods_found_beyond_the_manifest_column(gpu_files: dict[str, bool]) -> None:
    rows = {r["file"]: r for r in _manifest()}
    extra = sorted(f for f, found in gpu_files.items() if rows[f]["gpu_in"] == "none" and found)
    assert extra == sorted(GPU_FOUND_BEYOND_MANIFEST)


def test_listed_exceptions_exist() -> None:
    for name in [*NO_GPU_REQUEST, *GPU_FOUND_BEYOND_MANIFEST]:
        assert Path(CORPUS / name).is_file(), name
