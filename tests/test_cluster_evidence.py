"""The cluster picture a run gathers from its own files (gpulint.cluster.evidence): a finding
that rests on gpulint's assumed cluster is info; one that rests on what the repository says
is as severe as with a configured cluster, and names its evidence. Each case is a small
repository checked finding by finding, as a first run with no configuration sees it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpulint.k8s.taints import Taint
from tests.conftest import gpulint_in_process, said

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  template:
    spec:
{extra}      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
      restartPolicy: Never
"""
#: The Job's image, a CUDA build: a test that gives the Job another vendor's devices gives
#: it that vendor's image too (GPU028).
CUDA_IMAGE = "nvcr.io/nvidia/pytorch:24.05-py3"
SKU = "      tolerations:\n      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}\n"


def job(name: str, extra: str = "") -> str:
    return JOB.format(name=name, extra=extra)


def repo(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def check(root: Path, *args: str) -> tuple[list[dict[str, Any]], int]:
    proc = gpulint_in_process("check", "-f", "json", *args, ".", cwd=root)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"], proc.returncode


def seen(findings: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(f["path"], f["rule"], f["severity"]) for f in findings]


def test_nothing_known_is_an_info_finding_that_says_what_it_assumed(tmp_path: Path) -> None:
    root = repo(tmp_path, {"train.yaml": job("train")})
    findings, code = check(root)
    assert seen(findings) == [("train.yaml", "GPU020", "info")] and code == 0
    assert "(assumed: gpulint's default GPU taint" in said(findings[0])
    text = gpulint_in_process("check", ".", cwd=root).stdout.splitlines()
    assert text[-2].startswith("note: assumed GPU taint nvidia.com/gpu=present:NoSchedule")
    assert 'gpu-taints: ["nvidia.com/gpu=present:NoSchedule"]' in text[-2]


SPOT = (
    "      tolerations:\n"
    "      - {key: kubernetes.azure.com/scalesetpriority, operator: Equal, value: spot,"
    " effect: NoSchedule}\n"
)


def test_a_spot_taint_the_gpu_pods_agree_on_is_not_the_gpu_taint(tmp_path: Path) -> None:
    # Three GPU Jobs run on AKS Spot capacity: the Spot taint says how the nodes are bought,
    # not that they hold GPUs, so neither the fourth GPU Job nor a CPU pod that also runs on
    # Spot is judged by it.
    files = {f"train-{c}.yaml": job(f"train-{c}", SPOT) for c in "abc"}
    files["train-d.yaml"] = job("train-d")
    files["web.yaml"] = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n"
        + SPOT.replace("      ", "  ")
        + "  containers:\n  - name: web\n    image: nginx\n"
    )
    findings, code = check(repo(tmp_path, files))
    assert seen(findings) == [(f"train-{c}.yaml", "GPU020", "info") for c in "abcd"]
    assert code == 0
    assert all("nvidia.com/gpu=present:NoSchedule" in said(f) for f in findings)


