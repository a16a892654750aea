"""Node-pool objects of every kind in gpulint/data/node-pools.json, and the platform an inventory's
node labels show: small repositories checked finding by finding, as a first run sees them,
and ``gpulint inspect`` printing the picture with where each fact came from."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest

from gpulint.cluster.objects import scan
from gpulint.cluster.poolkinds import builtin_kinds
from gpulint.data import data_path
from gpulint.k8s.taints import Taint
from tests.conftest import ROOT, gpulint_in_process, said
from tests.test_cluster_evidence import check, job, repo, seen


def test_the_table_matches_its_schema_and_cites_every_row() -> None:
    schema = json.loads((ROOT / "schemas" / "node-pools.schema.json").read_text("utf-8"))
    data = json.loads(data_path("gpulint.data", "node-pools.json").read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema)
    rows = [(r["group"], r["kind"], tuple(r.get("pools", ()))) for r in data["kinds"]]
    assert len(rows) == len(set(rows))
    # Every row names the repository and file of the API type its paths were read from (a
    # Terraform module's is its variables.tf).
    assert all(
        "/" in r["source"] and (".go" in r["source"] or ".tf" in r["source"]) for r in data["kinds"]
    )
    assert all(r["role"] != "part" or "refs" not in r for r in data["kinds"])
    assert len(builtin_kinds()) == len({(g, k) for g, k, _ in rows})


EKSCTL = """\
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: ml, region: us-east-1}
nodeGroups:
- name: cpu
  instanceType: m5.large
  taints: {dedicated: "infra:NoSchedule"}
- name: gpu-spot
  instancesDistribution:
    instanceTypes: [g5.xlarge, g5.2xlarge]
  taints: {nvidia.com/gpu: "present:NoSchedule"}
managedNodeGroups:
- name: h100
  instanceType: p5.48xlarge
  labels: {team: llm}
  taints:
  - {key: sku, value: h100, effect: NoExecute}
"""

MACHINESET = """\
apiVersion: machine.openshift.io/v1beta1
kind: MachineSet
metadata:
  name: ocp-gpu-us-east-1a
  namespace: openshift-machine-api
spec:
  replicas: 1
  template:
    spec:
      metadata:
        labels: {node-role.kubernetes.io/gpu: ""}
      taints:
      - {key: gpu-node, value: "true", effect: NoSchedule}
      providerSpec:
        value:
          apiVersion: machine.openshift.io/v1beta1
          kind: AWSMachineProviderConfig
          instanceType: g6.2xlarge
"""

CAPI_DEPLOYMENT = """\
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata: {name: gpu-md}
spec:
  clusterName: capi
  replicas: 2
  template:
    spec:
      clusterName: capi
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: gpu}
      infrastructureRef:
        apiGroup: infrastructure.cluster.x-k8s.io
        kind: AWSMachineTemplate
        name: gpu
"""

CAPI_TEMPLATES = """\
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {name: gpu}
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration:
          taints:
          - {key: accelerator, value: nvidia, effect: NoSchedule}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
kind: AWSMachineTemplate
metadata: {name: gpu}
spec:
  template:
    spec:
      instanceType: g4dn.xlarge
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta2
kind: KubeadmConfigTemplate
metadata: {name: cpu}
spec:
  template:
    spec:
      joinConfiguration:
        nodeRegistration:
          taints:
          - {key: infra, effect: NoSchedule}
"""

CNRM = """\
apiVersion: container.cnrm.cloud.google.com/v1beta1
kind: ContainerNodePool
metadata: {name: t4-pool}
spec:
  location: us-central1-a
  clusterRef: {name: ml}
  nodeConfig:
    machineType: n1-standard-8
    guestAccelerator:
    - {type: nvidia-tesla-t4, count: 2}
    taint:
    - {key: team, value: vision, effect: NO_SCHEDULE}
