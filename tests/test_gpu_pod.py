"""One answer to "is this a GPU pod?": every consumer judges the same pod shapes alike.

The consumers are GPU020 (a GPU pod must tolerate the GPU taint), GPU021 (a pod that surely
asks for no GPU must not), declarative rules' ``when: {gpu: ...}`` for pod, object and
container targets, and ``gpulint inspect``'s ``"gpu"`` field. Each shape is linted as a file
(DRA claims resolve within the file) and each consumer's verdict is compared with the table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpulint.commands.inspect import Inspector
from gpulint.k8s.devices import builtin_registry
from gpulint.k8s.dra import ClaimIndex
from gpulint.k8s.resources import gpu_demand
from gpulint.k8s.workloads import builtin_table, objects
from gpulint.lint.declarative import load_declarative
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.stream import load_text
from gpulint.rule import Rule
from gpulint.settings import Settings

GPU, CPU, UNKNOWN = "gpu", "cpu", "unknown"

_CLAIM = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: the-claim}}
spec:
  devices:
    requests: [{{name: d, exactly: {{deviceClassName: {device_class}}}}}]
"""

#: name -> (pod spec fields below `spec:` except tolerations, the claim's device class or
#: None for no claim in the file, the expected verdict)
SHAPES: dict[str, tuple[str, str | None, str]] = {
    "container limit": (
        "containers: [{name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]",
        None,
        GPU,
    ),
    "init container": (
        "initContainers: [{name: i, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
        "  containers: [{name: c, image: busybox}]",
        None,
        GPU,
    ),
    "sidecar": (
        "initContainers: [{name: s, image: cuda, restartPolicy: Always,"
        " resources: {limits: {amd.com/gpu: 1}}}]\n"
        "  containers: [{name: c, image: busybox}]",
        None,
        GPU,
    ),
    "pod-level resources only": (
        "resources: {limits: {nvidia.com/gpu: 1}}\n  containers: [{name: c, image: cuda}]",
        None,
        GPU,
    ),
    "placeholder": (
        "containers: [{name: c, image: cuda, resources: {limits: {nvidia.com/gpu: $GPUS}}}]",
        None,
        GPU,
    ),
    "null value": (
        "containers: [{name: c, image: cuda, resources: {limits: {nvidia.com/gpu: null}}}]",
        None,
        GPU,
    ),
    "look-alike name": (
        "containers: [{name: c, image: cuda, resources: {limits: {nvidia.com/gpus: 1}}}]",
        None,
        GPU,
    ),
    "DRA claim for a GPU class": (
        "resourceClaims: [{name: g, resourceClaimName: the-claim}]\n"
        "  containers: [{name: c, image: cuda, resources: {claims: [{name: g}]}}]",
        "gpu.nvidia.com",
        GPU,
    ),
    "explicit zero": (
        "containers: [{name: c, image: app, resources: {limits: {nvidia.com/gpu: 0}}}]",
        None,
        CPU,
    ),
    "explicit zero as text, pod level too": (
        "resources: {limits: {nvidia.com/gpu: '0'}}\n"
        "  containers: [{name: c, image: app, resources: {limits: {nvidia.com/gpu: '0'}}}]",
        None,
        CPU,
    ),
    "no resources": ("containers: [{name: c, image: nginx}]", None, CPU),
    "ephemeral container only": (
        "containers: [{name: c, image: app}]\n"
        "  ephemeralContainers: [{name: e, image: cuda,"
        " resources: {limits: {nvidia.com/gpu: 1}}}]",
        None,
        CPU,
    ),
    # A class neither the registry nor a linted file defines: what it serves is unknown,
    # so the pod is neither a GPU pod nor a CPU pod.
    "DRA claim for another class": (
        "resourceClaims: [{name: n, resourceClaimName: the-claim}]\n"
        "  containers: [{name: c, image: app, resources: {claims: [{name: n}]}}]",
        "nic.example.com",
        UNKNOWN,
    ),
    "DRA claim in another file": (
        "resourceClaims: [{name: g, resourceClaimName: elsewhere}]\n"
        "  containers: [{name: c, image: cuda, resources: {claims: [{name: g}]}}]",
        None,
        UNKNOWN,
    ),
}