def test_the_taint_every_other_job_tolerates_makes_the_fourth_a_warning(tmp_path: Path) -> None:
    # Other pods' tolerations are no verification of the nodes: a taint every other GPU pod
    # of the project tolerates is a warning at most, and says which line makes it certain.
    files = {f"train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["train-d.yaml"] = job("train-d")
    findings, code = check(repo(tmp_path, files))
    assert seen(findings) == [("train-d.yaml", "GPU020", "warning")] and code == 0
    assert "every other GPU pod of this project tolerates it" in said(findings[0])
    assert '`gpu-taints: ["sku=gpu:NoSchedule"]` in .gpulint.yaml' in said(findings[0])
    (finding,) = findings
    assert "the GPU node taint sku=gpu:NoSchedule" in said(
        finding
    ) and "(tolerated by 3 of the 4 GPU pods of this " in said(finding)
    assert "train-a.yaml:9, train-b.yaml:9, train-c.yaml:9" in said(finding)
    assert [(r["kind"], r["path"], r["line"]) for r in finding["related"]] == [
        ("evidence", f"train-{c}.yaml", 9) for c in "abc"
    ]
    # The fix adds the taint the repository uses, not gpulint's default.
    assert "{key: sku, operator: Exists, effect: NoSchedule}" in said(finding)
    # With the taint configured it is certain: an error.
    (tmp_path / ".gpulint.yaml").write_text('gpu-taints: ["sku=gpu:NoSchedule"]\n')
    findings, code = check(tmp_path)
    assert seen(findings) == [("train-d.yaml", "GPU020", "error")] and code == 1


def test_a_toleration_of_another_key_under_the_same_domain_is_no_near_miss(
    tmp_path: Path,
) -> None:
    # A lab's pods tolerate its own node's taint; the fourth tolerates another lab's key of
    # the same domain: a toleration for another taint, not a slip of this one (the shared
    # `nautilus.io/` made the keys look alike). The pod is meant for that lab's nodes, and
    # only other pods' tolerations say the amraj taint is the GPU nodes': no finding.
    toleration = "      tolerations:\n      - {key: %s, operator: Exists, effect: NoSchedule}\n"
    lab, other = toleration % "nautilus.io/amraj", toleration % "nautilus.io/bharadia"
    files = {f"train-{c}.yaml": job(f"train-{c}", lab) for c in "abc"}
    files["train-d.yaml"] = job("train-d", other)
    findings, _ = check(repo(tmp_path, files))
    assert findings == []
    # A pod with no toleration of its own is still held to theirs, at its tolerations.
    (tmp_path / "train-d.yaml").write_text(job("train-d"))
    findings, _ = check(tmp_path)
    assert "add {key: nautilus.io/amraj, operator: Exists, effect: NoSchedule}" in said(findings[0])
    # A slip of the key's name under the same domain is still one.
    (tmp_path / "train-d.yaml").write_text(job("train-d", other.replace("bharadia", "amrajj")))
    findings, _ = check(tmp_path)
    assert "almost matches: write key: nautilus.io/amraj" in said(findings[0])
    # Nor is a pool numbered apart (g6-gpu beside the others' g5-gpu) a slip of their taint.
    pools = tmp_path / "pools"
    pools.mkdir()
    files = {f"train-{c}.yaml": job(f"train-{c}", toleration % "g5-gpu") for c in "abc"}
    files["train-d.yaml"] = job("train-d", toleration % "g6-gpu")
    findings, _ = check(repo(pools, files))
    assert findings == []


def test_a_taint_only_some_of_the_other_pods_tolerate_is_info(tmp_path: Path) -> None:
    # Three of five GPU pods tolerate gpu=true:NoSchedule (a homelab whose GPU nodes carry
    # no taint at all): a majority, not every other pod, so the two others are info.
    gpu = (
        "      tolerations:\n"
        '      - {key: gpu, operator: Equal, value: "true", effect: NoSchedule}\n'
    )
    files = {f"train-{c}.yaml": job(f"train-{c}", gpu) for c in "abc"}
    files["train-d.yaml"] = job("train-d")
    files["train-e.yaml"] = job("train-e")
    findings, code = check(repo(tmp_path, files))
    assert seen(findings) == [
        ("train-d.yaml", "GPU020", "info"),
        ("train-e.yaml", "GPU020", "info"),
    ]
    assert code == 0
    message = said(findings[0])
    assert (
        "gpu=true:NoSchedule" in message
        and "(tolerated by 3 of the 5 GPU pods of this project" in message
    )
    assert "assumed from some of the other pods, not all" in message
    assert '`gpu-taints: ["gpu=true:NoSchedule"]` in .gpulint.yaml makes it certain' in message


def test_pods_agreeing_on_the_resource_s_own_taint_make_the_fourth_info(tmp_path: Path) -> None:
    # Tolerating nvidia.com/gpu is what GPU pods do in case the nodes carry it, and clusters
    # with the ExtendedResourceToleration admission add it themselves: the other pods'
    # consensus on that key is no proof the fourth stays Pending (an OKE project whose node
    # pools carry no taint wrote it in two of three pods).
    own = (
        "      tolerations:\n      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
    )
    files = {f"train-{c}.yaml": job(f"train-{c}", own) for c in "abc"}
    files["train-d.yaml"] = job("train-d")
    findings, code = check(repo(tmp_path, files))
    assert seen(findings) == [("train-d.yaml", "GPU020", "info")] and code == 0
    (finding,) = findings
    assert "tolerated by 3 of the 4 GPU pods of this project" in said(finding)
    assert "ExtendedResourceToleration" in said(finding)
    assert '`gpu-taints: ["nvidia.com/gpu:NoSchedule"]`' in said(finding)
    # A node pool of the files that carries the taint does not lift that doubt for a pod
    # that names no pool: its cluster may be another (a repository of several demos), where
    # the admission adds the toleration. An error once the pod's own selector holds it to
    # the pool.
    pool = NODEPOOL.replace('value: "true", ', "")
    (tmp_path / "pooled").mkdir()
    findings, code = check(repo(tmp_path / "pooled", {**files, "pool.yaml": pool}))
    assert seen(findings) == [("train-d.yaml", "GPU020", "info")] and code == 0
    assert "ExtendedResourceToleration" in said(findings[0])
    files["train-d.yaml"] = job("train-d", "      nodeSelector: {karpenter.sh/nodepool: gpu}\n")
    (tmp_path / "bound").mkdir()
    findings, code = check(repo(tmp_path / "bound", {**files, "pool.yaml": pool}))
    assert seen(findings) == [("train-d.yaml", "GPU020", "error")] and code == 1


def test_one_pod_of_two_is_no_consensus(tmp_path: Path) -> None:
    findings, _ = check(repo(tmp_path, {"a.yaml": job("a", SKU), "b.yaml": job("b")}))
    # a.yaml names its own GPU taint (sku=gpu): not held to the default; b.yaml is assumed.
    assert seen(findings) == [("b.yaml", "GPU020", "info")]


def test_built_in_taints_and_blanket_tolerations_say_nothing(tmp_path: Path) -> None:
    generic = (
        "      tolerations:\n"
        "      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}\n"
        "      - {operator: Exists}\n"
    )
    files = {f"{c}.yaml": job(c, generic) for c in "abc"}
    files["d.yaml"] = job("d")
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("d.yaml", "GPU020", "info")]


@pytest.mark.parametrize(
    ("selector", "platform"),
    [
        ("cloud.google.com/gke-accelerator: nvidia-l4", None),  # GKE adds the toleration
        ('cloud.google.com/gke-flex-start: "true"', None),  # GKE flex-start (DWS) nodes
        ("eks.amazonaws.com/nodegroup: gpu", None),  # EKS node groups: no taint by default
        ("karpenter.k8s.aws/instance-family: g6e", None),
        ("kubernetes.azure.com/agentpool: gpupool", None),  # AKS
        ("aliyun.accelerator/nvidia_name: Tesla-T4", None),  # ACK
        ("alibabacloud.com/nodepool-id: np-123", None),
    ],
)
def test_a_platform_selector_is_judged_as_that_platform(
    tmp_path: Path, selector: str, platform: str | None
) -> None:
    extra = f"      nodeSelector: {{{selector}}}\n"
    findings, code = check(repo(tmp_path, {"train.yaml": job("train", extra)}))
    assert findings == [] and code == 0


