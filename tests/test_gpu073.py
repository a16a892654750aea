"""GPU073: an item of ``command`` or ``args`` written over several lines, which YAML reads
as one word -- in the shapes a fixture's ``# expect:`` comment cannot show (a file with CRLF
line breaks, a file the facts stage reads before the lint) and the scripts left alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import Finding
from tests.conftest import gpulint_in_process

RULES = load_rules()

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: serve
spec:
  tolerations:
  - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
  containers:
  - name: engine
    image: vllm/vllm-openai:v0.8.5
{body}    resources:
      limits:
        nvidia.com/gpu: 1
"""


def lint(body: str, newline: str = "\n") -> list[Finding]:
    text = POD.format(body=body).replace("\n", newline)
    linter = Linter(RULES)
    return [f for f in linter.lint_bytes("pod.yaml", text.encode()) if f.rule == "GPU073"]


def test_an_option_and_a_shell_command_on_the_lines_below_it() -> None:
    body = (
        "    command:\n"
        "    - vllm\n"
        "    - serve\n"
        "    - --tensor-parallel-size=1\n"
        "      echo started; sleep infinity\n"
    )
    for newline in ("\n", "\r\n"):
        (found,) = lint(body, newline)
        assert (found.line, found.column, found.severity.label) == (14, 7, "warning")
        assert "command[2] spans 2 lines" in found.message
        assert "'--tensor-parallel-size=1 echo started...'" in found.message


@pytest.mark.parametrize(
    "body",
    [
        # a shell's script, after its -c (or -lc) in command or first in args
        "    command: [/bin/bash, -lc]\n    args:\n    - vllm serve m\n      --port 8000\n",
        "    command:\n    - sh\n    - -c\n    - vllm serve m\n      --port 8000\n",
        '    command: ["/bin/bash", "-c", "--"]\n'
        '    args:\n    - "vllm serve m &&\n      sleep 1"\n',
        # an interpreter's code
        "    command:\n    - python3\n    - -c\n    - import vllm;\n      print(1)\n",
        # blocks: written over several lines on purpose
        "    command:\n    - /app/run\n    - >-\n      --a=1\n      --b=2\n",
        "    command:\n    - /app/run\n    - |\n      x\n      y\n",
        # one line each
        "    command: [vllm, serve, m]\n    args:\n    - --port=8000\n",
    ],
)
def test_scripts_blocks_and_single_lines_are_left_alone(body: str) -> None:
    assert lint(body) == []


def test_args_without_command_are_info() -> None:
    (found,) = lint("    args:\n    - --model=m\n      --port=8000\n")
    assert found.severity.label == "info"
    assert "assumed: the entrypoint is no shell" in found.message


def test_a_file_the_facts_stage_read_first(tmp_path: Path) -> None:
    """A GPU pod's file is parsed once, by the facts stage, and handed to the lint: the
    items written over several lines go with its documents."""
    body = "    command:\n    - /usr/bin/vllm\n     - serve\n"
    (tmp_path / "pod.yaml").write_text(POD.format(body=body), encoding="utf-8")
    result = gpulint_in_process("check", "--no-cache", "-f", "json", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "GPU073"]
    assert [(f["line"], f["severity"]) for f in found] == [(12, "error")]


def test_one_text_over_two_lines_is_info() -> None:
    """A prompt written over two lines may be one argument on purpose: no option or shell
    operator among its words."""
    body = (
        "    command:\n"
        "    - /app/chat\n"
        "    - --system-prompt\n"
        '    - "You are a helpful assistant\n'
        '      that answers briefly"\n'
    )
    (found,) = lint(body)
    assert found.severity.label == "info"
    assert "assumed: the lines were meant as one text" in found.message