"""

ASO = """\
apiVersion: containerservice.azure.com/v1api20240901
kind: ManagedClustersAgentPool
metadata: {name: aks-gpu}
spec:
  azureName: gpupool
  owner: {name: aks}
  mode: User
  vmSize: Standard_NC24ads_A100_v4
  count: 1
  nodeTaints: ["sku=gpu:NoSchedule"]
  nodeLabels: {accelerator: a100}
"""


def tolerating(key: str, value: str | None = None, effect: str = "NoSchedule") -> str:
    if value is None:
        return f"      tolerations:\n      - {{key: {key}, operator: Exists, effect: {effect}}}\n"
    return (
        f"      tolerations:\n      - {{key: {key}, operator: Equal, value: {value}, "
        f"effect: {effect}}}\n"
    )


@pytest.mark.parametrize(
    ("files", "taint", "what", "line", "fix"),
    [
        (
            {"eksctl.yaml": EKSCTL},
            "nvidia.com/gpu=present:NoSchedule",
            "eksctl node group gpu-spot",
            8,
            tolerating("nvidia.com/gpu"),
        ),
        (
            {"machineset.yaml": MACHINESET},
            "gpu-node=true:NoSchedule",
            "OpenShift MachineSet ocp-gpu-us-east-1a",
            1,
            tolerating("gpu-node", '"true"'),
        ),
        (
            {"md.yaml": CAPI_DEPLOYMENT, "templates.yaml": CAPI_TEMPLATES},
            "accelerator=nvidia:NoSchedule",
            "Cluster API MachineDeployment gpu-md",
            1,
            tolerating("accelerator"),
        ),
        (
            {"pool.yaml": CNRM},
            "team=vision:NoSchedule",
            "Config Connector ContainerNodePool t4-pool",
            1,
            tolerating("team", "vision"),
        ),
        (
            {"agentpool.yaml": ASO},
            "sku=gpu:NoSchedule",
            "Azure Service Operator agent pool gpupool",
            1,
            tolerating("sku", "gpu"),
        ),
    ],
    ids=["eksctl", "openshift", "cluster-api", "config-connector", "azure-service-operator"],
)
def test_a_gpu_pool_of_every_kind_is_evidence(
    tmp_path: Path, files: dict[str, str], taint: str, what: str, line: int, fix: str
) -> None:
    (path,) = [name for name in files if name != "templates.yaml"]
    root = repo(tmp_path, {**files, "train.yaml": job("train"), "ok.yaml": job("ok", fix)})
    findings, code = check(root, "--select", "GPU020")
    # The pool's taint is evidence: the job that lacks it is flagged, naming the pool; at
    # info, since it names no pool and the files need not list every pool of the cluster.
    assert [s for s in seen(findings) if s[0] != "ok.yaml"] == [("train.yaml", "GPU020", "info")]
    assert code == 0
    message = said(findings[0])
    assert "assumed: the pod names no node pool" in message
    assert f"the GPU node taint {taint}" in message
    assert f"(a taint of the GPU {what} in this project's files: " in message
    assert next((r["kind"], r["path"], r["line"]) for r in findings[0]["related"]) == (
        "evidence",
        path,
        line,
    )
    # The job that tolerates it is not flagged for it.
    assert not [f for f in findings if f["path"] == "ok.yaml" and taint in said(f)]


def test_eksctl_pools_one_by_one() -> None:
    found = scan([("eksctl.yaml", EKSCTL.encode())])
    assert [(p.what, p.name, p.source, p.gpus) for p in found.pools] == [
        ("eksctl node group", "cpu", "eksctl.yaml:5", 0),
        ("eksctl node group", "gpu-spot", "eksctl.yaml:8", 1),
        ("eksctl managed node group", "h100", "eksctl.yaml:13", 8),
    ]
    h100 = next(n for n in found.nodes if n.pool == "h100/p5.48xlarge")
    assert h100.taints == (Taint("sku", "h100", "NoExecute"),)
    assert h100.labels["team"] == "llm" and h100.labels["eks.amazonaws.com/nodegroup"] == "h100"
    spot = [n for n in found.nodes if n.pool and n.pool.startswith("gpu-spot/")]
    assert [n.labels["alpha.eksctl.io/nodegroup-name"] for n in spot] == ["gpu-spot"] * 2


def test_a_pod_needs_one_gpu_pool_not_all(tmp_path: Path) -> None:
    gpu = tolerating("nvidia.com/gpu")
    h100 = "      nodeSelector: {eks.amazonaws.com/nodegroup: h100}\n" + gpu
    elsewhere = "      nodeSelector: {eks.amazonaws.com/nodegroup: a10}\n" + gpu
    files = {"eksctl.yaml": EKSCTL, "spot.yaml": job("spot", gpu), "h100.yaml": job("h100", h100)}
    files["elsewhere.yaml"] = job("elsewhere", elsewhere)
    findings, _ = check(repo(tmp_path, files), "--select", "GPU020")
    # spot.yaml tolerates the gpu-spot pool's taints; h100.yaml selects the h100 pool, whose
    # taint it lacks; elsewhere.yaml selects a pool the files do not describe (and tolerates
    # the taint all three GPU pods agree on).
    assert seen(findings) == [("h100.yaml", "GPU020", "error")]
    message = said(findings[0])
    assert (
        "does not tolerate the GPU node taint sku=h100:NoExecute" in message
        and "(a taint of the GPU " in message
    )


def test_an_instance_type_selector_rules_out_the_pools_of_other_types(tmp_path: Path) -> None:
    a100 = "      nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}\n"
    p5 = "      nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"
    files = {"eksctl.yaml": EKSCTL, "a100.yaml": job("a100", a100), "p5.yaml": job("p5", p5)}
    findings, _ = check(repo(tmp_path, files), "--select", "GPU020")
    # No pool of the files has p4d nodes: their taints say nothing of the nodes a100.yaml
    # gets (gpulint's assumption is left); p5.48xlarge is the h100 group's, but another
    # pool may make p5 nodes too: an instance type holds the pod to no pool (info).
    assert seen(findings) == [("a100.yaml", "GPU020", "info"), ("p5.yaml", "GPU020", "info")]
    assert "sku=h100:NoExecute" in said(findings[1])
    assert "assumed: the pod names no node pool" in said(findings[1])


def test_an_untainted_gpu_pool_takes_any_gpu_pod(tmp_path: Path) -> None:
    untainted = EKSCTL + "- name: open\n  instanceType: g6.xlarge\n"
    findings, _ = check(repo(tmp_path, {"eksctl.yaml": untainted, "t.yaml": job("t")}))
    assert seen(findings) == []


def test_a_cpu_pools_taint_is_no_evidence(tmp_path: Path) -> None:
    cpu_only = EKSCTL.split("- name: gpu-spot")[0]
    findings, _ = check(repo(tmp_path, {"eksctl.yaml": cpu_only, "train.yaml": job("t")}))
    # Only gpulint's assumption is left: an info finding.
    assert seen(findings) == [("train.yaml", "GPU020", "info")]


def test_cluster_api_templates_join_their_deployment_across_files() -> None:
    found = scan([("md.yaml", CAPI_DEPLOYMENT.encode()), ("t.yaml", CAPI_TEMPLATES.encode())])
    (pool,) = found.pools
    assert pool.instance_types == ("g4dn.xlarge",) and pool.gpus == 1
    assert pool.taints == (Taint("accelerator", "nvidia", "NoSchedule"),)
    # The templates alone make no pool: nothing says how many machines use them.
    assert not scan([("t.yaml", CAPI_TEMPLATES.encode())]).pools


def test_config_connector_and_aso_read_their_own_shapes() -> None:
    (gke,) = scan([("pool.yaml", CNRM.encode())]).nodes
    assert gke.allocatable["nvidia.com/gpu"] == 2  # n1-standard-8 + 2 T4: guestAccelerator
    assert gke.taints == (Taint("team", "vision", "NoSchedule"),)  # NO_SCHEDULE
    assert gke.labels["cloud.google.com/gke-nodepool"] == "t4-pool"
    (aks,) = scan([("aks.yaml", ASO.encode())]).nodes
    assert aks.taints == (Taint("sku", "gpu", "NoSchedule"),)
    assert aks.labels["kubernetes.azure.com/agentpool"] == "gpupool"
    assert aks.allocatable["nvidia.com/gpu"] == 1


OVERLAY = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: g5}
spec:
  template:
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge, g5.12xlarge]}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: slices-1gpu}
spec:
  weight: 10
  requirements:
  - {key: karpenter.k8s.aws/instance-gpu-count, operator: In, values: ["1"]}
  capacity: {nvidia.com/gpu: 4}
---
apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: low}
spec:
  weight: 1
  requirements:
  - {key: karpenter.k8s.aws/instance-gpu-count, operator: Lt, values: ["2"]}
  capacity: {nvidia.com/gpu: 2, cpu: "1000"}
"""