def test_a_required_node_affinity_names_the_platform_too(tmp_path: Path) -> None:
    extra = (
        "      affinity:\n        nodeAffinity:\n"
        "          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n            - matchExpressions:\n"
        "              - key: cloud.google.com/gke-accelerator\n"
        "                operator: In\n                values: [nvidia-l4]\n"
    )
    findings, _ = check(repo(tmp_path, {"train.yaml": job("train", extra)}))
    assert findings == []


NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}
      taints:
      - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
"""


def test_a_gpu_node_pool_in_the_tree_is_evidence(tmp_path: Path) -> None:
    # A pool of the files proves its own nodes are tainted, not that the files list every
    # pool: a pod that names no pool may land on another one (an EKS workshop module whose
    # pool is another module's), so the finding is info and says what it assumed.
    findings, code = check(repo(tmp_path, {"pool.yaml": NODEPOOL, "train.yaml": job("train")}))
    assert seen(findings) == [("train.yaml", "GPU020", "info")] and code == 0
    message = said(findings[0])
    assert (
        "nvidia.com/gpu=true:NoSchedule" in message
        and "(a taint of the GPU Karpenter NodePool gpu in" in message
    )
    assert "assumed: the pod names no node pool" in message
    assert '`gpu-taints: ["nvidia.com/gpu=true:NoSchedule"]` in .gpulint.yaml' in message
    assert findings[0]["related"][0]["path"] == "pool.yaml"


@pytest.mark.parametrize(
    "extra",
    [
        # The pool's name label.
        "      nodeSelector: {karpenter.sh/nodepool: gpu}\n",
        # A label the pool's node template sets.
        "      nodeSelector: {example.com/workload: training}\n",
        # A required node affinity that allows only the pool's nodes.
        "      affinity:\n        nodeAffinity:\n"
        "          requiredDuringSchedulingIgnoredDuringExecution:\n"
        "            nodeSelectorTerms:\n            - matchExpressions:\n"
        "              - {key: karpenter.sh/nodepool, operator: In, values: [gpu]}\n",
    ],
)
def test_a_pod_held_to_the_pool_by_its_selector_is_an_error(tmp_path: Path, extra: str) -> None:
    pool = NODEPOOL.replace(
        "  template:\n",
        "  template:\n    metadata:\n      labels: {example.com/workload: training}\n",
    )
    files = {"pool.yaml": pool, "train.yaml": job("train", extra)}
    findings, code = check(repo(tmp_path, files))
    assert seen(findings) == [("train.yaml", "GPU020", "error")] and code == 1
    assert "assumed" not in said(findings[0])


def test_a_label_every_node_gets_holds_a_pod_to_no_pool(tmp_path: Path) -> None:
    # The pool makes g6e nodes, but any other pool may make them too.
    extra = "      nodeSelector: {karpenter.k8s.aws/instance-family: g6e}\n"
    pool = NODEPOOL.replace(
        "  template:\n",
        "  template:\n    metadata:\n      labels: {karpenter.k8s.aws/instance-family: g6e}\n",
    )
    findings, _ = check(repo(tmp_path, {"pool.yaml": pool, "train.yaml": job("train", extra)}))
    assert seen(findings) == [("train.yaml", "GPU020", "info")]


UNTAINTED_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g6, g6e]}
      - {key: karpenter.k8s.aws/instance-size, operator: In, values: [xlarge, 2xlarge]}
  limits:
    nvidia.com/gpu: 8
"""


def test_the_projects_untainted_gpu_pool_contradicts_the_default_taint(tmp_path: Path) -> None:
    # The project's GPU NodePool taints nothing: its pods need no toleration, whether they
    # name the pool or leave the choice to the scheduler.
    named = "      nodeSelector: {karpenter.sh/nodepool: gpu}\n"
    root = repo(
        tmp_path,
        {"pool.yaml": UNTAINTED_POOL, "a.yaml": job("a", named), "b.yaml": job("b")},
    )
    findings, code = check(root)
    assert findings == [] and code == 0


def test_a_pod_the_untainted_pool_cannot_take_keeps_the_assumption(tmp_path: Path) -> None:
    # It names another pool, which the files do not describe: the default taint stays a guess.
    other = "      nodeSelector: {karpenter.sh/nodepool: gpu-training}\n"
    findings, _ = check(repo(tmp_path, {"pool.yaml": UNTAINTED_POOL, "a.yaml": job("a", other)}))
    assert seen(findings) == [("a.yaml", "GPU020", "info")]
    assert "(assumed: gpulint's default GPU taint" in said(findings[0])


def test_a_cpu_pod_tolerating_the_agreed_taint_is_a_warning(tmp_path: Path) -> None:
    files = {f"{c}.yaml": job(c, SKU) for c in "ab"}
    files["web.yaml"] = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n"
        "  tolerations: [{key: sku, operator: Exists}]\n"
        "  containers:\n  - name: web\n    image: nginx\n"
    )
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("web.yaml", "GPU021", "warning")]
    # With nothing known, the same pod tolerating gpulint's default taint is info.
    (tmp_path / "a.yaml").unlink()
    (tmp_path / "b.yaml").unlink()
    (tmp_path / "web.yaml").write_text(files["web.yaml"].replace("key: sku", "key: nvidia.com/gpu"))
    findings, _ = check(tmp_path)
    assert seen(findings) == [("web.yaml", "GPU021", "info")]


