"""Node pools written in Terraform (gpulint/cluster/terraform.py): the node groups, node pools
and Karpenter NodePools of a project's ``*.tf`` files are its pools as its YAML ones are, what
Terraform computes is left out, and a hostile file adds nothing without hanging or crashing."""

from __future__ import annotations

from pathlib import Path

from gpulint.cluster.objects import Found, scan
from gpulint.cluster.terraform import MAX_FILE_BYTES, depth
from gpulint.k8s.taints import Taint
from tests.conftest import gpulint_in_process, said
from tests.test_cluster_evidence import check, job, repo, seen

GPU = Taint("nvidia.com/gpu", "true", "NoSchedule")


def pools(*files: tuple[str, str]) -> Found:
    return scan([], terraform=[(label, text.encode()) for label, text in files])


def test_an_eks_node_group_resource_with_a_taint_block() -> None:
    found = pools(
        (
            "infra/nodes.tf",
            """\
resource "aws_eks_node_group" "gpu" {
  cluster_name    = aws_eks_cluster.main.name
  node_group_name = "gpu-nodes"
  instance_types  = ["g5.xlarge"]
  labels = { "workload" = "gpu" }

  taint {
    key    = "nvidia.com/gpu"
    value  = "true"
    effect = "NO_SCHEDULE"
  }
}
""",
        )
    )
    (pool,) = found.pools
    assert (pool.name, pool.taints, pool.instance_types, pool.gpus) == (
        "gpu-nodes",
        (GPU,),
        ("g5.xlarge",),
        1,
    )
    assert pool.source == "infra/nodes.tf:1" and pool.platform == "eks"
    assert pool.labels == {"workload": "gpu"}


def test_the_eks_modules_node_groups_by_key_with_taints_from_the_folders_locals() -> None:
    found = pools(
        (
            "tf/locals.tf",
            'locals {\n  gpu_taints = { gpu = { key = "nvidia.com/gpu", value = "true",'
            ' effect = "NO_SCHEDULE" } }\n}\n',
        ),
        (
            "tf/eks.tf",
            """\
module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"

  eks_managed_node_groups = {
    core = {
      instance_types = ["m5.xlarge"]
    }
    gpu = {
      name           = "h100"
      instance_types = ["p5.48xlarge"]
      taints         = local.gpu_taints
    }
  }
}
""",
        ),
        # Another folder is another Terraform module: its locals are not this one's.
        ("other/locals.tf", 'locals {\n  gpu_taints = "elsewhere"\n}\n'),
    )
    by_name = {p.name: p for p in found.pools}
    assert set(by_name) == {"core", "h100"}
    assert by_name["h100"].taints == (GPU,) and by_name["h100"].gpus == 8
    assert by_name["core"].taints == () and by_name["core"].gpus == 0
    # Each pool is cited where its key is written.
    assert (by_name["core"].source, by_name["h100"].source) == ("tf/eks.tf:6", "tf/eks.tf:9")


def test_gke_and_aks_pools() -> None:
    found = pools(
        (
            "gke.tf",
            """\
resource "google_container_node_pool" "t4" {
  name = "t4-pool"
  node_config {
    machine_type = "n1-standard-8"
    guest_accelerator {
      type  = "nvidia-tesla-t4"
      count = 2
    }
    taint {
      key    = "dedicated"
      value  = "gpu"
      effect = "NO_SCHEDULE"
    }
  }
}

resource "google_container_cluster" "main" {
  name = "main"
  node_pool {
    name = "default"
  }
  node_pool {
    name = "l4"
    node_config {
      machine_type = "g2-standard-8"
    }
  }
}
""",
        ),
        (
            "aks.tf",
            """\
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name        = "gpu"
  vm_size     = "Standard_NC24ads_A100_v4"
  node_taints = ["sku=gpu:NoSchedule"]
}
""",
        ),
    )
    by_name = {p.name: p for p in found.pools}
    t4 = by_name["t4-pool"]
    assert t4.taints == (Taint("dedicated", "gpu", "NoSchedule"),) and t4.gpus == 2
    assert t4.labels["cloud.google.com/gke-nodepool"] == "t4-pool" and t4.platform == "gke"
    assert by_name["default"].gpus == 0 and by_name["l4"].gpus == 1
    gpu = by_name["gpu"]
    assert gpu.taints == (Taint("sku", "gpu", "NoSchedule"),) and gpu.gpus == 1
    assert gpu.platform == "aks"


def test_karpenter_node_pools_applied_through_terraform_are_read_as_objects() -> None:
    found = pools(
        (
            "karpenter.tf",
            """\
resource "kubectl_manifest" "gpu" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: gpu
    spec:
      template:
        spec:
          requirements:
            - key: karpenter.k8s.aws/instance-family
              operator: In
              values: ["g6"]
          taints:
            - key: nvidia.com/gpu
              value: "true"
              effect: NoSchedule
  YAML
}

resource "kubernetes_manifest" "inf" {
  manifest = {
    apiVersion = "karpenter.sh/v1"
    kind       = "NodePool"
    metadata   = { name = "neuron" }
    spec = { template = { spec = {
      taints = [{ key = "aws.amazon.com/neuron", effect = "NoSchedule" }]
    } } }
  }
}
""",
        )
    )
    by_name = {p.name: p for p in found.pools}
    assert by_name["gpu"].taints == (GPU,) and by_name["gpu"].gpus >= 1
    assert by_name["gpu"].source == "karpenter.tf:1"
    assert by_name["neuron"].taints == (Taint("aws.amazon.com/neuron", "", "NoSchedule"),)


