"""GPU pods through Dynamic Resource Allocation: claim shapes and the per-file index."""

from __future__ import annotations

import json
from pathlib import Path

from gpulint.k8s.devices import builtin_registry
from gpulint.k8s.dra import (
    ClaimIndex,
    device_classes,
    gpu_claims,
    project_dra,
    selector_drivers,
)
from gpulint.k8s.workloads import builtin_table, objects
from gpulint.loader.stream import load_text
from tests.conftest import gpulint_in_process


def test_device_classes_of_every_claim_shape() -> None:
    v1beta1 = {"devices": {"requests": [{"name": "a", "deviceClassName": "gpu.nvidia.com"}]}}
    v1 = {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "x"}}]}}
    first = {
        "devices": {
            "requests": [{"name": "a", "firstAvailable": [{"deviceClassName": "y"}, {"name": "z"}]}]
        }
    }
    assert list(device_classes(v1beta1)) == ["gpu.nvidia.com"]
    assert list(device_classes(v1)) == ["x"]
    assert list(device_classes(first)) == ["y"]
    assert list(device_classes({"devices": "nonsense"})) == []
    assert list(device_classes(None)) == []


def test_selector_drivers_read_cel_comparisons() -> None:
    spec = {
        "selectors": [
            {"cel": {"expression": "device.driver == 'gpu.nvidia.com' && x"}},
            {"cel": {"expression": '"gpu.amd.com" == device.driver'}},
            {"cel": {"expression": "device.attributes['x'].y == 'z'"}},
            "garbage",
        ]
    }
    assert list(selector_drivers(spec)) == ["gpu.nvidia.com", "gpu.amd.com"]


def _claims(text: str) -> list[str]:
    result = load_text(text)
    index = ClaimIndex(result.documents)
    names = []
    for doc in result.documents:
        for obj in objects(doc):
            for pod in builtin_table().pod_specs(obj):
                names.extend(
                    f"{c.describe()} ({c.claim.kind} {c.claim.name}, device class {c.device_class})"
                    for c in gpu_claims(pod, builtin_registry(), index)
                )
    return names


def test_the_pre_1_31_source_field_resolves_too() -> None:
    text = """
apiVersion: resource.k8s.io/v1alpha3
kind: ResourceClaimTemplate
metadata: {name: gpu-template}
spec:
  spec:
    devices:
      requests: [{name: gpu, deviceClassName: gpu.nvidia.com}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  resourceClaims:
  - name: gpu
    source:
      resourceClaimTemplateName: gpu-template
  containers: [{name: c, image: cuda}]
"""
    assert _claims(text) == [
        "DRA claim 'gpu' (ResourceClaimTemplate gpu-template, device class gpu.nvidia.com)"
    ]


def test_claims_resolve_in_nested_workloads_and_across_documents() -> None:
    text = """
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: ml}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            resourceClaims: [{name: g, resourceClaimTemplateName: amd}]
            containers: [{name: c, image: rocm}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: amd, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu.amd.com}}]
"""
    assert _claims(text) == ["DRA claim 'g' (ResourceClaimTemplate amd, device class gpu.amd.com)"]


def test_the_index_reads_documents_only_when_asked() -> None:
    class Exploding:
        def __iter__(self) -> None:
            raise AssertionError("documents read without a lookup")

    index = ClaimIndex(Exploding())  # type: ignore[arg-type]
    assert index is not None


def test_registry_dra_entries_name_known_hardware() -> None:
    registry = builtin_registry()
    hardware = {r.hardware for r in registry.resources.values()}
    assert registry.device_classes and registry.dra_drivers
    for entry in [*registry.device_classes.values(), *registry.dra_drivers.values()]:
        assert entry.hardware in hardware, entry
        assert entry.source, entry
    # IMEX channels and compute domains hand out no GPU.
    assert "imex.nvidia.com" not in registry.device_classes
    assert "compute-domain.nvidia.com" not in registry.dra_drivers


_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: {name}
spec:
  selectors:
  - cel:
      expression: device.driver == '{driver}'
"""

_CLAIM_AND_POD = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-device
spec:
  spec:
    devices:
      requests:
      - name: dev
        exactly:
          deviceClassName: {name}
---
apiVersion: v1
kind: Pod
metadata:
  name: claimant
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  resourceClaims:
  - name: dev
    resourceClaimTemplateName: one-device
  containers:
  - name: ctr
    image: ubuntu:22.04
    resources:
      claims:
      - name: dev
"""


def _rules_of(root: Path) -> list[str]:
    proc = gpulint_in_process("check", "-f", "json", "--isolated", ".", cwd=root)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(f["rule"] for f in json.loads(proc.stdout)["findings"])


def test_device_classes_of_other_files_of_the_run_count(tmp_path: Path) -> None:
    # The class is defined in the driver's file, the claim and the pod in the workload's.
    (tmp_path / "workload.yaml").write_text(_CLAIM_AND_POD.format(name="gpu.acme.example"))
    # An unknown class: the pod is no CPU pod, and GPU063 says the class was assumed to exist.
    assert _rules_of(tmp_path) == ["GPU063"]
    (tmp_path / "driver.yaml").write_text(_CLASS.format(name="gpu.acme.example", driver="nic.x"))
    assert _rules_of(tmp_path) == ["GPU021"]  # known, and no accelerator's
    (tmp_path / "driver.yaml").write_text(
        _CLASS.format(name="gpu.acme.example", driver="gpu.nvidia.com")
    )
    assert _rules_of(tmp_path) == []  # known, NVIDIA's GPUs: a GPU pod that tolerates