def test_a_cpu_pod_sent_by_its_own_label_to_the_gpu_nodes_is_info(tmp_path: Path) -> None:
    # Where a label no table reads sends the pod (the training nodes whose host directory it
    # reads), the toleration may be what lets it there: info, saying so.
    files = {f"{c}.yaml": job(c, SKU) for c in "ab"}
    web = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\nSELECTOR"
        "  tolerations: [{key: sku, operator: Exists}]\n"
        "  containers:\n  - name: web\n    image: nginx\n"
    )
    files["web.yaml"] = web.replace("SELECTOR", "  nodeSelector: {workload-class: training}\n")
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("web.yaml", "GPU021", "info")]
    assert "nodeSelector workload-class: training" in said(findings[0])
    # A label every node carries (its OS, its zone) chooses no nodes: still a warning.
    for selector in ("kubernetes.io/os: linux", "topology.kubernetes.io/zone: eu-west-1a"):
        text = web.replace("SELECTOR", f"  nodeSelector: {{{selector}}}\n")
        (tmp_path / "web.yaml").write_text(text)
        findings, _ = check(tmp_path)
        assert seen(findings) == [("web.yaml", "GPU021", "warning")], selector


def test_a_cpu_pod_filling_a_host_path_is_info_and_one_preferring_gpu_nodes_silent(
    tmp_path: Path,
) -> None:
    # The project's GPU pods agree on the taint, so a CPU pod tolerating it is a warning; one
    # that fills a host directory (the GPU pods' model cache) may need the GPU node's disk,
    # and one whose preferred affinity names the GPU node asks to run there.
    files = {f"{c}.yaml": job(c, SKU) for c in "ab"}
    helper = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: fetch}\nspec:\nEXTRA"
        "  tolerations: [{key: sku, operator: Exists}]\n"
        "  containers:\n  - name: fetch\n    image: amazon/aws-cli:2.17.0\n"
    )
    files["fetch.yaml"] = helper.replace(
        "EXTRA", "  volumes:\n  - {name: models, hostPath: {path: /data/models}}\n"
    )
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("fetch.yaml", "GPU021", "info")]
    assert "it mounts the host's /data/models" in said(findings[0])
    preferring = (
        "  affinity:\n    nodeAffinity:\n"
        "      preferredDuringSchedulingIgnoredDuringExecution:\n"
        "      - weight: 100\n        preference:\n          matchExpressions:\n"
        "          - {key: kubernetes.io/hostname, operator: In, values: [gpu-node-01]}\n"
    )
    (tmp_path / "fetch.yaml").write_text(helper.replace("EXTRA", preferring))
    findings, _ = check(tmp_path)
    assert findings == []
    (tmp_path / "fetch.yaml").write_text(helper.replace("EXTRA", ""))
    findings, _ = check(tmp_path)
    assert seen(findings) == [("fetch.yaml", "GPU021", "warning")]


def test_a_mig_pod_is_held_to_the_taint_its_projects_gpu_pods_agree_on(tmp_path: Path) -> None:
    # The GPU pods agree on nvidia.com/gpu=true: a pod asking for a MIG instance of those GPUs
    # lands on the same nodes. Tolerating that taint is enough (it was held to gpulint's
    # default nvidia.com/gpu=present and told its value was wrong); tolerating a taint every
    # cluster's nodes may carry instead is not (one of particular nodes, `dedicated`, would
    # name the pod's own pool).
    true = "      tolerations:\n      - {key: nvidia.com/gpu, operator: Equal, value: 'true'}\n"
    files = {f"{c}.yaml": job(c, true) for c in "ab"}
    mig = job("mig", true).replace("nvidia.com/gpu: 1", "nvidia.com/mig-1g.10gb: 1")
    files["mig.yaml"] = mig
    findings, _ = check(repo(tmp_path, files))
    assert findings == []
    generic = "key: node.kubernetes.io/unreachable,"
    (tmp_path / "mig.yaml").write_text(mig.replace("key: nvidia.com/gpu,", generic))
    findings, _ = check(tmp_path)
    assert seen(findings) == [("mig.yaml", "GPU020", "info")]
    assert "nvidia.com/gpu=true" in said(findings[0])


def test_the_seed_setup_ack_with_its_taint_configured_is_an_error(tmp_path: Path) -> None:
    cgpu = job("cgpu").replace("nvidia.com/gpu: 1", "aliyun.com/gpu-mem: 4")
    root = repo(tmp_path, {"cgpu.yaml": cgpu})
    (root / ".gpulint.yaml").write_text(
        'platform: ack\ngpu-taints: ["nvidia.com/gpu=present:NoSchedule"]\n'
    )
    findings, code = check(root)
    assert seen(findings) == [("cgpu.yaml", "GPU020", "error")] and code == 1
    assert "assumed" not in said(findings[0])


def test_sixteen_gpus_on_an_undescribed_cluster_is_info(tmp_path: Path) -> None:
    big = job("big", "      tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n")
    findings, _ = check(repo(tmp_path, {"big.yaml": big.replace("gpu: 1", "gpu: 16")}))
    assert seen(findings) == [("big.yaml", "GPU040", "info")]
    assert "(assumed: no cluster is described)" in said(findings[0])
    (tmp_path / ".gpulint.yaml").write_text("rules:\n  GPU040: {max_per_node: 8}\n")
    findings, _ = check(tmp_path)
    assert seen(findings) == [("big.yaml", "GPU040", "warning")]


@pytest.mark.parametrize(
    ("text", "taint"),
    [
        ("nvidia.com/gpu=present:NoSchedule", Taint("nvidia.com/gpu", "present", "NoSchedule")),
        ("sku=gpu:NoSchedule", Taint("sku", "gpu", "NoSchedule")),
        ("dedicated:NoExecute", Taint("dedicated", "", "NoExecute")),
        ("nvidia.com/gpu=:PreferNoSchedule", Taint("nvidia.com/gpu", "", "PreferNoSchedule")),
    ],
)
def test_taints_as_kubectl_writes_them(text: str, taint: Taint) -> None:
    assert Taint.from_option(text) == taint


