"""GPU pods through Dynamic Resource Allocation: claim shapes and the per-file index."""

from __future__ import annotations

from gpulint.dra import ClaimIndex, device_classes, gpu_claims, selector_drivers
from gpulint.loader.stream import load_text
from gpulint.registry import builtin_registry
from gpulint.workloads import builtin_table, objects


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
                names.extend(c.describe() for c in gpu_claims(pod, builtin_registry(), index))
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