def test_project_dra_reads_only_dra_texts() -> None:
    text = _CLASS.format(name="a.example", driver="gpu.nvidia.com")
    found = project_dra([("a.yaml", "kind: ConfigMap\n"), ("b.yaml", text)])
    assert dict(found.drivers) == {"a.example": ("gpu.nvidia.com",)}


_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: {count}
"""

_TRAINER = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: two-gpus
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: ["torchrun", "--nproc-per-node=4", "train.py"]
        volumeMounts: [{name: shm, mountPath: /dev/shm}]
        resources:
          claims:
          - name: gpus
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""


def _verdict(cwd: Path, *paths: str) -> list[tuple[str, str, str, int]]:
    proc = gpulint_in_process("check", "-f", "json", *paths, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return sorted(
        (f["path"], f["rule"], f["severity"], f["line"])
        for f in json.loads(proc.stdout)["findings"]
    )


def test_a_claim_in_another_file_of_the_project_is_found_whatever_the_run_got(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "k8s").mkdir()
    (repo / "k8s" / "claims.yaml").write_text(_TEMPLATE.format(name="two-gpus", count=2))
    (repo / "k8s" / "train.yaml").write_text(_TRAINER)
    alone = _verdict(repo, "k8s/train.yaml")
    # The template's two GPUs count: torchrun's four processes are more (GPU041).
    assert alone == [("k8s/train.yaml", "GPU041", "warning", 17)]
    assert alone == _verdict(repo, ".")
    # The finding names the template, in its own file, as a related place.
    proc = gpulint_in_process("check", "-f", "json", "k8s/train.yaml", cwd=repo)
    (finding,) = json.loads(proc.stdout)["findings"]
    assert [(r["path"], r["line"]) for r in finding["related"]] == [("k8s/claims.yaml", 2)]
    assert "ResourceClaimTemplate two-gpus" in finding["related"][0]["message"]
    # Another repository's template of that name never reaches this one.
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "train.yaml").write_text(_TRAINER)
    both = _verdict(tmp_path, "repo", "other")
    assert ("other/train.yaml", "GPU062", "info", 13) in both
    assert not any(f[0] == "other/train.yaml" and f[1] == "GPU041" for f in both)


def test_a_claim_the_project_defines_twice_differently_counts_as_unknown(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "dev").mkdir()
    (tmp_path / "prod").mkdir()
    (tmp_path / "dev" / "claims.yaml").write_text(_TEMPLATE.format(name="two-gpus", count=2))
    (tmp_path / "prod" / "claims.yaml").write_text(_TEMPLATE.format(name="two-gpus", count=8))
    (tmp_path / "train.yaml").write_text(_TRAINER)
    # Which one the pod gets is unknown: no count is compared, and the claim is not missing.
    assert _verdict(tmp_path, "train.yaml") == []
    (tmp_path / "prod" / "claims.yaml").write_text(_TEMPLATE.format(name="two-gpus", count=2))
    assert _verdict(tmp_path, "train.yaml") == [("train.yaml", "GPU041", "warning", 17)]


def test_a_claim_whose_class_cannot_be_read_leaves_the_pod_unknown(tmp_path: Path) -> None:
    # v1alpha2 names a ResourceClass (resourceClassName), no DeviceClass: what the pod gets
    # is unknown, so its GPU toleration is not called a CPU pod's (GPU021).
    (tmp_path / ".git").mkdir()
    (tmp_path / "claims.yaml").write_text(
        "apiVersion: resource.k8s.io/v1alpha2\nkind: ResourceClaimTemplate\n"
        "metadata: {name: inference-gpu}\n"
        "spec: {spec: {resourceClassName: gpu.nvidia.com}}\n"
    )
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
        "  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: inference-gpu}\n"
        "  containers:\n  - {name: c, image: ubuntu:22.04, resources: {claims: [{name: gpu}]}}\n"
        "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
    )
    assert [f[1] for f in _verdict(tmp_path, "pod.yaml")] == []


def test_a_hami_dra_claim_is_a_share_of_an_nvidia_gpu() -> None:
    """HAMi's DRA driver (Project-HAMi/k8s-dra-driver) hands out shares of NVIDIA GPUs: a
    pod with its claim is a GPU pod, and the share is no whole GPU that node fit counts."""
    from gpulint.k8s.dracount import pod_claimed

    text = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: vgpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: hami-core-gpu.project-hami.io
          capacity:
            requests:
              cores: 30
              memory: 4Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: shared
spec:
  containers:
  - name: app
    image: cuda
    resources:
      claims:
      - name: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: vgpu
"""
    assert _claims(text) == [
        "DRA claim 'gpu' (ResourceClaimTemplate vgpu, device class hami-core-gpu.project-hami.io)"
    ]
    result = load_text(text)
    index = ClaimIndex(result.documents)
    (pod,) = [p for o in objects(result.documents[1]) for p in builtin_table().pod_specs(o)]
    assert pod_claimed(pod, builtin_registry(), index) == []