def test_kubectl_taints_in_the_configuration(tmp_path: Path) -> None:
    root = repo(tmp_path, {"train.yaml": job("train", SKU)})
    (root / ".gpulint.yaml").write_text('gpu-taints: ["sku=gpu:NoSchedule"]\n')
    assert check(root) == ([], 0)
    (root / ".gpulint.yaml").write_text('gpu-taints: ["dedicated=ml:NoSchedule"]\n')
    findings, code = check(root)
    assert seen(findings) == [("train.yaml", "GPU020", "error")] and code == 1
    (root / ".gpulint.yaml").write_text('gpu-taints: ["sku gpu"]\n')
    proc = gpulint_in_process("check", ".", cwd=root)
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        'gpulint: error: .gpulint.yaml:1: gpu-taints[0]: "sku gpu" is not allowed: expected a '
        "taint as kubectl writes it"
    )


# -- what the review of unseen repositories found (docs/corpus-review.md) ------------------


def test_a_taint_keyed_by_a_mig_profile_applies_to_that_profile_only(tmp_path: Path) -> None:
    def mig(name: str, profile: str) -> str:
        extra = f"      tolerations:\n      - {{key: nvidia.com/{profile}, operator: Exists}}\n"
        return job(name, extra).replace("nvidia.com/gpu: 1", f"nvidia.com/{profile}: 1")

    files = {f"big-{i}.yaml": mig(f"big-{i}", "mig-4g.96gb") for i in range(3)}
    files["small.yaml"] = mig("small", "mig-2g.48gb")
    findings, _ = check(repo(tmp_path, files))
    # Not held to the 4g pools' taint, nor to the default one: it tolerates its own
    # profile's taint.
    assert seen(findings) == []


def test_evidence_about_other_accelerators_is_no_evidence(tmp_path: Path) -> None:
    neuron = "      tolerations:\n      - {key: aws.amazon.com/neuron, operator: Exists}\n"
    files = {
        f"n-{i}.yaml": job(f"n-{i}", neuron)
        .replace("nvidia.com/gpu", "aws.amazon.com/neuron")
        .replace(CUDA_IMAGE, "public.ecr.aws/neuron/pytorch-training-neuronx:2.7.0")
        for i in range(2)
    }
    files["cuda.yaml"] = job("cuda")
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("cuda.yaml", "GPU020", "info")]


def test_a_tpu_pod_on_gke_is_not_measured_against_nvidias_taint(tmp_path: Path) -> None:
    tpu = job("tpu", "      nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu7x}\n")
    findings, _ = check(
        repo(
            tmp_path,
            {
                "tpu.yaml": tpu.replace("nvidia.com/gpu", "google.com/tpu").replace(
                    CUDA_IMAGE, "us-docker.pkg.dev/cloud-tpu-images/jax-ai-image/tpu:latest"
                )
            },
        )
    )
    assert findings == []
    (tmp_path / ".gpulint.yaml").write_text("platform: gke\n")
    findings, _ = check(tmp_path)
    assert findings == []


def test_gke_queued_provisioning_is_no_gpu_pool_taint(tmp_path: Path) -> None:
    queued = (
        "      tolerations:\n"
        "      - {key: cloud.google.com/gke-queued, operator: Equal, value: 'true'}\n"
    )
    files = {f"q-{i}.yaml": job(f"q-{i}", queued) for i in range(2)}
    files["plain.yaml"] = job("plain")
    findings, _ = check(repo(tmp_path, files))
    assert {f["severity"] for f in findings} == {"info"}


def test_an_eks_auto_mode_node_pool_is_read(tmp_path: Path) -> None:
    pool = NODEPOOL.replace(
        "karpenter.k8s.aws/instance-family", "eks.amazonaws.com/instance-family"
    )
    tolerating = (
        "      tolerations:\n      - {key: nvidia.com/gpu, value: 'true', effect: NoSchedule}\n"
    )
    findings, _ = check(repo(tmp_path, {"pool.yaml": pool, "train.yaml": job("train", tolerating)}))
    assert findings == []


def test_files_that_tolerate_nothing_are_not_parsed_twice() -> None:
    from gpulint.cluster.evidence import Gatherer, Picture
    from gpulint.k8s.devices import builtin_registry
    from gpulint.k8s.workloads import builtin_table

    gatherer = Gatherer(builtin_registry(), builtin_table())
    # A file without tolerations is set aside, not parsed, and nothing asks for its pods.
    assert gatherer.add("a.yaml", job("a").encode()) is True
    assert gatherer.add("cm.yaml", b"kind: ConfigMap\ndata: {a: b}\n") is False
    assert not gatherer.wants_counts()
    assert gatherer.picture() == Picture()
    # Two pods that agree on a taint: the set-aside files' GPU pods now decide.
    for name in ("b", "c"):
        assert gatherer.add(f"{name}.yaml", job(name, SKU).encode()) is False
    assert gatherer.wants_counts()
    gatherer.count("a.yaml", job("a").encode())
    (known,) = gatherer.picture().taints
    assert known.evidence.what == "tolerated by 2 of the 3 GPU pods of this project"


def test_a_pod_bound_to_its_node_is_held_to_no_schedule_taints_of_the_evidence(
    tmp_path: Path,
) -> None:
    files = {f"{c}.yaml": job(c, SKU) for c in "ab"}
    files["bound.yaml"] = job("bound", "      nodeName: gpu-node-1\n")
    findings, _ = check(repo(tmp_path, files))
    assert findings == []  # the kubelet enforces only NoExecute taints on a bound pod


