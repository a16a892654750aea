"""DRA devices against the nodes: a pod's claims are allocated on its one node, so their
whole devices count against the largest node (GPU040) and, with a node inventory's
ResourceSlices, the scheduler's DynamicResources filter (GPU050)."""

from __future__ import annotations

import json
from pathlib import Path

from gpulint.cluster.inventory import nodes_from_text
from gpulint.cluster.slices import class_key
from tests.conftest import gpulint_in_process

SLICE = """\
- apiVersion: resource.k8s.io/{version}
  kind: ResourceSlice
  metadata: {{name: {node}-gpu.nvidia.com}}
  spec:
    driver: gpu.nvidia.com
    nodeName: {node}
    pool: {{name: {node}, generation: 1, resourceSliceCount: 1}}
    devices:
{devices}"""
V1_DEVICE = "    - name: gpu-{i}\n      attributes: {{type: {{string: {kind}}}}}\n"
V1BETA1_DEVICE = (
    "    - name: gpu-{i}\n      basic:\n        attributes: {{type: {{string: {kind}}}}}\n"
)

INVENTORY = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-node-1
    labels: {{kubernetes.io/hostname: gpu-node-1}}
  status:
    allocatable: {{cpu: "96", memory: 1100Gi, pods: "110"}}
- apiVersion: v1
  kind: Node
  metadata:
    name: cpu-node-1
    labels: {{kubernetes.io/hostname: cpu-node-1}}
  status:
    allocatable: {{cpu: "16", memory: 64Gi, pods: "110"}}
{slices}"""

CLAIM_AND_JOB = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpus
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: {count}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: gpus
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        command: ["python", "train.py"]
        resources:
          claims:
          - name: gpus
"""


def _slice(node: str, gpus: int, migs: int = 0, version: str = "v1") -> str:
    row = V1_DEVICE if version == "v1" else V1BETA1_DEVICE
    devices = "".join(row.format(i=i, kind="gpu") for i in range(gpus))
    devices += "".join(row.format(i=gpus + i, kind="mig") for i in range(migs))
    return SLICE.format(version=version, node=node, devices=devices)


def _check(root: Path, count: int, slices: str, *select: str) -> list[tuple[str, str, int]]:
    (root / ".git").mkdir(exist_ok=True)
    (root / "nodes.yaml").write_text(INVENTORY.format(slices=slices))
    (root / "train.yaml").write_text(CLAIM_AND_JOB.format(count=count))
    args = ["check", "-f", "json", "--cluster", "nodes.yaml", "--select", ",".join(select)]
    proc = gpulint_in_process(*args, "train.yaml", cwd=root)
    assert proc.returncode in (0, 1), proc.stderr
    return [(f["rule"], f["severity"], f["line"]) for f in json.loads(proc.stdout)["findings"]]


def test_the_inventory_reads_each_nodes_published_devices_by_type() -> None:
    text = INVENTORY.format(
        slices=_slice("gpu-node-1", 4, 2) + _slice("gpu-node-1", 0, 1, "v1beta1")
    )
    nodes = {n.name: n for n in nodes_from_text(text, "nodes.yaml")}
    key = class_key("gpu.nvidia.com")
    assert key is not None and nodes["gpu-node-1"].allocatable[key] == 4
    assert nodes["gpu-node-1"].allocatable["devices gpu.nvidia.com type=mig"] == 3
    assert key not in nodes["cpu-node-1"].allocatable


def test_claims_beyond_the_largest_nodes_published_devices(tmp_path: Path) -> None:
    slices = _slice("gpu-node-1", 4, 2)
    # GPU040 says it at the pod's claim entry; GPU050, which yields to it, says it alone.
    assert _check(tmp_path, 6, slices, "GPU040", "GPU050") == [("GPU040", "error", 24)]
    assert _check(tmp_path, 6, slices, "GPU050") == [("GPU050", "error", 22)]
    proc = gpulint_in_process(
        "check", "--cluster", "nodes.yaml", "--select", "GPU050", "train.yaml", cwd=tmp_path
    )
    assert "0/2 nodes are available: 2 cannot allocate all claims." in proc.stdout
    proc = gpulint_in_process(
        "check",
        "-f",
        "json",
        "--cluster",
        "nodes.yaml",
        "--select",
        "GPU050",
        "train.yaml",
        cwd=tmp_path,
    )
    (finding,) = json.loads(proc.stdout)["findings"]
    assert [(r["path"], r["line"]) for r in finding["related"]] == [("train.yaml", 2)]
    # Four fit the node with four GPUs (its MIG devices are not gpu.nvidia.com's).
    assert _check(tmp_path, 4, slices, "GPU040", "GPU050") == []


