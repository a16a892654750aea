"""Node inventories (``--cluster``, ``cluster:``), the grouped filters and ``inspect --cluster``.

The filters' semantics are checked against kube-scheduler's own tables
(tests/test_sched_oracle.py); here: reading real ``kubectl get nodes`` output, the
command line and configuration, bad input (one line, exit 2), and that grouping identical
nodes never changes a verdict.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from gpulint.cluster.filters import feasibility, group_nodes
from gpulint.cluster.inventory import InventoryError, nodes_from_text, read_inventory
from gpulint.cluster.model import Cluster, Node
from gpulint.cluster.schedpod import SchedPod
from gpulint.cluster.selectors import parse_terms
from tests.conftest import FIXTURES, ROOT, gpulint_in_process

INVENTORIES = FIXTURES / "cluster"
GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
  containers:
  - name: main
    image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
    resources:
      limits:
        nvidia.com/gpu: {gpus}
"""


@pytest.mark.parametrize(
    ("name", "count", "gpu_nodes"),
    [
        ("gke.yaml", 2, 2),
        ("eks.json", 2, 2),
        ("aks.yaml", 2, 2),
        ("ack.yaml", 2, 1),
        ("gfd-mig-a100.yaml", 1, 0),
        ("gke-a100-12.yaml", 12, 8),
    ],
)
def test_real_inventories_read(name: str, count: int, gpu_nodes: int) -> None:
    nodes = read_inventory(INVENTORIES / name)
    assert len(nodes) == count
    assert sum(1 for n in nodes if n.allocatable.get("nvidia.com/gpu", 0) > 0) == gpu_nodes
    assert all(n.allocatable.get("pods", 0) > 0 for n in nodes)


def test_inventory_facts() -> None:
    gke = {n.name: n for n in read_inventory(INVENTORIES / "gke.yaml")}
    t4 = gke["gke-dev-pangeo-io-cl-jupyter-gpu-pool-026fa47a-q754"]
    assert t4.pool == "jupyter-gpu-pool"
    assert [str(t) for t in t4.taints] == [
        "hub.jupyter.org_dedicated=user:NoSchedule",
        "nvidia.com/gpu=present:NoSchedule",
    ]
    assert t4.source.endswith("gke.yaml:35")
    mig = read_inventory(INVENTORIES / "gfd-mig-a100.yaml")[0]
    assert mig.labels["nvidia.com/mig.strategy"] == "mixed"
    assert mig.allocatable["nvidia.com/mig-7g.40gb"] == 1
    assert mig.allocatable["memory"] == 87425380 * 1024


def test_yaml_and_json_forms_agree() -> None:
    from gpulint.loader.stream import load_text

    text = (INVENTORIES / "gke.yaml").read_text()
    as_json = json.dumps(load_text(text).documents[0].data)
    yaml_nodes = nodes_from_text(text, "gke.yaml")
    json_nodes = nodes_from_text(as_json, "gke.json")
    assert [n._replace(source="") for n in yaml_nodes] == [
        n._replace(source="") for n in json_nodes
    ]


def test_single_node_and_stream_of_nodes() -> None:
    one = "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {allocatable: {cpu: '4'}}\n"
    assert [n.name for n in nodes_from_text(one, "x")] == ["a"]
    stream = one + "---\n" + one.replace("name: a", "name: b")
    assert [n.name for n in nodes_from_text(stream, "x")] == ["a", "b"]
    node_list = '{"kind": "NodeList", "items": [{"metadata": {"name": "c"}}]}'
    assert [n.name for n in nodes_from_text(node_list, "x")] == ["c"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("items: [\n", "x:2: not a node inventory: not YAML or JSON"),
        ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "x:1: not a node inventory: Pod"),
        ("kind: List\nitems:\n- kind: Pod\n", "x:3: not a node inventory: item 0 is a Pod"),
        (
            "kind: Node\nmetadata: {name: gpu-1}\nstatus:\n  allocatable:\n    cpu: 4 cores\n",
            "x:4: node gpu-1: status.allocatable.cpu: '4 cores' is not a quantity",
        ),
        ("kind: List\nitems: []\n", "x: not a node inventory: no Node in it"),
        ("kind: Node\nmetadata: {}\n", "x:2: the Node has no metadata.name"),
        ("[1, 2]", "x:1: not a node inventory: a list"),
    ],
)
def test_bad_inventories_say_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(InventoryError) as info:
        nodes_from_text(text, "x")
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("content", "start"),
    [
        (None, "nodes.yaml: no such file"),
        ("{{{", "nodes.yaml:1: not a node inventory: not YAML or JSON"),
        ("kind: Pod\n", "nodes.yaml:1: not a node inventory: Pod"),
        (
            "kind: Node\nmetadata: {name: gpu-1}\nstatus: {allocatable: {nvidia.com/gpu: x}}\n",
            "nodes.yaml:3: node gpu-1: status.allocatable.nvidia.com/gpu: 'x' is not a quantity",
        ),
    ],
)
@pytest.mark.parametrize("command", ["check", "inspect"])
def test_bad_inventory_is_one_line_and_exit_2(
    tmp_path: Path, content: str | None, start: str, command: str
) -> None:
    if content is not None:
        (tmp_path / "nodes.yaml").write_text(content)
    (tmp_path / "pod.yaml").write_text(GPU_POD.format(gpus=1))
    result = gpulint_in_process(
        command, "--isolated", "--cluster", "nodes.yaml", "pod.yaml", cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"gpulint: error: {start}"), result.stderr
    assert result.stderr.count("\n") == 1