NEURON = Path(__file__).parent / "fixtures/rules/GPU023/fail-neuron-monitor.yaml"
NEURON_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: bert
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2-neuronx-py310-sdk2.20.0
        resources:
          limits:
            aws.amazon.com/neuron: 16
"""
NVIDIA_PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
spec:
  selector:
    matchLabels: {name: nvidia-device-plugin-ds}
  template:
    metadata:
      labels: {name: nvidia-device-plugin-ds}
    spec:
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
        volumeMounts:
        - {name: device-plugin, mountPath: /var/lib/kubelet/device-plugins}
      volumes:
      - {name: device-plugin, hostPath: {path: /var/lib/kubelet/device-plugins}}
"""


def test_the_neuron_device_plugin_s_toleration_is_named_for_the_monitor(
    tmp_path: Path,
) -> None:
    findings, _ = check(repo(tmp_path, {"neuron.yaml": NEURON.read_text()}))
    # Named, but info: the device plugin's manifest tolerates its vendor's default taint
    # whether the nodes carry it or not.
    assert seen(findings) == [("neuron.yaml", "GPU023", "info")]
    (finding,) = findings
    assert "AWS Neuron monitor" in said(finding)
    evidence = "tolerated by the AWS Neuron device plugin DaemonSet of this project"
    assert evidence in said(finding)
    assert [(r["kind"], r["path"], r["line"]) for r in finding["related"]] == [
        ("evidence", "neuron.yaml", 21)
    ]


def test_without_the_device_plugin_the_monitor_s_taint_is_assumed(tmp_path: Path) -> None:
    monitor = NEURON.read_text().split("---\n")[1]
    findings, _ = check(repo(tmp_path, {"monitor.yaml": monitor}))
    assert seen(findings) == [("monitor.yaml", "GPU023", "info")]
    assert "aws.amazon.com/neuron=true:NoSchedule" in said(findings[0])
    assert "(assumed:" in said(findings[0])


def test_a_device_plugin_s_toleration_is_no_evidence_for_a_pod(tmp_path: Path) -> None:
    """Device plugin manifests tolerate their vendor's taint whether the nodes carry it or
    not: a GPU pod is held to it as an assumption only, and the NFD-like agents of every
    vendor and NVIDIA's own are not held to the Neuron evidence."""
    plugin = NEURON.read_text().split("---\n")[0]
    files = {"plugin.yaml": plugin, "bert.yaml": NEURON_JOB, "nvidia.yaml": NVIDIA_PLUGIN}
    findings, _ = check(repo(tmp_path, files))
    assert sorted(seen(findings)) == [
        ("bert.yaml", "GPU020", "info"),
        ("nvidia.yaml", "GPU023", "info"),
    ]
    bert = next(f for f in findings if f["path"] == "bert.yaml")
    assert "aws.amazon.com/neuron=true:NoSchedule" in said(bert)
    assert "(assumed:" in said(bert) and not bert["related"]


def test_two_agents_that_tolerate_the_taint_are_both_named(tmp_path: Path) -> None:
    plugin, monitor, _ = NEURON.read_text().split("---\n")
    dra = plugin.replace("neuron-device-plugin-daemonset", "neuron-dra-driver-kubelet-plugin")
    dra = dra.replace("neuron/neuron-device-plugin:2.22.4.0", "neuron/neuron-dra-driver:1.0")
    files = {"a-dra.yaml": dra, "b-plugin.yaml": plugin, "monitor.yaml": monitor}
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("monitor.yaml", "GPU023", "info")]
    assert (
        "tolerated by 2 node agents of this project (AWS Neuron DRA driver kubelet plugin, AWS "
        "Neuron device plugin): a-dra.yaml:21, b-plugin.yaml:21"
    ) in said(findings[0])


def test_a_cpu_pod_is_not_held_to_a_device_plugin_s_toleration(tmp_path: Path) -> None:
    plugin = NEURON.read_text().split("---\n")[0]
    cpu = job(
        "compile", "      tolerations:\n      - {key: aws.amazon.com/neuron, operator: Exists}\n"
    )
    cpu = cpu.replace("nvidia.com/gpu: 1", "cpu: 4")
    findings, _ = check(repo(tmp_path, {"plugin.yaml": plugin, "compile.yaml": cpu}))
    assert seen(findings) == [("compile.yaml", "GPU021", "info")]
    assert "(assumed:" in said(findings[0])


POOL_OF_ONE_TAINT = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-{i}
spec:
  template:
    spec:
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}}
      taints:
      - {{key: example.com/pool-{i}, value: "true", effect: NoSchedule}}
"""


def test_a_pod_needs_one_pool_of_many(tmp_path: Path) -> None:
    pools = "---\n".join(POOL_OF_ONE_TAINT.format(i=i) for i in range(5))
    tolerating = "      tolerations:\n      - {key: example.com/pool-3, operator: Exists}\n"
    files = {"pools.yaml": pools, "a.yaml": job("a", tolerating), "b.yaml": job("b")}
    findings, _ = check(repo(tmp_path, files))
    # It names no pool: which pool takes it is the cluster's to say (info).
    assert seen(findings) == [("b.yaml", "GPU020", "info")]
    assert "example.com/pool-0=true:NoSchedule" in said(findings[0])


def test_many_pools_and_pods_cost_pools_plus_pods(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each GPU pod may land on every pool: the pools' taints are indexed once, and pods of
    one shape are answered once (it used to test every pool's taints against every known
    taint for every pod: pools x pods x taints)."""
    import gpulint.k8s.taints as taints

    calls = 0
    real = taints.tolerates

    def counted(toleration: Any, taint: Taint) -> bool:
        nonlocal calls
        calls += 1
        return real(toleration, taint)

    monkeypatch.setattr(taints, "tolerates", counted)
    n = 60
    other = "      tolerations:\n      - {key: example.com/other, operator: Exists}\n"
    files = {"pools.yaml": "---\n".join(POOL_OF_ONE_TAINT.format(i=i) for i in range(n))}
    files.update({f"j{i}.yaml": job(f"j{i}", other) for i in range(n)})
    findings, _ = check(repo(tmp_path, files))
    assert len(findings) == n and {f["rule"] for f in findings} == {"GPU020"}
    assert calls <= 2 * n, calls  # n * n * 2 before