def test_a_node_overlay_sets_the_capacity_of_the_nodes_it_matches() -> None:
    nodes = {n.name: n for n in scan([("o.yaml", OVERLAY.encode())]).nodes}
    # The heavier overlay wins; standard resources are not an overlay's to set.
    assert nodes["g5/g5.xlarge"].allocatable["nvidia.com/gpu"] == Decimal(4)
    assert nodes["g5/g5.xlarge"].allocatable["cpu"] == Decimal(4)
    assert nodes["g5/g5.12xlarge"].allocatable["nvidia.com/gpu"] == Decimal(4)  # its own 4


GKE_NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gke-ml-t4-pool-1
    labels:
      cloud.google.com/gke-accelerator: nvidia-tesla-t4
      cloud.google.com/gke-nodepool: t4-pool
      node.kubernetes.io/instance-type: n1-standard-8
  spec:
    taints:
    - {key: nvidia.com/gpu, value: present, effect: NoSchedule}
  status:
    allocatable: {cpu: 7910m, memory: 26Gi, pods: "110", nvidia.com/gpu: "1"}
"""


def test_an_inventory_of_gke_nodes_is_gke(tmp_path: Path) -> None:
    misspelt = job("spelt", "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-t4}\n")
    root = repo(tmp_path, {"nodes.yaml": GKE_NODES, "train.yaml": job("train")})
    (root / "spelt.yaml").write_text(misspelt)
    findings, _ = check(root, "--cluster", "nodes.yaml", "--select", "GPU020,GPU054")
    # GKE's ExtendedResourceToleration gives train.yaml the nodes' taint: no GPU020. The
    # misspelt accelerator is GPU054's, and the finding says where GKE came from.
    assert seen(findings) == [("spelt.yaml", "GPU054", "error")]
    assert (
        "'nvidia-t4' is not a GKE accelerator (GKE, from the inventory's node labels "
        "cloud.google.com/gke-accelerator (nodes.yaml:4)): no GPU node carries it"
    ) in said(findings[0])
    assert [(r["kind"], r["path"], r["line"]) for r in findings[0]["related"]] == [
        ("evidence", "nodes.yaml", 4)
    ]
    # A platform named on the command line wins over the labels.
    findings, _ = check(root, "--cluster", "nodes.yaml", "--platform", "generic")
    assert ("train.yaml", "GPU020", "error") in seen(findings)
    assert not any(f["rule"] == "GPU054" for f in findings)


def test_an_inventory_without_platform_labels_implies_none(tmp_path: Path) -> None:
    plain = GKE_NODES.replace("cloud.google.com/gke-accelerator", "example.com/accelerator")
    plain = plain.replace("cloud.google.com/gke-nodepool", "example.com/pool")
    root = repo(tmp_path, {"nodes.yaml": plain, "train.yaml": job("train")})
    findings, _ = check(root, "--cluster", "nodes.yaml", "--select", "GPU020")
    assert seen(findings) == [("train.yaml", "GPU020", "error")]
    assert "of the GPU pool" in said(findings[0])


def test_inspect_prints_the_picture_and_each_pods_platform(tmp_path: Path) -> None:
    selected = job("eks", "      nodeSelector: {eks.amazonaws.com/nodegroup: h100}\n")
    root = repo(tmp_path, {"eksctl.yaml": EKSCTL, "train.yaml": selected})
    text = gpulint_in_process("inspect", ".", cwd=root).stdout
    assert (
        "GPU node taint nvidia.com/gpu=present:NoSchedule: a taint of the GPU eksctl node group "
        "gpu-spot in this project's files (eksctl.yaml:8)"
    ) in text
    assert (
        "node pool eksctl managed node group h100 (eksctl.io/ClusterConfig, EKS) at "
        "eksctl.yaml:13; p5.48xlarge; up to 8 GPUs a node; taints: sku=h100:NoExecute"
    ) in text
    label = "eks.amazonaws.com/nodegroup"
    assert f"    platform: EKS, from this pod's node selector {label} (line 8)" in text
    data = json.loads(gpulint_in_process("inspect", "-f", "json", ".", cwd=root).stdout)
    schema = json.loads((ROOT / "schemas" / "inspect.schema.json").read_text("utf-8"))
    jsonschema.validate(data, schema)
    cluster = data["cluster"]
    assert cluster["platform"] is None
    assert [p["name"] for p in cluster["node_pools"]] == ["cpu", "gpu-spot", "h100"]
    assert cluster["taints"][0]["evidence"] == [{"path": "eksctl.yaml", "line": 8}]
    (pod,) = data["files"][1]["workloads"][0]["pods"]
    assert pod["platform"] == {
        "name": "eks",
        "from": "this pod's node selector eks.amazonaws.com/nodegroup",
        "line": 8,
    }


def test_the_inspect_picture_is_what_the_docs_show(tmp_path: Path) -> None:
    from tests.docblocks import block

    title = "Describing the cluster: node pools, instance types, platforms"
    shown = block("docs/cluster.md", title, "text", 1).text.splitlines()
    selected = job("eks", "      nodeSelector: {eks.amazonaws.com/nodegroup: h100}\n")
    root = repo(tmp_path, {"eksctl.yaml": EKSCTL, "train.yaml": selected})
    lines = gpulint_in_process("inspect", ".", cwd=root).stdout.splitlines()
    for line in shown:
        assert line.strip() == "..." or line in lines, line


def test_inspect_names_the_inventorys_platform(tmp_path: Path) -> None:
    root = repo(tmp_path, {"nodes.yaml": GKE_NODES, "train.yaml": job("train")})
    proc = gpulint_in_process("inspect", "--cluster", "nodes.yaml", ".", cwd=root)
    assert (
        "platform GKE, from the inventory's node labels cloud.google.com/gke-accelerator "
        "(nodes.yaml:4)"
    ) in proc.stdout
    data = json.loads(
        gpulint_in_process("inspect", "-f", "json", "--cluster", "nodes.yaml", ".", cwd=root).stdout
    )
    assert data["cluster"]["platform"]["name"] == "gke"
    assert data["files"][1]["workloads"][0]["pods"][0]["platform"]["name"] == "gke"


def test_a_node_overlay_sets_the_capacity_of_its_pools_too() -> None:
    # inspect and the evidence read the pools: an overlay's time-sliced GPUs count there,
    # and a resource only an overlay advertises is one the pool offers.
    shared = OVERLAY + (
        "---\napiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: shared}\n"
        "spec:\n  capacity: {nvidia.com/gpu.shared: 8}\n"
    )
    (pool,) = scan([("o.yaml", OVERLAY.encode())]).pools
    assert pool.gpus == 4
    assert pool.resources == ("nvidia.com/gpu",)
    (pool,) = scan([("o.yaml", shared.encode())]).pools
    assert pool.gpus == 8
    assert pool.resources == ("nvidia.com/gpu", "nvidia.com/gpu.shared")
