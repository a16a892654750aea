"""Pod specs and resource requirements found by shape (gpulint/k8s/shapes.py).

* What is a pod spec, a container and a bare ResourceRequirements, and what is not (policy
  patterns, storage claims, limits beside other fields of an object's spec).
* Found once per object, like the table's pod specs.
* No false pods on the real corpus: on every object of a known kind, the shape search finds
  nothing the table's row does not; on every object of an unknown kind, what it finds is in
  ``REVIEWED`` with the reason it is a real pod spec or ResourceRequirements (kinds listed in
  ``not_workloads``, whose API types hold no pod, are not searched: the GKE InferenceModel
  sample's ``spec.resources`` is a field the API server prunes).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import gpulint.k8s.workloads
from gpulint.k8s.objects import K8sObject
from gpulint.k8s.shapes import find_pod_specs, is_container, is_pod_spec, is_requirements
from gpulint.k8s.workloads import PodSpec, builtin_table, objects
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.stream import DocumentStream
from gpulint.model import Path as YamlPath
from tests.conftest import CORPUS, needs_corpus


def _objects(text: str) -> list[K8sObject]:
    return [obj for doc in DocumentStream(text) for obj in objects(doc)]


def _found(text: str) -> list[tuple[str, str, str]]:
    table = builtin_table()
    return [
        (pod.location, ".".join(map(str, pod.path)), pod.found_by)
        for obj in _objects(text)
        for pod in table.pod_specs(obj)
    ]


def test_a_container_list_is_a_pod_spec() -> None:
    assert is_container({"name": "main", "image": "vllm/vllm-openai", "args": ["--tp", "2"]})
    assert is_container({"name": "main", "resources": {}})  # a template override: no image
    assert is_container({"image": "busybox"})
    # a misspelt field or two does not hide a container
    assert is_container({"name": "main", "image": "x", "resource": {"limits": {}}})
    assert not is_container({"name": "Main Engine"})  # not a DNS label, no image
    assert not is_container({"name": "a100", "limits": {"nvidia.com/gpu": 8}, "params": {}})
    assert not is_container(["main"])
    assert is_pod_spec({"containers": [{"name": "main", "image": "x"}]})
    assert not is_pod_spec({"containers": []})
    assert not is_pod_spec({"containers": [{"name": "main", "image": "x"}, "sidecar"]})
    assert not is_pod_spec({"containers": {"name": "main"}})


def test_resource_requirements_by_shape() -> None:
    assert is_requirements({"limits": {"nvidia.com/gpu": 1}})
    assert is_requirements({"requests": {"cpu": "1", "memory": "1Gi"}, "claims": []})
    assert not is_requirements({"requests": {"storage": "10Gi"}})  # a volume claim's
    assert not is_requirements({"limits": {"nvidia.com/gpu": 1}, "replicas": 2})
    # Under a key named resources, one stray key beside them is a slip (GPU024 says so)...
    slip = {"limits": {"nvidia.com/gpu": 1}, "startup": {"enabled": False}}
    assert is_requirements(slip, "resources") and not is_requirements(slip)
    # A chart's container with no resources is found by a device variable it sets.
    from gpulint.k8s.shapes import is_chart_gpu_container

    comfy = {"image": {"repository": "yanwk/comfyui-boot"}, "env": {"HIP_VISIBLE_DEVICES": "0"}}
    assert is_chart_gpu_container(comfy)
    assert not is_chart_gpu_container({**comfy, "env": {"TZ": "UTC"}})
    assert not is_chart_gpu_container({"env": comfy["env"]})  # no image: no container
    # ... or, in values that mount the host's GPU device nodes, by its image alone.
    from gpulint.k8s.shapes import host_gpu_device, host_gpu_mounts

    jellyfin = {"image": {"repository": "jellyfin/jellyfin"}, "securityContext": {}}
    assert is_chart_gpu_container(jellyfin, host_devices=True)
    assert not is_chart_gpu_container(jellyfin)
    assert host_gpu_mounts({"persistence": {"dri": {"hostPath": "/dev/dri"}}})
    assert host_gpu_mounts({"extraVolumes": [{"hostPath": {"path": "/dev/kfd"}}]})
    assert not host_gpu_mounts({"persistence": {"dxg": {"hostPath": "/dev/dxg"}}})
    dri = {"type": "hostPath", "hostPath": "/dev/dri", "enabled": True}
    assert host_gpu_mounts({"persistence": {"dri": dri}}, ("values",)) == [
        (("values", "persistence", "dri", "hostPath"), "/dev/dri", host_gpu_device("/dev/dri"), dri)
    ]
    assert not host_gpu_mounts({"persistence": {"dri": {**dri, "enabled": False}}})
    assert host_gpu_device("/dev/dri/renderD128") == ("gpu.intel.com/i915", "amd.com/gpu")
    assert host_gpu_device("/dev/nvidia0") == ("nvidia.com/gpu",)
    assert host_gpu_device("/dev/shm") is None and host_gpu_device("/dev/drifter") is None
    # ... two make another type.
    assert not is_requirements({**slip, "replicas": 2}, "resources")
    assert not is_requirements({"limits": {"nvidia.com/gpu": {"max": 1}}})
    assert not is_requirements({"limits": {"not a name": 1}})


OPERATORS = """\
apiVersion: serving.example.com/v1
kind: LLMService
metadata:
  name: llama