def _project(tmp_path: Path, cluster: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "nodes.yaml").write_text((INVENTORIES / "gke-a100-12.yaml").read_text())
    (tmp_path / ".gpulint.yaml").write_text(f"cluster: [{cluster}]\n")
    (tmp_path / "pod.yaml").write_text(GPU_POD.format(gpus=8))
    return tmp_path


def test_config_cluster_is_relative_to_the_file(tmp_path: Path) -> None:
    root = _project(tmp_path, "ops/nodes.yaml")
    result = gpulint_in_process("check", "--select", "GPU050", "pod.yaml", cwd=root / "ops")
    assert result.returncode == 2  # pod.yaml is not in ops/
    result = gpulint_in_process("check", "--select", "GPU050", "pod.yaml", cwd=root)
    assert result.returncode == 1
    assert "0/12 nodes are available: 12 Insufficient nvidia.com/gpu." in result.stdout


@pytest.mark.parametrize(
    ("entry", "why"),
    [("/etc/passwd", "is absolute"), ("../outside.yaml", "resolves outside the repository")],
)
def test_config_cluster_stays_in_the_repository(tmp_path: Path, entry: str, why: str) -> None:
    root = _project(tmp_path / "repo", entry)
    (tmp_path / "outside.yaml").write_text("kind: Node\nmetadata: {name: gpu-1}\n")
    result = gpulint_in_process("check", "pod.yaml", cwd=root)
    assert result.returncode == 2
    assert why in result.stderr


def test_command_line_cluster_replaces_the_configuration(tmp_path: Path) -> None:
    root = _project(tmp_path, "ops/nodes.yaml")
    big = "kind: Node\nmetadata: {name: big}\nstatus: {allocatable: {nvidia.com/gpu: '8'}}\n"
    (root / "big.yaml").write_text(big)
    result = gpulint_in_process(
        "check", "--select", "GPU050", "--cluster", "big.yaml", "pod.yaml", cwd=root
    )
    assert result.returncode == 0, result.stdout
    result = gpulint_in_process("config", cwd=root)
    assert "cluster" in result.stdout


def test_without_a_cluster_gpu050_is_silent(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(GPU_POD.format(gpus=64))
    result = gpulint_in_process(
        "check", "--isolated", "--select", "GPU050", "pod.yaml", cwd=tmp_path
    )
    assert result.returncode == 0


def _node(name: str, **labels: str) -> Node:
    return Node(name, {"kubernetes.io/hostname": name, **labels}, (), {"nvidia.com/gpu": 4}, False)


def test_identical_nodes_are_judged_once() -> None:
    nodes = [_node(f"n{i}", pool="a") for i in range(1000)]
    groups = group_nodes(nodes)
    assert len(groups) == 1
    assert groups[0].size == 1000
    assert groups[0].varying == {"kubernetes.io/hostname"}


def test_grouping_never_changes_a_verdict() -> None:
    nodes = [_node(f"n{i}", zone=f"z{i % 3}") for i in range(9)]
    cluster = Cluster(tuple(nodes))
    by_name = SchedPod(
        terms=parse_terms(
            {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n4"]}]}
                ]
            }
        )
    )
    by_host = SchedPod(node_selector={"kubernetes.io/hostname": "n7"})
    by_zone = SchedPod(node_selector={"zone": "z1"})
    for pod, fitting in ((by_name, 1), (by_host, 1), (by_zone, 3)):
        result = feasibility(pod, cluster)
        assert result.total == 9
        assert result.fitting == fitting


def test_the_message_is_the_schedulers() -> None:
    cluster = Cluster(tuple(read_inventory(INVENTORIES / "gke-a100-12.yaml")))
    result = feasibility(SchedPod(requests={"nvidia.com/gpu": 1}), cluster)
    assert result.message() == (
        "0/12 nodes are available: 4 Insufficient nvidia.com/gpu, "
        "8 node(s) had untolerated taint {nvidia.com/gpu: present}."
    )


