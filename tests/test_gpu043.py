"""GPU043's opt-in half: a CUDA image in a pod that requests no GPU (option `images`)."""

from __future__ import annotations

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.settings import Settings

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
