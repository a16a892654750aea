"""``gpulint check --fix`` / ``--diff`` / ``--unsafe-fixes`` from the command line: files
written (and only where they may be), diffs a real ``patch`` applies, stdin, worker
processes, encodings, the report's counts, SARIF fixes a consumer can apply."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, gpulint_in_process, gpulint_subprocess
from tests.docblocks import block

BAD = ROOT / "examples" / "bad-inference.yaml"

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train  # the trainer
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      requests:
        nvidia.com/gpu: 1   # one GPU
"""
FIXED_POD = POD.replace("requests:", "limits:")


def run(*args: str, cwd: Path, stdin: str | bytes | None = None) -> Any:
    return gpulint_in_process(*args, cwd=cwd, stdin=stdin)


def test_fix_writes_the_file_and_reports_what_is_left(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(POD, encoding="utf-8")
    proc = run("check", "--fix", "pod.yaml", cwd=tmp_path)
    assert (tmp_path / "pod.yaml").read_text(encoding="utf-8") == FIXED_POD
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "Fixed 1 problem."
    again = run("check", "pod.yaml", cwd=tmp_path)
    assert again.returncode == 0 and "All checks passed" in again.stdout


def test_fix_reports_how_many_more_unsafe_fixes_would_fix(tmp_path: Path) -> None:
    shutil.copy(BAD, tmp_path / "bad.yaml")
    proc = run("check", "--fix", "bad.yaml", cwd=tmp_path)
    assert proc.stdout.splitlines()[-1] == "Fixed 1 problem; 3 more fixable with --unsafe-fixes."
    assert "GPU001" not in proc.stdout  # fixed, and the findings are those of the new text
    assert proc.returncode == 1  # GPU020 and others are left
    report = json.loads(run("check", "-f", "json", "--fix", "bad.yaml", cwd=tmp_path).stdout)
    assert report["summary"]["fixed"] == 0 and report["summary"]["unsafe_fixable"] == 3
    unsafe = run("check", "--fix", "--unsafe-fixes", "bad.yaml", cwd=tmp_path)
    assert unsafe.stdout.splitlines()[-1] == "Fixed 3 problems."


def test_diff_changes_nothing_and_exits_1_when_something_is_fixable(tmp_path: Path) -> None:
    shutil.copy(BAD, tmp_path / "bad.yaml")
    before = (tmp_path / "bad.yaml").read_bytes()
    proc = run("check", "--diff", "--unsafe-fixes", "bad.yaml", cwd=tmp_path)
    assert proc.returncode == 1
    assert (tmp_path / "bad.yaml").read_bytes() == before
    assert proc.stdout.startswith("--- bad.yaml\n+++ bad.yaml\n@@ ")
    assert proc.stderr.strip().endswith("Would fix 4 problems.")
    # The diff is what --fix does: `patch` applies it to a copy, byte for byte.
    (tmp_path / "patched").mkdir()
    shutil.copy(BAD, tmp_path / "patched" / "bad.yaml")
    subprocess.run(
        ["patch", "-s", "-p0"], input=proc.stdout, text=True, cwd=tmp_path / "patched", check=True
    )
    run("check", "--fix", "--unsafe-fixes", "bad.yaml", cwd=tmp_path)
    assert (tmp_path / "patched" / "bad.yaml").read_bytes() == (tmp_path / "bad.yaml").read_bytes()
    clean = run("check", "--diff", "--unsafe-fixes", "bad.yaml", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""
    assert "No fixes to apply." in clean.stderr


def test_diff_with_a_report_format_is_a_usage_error(tmp_path: Path) -> None:
    shutil.copy(BAD, tmp_path / "bad.yaml")
    for extra in (("-f", "json"), ("-o", "report.txt")):
        proc = run("check", "--diff", *extra, "bad.yaml", cwd=tmp_path)
        assert proc.returncode == 2
        assert proc.stderr.startswith("gpulint: error: --diff prints the fixes as a diff")
    assert not (tmp_path / "report.txt").exists()


def test_diff_counts_unsafe_fixes_it_leaves_out(tmp_path: Path) -> None:
    shutil.copy(BAD, tmp_path / "bad.yaml")
    proc = run("check", "--diff", "bad.yaml", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith("Would fix 1 problem (3 more with --unsafe-fixes).")


def test_unsafe_fixes_alone_counts_the_fixes(tmp_path: Path) -> None:
    shutil.copy(BAD, tmp_path / "bad.yaml")
    proc = run("check", "--unsafe-fixes", "bad.yaml", cwd=tmp_path)
    assert proc.stdout.splitlines()[-1] == (
        "[*] 4 fixable with --fix --unsafe-fixes (1 with --fix alone)."
    )
    assert (tmp_path / "bad.yaml").read_bytes() == BAD.read_bytes()


def test_stdin_fix_writes_the_fixed_stream_to_stdout_and_the_report_to_stderr(
    tmp_path: Path,
) -> None:
    proc = run("check", "--fix", "-", cwd=tmp_path, stdin=POD)
    assert proc.stdout == FIXED_POD
    assert "Fixed 1 problem." in proc.stderr
    unchanged = run("check", "--fix", "-", cwd=tmp_path, stdin=FIXED_POD)
    assert unchanged.stdout == FIXED_POD


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [("utf-8", b""), ("utf-8", b"\xef\xbb\xbf"), ("utf-16-le", b"\xff\xfe")],
)
def test_crlf_bom_and_encoding_survive(tmp_path: Path, encoding: str, bom: bytes) -> None:
    raw = bom + POD.replace("\n", "\r\n").encode(encoding)
    (tmp_path / "pod.yaml").write_bytes(raw)
    run("check", "--fix", "pod.yaml", cwd=tmp_path)
    assert (tmp_path / "pod.yaml").read_bytes() == bom + FIXED_POD.replace("\n", "\r\n").encode(
        encoding
    )


def test_fix_keeps_the_file_mode(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(POD, encoding="utf-8")
    path.chmod(0o640)
    run("check", "--fix", "pod.yaml", cwd=tmp_path)
    assert path.read_text(encoding="utf-8") == FIXED_POD
    assert path.stat().st_mode & 0o777 == 0o640


def test_fix_never_writes_through_a_symbolic_link(tmp_path: Path) -> None:
    """A pull request can commit `pod.yaml -> ../outside.yaml` or a linked folder: --fix
    must not write through either; the report says so and exits 2."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").mkdir()
    (tree / "real.yaml").write_text(POD, encoding="utf-8")
    (tree / "link.yaml").symlink_to("real.yaml")
    (tree / "dir").mkdir()
    (tree / "linked").symlink_to("dir")
    (tree / "dir" / "pod.yaml").write_text(POD, encoding="utf-8")
    proc = run("check", "--fix", "link.yaml", "linked/pod.yaml", cwd=tree)
    assert proc.returncode == 2
    assert "refusing to write the fixes of link.yaml: it is a symbolic link" in proc.stderr
    assert "refusing to write the fixes of linked/pod.yaml: linked is a symbolic link" in (
        proc.stderr
    )
    assert (tree / "real.yaml").read_text(encoding="utf-8") == POD
    assert (tree / "dir" / "pod.yaml").read_text(encoding="utf-8") == POD
    assert (tree / "link.yaml").is_symlink() and (tree / "linked").is_symlink()


def test_fix_never_writes_through_a_linked_folder_of_a_repository_elsewhere(
    tmp_path: Path,
) -> None:
    """The same, for a repository named by an absolute path outside the working directory."""
    tree = tmp_path / "tree"
    (tree / ".git").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "pod.yaml").write_text(POD, encoding="utf-8")
    (tree / "linked").symlink_to(tmp_path / "outside")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    proc = run("check", "--fix", str(tree / "linked" / "pod.yaml"), cwd=elsewhere)
    assert proc.returncode == 2
    assert "is a symbolic link" in proc.stderr, proc.stderr
    assert (tmp_path / "outside" / "pod.yaml").read_text(encoding="utf-8") == POD


def test_fix_with_worker_processes(tmp_path: Path) -> None:
    """--jobs: files are fixed in the workers and written by the main process, in order."""
    for i in range(80):
        (tmp_path / f"pod{i:02}.yaml").write_text(POD.replace("train", f"t{i}"), "utf-8")
    proc = gpulint_subprocess("check", "--fix", "--jobs", "2", ".", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "Fixed 80 problems."
    for i in range(80):
        text = (tmp_path / f"pod{i:02}.yaml").read_text(encoding="utf-8")
        assert text == FIXED_POD.replace("train", f"t{i}")


def test_a_fix_that_would_break_parsing_is_refused(tmp_path: Path) -> None:
    """A plugin rule whose fix makes a duplicate key: that fix is not applied, the others
    (GPU001's) are."""
    rule = '''"""Rename it.\n\n## What it does\nx\n"""
from gpulint.rule import RenameKey, Repair, Violation
CODE = "ACME001"
NAME = "acme"
SEVERITY = "warning"
SCOPE = "object"


def check(obj, ctx):
    if "metadata" in obj.data:
        path = (*obj.path, "metadata", "name")
        yield Violation(path, "x", fix=Repair("dup", (RenameKey(path, "namespace"),)))
'''
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme001.py").write_text(rule, encoding="utf-8")
    text = POD.replace("  name: train  # the trainer\n", "  name: t\n  namespace: ml\n")
    (tmp_path / "pod.yaml").write_text(text, encoding="utf-8")
    proc = run("check", "--rule-dir", "rules", "--fix", "pod.yaml", cwd=tmp_path)
    assert "would no longer parse" in proc.stderr, proc.stderr
    fixed = text.replace("requests:", "limits:")
    assert (tmp_path / "pod.yaml").read_text(encoding="utf-8") == fixed


def test_sarif_fixes_apply_like_the_json_edits(tmp_path: Path) -> None:
    """A SARIF consumer applying a result's replacements gets what the JSON edits give."""
    shutil.copy(BAD, tmp_path / "bad.yaml")
    sarif = json.loads(run("check", "-f", "sarif", "bad.yaml", cwd=tmp_path).stdout)
    findings = json.loads(run("check", "-f", "json", "bad.yaml", cwd=tmp_path).stdout)["findings"]
    text = BAD.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)

    def offset(line: int, column: int) -> int:
        return sum(len(x) for x in lines[: line - 1]) + column - 1

    results = [r for r in sarif["runs"][0]["results"] if "fixes" in r]
    with_fix = [f for f in findings if f["fix"] and f["fix"]["edits"]]
    assert results and len(results) == len(with_fix)
    for result, finding in zip(results, with_fix, strict=True):
        (change,) = result["fixes"][0]["artifactChanges"]
        assert change["artifactLocation"]["uri"] == "bad.yaml"
        edits = [
            (
                offset(r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                offset(r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
                r.get("insertedContent", {}).get("text", ""),
            )
            for r in change["replacements"]
        ]
        assert edits == [(e["start"], e["end"], e["content"]) for e in finding["fix"]["edits"]]
        assert result["fixes"][0]["properties"]["applicability"] == finding["fix"]["applicability"]


# -- README blocks --------------------------------------------------------------------------------


def test_the_readme_fix_commands(tmp_path: Path) -> None:
    """The README's `--fix` console block, line by line, on a copy of the examples."""
    (tmp_path / "k8s").mkdir()
    shutil.copy(BAD, tmp_path / "k8s" / "bad.yaml")
    (tmp_path / "k8s" / "pod.yaml").write_text(POD, encoding="utf-8")
    before = {p.name: p.read_bytes() for p in (tmp_path / "k8s").iterdir()}
    lines = block("docs/usage.md", "Using it", "console", 1).text.strip().splitlines()
    commands = [line.split("  #", 1)[0].strip() for line in lines]
    scripts = Path(sys.executable).parent  # this interpreter's `gpulint`
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}
    codes = []
    for command in commands:
        proc = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert "Traceback" not in proc.stderr, proc.stderr
        codes.append(proc.returncode)
        if command.startswith("gpulint check --diff"):
            assert {p.name: p.read_bytes() for p in (tmp_path / "k8s").iterdir()} == before
            assert proc.stdout.startswith("--- k8s/")
    assert codes == [1, 1, 1, 0]
    assert (tmp_path / "fixed.yaml").read_text(encoding="utf-8") == FIXED_POD
    assert "GPU001" not in run("check", "k8s", cwd=tmp_path).stdout


def test_the_readme_fix_api_example(tmp_path: Path) -> None:
    """The README's `Violation(..., fix=Repair(...))` inside a rule: --unsafe-fixes adds the
    priority class, at the indentation of the pod spec's keys."""
    snippet = block("docs/writing-rules.md", "A Python rule module", "python", 1).text
    body = "\n".join("    " + line if line else "" for line in snippet.split("\n")[2:])
    module = (
        '"""Priority class.\n\n## What it does\nx\n"""\n'
        + snippet.split("\n")[0]
        + '\nCODE = "ACME010"\nNAME = "p"\nSCOPE = "pod"\n\n\ndef check(pod, ctx):\n'
        + '    if "priorityClassName" in pod.spec:\n        return\n'
        + body
    )
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "acme010.py").write_text(module, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(FIXED_POD, encoding="utf-8")
    args = ("check", "--rule-dir", "rules", "--select", "ACME", "pod.yaml")
    assert run(*args, "--fix", cwd=tmp_path).returncode == 1  # unsafe: not applied
    proc = run(*args, "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "pod.yaml").read_text(encoding="utf-8") == FIXED_POD.replace(
        "spec:\n", "spec:\n  priorityClassName: gpu-batch\n"
    )
