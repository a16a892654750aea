"""GPU043's opt-in half: a CUDA image in a pod that requests no GPU (option `images`)."""

from __future__ import annotations

from pathlib import Path

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.settings import Settings
from tests.conftest import gpulint_in_process

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: preprocess
  {annotations}
spec:
  containers:
  - name: prep
    image: nvcr.io/nvidia/pytorch:24.05-py3
    {env}
"""


def _lines(images: bool, annotations: str = "", env: str = "") -> list[int]:
    rules = [r for r in load_rules() if r.code == "GPU043"]
    linter = Linter(rules, Settings(options={"GPU043": {"images": images}}))
    text = POD.format(annotations=annotations, env=env)
    return [f.line for f in linter.lint_text("pod.yaml", text)]


def test_a_cuda_image_without_a_gpu_is_flagged_only_when_asked() -> None:
    assert _lines(images=False) == []
    assert _lines(images=True) == [9]


def test_hidden_gpus_and_kai_fractions_are_not_flagged() -> None:
    env = "env: [{name: NVIDIA_VISIBLE_DEVICES, value: none}]"
    assert _lines(images=True, env=env) == []
    assert _lines(images=True, annotations="annotations: {gpu-fraction: '0.5'}") == []


NIM = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: nemotron
spec:
  selector:
    matchLabels: {app: nemotron}
  template:
    metadata:
      labels: {app: nemotron}
    spec:
      nodeSelector:
        node-type: gpu-inference
      tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
      containers:
      - name: nim
        image: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4
"""

CLUSTER = """\
node-pools:
  - name: gpu-inference
    instance-type: g5.xlarge
    gpus: {gpus}
    labels: {{node-type: gpu-inference}}
    taints: [{{key: nvidia.com/gpu, value: present, effect: NoSchedule}}]
"""


def test_a_selector_of_a_described_gpu_pool_selects_gpu_nodes(tmp_path: Path) -> None:
    """With the cluster described in the configuration, the node selector that picks its GPU
    pool is a GPU selector (GPU043 warns, naming the pool) and the toleration is no CPU pod's
    (no GPU021); a pool of the same label without GPUs selects no GPU node."""
    (tmp_path / "nim.yaml").write_text(NIM)
    for gpus, expected in ((1, True), (0, False)):
        (tmp_path / ".gpulint.yaml").write_text(CLUSTER.format(gpus=gpus))
        out = gpulint_in_process("check", "--select", "GPU043,GPU021", ".", cwd=tmp_path).stdout
        assert ("GPU043 warning" in out and "of gpu-inference" in out) is expected, out
        assert "GPU021" not in out or not expected, out