DISTINCT_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-{i}
spec:
  template:
    metadata:
      labels: {{team: t{i}}}
    spec:
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}}
      taints:
      - {{key: example.com/pool-{i}, value: "true", effect: NoSchedule}}
      - {{key: example.com/tier, value: t{i}, effect: NoSchedule}}
"""


def distinct_job(i: int, n: int) -> str:
    """A GPU Job unlike every other: a node selector and tolerations of its own."""
    selector = (f"team: t{i}", f"example.com/disk: d{i}", f"karpenter.sh/nodepool: gpu-{i}")[i % 3]
    extra = (
        f"      nodeSelector: {{{selector}}}\n      tolerations:\n"
        f"      - {{key: example.com/other-{i}, operator: Exists}}\n"
        f"      - {{key: example.com/tier, value: t{(i * 7) % n}, effect: NoSchedule}}\n"
    )
    return job(f"j{i}", extra)


def test_distinct_pods_ask_only_the_pools_that_may_take_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No two pods alike, no two pools alike: a pod that selects a pool's label (or its name)
    is weighed against that pool, one that selects a label no pool has against the pools its
    tolerations name and the one it misses fewest taints of, never against every pool (it
    used to be pods x pools)."""
    from gpulint.cluster.known import Agreed

    calls = 0
    real = Agreed.applies

    def counted(self: Agreed, known: Any) -> bool:
        nonlocal calls
        calls += 1
        return real(self, known)

    monkeypatch.setattr(Agreed, "applies", counted)
    n = 90
    files = {"pools.yaml": "---\n".join(DISTINCT_POOL.format(i=i) for i in range(n))}
    files.update({f"j{i}.yaml": distinct_job(i, n) for i in range(n)})
    findings, _ = check(repo(tmp_path, files))
    by_file = {f["path"]: said(f) for f in findings}
    assert len(findings) == n and {f["rule"] for f in findings} == {"GPU020"}
    # Its own pool, by label (j3) or by name (j2), even when another would be fewer taints.
    assert (
        "taint example.com/pool-3=true:NoSchedule" in by_file["j3.yaml"]
        and "(a taint of" in by_file["j3.yaml"]
    )
    assert (
        "taint example.com/pool-2=true:NoSchedule" in by_file["j2.yaml"]
        and "(a taint of" in by_file["j2.yaml"]
    )
    # Any pool (j4): the first one it misses fewest taints of (pool 0 has two the files
    # know: its own, and the tier taint, whose key is known from it).
    assert (
        "taint example.com/pool-1=true:NoSchedule" in by_file["j4.yaml"]
        and "(" in by_file["j4.yaml"]
    )
    assert calls <= 12 * n, calls  # about 2 * n * n before


def test_a_pod_the_indexes_cannot_narrow_past_the_budget_is_not_held_to_pool_taints(
    tmp_path: Path,
) -> None:
    """A pod whose selector rules out pool after pool one at a time (each pool labelled with
    a zone of its own, one pool with none): past the pools a pod's question may examine
    (POOL_BUDGET), the pools' taints are no evidence for it, and what is assumed is info."""
    n = 600  # POOL_BUDGET (512) and more
    zoned = DISTINCT_POOL.replace("labels: {{team: t{i}}}", "labels: {{zone: z{i}}}")
    pools = [zoned.format(i=i) for i in range(n)] + [POOL_OF_ONE_TAINT.format(i="last")]
    selector = "      nodeSelector: {zone: elsewhere}\n"
    files = {"pools.yaml": "---\n".join(pools), "a.yaml": job("a", selector)}
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("a.yaml", "GPU020", "info")]
    assert "example.com/pool-last" not in said(findings[0])


AGENT = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent-{i}
spec:
  selector: {{matchLabels: {{app: agent-{i}}}}}
  template:
    metadata: {{labels: {{app: agent-{i}}}}}
    spec:
      tolerations:
      - {{key: example.com/pool-{i}, operator: Exists}}
      containers:
      - name: dcgm-exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
"""


def test_many_agents_and_pool_taints_cost_agents_plus_taints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """n node agents, each tolerating one of n pools' taints: each is told the first taints
    it misses and how many more (the list of every taint made the output agents x taints),
    found through the taints' index by key (every taint was tested against every agent)."""
    import gpulint.k8s.taints as taints

    calls = 0
    real = taints.tolerates

    def counted(toleration: Any, taint: Taint) -> bool:
        nonlocal calls
        calls += 1
        return real(toleration, taint)

    monkeypatch.setattr(taints, "tolerates", counted)
    n = 60
    files = {"pools.yaml": "---\n".join(POOL_OF_ONE_TAINT.format(i=i) for i in range(n))}
    files.update({f"agent{i}.yaml": AGENT.format(i=i) for i in range(n)})
    findings, _ = check(repo(tmp_path, files))
    assert len(findings) == n and {f["rule"] for f in findings} == {"GPU023"}
    first = next(said(f) for f in findings if f["path"] == "agent0.yaml")
    # The message names the first taint it misses and how many more.
    assert f"GPU node taint example.com/pool-1=true:NoSchedule and {n - 2} more; " in first
    assert "example.com/pool-0=" not in first  # the one it tolerates
    assert calls <= 4 * n, calls  # about n * n before


TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
"""


def dra_pod(name: str, extra: str = "") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\nspec:\n"
        + extra.replace("      ", "  ")
        + "  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: one-gpu\n"
        "  containers:\n  - name: train\n    image: nvcr.io/nvidia/pytorch:24.05-py3\n"
        "    resources:\n      claims:\n      - name: gpu\n"
    )


def test_pods_whose_claim_template_is_in_another_file_count_in_the_consensus(
    tmp_path: Path,
) -> None:
    # Three pods get their GPU through a template of claims.yaml and tolerate sku=gpu: the
    # fourth GPU pod that does not is a warning, whichever of the project's files the run got.
    files = {f"train-{c}.yaml": dra_pod(f"train-{c}", SKU) for c in "abc"}
    files["claims.yaml"] = TEMPLATE
    files["train-d.yaml"] = job("train-d")
    root = repo(tmp_path, files)
    findings, code = check(root)
    assert seen(findings) == [("train-d.yaml", "GPU020", "warning")] and code == 0
    assert "tolerated by 3 of the 4 GPU pods of this project" in said(findings[0])
    alone, _ = check(root, "--no-cache")
    assert alone == findings
    proc = gpulint_in_process("check", "-f", "json", "train-d.yaml", cwd=root)
    assert json.loads(proc.stdout)["findings"] == findings
    # A pod of a claim the project does not define is not counted as a GPU pod.
    (root / "claims.yaml").unlink()
    findings, _ = check(root)
    assert [f["severity"] for f in findings if f["path"] == "train-d.yaml"] == ["info"]


def test_a_dra_pod_that_misses_the_agreed_taint_is_judged_with_the_project_s_template(
    tmp_path: Path,
) -> None:
    files = {f"train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["claims.yaml"] = TEMPLATE
    files["dra.yaml"] = dra_pod("dra")
    files["web.yaml"] = dra_pod("web", SKU).replace("one-gpu", "no-such-template")
    findings, code = check(repo(tmp_path, files))
    # dra.yaml's pod gets a GPU through claims.yaml's template (GPU020); web.yaml's claim is
    # of a template nobody defines (GPU062's info), so it is no CPU pod for GPU021.
    assert ("dra.yaml", "GPU020", "warning") in seen(findings) and code == 0
    assert not [f for f in findings if f["rule"] == "GPU021"]


RUNTIME_CLASS = """\
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
scheduling:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
"""


def test_a_runtime_class_of_the_project_gives_its_pods_its_tolerations(tmp_path: Path) -> None:
    """Admission merges the RuntimeClass's scheduling.tolerations into each pod that names
    it: the RuntimeClass in one file, the pods in others (one project)."""
    named = "      runtimeClassName: nvidia\n"
    other = "      runtimeClassName: kata\n"
    root = repo(
        tmp_path,
        {"runtime.yaml": RUNTIME_CLASS, "a.yaml": job("a", named), "b.yaml": job("b", other)},
    )
    findings, _ = check(root)
    assert seen(findings) == [("b.yaml", "GPU020", "info")]


ARC_VALUES = """\
githubConfigUrl: https://github.com/example/gpu-ci
runnerScaleSetName: gpu-runners
template:
  spec:
    nodeSelector:
      nvidia.com/gpu: "true"
    tolerations:
    - {key: nvidia.com/gpu, operator: Equal, value: "true", effect: NoSchedule}
    containers:
    - name: runner
      image: ghcr.io/actions/actions-runner:2.321.0
      command: ["/home/runner/run.sh"]
      resources:
        limits:
          nvidia.com/gpu: 1
"""

T4_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-t4-runners
spec:
  template:
    metadata:
      labels: {nvidia.com/gpu: "true"}
    spec:
      requirements:
      - {key: node.kubernetes.io/instance-type, operator: In, values: [g4dn.xlarge]}
      taints:
      - {key: nvidia.com/gpu, value: t4, effect: NoSchedule}
"""

PLUGIN_EXISTS = NVIDIA_PLUGIN.replace(
    "    spec:\n      containers:",
    "    spec:\n      tolerations:\n"
    "      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n      containers:",
)


def test_a_runner_scale_sets_values_are_its_runner_pods_and_the_pools_taint_wins(
    tmp_path: Path,
) -> None:
    """gha-runner-scale-set's values are read as the runner pods they template; a device
    plugin's `Exists` toleration names the key, the NodePool the value: the pool's wins."""
    files = {"values.yaml": ARC_VALUES, "pool.yaml": T4_POOL, "plugin.yaml": PLUGIN_EXISTS}
    findings, _ = check(repo(tmp_path, files))
    assert seen(findings) == [("values.yaml", "GPU020", "info")]
    assert "nvidia.com/gpu=t4:NoSchedule" in findings[0]["message"]
    assert "in this project's files: pool.yaml:1" in said(findings[0])
    text = gpulint_in_process("inspect", "values.yaml", cwd=tmp_path).stdout
    assert "values.yaml:1:1: a chart's values (pod specs found by shape)" in text


def test_a_gpu_pools_taint_holds_only_its_vendors_node_agents(tmp_path: Path) -> None:
    """An NVIDIA pool's `nvidia.com/gpu` taint is no taint a Neuron device plugin must
    tolerate: the plugin runs on Neuron nodes, which that pool does not make."""
    neuron_plugin = NEURON.read_text().split("---\n")[0]
    files = {"pool.yaml": T4_POOL, "nvidia.yaml": PLUGIN_EXISTS, "neuron.yaml": neuron_plugin}
    findings, _ = check(repo(tmp_path, files))
    assert [f for f in findings if f["path"] == "neuron.yaml"] == []