#: A taint for every accelerator (no `hardware`), so that GPU020 judges look-alike names too.
TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def manifest(shape: str, *, tolerate_all: bool) -> str:
    fields, device_class, _ = SHAPES[shape]
    tolerations = "\n  tolerations: [{operator: Exists}]" if tolerate_all else ""
    text = f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  {fields}{tolerations}\n"
    if device_class is not None:
        text += _CLAIM.format(device_class=device_class)
    return text


def _declarative(tmp_path: Path, target: str, gpu: bool) -> Rule:
    code = {"pod": "TPOD", "object": "TOBJ", "container": "TCTR"}[target] + ("1" if gpu else "0")
    path = tmp_path / f"{code}.yaml"
    path.write_text(
        f"code: {code}\nname: t-{target}-{'gpu' if gpu else 'cpu'}\ntarget: {target}\n"
        f"when: {{gpu: {'true' if gpu else 'false'}, kinds: [Pod]}}\nmessage: matched\n"
        "schema: {required: [never-there]}\n",
        encoding="utf-8",
    )
    return load_declarative(path)


@pytest.fixture(scope="module")
def linter(tmp_path_factory: pytest.TempPathFactory) -> Linter:
    folder = tmp_path_factory.mktemp("rules")
    rules = [r for r in load_rules() if r.code in ("GPU020", "GPU021")]
    for target in ("pod", "object", "container"):
        rules += [_declarative(folder, target, True), _declarative(folder, target, False)]
    return Linter(rules, Settings(options={"GPU020": {"taints": [TAINT]}}))


def _codes(linter: Linter, text: str) -> set[str]:
    return {f.rule for f in linter.lint_text("pod.yaml", text)}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_consumer_agrees(shape: str, linter: Linter) -> None:
    expected = SHAPES[shape][2]
    is_gpu, is_cpu = expected == GPU, expected == CPU

    # The predicate itself.
    text = manifest(shape, tolerate_all=False)
    result = load_text(text)
    index = ClaimIndex(result.documents)
    pods = [pod for obj in objects(result.documents[0]) for pod in builtin_table().pod_specs(obj)]
    demand = gpu_demand(pods[0], builtin_registry(), index)
    assert (demand.gpu, demand.cpu) == (is_gpu, is_cpu)

    # GPU020 on the pod without tolerations; GPU021 on the pod that tolerates everything.
    untolerated = _codes(linter, text)
    tolerated = _codes(linter, manifest(shape, tolerate_all=True))
    assert ("GPU020" in untolerated) == is_gpu
    assert ("GPU021" in tolerated) == is_cpu

    # Declarative `when: {gpu: true}` keeps GPU pods, `when: {gpu: false}` CPU pods; a pod
    # that cannot be told is neither.
    for prefix in ("TPOD", "TOBJ"):
        kept = {c for c in untolerated if c.startswith(prefix)}
        assert kept == ({f"{prefix}1"} if is_gpu else {f"{prefix}0"} if is_cpu else set())

    # inspect -f json.
    entry = json.loads(json.dumps(Inspector().inspect_text("pod.yaml", text)))
    assert [p["gpu"] for w in entry["workloads"] for p in w["pods"]] == [is_gpu]


def test_containers_follow_the_same_facts(linter: Linter) -> None:
    """`target: container` judges each container by its own requests and the DRA claims it
    names in `resources.claims`; pod-level resources belong to no container."""
    verdicts = {
        shape: {c for c in _codes(linter, manifest(shape, tolerate_all=False)) if c[:4] == "TCTR"}
        for shape in SHAPES
    }
    assert verdicts["container limit"] == {"TCTR1"}
    assert verdicts["DRA claim for a GPU class"] == {"TCTR1"}
    assert verdicts["explicit zero"] == {"TCTR0"}
    assert verdicts["DRA claim for another class"] == set()
    assert verdicts["DRA claim in another file"] == set()
    # The init container asks for the GPU, the main container does not.
    assert verdicts["init container"] == {"TCTR1", "TCTR0"}
    assert verdicts["pod-level resources only"] == {"TCTR0"}
    # Ephemeral containers are never a target.
    assert verdicts["ephemeral container only"] == {"TCTR0"}