def test_what_terraform_computes_is_left_out() -> None:
    found = pools(
        (
            "nodes.tf",
            """\
resource "aws_eks_node_group" "gpu" {
  node_group_name = "${var.prefix}-gpu"
  instance_types  = var.gpu_instance_types
  taint {
    key    = var.taint_key
    value  = "true"
    effect = "NO_SCHEDULE"
  }
  taint {
    key    = "dedicated"
    value  = "gpu-${var.env}"
    effect = "NO_SCHEDULE"
  }
}
""",
        )
    )
    (pool,) = found.pools
    assert pool.name == "gpu"  # the resource's own name when its node group's is computed
    assert pool.instance_types == () and pool.taints == (Taint("dedicated", "", "NoSchedule"),)


def test_brackets_in_strings_comments_and_heredocs_do_not_count_as_nesting() -> None:
    text = (
        'a = "}}}}]]]]"  # ))))\n/* }}}} */\nb = <<EOF\n}}}}\nEOF\n'
        + "c = " + "[" * 30 + "]" * 30 + "\n"
        + 'd = "${[[1]]}"\n'
    )  # fmt: skip
    assert depth(text) == 30


def test_hostile_terraform_adds_nothing_and_never_hangs() -> None:
    taint = 'resource "aws_eks_node_group" "x" {\n  taint {\n    key = "k"\n  }\n}\n'
    deep = taint + "x = " + "[" * 50_000 + "]" * 50_000 + "\n"
    # A closing bracket hidden in a string cannot hide nesting from the count.
    hidden = taint + 'y = "' + "]" * 5_000 + '"\nx = ' + "[" * 5_000 + "]" * 5_000 + "\n"
    broken = taint + "resource {{{\n"
    big = taint + "# " + "x" * MAX_FILE_BYTES + "\n"
    binary = taint.encode() + b"\0\xff\xfe"
    files = [("deep.tf", deep), ("hidden.tf", hidden), ("broken.tf", broken), ("big.tf", big)]
    found = scan([], terraform=[(n, t.encode()) for n, t in files] + [("bin.tf", binary)])
    assert found.pools == ()


def test_a_gpu_pod_missing_the_terraform_node_groups_taint(tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        {
            "nodes.tf": (
                'resource "aws_eks_node_group" "gpu" {\n  node_group_name = "gpu"\n'
                '  instance_types = ["g5.2xlarge"]\n'
                '  taint {\n    key = "nvidia.com/gpu"\n    value = "true"\n'
                '    effect = "NO_SCHEDULE"\n  }\n}\n'
            ),
            "train.yaml": job("train"),
        },
    )
    findings, code = check(root, "--no-cache")
    assert seen(findings) == [("train.yaml", "GPU020", "info")] and code == 0
    assert "Terraform aws_eks_node_group gpu in this project's files: nodes.tf:1" in said(
        findings[0]
    )


def test_terraforms_own_downloads_are_not_the_projects(tmp_path: Path) -> None:
    module = tmp_path / ".terraform" / "modules" / "eks"
    module.mkdir(parents=True)
    (module / "nodes.tf").write_text(
        'resource "aws_eks_node_group" "gpu" {\n  taint {\n    key = "vendored"\n'
        '    effect = "NO_SCHEDULE"\n  }\n  instance_types = ["g5.xlarge"]\n}\n'
    )
    root = repo(tmp_path, {"train.yaml": job("train")})
    findings, _ = check(root, "--no-cache")
    assert seen(findings) == [("train.yaml", "GPU020", "info")]
    assert "vendored" not in said(findings[0])


def test_a_changed_terraform_file_changes_the_next_runs_verdict(tmp_path: Path) -> None:
    tf = (
        'resource "aws_eks_node_group" "gpu" {\n  node_group_name = "gpu"\n'
        '  instance_types = ["g5.2xlarge"]\n  taint {\n    key = "%s"\n'
        '    effect = "NO_SCHEDULE"\n  }\n}\n'
    )
    root = repo(tmp_path, {"nodes.tf": tf % "team-a", "train.yaml": job("train")})
    first, _ = check(root)
    (root / "nodes.tf").write_text(tf % "team-b")
    second, _ = check(root)
    assert "team-a" in said(first[0]) and "team-b" in said(second[0])


def test_inspect_shows_the_terraform_pools(tmp_path: Path) -> None:
    root = repo(
        tmp_path,
        {
            "aks.tf": (
                'resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  name = "gpu"\n'
                '  vm_size = "Standard_NC24ads_A100_v4"\n'
                '  node_taints = ["sku=gpu:NoSchedule"]\n}\n'
            ),
            "train.yaml": job("train"),
        },
    )
    proc = gpulint_in_process("inspect", ".", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "Terraform azurerm_kubernetes_cluster_node_pool gpu" in proc.stdout
    assert "aks.tf:1" in proc.stdout
