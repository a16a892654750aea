"""GPU041 reads an engine's parallelism from command lines as a shell and argparse would."""

from __future__ import annotations

import pytest
from hypothesis import example, given, strategies as st

from gpulint.k8s.objects import Container
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from tests.conftest import said

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
    return [said(f) for f in linter.lint_bytes("pod.yaml", text.encode())]


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
        '    args: ["--tensor-parallel-size", "4", "--nnodes=2"]',
        '    args: ["--tensor-parallel-size", "8", "--nnodes", "$(NODES)"]',
        "    command: [sh, -c, 'bash multi-node-serving.sh leader; vllm serve m -tp 8']",
        '    args: ["--tensor-parallel-size", "8", "--headless"]',
    ],
)
def test_unknown_or_multi_node_parallelism_is_left_alone(fields: str) -> None:
    assert _gpu041("vllm/vllm-openai:v0.6.3", fields) == []


def test_nodes_multiply_the_gpus() -> None:
    (message,) = _gpu041("vllm/vllm-openai:v0.6.3", '    args: ["-tp", "8", "--nnodes=2"]')
    assert "requests 2 GPUs on each of 2 nodes, 4 GPUs in all" in message
    assert "request 4 GPUs on each node, or lower the parallelism to 4" in message


def test_an_unbalanced_quote_falls_back_to_whitespace() -> None:
    fields = "    command: [sh, -c, 'vllm serve \"m --tensor-parallel-size 4']"
    assert len(_gpu041("vllm/vllm-openai:v0.6.3", fields)) == 1


def test_a_comment_in_the_script_is_not_read() -> None:
    fields = "    command: [sh, -c, 'vllm serve m --tensor-parallel-size 2 # was 8 \"before']"
    assert _gpu041("vllm/vllm-openai:v0.6.3", fields) == []


def test_other_programs_are_not_engines() -> None:
    fields = '    args: ["--tp", "8", "--num-shard", "8"]'
    assert _gpu041("nvcr.io/nvidia/pytorch:24.05-py3", fields) == []


# Words of command lines: engine names and flags cut up by quotes, escapes, variables
# and shell punctuation, so the prefilter meets what a shell would glue back together.
_WORDS = "vl lm vllm sg lang sglang text-generation- launcher --tensor- parallel-size =4 serve"
_PIECES = st.sampled_from(
    [*_WORDS.split(), " ", "\n", "\\\n", "'", '"', "\\", "$(V)", "${V}", "$V", "#", ";", "/", "."]
)
_ITEMS = st.lists(st.lists(_PIECES, max_size=6).map("".join), max_size=4)


@given(_ITEMS, _ITEMS, st.sampled_from(["", "vl", "lm", "vllm", "sglang --tp 2"]))
@example(["sh", "-c", 'v"ll"m serve m'], [], "")
@example(["sh", "-c", "v\\llm serve m"], [], "")
@example(["sh", "-c", "exec $V serve m"], [], "vl'lm'")
@example([], ["--tensor-'parallel'-size", "4"], "")
def test_the_engine_prefilter_never_hides_an_engine(
    command: list[str], args: list[str], variable: str
) -> None:
    """``may_start_engine`` only skips command lines in which ``find_engine`` finds nothing."""
    data = {
        "name": "c",
        "image": "busybox",
        "command": command,
        "args": args,
        "env": [{"name": "V", "value": variable}],
    }
    container = Container("c", ("spec", "containers", 0), data, "containers")
    from gpulint.k8s import engines

    env = engines.literal_env(container)
    if engines.find_engine(container, engines.command_words(container, env)) is not None:
        assert engines.may_start_engine(container)
