"""Fixtures whose findings rest on a project's facts (tests/fixtures/projects/<name>/): each
folder is copied into a repository of its own and linted whole, with no configuration, as a
first run sees it; its findings must be exactly those written next to the lines
(``# expect: CODE:column``), and a folder whose name has ``-pass-`` or ends in ``-pass``
expects none. A file may say how loud its findings of a rule are (``# severities: GPU020
info``): how sure a finding is depends on the project's facts too. Rule fixtures
(tests/fixtures/rules) are linted one file at a time, with no
project around them: what the GPU pods of a project agree on, or what an operator in the
project creates, is shown here."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, expectation_list, gpulint_in_process
from tests.test_snapshots import MAX_MESSAGE, NOT_YET_SHORT

_SEVERITIES = re.compile(r"^#\s*severities:\s*(?P<pairs>.+?)\s*$", re.MULTILINE)

PROJECTS = sorted(p for p in (FIXTURES / "projects").iterdir() if p.is_dir())


@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_project_fixture(project: Path, tmp_path: Path) -> None:
    root = tmp_path / project.name
    shutil.copytree(project, root)
    (root / ".git").mkdir()
    want: Counter[tuple[str, int, str, int | None]] = Counter()
    loud: dict[tuple[str, str], str] = {}
    written = (".yaml", ".yml", ".md")  # a Markdown file's examples carry theirs too
    for path in sorted(p for p in project.rglob("*") if p.suffix in written):
        label = path.relative_to(project).as_posix()
        for match in _SEVERITIES.finditer(path.read_text(encoding="utf-8")):
            for pair in match.group("pairs").split(","):
                code, severity = pair.split()
                loud[(label, code)] = severity
        for line, code, column in expectation_list(path.read_text(encoding="utf-8")):
            want[(label, line, code, column)] += 1
    if project.name.endswith("-pass") or "-pass-" in project.name:
        assert not want, "a passing project carries no expectations"
    else:
        assert want, "a failing project expects at least one finding"
    proc = gpulint_in_process("check", "-f", "json", "--no-cache", ".", cwd=root)
    assert proc.returncode in (0, 1), proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    # A column written next to the line is checked; without one any column will do.
    exact = {k[:3] for k in want if k[3] is not None}
    got = Counter(
        (
            f["path"],
            f["line"],
            f["rule"],
            f["column"] if (f["path"], f["line"], f["rule"]) in exact else None,
        )
        for f in findings
    )
    shown = "\n".join(
        f"{f['path']}:{f['line']}:{f['column']} {f['rule']} {f['severity']}: {f['message']}"
        for f in findings
    )
    assert got == want, shown
    for f in findings:
        wanted = loud.get((f["path"], f["rule"]))
        assert wanted in (None, f["severity"]), shown
    # Every message short, as the rule fixtures' (tests/test_snapshots.py).
    long = [
        f"{f['rule']}: {f['message']}"
        for f in findings
        if len(f["message"]) > MAX_MESSAGE and f["rule"] not in NOT_YET_SHORT
    ]
    assert long == []
