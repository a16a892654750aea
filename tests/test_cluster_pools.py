"""Declared node pools, the instance-type catalog and platform profiles (docs/cluster.md).

The catalog is hand-maintained data: its schema, a source for every row and the families
the documentation promises are checked here; pools are checked against what the device
plugins advertise for each MIG and sharing set-up; the command line against bad input.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from gpulint.cluster.catalog import INSTANCE_TYPE_LABEL, builtin_catalog
from gpulint.cluster.objects import scan
from gpulint.cluster.platforms import CHOICES, PLATFORMS
from gpulint.cluster.pools import PoolError, build_cluster, pool_node
from gpulint.k8s.taints import Taint
from tests.conftest import ROOT, RULE_FIXTURES, gpulint_in_process, gpulint_subprocess, said
from tests.docblocks import block
from tests.test_readme import run_console

TITLE = "Describing the cluster: node pools, instance types, platforms"
CATALOG = ROOT / "gpulint" / "data" / "instance-types.json"
SCHEMA = ROOT / "schemas" / "instance-types.schema.json"


def test_catalog_matches_its_schema() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    errors = list(Draft202012Validator(schema).iter_errors(json.loads(CATALOG.read_text())))
    assert not errors, [e.message for e in errors]


def test_every_row_has_a_source_and_a_unique_name() -> None:
    data = json.loads(CATALOG.read_text(encoding="utf-8"))
    names = [row["name"] for row in data["instance_types"]]
    assert len(names) == len(set(names))
    assert all(row["source"].startswith("https://") for row in data["instance_types"])


@pytest.mark.parametrize(
    "prefix",
    [
        # ACK: the seed's families and current ones
        "ecs.gn7i-", "ecs.gn7-", "ecs.gn6v-", "ecs.gn6e-", "ecs.gn6i-", "ecs.gn8is",
        "ecs.gn8v", "ecs.ebmgn",
        # GKE, EKS, AKS
        "a2-", "a3-", "g2-", "p4d.", "p5.", "g5.", "g6.", "g6e.", "inf2.", "trn1.",
        "Standard_NC", "Standard_ND", "Standard_NV",
    ],
)  # fmt: skip
def test_the_promised_families_are_there(prefix: str) -> None:
    assert any(name.startswith(prefix) for name in builtin_catalog().instance_types)


def test_gke_rows_name_known_accelerators() -> None:
    catalog = builtin_catalog()
    for row in catalog.instance_types.values():
        value = row.labels.get("cloud.google.com/gke-accelerator")
        assert row.provider != "gcp" or value in catalog.gke_accelerators, row.name
        assert row.labels[INSTANCE_TYPE_LABEL] == row.name


def test_unknown_instance_type_offers_the_closest_names() -> None:
    with pytest.raises(PoolError) as info:
        pool_node({"name": "x", "instance-type": "ecs.gn7i-c8g1.2xlarg"}, None)
    assert "did you mean ecs.gn7i-c8g1.2xlarge" in str(info.value)
    assert info.value.path == ("instance-type",)


def _alloc(row: dict, platform: str | None = None) -> dict[str, Decimal]:
    plat = PLATFORMS[platform] if platform else None
    node = pool_node({"name": "p", **row}, plat)
    return {k: v for k, v in node.allocatable.items() if k not in ("cpu", "memory", "pods")}


def test_a_plain_pool_advertises_its_gpus_cpus_and_memory() -> None:
    node = pool_node({"name": "p", "instance-type": "p4d.24xlarge", "nodes": 3}, None)
    assert node.allocatable["nvidia.com/gpu"] == 8
    assert node.allocatable["cpu"] == 96
    assert node.allocatable["memory"] == 1152 * 2**30
    assert (node.node_count, node.pool, node.taints) == (3, "p", ())


def test_mig_strategies() -> None:
    single = {
        "instance-type": "p4d.24xlarge",
        "mig": {"strategy": "single", "layout": {"1g.5gb": 7}},
    }
    assert _alloc(single) == {"nvidia.com/gpu": 56}
    node = pool_node({"name": "p", **single}, None)
    assert node.labels["nvidia.com/gpu.product"] == "A100-SXM4-40GB-MIG-1g.5gb"
    mixed = {
        "instance-type": "p4d.24xlarge",
        "mig": {"strategy": "mixed", "layout": {"3g.20gb": 2, "1g.5gb+me": 1}, "partitioned": 6},
    }
    assert _alloc(mixed) == {
        "nvidia.com/gpu": 2,
        "nvidia.com/mig-3g.20gb": 12,
        "nvidia.com/mig-1g.5gb.me": 6,
    }


def test_sharing_strategies() -> None:
    base = {"instance-type": "g5.12xlarge"}
    plain = {**base, "sharing": {"strategy": "time-slicing", "replicas": 4}}
    assert _alloc(plain) == {"nvidia.com/gpu": 16}
    renamed = {**base, "sharing": {"strategy": "mps", "replicas": 2, "rename-by-default": True}}
    assert _alloc(renamed) == {"nvidia.com/gpu.shared": 8}
    assert _alloc({**base, "sharing": {"strategy": "cgpu"}}) == {
        "aliyun.com/gpu-mem": 96,
        "aliyun.com/gpu-count": 4,
        "aliyun.com/gpu-core.percentage": 400,
    }
    assert _alloc({**base, "sharing": {"strategy": "hami"}}) == {
        "nvidia.com/gpu": 40,
        "nvidia.com/gpucores": 400,
        "nvidia.com/gpumem": 4 * 24 * 1024,
    }
    node = pool_node({"name": "p", **base, "sharing": {"strategy": "gpushare"}}, None)
    assert node.labels["ack.node.gpu.schedule"] == "share"


def test_taints_declared_or_from_the_platform() -> None:
    gke = build_cluster("gke", [{"name": "a", "instance-type": "g2-standard-8"}])
    assert gke is not None
    assert gke.nodes[0].taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert gke.nodes[0].labels["cloud.google.com/gke-nodepool"] == "a"
    assert gke.extended_resource_toleration
    declared = build_cluster("gke", [{"name": "a", "instance-type": "g2-standard-8", "taints": []}])
    assert declared is not None and declared.nodes[0].taints == ()
    eks = build_cluster("eks", [{"name": "a", "instance-type": "g5.xlarge"}])
    assert eks is not None and eks.nodes[0].taints == () and eks.gpu_taints == ()
    assert build_cluster(None, []) is None
    assert set(CHOICES) == {"ack", "gke", "gke-autopilot", "eks", "aks", "openshift", "generic"}


def _repo(tmp_path: Path, config: str) -> Path:
    (tmp_path / ".gpulint.yaml").write_text(config)
    fixture = RULE_FIXTURES / "GPU020" / "fail-no-tolerations-every-kind.yaml"
    (tmp_path / "train.yaml").write_bytes(fixture.read_bytes())
    return tmp_path


def test_unknown_instance_type_is_one_line_and_exit_2(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "node-pools:\n- name: gpu\n  instance-type: p4d.24xl\n")
    proc = gpulint_in_process("check", "train.yaml", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "gpulint: error: .gpulint.yaml:3: node-pools[0].instance-type: unknown instance type "
        "'p4d.24xl'; did you mean p4d.24xlarge, p4de.24xlarge, p3dn.24xlarge? (or describe the "
        "nodes with gpus, resource and allocatable instead of instance-type)\n"
    )


def test_unknown_platform_is_one_line_with_the_choices(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "select: [GPU020]\n")
    proc = gpulint_in_process("check", "--platform", "gcp", "train.yaml", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (
        "gpulint: error: --platform: unknown platform 'gcp'; choose one of: ack, gke, "
        "gke-autopilot, eks, aks, openshift, generic\n"
    )
    proc = gpulint_in_process("inspect", "--platform", "gcp", "train.yaml", cwd=repo)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_platform_gke_makes_gpu020_quiet(tmp_path: Path) -> None:
    repo = _repo(tmp_path, "select: [GPU020]\n")
    assumed = gpulint_in_process("check", "train.yaml", cwd=repo)
    assert assumed.returncode == 0 and "GPU020 info" in assumed.stdout  # an assumed taint
    proc = gpulint_in_process("check", "--platform", "gke", "train.yaml", cwd=repo)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout
    (repo / ".gpulint.yaml").write_text("select: [GPU020]\nplatform: gke\n")
    assert gpulint_in_process("check", "train.yaml", cwd=repo).returncode == 0
    # The command line wins over the file: an AKS pool tainted by hand is still flagged.
    (repo / ".gpulint.yaml").write_text(
        "select: [GPU020]\nplatform: gke\nnode-pools:\n- name: gpu\n"
        "  instance-type: Standard_NC24ads_A100_v4\n  taints: [{key: sku, value: gpu}]\n"
    )
    proc = gpulint_in_process("check", "--platform", "aks", "train.yaml", cwd=repo)
    assert proc.returncode == 1
    assert "the taint sku=gpu:NoSchedule of the GPU pool gpu (.gpulint.yaml:4)" in proc.stdout


# -- docs/cluster.md ------------------------------------------------------------------------------


def test_the_assumption_note_is_what_the_docs_show(tmp_path: Path) -> None:
    (note,) = block("docs/cluster.md", TITLE, "text").text.splitlines()
    (tmp_path / ".git").mkdir()
    fixture = RULE_FIXTURES / "GPU020" / "fail-no-tolerations-every-kind.yaml"
    (tmp_path / "train.yaml").write_bytes(fixture.read_bytes())
    proc = gpulint_in_process("check", "train.yaml", cwd=tmp_path)
    lines = proc.stdout.splitlines()
    assert lines[-2] == note
    assert sum(line.startswith("note: ") for line in lines) == 1
    # JSON has no note: each finding says it rests on an assumption, and is info.
    proc = gpulint_in_process("check", "-f", "json", "train.yaml", cwd=tmp_path)
    found = json.loads(proc.stdout)["findings"]
    assert found and all(f["severity"] == "info" and "(assumed:" in said(f) for f in found)


def test_the_node_pools_example_is_a_valid_configuration(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gpulint.yaml").write_text(block("docs/cluster.md", "Node pools", "yaml").text)
    proc = gpulint_in_process("config", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert 'platform: "ack"' in proc.stdout


def test_the_cluster_example(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gpulint.yaml").write_text(block("docs/cluster.md", "An example", "yaml", 0).text)
    (tmp_path / "jobs.yaml").write_text(block("docs/cluster.md", "An example", "yaml", 1).text)
    assert run_console(block("docs/cluster.md", "An example", "console"), tmp_path) == [1]


# -- node-pool objects in the linted files -------------------------------------------------------

NODEPOOL = b"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    metadata:
      labels: {team: ml}
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}
      taints:
      - {key: nvidia.com/gpu, effect: NoSchedule}
      startupTaints:
      - {key: node.example.com/not-ready, effect: NoSchedule}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: any-gpu
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: ["5"]}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: cpu
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}
"""

