"""A rule that raises is a tool error that names the rule and the object, never a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import ROOT, gpulint_cmd

BROKEN_RULE = '''"""A rule with a bug.

## What it does
Raises.
## Why it matters
It tests the engine.
## Example
Any pod.
## Use instead
Nothing.
## Options
None.
## References
None.
"""

CODE = "BUG001"
NAME = "buggy-rule"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}


def check(pod, ctx):
    raise KeyError("no such key")
    yield
'''


def test_a_rule_that_raises_exits_2_naming_rule_and_object(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "buggy.py").write_text(BROKEN_RULE, encoding="utf-8")
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [rules]\n", encoding="utf-8")
    manifest = (ROOT / "examples" / "good-training-job.yaml").read_text(encoding="utf-8")
    (tmp_path / "job.yaml").write_text(manifest, encoding="utf-8")
    proc = subprocess.run(
        [*gpulint_cmd(), "check", "--allow-plugins", "job.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("gpulint: error: rule BUG001 (")
    assert "job.yaml, Job/bert-finetune: KeyError: 'no such key'" in line