def test_without_resource_slices_the_claims_are_not_judged_against_the_nodes(
    tmp_path: Path,
) -> None:
    # No node says how many devices DRA gives it: nothing is known, nothing is said.
    assert _check(tmp_path, 6, "", "GPU040", "GPU050") == []


SHARED = """\
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {{name: {name}}}
  spec:
    driver: gpu.nvidia.com
    pool: {{name: {name}, generation: 1, resourceSliceCount: 1}}
{scope}    devices:
{devices}"""
BY_LABEL = (
    "    nodeSelector:\n      nodeSelectorTerms:\n      - matchExpressions:\n"
    "        - {key: kubernetes.io/hostname, operator: In, values: [gpu-node-1]}\n"
)


def _shared(name: str, scope: str, devices: str) -> str:
    return SHARED.format(name=name, scope=scope, devices=devices)


def _gpus(n: int, extra: str = "") -> str:
    return "".join(V1_DEVICE.format(i=i, kind="gpu") + extra for i in range(n))


def test_shared_slices_count_for_the_nodes_they_are_for() -> None:
    # A slice for the nodes a selector matches, one for all nodes, and one whose devices
    # each name their node (perDeviceNodeSelection; k8s.io/api/resource/v1/types.go).
    per_device = "".join(
        V1_DEVICE.format(i=i, kind="gpu") + f"      nodeName: {node}\n"
        for i, node in enumerate(["gpu-node-1", "gpu-node-1", "cpu-node-1"])
    )
    slices = (
        _shared("by-label", BY_LABEL, _gpus(2))
        + _shared("everywhere", "    allNodes: true\n", _gpus(1))
        + _shared("per-device", "    perDeviceNodeSelection: true\n", per_device)
        + _shared("no-node", "", _gpus(5))  # says no node: the API server rejects it
    )
    nodes = {n.name: n for n in nodes_from_text(INVENTORY.format(slices=slices), "n.yaml")}
    key = class_key("gpu.nvidia.com")
    assert key is not None
    assert nodes["gpu-node-1"].allocatable[key] == 2 + 1 + 2
    assert nodes["cpu-node-1"].allocatable[key] == 1 + 1
    shown = sorted((d.slice, d.name) for g in nodes["cpu-node-1"].devices for d in g)
    assert shown == [("everywhere", "gpu-0"), ("per-device", "gpu-2")]


def test_a_claim_that_only_a_shared_slice_satisfies_fits(tmp_path: Path) -> None:
    slices = _shared("by-label", BY_LABEL, _gpus(6))
    assert _check(tmp_path, 6, slices, "GPU040", "GPU050") == []
    assert _check(tmp_path, 7, slices, "GPU040", "GPU050") == [("GPU040", "error", 24)]
    # v1beta1 writes a device's node under basic.
    beta = (
        SHARED.format(name="beta", scope="    perDeviceNodeSelection: true\n", devices="")
        .replace("resource.k8s.io/v1", "resource.k8s.io/v1beta1")
        .replace(
            "    devices:\n",
            "    devices:\n    - name: gpu-0\n      basic:\n"
            "        nodeName: gpu-node-1\n        attributes: {type: {string: gpu}}\n",
        )
    )
    assert _check(tmp_path, 7, slices + beta, "GPU040", "GPU050") == []


def test_too_many_shared_selectors_is_a_clear_error(tmp_path: Path) -> None:
    import pytest

    from gpulint.cluster import slices as module
    from gpulint.cluster.inventory import InventoryError

    # Selectors without an In requirement are matched against every node: that work counts.
    many = "".join(
        _shared(
            f"s{i}",
            BY_LABEL.replace("In, values: [gpu-node-1]", f"NotIn, values: [n{i}]"),
            _gpus(1),
        )
        for i in range(3)
    )
    old = module.MAX_SELECTOR_WORK
    module.MAX_SELECTOR_WORK = 10
    try:
        with pytest.raises(InventoryError, match="3 distinct node selectors of shared"):
            nodes_from_text(INVENTORY.format(slices=many), "n.yaml")
    finally:
        module.MAX_SELECTOR_WORK = old