def test_inspect_cluster_json_matches_its_schema(tmp_path: Path) -> None:
    schema = json.loads((ROOT / "schemas" / "inspect.schema.json").read_text())
    (tmp_path / "pod.yaml").write_text(GPU_POD.format(gpus=8) + "---\n" + GPU_POD.format(gpus=2))
    nodes = str(INVENTORIES / "gke-a100-12.yaml")
    result = gpulint_in_process(
        "inspect", "--isolated", "--cluster", nodes, "-f", "json", "pod.yaml", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    Draft202012Validator(schema).validate(report)
    first, second = (w["pods"][0]["scheduling"] for w in report["files"][0]["workloads"])
    assert first["fitting"] == 0 and first["message"].startswith("0/12 nodes are available")
    assert second["fitting"] == 8 and second["message"] is None
    text = gpulint_in_process(
        "inspect", "--isolated", "--cluster", nodes, "pod.yaml", cwd=tmp_path
    ).stdout
    assert "scheduling: fits 8 of 12 nodes" in text
    assert "pool a100-pool (8 nodes): fits" in text
    assert "pool default-pool (4 nodes): Insufficient nvidia.com/gpu (NodeResourcesFit)" in text


def test_large_yaml_inventories_are_cached_by_content(tmp_path: Path) -> None:
    from gpulint.cluster import inventory

    nodes_yaml = tmp_path / "nodes.yaml"
    one = (INVENTORIES / "gke-a100-12.yaml").read_text()
    body = one.split("items:\n", 1)[1].split("kind: List", 1)[0]
    copies = [body.replace("-0000", f"-{i:04x}0") for i in range(60)]  # > CACHE_MIN_BYTES
    nodes_yaml.write_text("apiVersion: v1\nkind: List\nitems:\n" + "".join(copies))
    assert nodes_yaml.stat().st_size >= inventory.CACHE_MIN_BYTES
    cache = tmp_path / "cache"
    first = read_inventory(nodes_yaml, "nodes.yaml", str(cache))
    entries = list((cache / inventory.CACHE_FOLDER).glob("*.json"))
    assert len(entries) == 1
    assert read_inventory(nodes_yaml, "nodes.yaml", str(cache)) == first
    # A corrupt or foreign entry is not used: the file is read again.
    entries[0].write_text("{not json")
    assert read_inventory(nodes_yaml, "nodes.yaml", str(cache)) == first
    entries[0].chmod(0o666)
    assert read_inventory(nodes_yaml, "nodes.yaml", str(cache)) == first
    # Another name in messages is another entry (node sources name the file).
    assert read_inventory(nodes_yaml, "ops/nodes.yaml", str(cache))[0].source.startswith(
        "ops/nodes.yaml:"
    )


def _sched(text: str) -> SchedPod:
    from gpulint.cluster.schedpod import sched_pod
    from gpulint.k8s.manifest import Manifest
    from gpulint.k8s.workloads import builtin_table
    from gpulint.loader.stream import load_text

    view = next(iter(Manifest.of_documents(load_text(text).documents, builtin_table())))
    pod = sched_pod(view.pod_specs(0)[0])
    assert pod is not None
    return pod


def test_pod_level_resources_replace_the_containers_cpu_and_memory() -> None:
    pod = _sched(
        GPU_POD.format(gpus=1)
        + "  resources:\n    limits: {cpu: '2', memory: 1Gi}\n  overhead: {cpu: 250m}\n"
    )
    assert pod.requests["cpu"] == Decimal("2.25")
    assert pod.requests["memory"] == 1 << 30
    assert pod.requests["nvidia.com/gpu"] == 1


def test_daemonset_pods_get_the_controllers_tolerations() -> None:
    cordoned = Node("n", {}, (), {"nvidia.com/gpu": Decimal(1)}, True)
    daemon = _sched(
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: dcgm}\nspec:\n"
        "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
        "    spec:\n      containers:\n      - name: c\n        image: x\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    assert feasibility(daemon, Cluster((cordoned,))).fitting == 1
    plain = _sched(GPU_POD.format(gpus=1))
    assert feasibility(plain, Cluster((cordoned,))).message() == (
        "0/1 nodes are available: 1 node(s) were unschedulable."
    )


def test_noexecute_taints_repel_and_prefer_no_schedule_ones_do_not() -> None:
    from gpulint.k8s.taints import Taint

    taints = (Taint("a", "1", "NoExecute"), Taint("b", "2", "PreferNoSchedule"))
    node = Node("n", {}, taints, {"nvidia.com/gpu": Decimal(1)}, False)
    result = feasibility(SchedPod(requests={"nvidia.com/gpu": Decimal(1)}), Cluster((node,)))
    assert result.message() == "0/1 nodes are available: 1 node(s) had untolerated taint {a: 1}."
    tolerant = SchedPod(tolerations=({"key": "a", "operator": "Exists"},))
    assert feasibility(tolerant, Cluster((node,))).fitting == 1


def test_an_alias_bomb_inventory_is_refused(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)
    )
    with pytest.raises(InventoryError) as info:
        nodes_from_text(bomb, "bomb.yaml")
    assert "not a node inventory" in str(info.value)