spec:
  resources:
    limits:
      nvidia.com/gpu: 1
  storage:
    pvc:
      resources:
        requests:
          storage: 50Gi
---
apiVersion: example.com/v1
kind: Fleet
metadata:
  name: fleet
  annotations:
    example.com/template: unused
spec:
  flavors:
  - name: a100
    limits:
      nvidia.com/gpu: 8
    nodeSelector: {gpu: a100}
  template:
    metadata:
      labels: {app: fleet}
    spec:
      containers:
      - name: engine
        image: engine
        resources:
          limits:
            nvidia.com/gpu: 8
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
status:
  lastPod:
    containers:
    - name: engine
      image: engine
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  limits:
    nvidia.com/gpu: 64
---
apiVersion: kyverno.io/v1
kind: ClusterPolicy
metadata:
  name: require-gpu-limits
spec:
  rules:
  - name: gpu
    validate:
      pattern:
        spec:
          containers:
          - name: "*"
            resources:
              limits:
                nvidia.com/gpu: "?*"
"""


def test_operator_fields_are_found_and_non_pods_are_not() -> None:
    assert _found(OPERATORS) == [
        ("resources", "spec.resources", "shape"),
        ("resources", "spec.flavors.0", "shape"),
        ("pod", "spec.template.spec", "shape"),
    ]


def test_kinds_known_to_hold_no_pod_are_not_searched() -> None:
    text = """\
apiVersion: inference.networking.x-k8s.io/v1alpha2
kind: InferenceModel
metadata: {name: m}
spec:
  modelName: llama
  resources:
    limits: {nvidia.com/gpu: 1}
"""
    assert _found(text) == []


def test_a_known_kind_keeps_its_row() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      containers:
      - {name: main, image: x}
  extra:
    containers:
    - {name: other, image: y}
"""
    assert _found(text) == [("pod", "spec.template.spec", "table")]


def test_resource_rules_read_operator_fields() -> None:
    """A value rule applies to a flavor's limits as to a container's."""
    text = OPERATORS.replace("nvidia.com/gpu: 8\n    node", "nvidia.com/gpu: 0.5\n    node")
    findings = Linter(load_rules()).lint_text("fleet.yaml", text)
    assert [(f.rule, f.line) for f in findings if f.rule == "GPU004"] == [("GPU004", 25)]


def test_shape_search_runs_once_per_object(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter[YamlPath] = Counter()
    search = gpulint.k8s.workloads.find_pod_specs

    def counting(obj: K8sObject) -> list[PodSpec]:
        calls[(obj.doc.index, *obj.path)] += 1
        return search(obj)

    monkeypatch.setattr(gpulint.k8s.workloads, "find_pod_specs", counting)
    linter = Linter(load_rules())
    linter.lint_text("operators.yaml", OPERATORS)
    assert calls and set(calls.values()) == {1}


# -- the real corpus -------------------------------------------------------------------------

#: (file, object kind, path) found by shape in objects of kinds without a row, each a real
#: pod spec or ResourceRequirements: why.
REVIEWED: dict[tuple[str, str, str], str] = {
    (
        "NVIDIA__gpu-operator/bundle__manifests__gpu-operator-certified.clusterserviceversion.yaml",
        "ClusterServiceVersion",
        "spec.install.spec.deployments.0.spec.template.spec",
    ): "OLM installs this Deployment spec as is: the operator's own pod",
}


def _corpus_objects() -> list[tuple[str, K8sObject]]:
    assert CORPUS is not None
    out = []
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = path.relative_to(CORPUS).as_posix()
        out.extend((rel, obj) for doc in DocumentStream(text) for obj in objects(doc))
    return out


def _covered(pods: list[PodSpec]) -> set[YamlPath]:
    """Every path the table's pod specs stand for: pod specs and resource requirements."""
    paths: set[YamlPath] = set()
    for pod in pods:
        paths.add(pod.path)
        paths.update(c.resources_path for c in pod.containers)
    return paths


def _shape_paths(pods: list[PodSpec]) -> set[YamlPath]:
    return {pod.path if pod.location == "pod" else pod.containers[0].resources_path for pod in pods}


@needs_corpus
def test_no_false_pods_in_the_corpus() -> None:
    table = builtin_table()
    extra: list[str] = []
    found: dict[tuple[str, str, str], Any] = {}
    for rel, obj in _corpus_objects():
        by_shape = find_pod_specs(obj)
        if (obj.group, obj.kind) in table.pod_free:
            continue
        if table.lookup(obj.group, obj.kind) is None:
            for pod in by_shape:
                found[(rel, obj.kind, ".".join(map(str, pod.path)))] = pod
            continue
        # A known kind: the shape search must find nothing its row does not.
        missed = _shape_paths(by_shape) - _covered(table.pod_specs(obj))
        extra.extend(f"{rel} {obj.kind} {'.'.join(map(str, p))}" for p in missed)
    assert not extra, "found by shape in a known kind, not by its row:\n" + "\n".join(extra)
    unreviewed = sorted(set(found) - set(REVIEWED))
    assert not unreviewed, "review each, then list it in REVIEWED:\n" + "\n".join(
        " ".join(key) for key in unreviewed
    )
    assert not set(REVIEWED) - set(found), "REVIEWED lists what is no longer found"