def test_a_cached_inventory_keeps_each_node_s_devices(tmp_path: Path) -> None:
    from gpulint.cluster import inventory

    slices = _shared("everywhere", "    allNodes: true\n", _gpus(2)) + _slice("gpu-node-1", 3)
    padding = "# " + "x" * 1000 + "\n"
    text = INVENTORY.format(slices=slices) + padding * (inventory.CACHE_MIN_BYTES // 1000)
    (tmp_path / "nodes.yaml").write_text(text)
    cache = str(tmp_path / "cache")
    first = inventory.read_inventory(tmp_path / "nodes.yaml", "nodes.yaml", cache)
    again = inventory.read_inventory(tmp_path / "nodes.yaml", "nodes.yaml", cache)
    assert list((tmp_path / "cache" / inventory.CACHE_FOLDER).glob("*.json"))
    assert again == first
    names = {n.name: sorted(d.name for g in n.devices for d in g) for n in again}
    assert names == {
        "gpu-node-1": ["gpu-0", "gpu-0", "gpu-1", "gpu-1", "gpu-2"],
        "cpu-node-1": ["gpu-0", "gpu-1"],
    }


def test_inspect_shows_the_published_devices_each_request_may_get(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    from tests.conftest import ROOT

    slices = (
        _slice("gpu-node-1", 2, 1)
        + _shared("by-label", BY_LABEL, _gpus(1))
        + _shared("everywhere", "    allNodes: true\n", _gpus(1))
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "nodes.yaml").write_text(INVENTORY.format(slices=slices))
    (tmp_path / "train.yaml").write_text(CLAIM_AND_JOB.format(count=2))
    args = ("inspect", "--cluster", "nodes.yaml", "train.yaml")
    proc = gpulint_in_process(*args, "-f", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    schema = json.loads((ROOT / "schemas" / "inspect.schema.json").read_text())
    Draft202012Validator(schema).validate(report)
    pods = [p for w in report["files"][0]["workloads"] for p in w["pods"]]
    (request,) = pods[0]["dra_claims"][0]["requests"]
    found = request["available"]
    assert found["selected_by"] == "driver gpu.nvidia.com with type gpu"
    assert found["count"] == 4  # gpu-node-1's two GPUs (its MIG device is no gpu), two shared
    assert [(p["pool"], p["devices"], p["nodes"]) for p in found["pools"]] == [
        ("by-label", ["gpu-0"], ["gpu-node-1"]),
        ("everywhere", ["gpu-0"], ["cpu-node-1", "gpu-node-1"]),
        ("gpu-node-1", ["gpu-0", "gpu-1"], ["gpu-node-1"]),
    ]
    text = gpulint_in_process(*args, cwd=tmp_path).stdout
    assert "devices: 4 published (driver gpu.nvidia.com with type gpu)" in text
    assert "pool everywhere (gpu.nvidia.com): 1 (gpu-0) on nodes cpu-node-1, gpu-node-1" in text
    # The scheduling says what GPU050 judges: cpu-node-1 reaches one GPU of the two.
    assert "scheduling: fits 1 of 2 nodes" in text
    assert "cpu-node-1 (1 node): cannot allocate all claims (DynamicResources)" in text
    # docs/cluster.md shows this run's lines.
    doc = (ROOT / "docs" / "cluster.md").read_text()
    shown = doc.split("    GPU through DRA: claim 'gpus'", 1)[1].split("```", 1)[0]
    lines = text.splitlines()
    assert all(line in lines for line in shown.splitlines()[1:] if line.strip())
    # Without slices in the inventory, nothing is said of devices.
    (tmp_path / "nodes.yaml").write_text(INVENTORY.format(slices=""))
    report = json.loads(gpulint_in_process(*args, "-f", "json", cwd=tmp_path).stdout)
    pods = [p for w in report["files"][0]["workloads"] for p in w["pods"]]
    assert pods[0]["dra_claims"][0]["requests"][0]["available"] is None


def test_a_run_with_claims_and_slices_but_no_selector_imports_no_cel(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys\nfrom gpulint.cli import entry\n"
        "sys.argv = ['gpulint', 'check', '--isolated', '-q', '--cluster', 'nodes.yaml', 'p.yaml']\n"
        "try:\n    entry.console()\nexcept SystemExit:\n    pass\n"
        "cel = ('celpy', 'lark', 'gpulint.k8s.cel')\n"
        "print(sorted(m for m in sys.modules if m.startswith(cel)))\n"
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "nodes.yaml").write_text(INVENTORY.format(slices=_slice("gpu-node-1", 2)))
    (tmp_path / "p.yaml").write_text(CLAIM_AND_JOB.format(count=1))
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stderr
