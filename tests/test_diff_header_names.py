"""A file name from the tree never writes a raw control character into the output: the
``--diff`` headers quote such a name as git does (and ``git apply`` reads it back), and
text, JSON and SARIF escape it each in its own way."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gpulint.util.textsafe import diff_path
from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms

HELMS = helms()
TRAINER = FIXTURES / "render" / "fixvalues" / "trainer"

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      requests:
        nvidia.com/gpu: 1
"""


def test_a_name_is_quoted_as_git_quotes_it() -> None:
    assert diff_path("deploy/pod.yaml") == "deploy/pod.yaml"
    assert diff_path("a\rb.yaml") == '"a\\rb.yaml"'
    assert diff_path('a\t"b"\\c\n.yaml') == '"a\\t\\"b\\"\\\\c\\n.yaml"'
    assert diff_path("a\x1b[31m.yaml") == '"a\\033[31m.yaml"'
    assert diff_path("\u202eevil.yaml") == '"\\342\\200\\256evil.yaml"'
    assert diff_path("caf\udce9.yaml") == '"caf\\351.yaml"'  # an undecodable byte
    assert diff_path("café.yaml") == "café.yaml"


def test_a_manifest_named_with_a_carriage_return(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod\rx.yaml").write_text(POD)
    proc = gpulint_in_process("check", "--diff", ".", cwd=tmp_path)
    assert proc.stdout.startswith('--- "pod\\rx.yaml"\n+++ "pod\\rx.yaml"\n'), proc.stdout
    assert "\r" not in proc.stdout + proc.stderr
    if shutil.which("git") is None:
        pytest.skip("git is not installed: the diff is not applied")
    (tmp_path / "fix.diff").write_text(proc.stdout)
    subprocess.run(["git", "init", "-q", "."], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "-p0", "fix.diff"], cwd=tmp_path, check=True)
    assert "limits:\n        nvidia.com/gpu: 1" in (tmp_path / "pod\rx.yaml").read_text()


@pytest.mark.parametrize("helm", HELMS)
def test_a_chart_named_with_a_carriage_return(helm: str, tmp_path: Path) -> None:
    """A chart folder named ``ch\\rart``: its values file's ``--diff`` header, and the text,
    JSON and SARIF reports, print no raw carriage return."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(TRAINER, tmp_path / "ch\rart")
    render = ("check", "--render", "--helm", helm)
    proc = gpulint_in_process(*render, "--diff", ".", cwd=tmp_path)
    out = proc.stdout
    assert out.startswith('--- "ch\\rart/values.yaml"\n+++ "ch\\rart/values.yaml"\n'), out
    assert "\r" not in out + proc.stderr
    for fmt in ("text", "json", "sarif"):
        proc = gpulint_in_process(*render, "--format", fmt, ".", cwd=tmp_path)
        out = proc.stdout
        assert proc.returncode == 1, out + proc.stderr
        assert "\r" not in out + proc.stderr, fmt
        if fmt == "text":
            assert "ch\\rart/values.yaml:10:5: GPU001" in out
        elif fmt == "json":  # the exact name, as JSON escapes it
            assert "ch\rart/values.yaml" in {f["path"] for f in json.loads(out)["findings"]}
            assert '"ch\\rart/values.yaml"' in out
        else:  # a URI, percent-encoded
            assert '"uri": "ch%0Dart/values.yaml"' in out