FLAVOR = b"""\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: h100
spec:
  nodeLabels:
    node.kubernetes.io/instance-type: p5.48xlarge
  nodeTaints:
  - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
"""


def test_karpenter_nodepools_become_nodes() -> None:
    found = scan([("pools.yaml", NODEPOOL)])
    names = [n.name for n in found.nodes]
    assert names[:8] == [f"gpu/g6e.{s}" for s in (
        "xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge", "12xlarge", "24xlarge", "48xlarge"
    )]  # fmt: skip
    big = found.nodes[7]
    assert big.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"),)  # no startup taint
    assert big.labels["team"] == "ml" and big.labels["karpenter.sh/nodepool"] == "gpu"
    assert big.allocatable["nvidia.com/gpu"] == 8 and big.source == "pools.yaml:1"
    # A GPU pool that pins no instance type: as many GPUs as the requirement allows.
    (loose,) = [n for n in found.nodes if n.pool == "any-gpu"]
    assert loose.allocatable["nvidia.com/gpu"] == 4 and loose.taints == ()
    assert not any(n.pool == "cpu" for n in found.nodes)  # not a GPU pool, not a catalog type


HYPERPOD_POOL = b"""\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: sample-np
spec:
  limits:
    nvidia.com/gpu: 6
  template:
    spec:
      taints:
      - key: nvidia.com/gpu
        effect: NoSchedule
      nodeClassRef:
        group: karpenter.sagemaker.amazonaws.com
        kind: HyperpodNodeClass
        name: sample-nc
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: Exists
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: no-gpus
spec:
  limits:
    cpu: "1000"
    nvidia.com/gpu: 0
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: Exists
"""


