"""GPU041 reads an engine's parallelism from command lines as a shell and argparse would."""

from __future__ import annotations

import pytest

from gpulint.engine import Linter
from gpulint.plugins import load_rules

POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: engine}}
spec:
  tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]
  containers:
  - name: server
    image: {image}
{fields}
    resources:
      limits: {{nvidia.com/gpu: {gpus}}}
"""


def _gpu041(image: str, fields: str, gpus: int = 2) -> list[str]:
    text = POD.format(image=image, fields=fields, gpus=gpus)
    linter = Linter([r for r in load_rules() if r.code == "GPU041"])
    return [f.message for f in linter.lint_bytes("pod.yaml", text.encode())]


@pytest.mark.parametrize(
    "fields",
    [
        '    args: ["--model", "m", "--tensor-parallel-size", "4"]',
        '    args: ["--model=m", "--tensor-parallel-size=4"]',
        '    args: ["--model", "m", "-tp", "2", "-pp", "2"]',
        '    command: ["bash", "-c", "exec vllm serve m --tensor-parallel-size \'4\'"]',
        "    command: [sh, -c]\n    args:\n    - |\n      vllm serve m \\\n"
        "        --tensor-parallel-size 4",
        "    env: [{name: TP, value: '4'}]\n    args: [--model, m, --tensor-parallel-size, $(TP)]",
        "    command: [sh, -c, 'vllm serve m --tensor-parallel-size ${TP}']\n"
        "    env: [{name: TP, value: '4'}]",
        '    args: ["--tensor-parallel-size", "1", "--tensor-parallel-size", "4"]',
    ],
)
def test_parallelism_is_read(fields: str) -> None:
    (message,) = _gpu041("vllm/vllm-openai:v0.6.3", fields)
    assert "= 4 GPUs, but requests 2 GPUs" in message


@pytest.mark.parametrize(
    "fields",
    [
        '    args: ["--tensor-parallel-size", "2"]',
        '    args: ["--tensor-parallel-size", "4", "--tensor-parallel-size", "2"]',
        '    args: ["--tensor-parallel-size", "$(TP)"]',
        "    command: [sh, -c, 'vllm serve m --tensor-parallel-size \"$TP\"']",
        "    command: [sh, -c, 'ray start --head && vllm serve m --tensor-parallel-size 8']",
        '    args: ["--tensor-parallel-size", "8", "--nnodes=2"]',
    ],
)
def test_unknown_or_multi_node_parallelism_is_left_alone(fields: str) -> None:
    assert _gpu041("vllm/vllm-openai:v0.6.3", fields) == []


def test_an_unbalanced_quote_falls_back_to_whitespace() -> None:
    fields = "    command: [sh, -c, 'vllm serve \"m --tensor-parallel-size 4']"
    assert len(_gpu041("vllm/vllm-openai:v0.6.3", fields)) == 1


def test_a_comment_in_the_script_is_not_read() -> None:
    fields = "    command: [sh, -c, 'vllm serve m --tensor-parallel-size 2 # was 8 \"before']"
    assert _gpu041("vllm/vllm-openai:v0.6.3", fields) == []


def test_other_programs_are_not_engines() -> None:
    fields = '    args: ["--tp", "8", "--num-shard", "8"]'
    assert _gpu041("nvcr.io/nvidia/pytorch:24.05-py3", fields) == []
