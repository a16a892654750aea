"""GPU070: a backslash that ends a script's line but for the spaces after it, which no
fixture's line can hold with its ``# expect:`` comment (the comment would follow them)."""

from __future__ import annotations

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import Finding

RULES = load_rules()

JOB = (
    "apiVersion: batch/v1\n"
    "kind: Job\n"
    "metadata: {{name: train}}\n"
    "spec:\n"
    "  template:\n"
    "    spec:\n"
    "      restartPolicy: Never\n"
    "      containers:\n"
    "        - name: trainer\n"
    "          image: pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime\n"
    '          command: ["/bin/bash", "-c"]\n'
    "          args:\n"
    "            - |\n"
    "              pip3 install -r requirements.txt && \\{gap}\n"
    "              python3 train.py\n"
    "          resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
)


def lint(text: str) -> list[Finding]:
    linter = Linter(RULES)
    return [f for f in linter.lint_bytes("job.yaml", text.encode()) if f.rule == "GPU070"]


@pytest.mark.parametrize(("gap", "what"), [(" ", "a space"), ("\t", "a tab"), ("  ", "spaces")])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_backslash_and_spaces_at_the_end_of_a_line(gap: str, what: str, newline: str) -> None:
    (found,) = lint(JOB.format(gap=gap).replace("\n", newline))
    assert (found.line, found.column) == (14, 51)
    assert f"has {what} after its backslash" in found.message


def test_a_backslash_that_ends_the_line_continues_it() -> None:
    assert lint(JOB.format(gap="")) == []


def test_the_script_after_the_end_of_a_shells_options() -> None:
    """``[/bin/bash, -c, --]`` and the script in ``args``: ``--`` ends the shell's options."""
    text = JOB.format(gap=" ").replace('["/bin/bash", "-c"]', '["/bin/bash", "-c", "--"]')
    (found,) = lint(text)
    assert found.line == 14