def test_a_pool_that_caps_its_gpus_launches_gpu_nodes() -> None:
    # It names no instance type and asks for no GPU label, but a limit on nvidia.com/gpu
    # says its nodes have GPUs (a SageMaker HyperPod Karpenter pool): its taint is the GPU
    # nodes' taint. A limit of 0 says it launches none.
    found = scan([("nodepool.yaml", HYPERPOD_POOL)])
    (node,) = found.nodes
    assert node.pool == "sample-np" and node.allocatable["nvidia.com/gpu"] > 0
    assert node.taints == (Taint("nvidia.com/gpu", "", "NoSchedule"),)


def test_kueue_flavors_give_tolerations_and_nodes() -> None:
    found = scan([("flavors.yaml", FLAVOR), ("other.yaml", b"kind: ConfigMap\n")])
    assert found.tolerations == (
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    )
    (node,) = found.nodes
    assert node.allocatable["nvidia.com/gpu"] == 8
    assert node.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert not scan([("broken.yaml", b"kind: NodePool\n  bad: [\n")])


def test_node_pool_objects_feed_every_worker(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gpulint.yaml").write_text("platform: generic\n")
    (tmp_path / "a-flavors.yaml").write_bytes(FLAVOR)
    job = (RULE_FIXTURES / "GPU020" / "fail-no-tolerations-every-kind.yaml").read_text()
    for i in range(6):
        (tmp_path / f"job-{i}.yaml").write_text(job)
    queued = job.replace("metadata:\n", "metadata:\n  labels: {kueue.x-k8s.io/queue-name: q}\n")
    (tmp_path / "queued.yaml").write_text(queued)
    for jobs in ("1", "2"):
        proc = gpulint_subprocess("check", "-j", jobs, "-f", "json", "--select", "GPU020", ".",
                                  cwd=tmp_path)  # fmt: skip
        files = {f["path"] for f in json.loads(proc.stdout)["findings"]}
        # The flavor's p5 nodes are tainted: every job is flagged but the queued ones,
        # whose pods Kueue gives the flavor's toleration.
        assert files == {f"job-{i}.yaml" for i in range(6)}, (jobs, files)
    # Without a cluster description the objects are evidence (gpulint.cluster.evidence):
    # the flavor's node taint is the GPU nodes' taint, and the findings name it; at info,
    # since the jobs name no queue nor pool, and the files need not list every pool.
    (tmp_path / ".gpulint.yaml").unlink()
    # (What a run prints, not its workers: in-process.)
    proc = gpulint_in_process("check", "-f", "json", "--select", "GPU020", ".", cwd=tmp_path)
    found = json.loads(proc.stdout)["findings"]
    assert {f["path"] for f in found} == {f"job-{i}.yaml" for i in range(6)}
    assert all(f["severity"] == "info" for f in found)
    related = found[0]["related"]
    assert related
    assert all((r["kind"], r["path"]) == ("evidence", "a-flavors.yaml") for r in related)


@pytest.mark.parametrize(
    ("mig", "message"),
    [
        ({"strategy": "single", "layout": {"2g.7gb": 3}}, "'2g.7gb' is not a MIG profile"),
        (
            {"strategy": "mixed", "layout": {"1g.5gb": 7}},
            "A100-SXM4-80GB GPUs offer no MIG profile 1g.5gb; they offer 1g.10gb, 1g.20gb",
        ),
        ({"strategy": "single", "layout": {}}, "the single strategy needs a MIG layout"),
        ({"strategy": "mixed", "layout": {"3g.40gb": 2}, "partitioned": 9}, "9 partitioned GPUs"),
    ],
)
def test_bad_mig_layouts(mig: dict, message: str) -> None:
    with pytest.raises(PoolError) as info:
        pool_node({"name": "p", "instance-type": "p4de.24xlarge", "mig": mig}, None)
    assert message in str(info.value)
