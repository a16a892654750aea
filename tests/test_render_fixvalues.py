"""``--fix`` / ``--diff`` with ``--render``: fixes made in the values file or patch that writes
the value, kept only when rendering again removes the finding and changes nothing else.

The fixture charts and overlay are under tests/fixtures/render/fixvalues, rendered with the
real helm (``make tools``' helm 4, helm 3 and any named in $GPULINT_TEST_HELMS) and
``kubectl kustomize``; each ``--fix`` runs on a copy in a temporary folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import pytest

from gpulint.model import AddEntry, DeleteKey, MoveKey, RenameKey
from gpulint.render.fixchanges import diff_changes as _changes
from tests.conftest import FIXTURES, ROOT, gpulint_in_process
from tests.externals import needs_kustomize
from tests.test_render_exec import HELMS

CASES = FIXTURES / "render" / "fixvalues"
REL = CASES.relative_to(ROOT)


def _run(helm_path: str | None, *args: str, cwd: Path = ROOT) -> CompletedProcess[Any]:
    flags = ["--helm", helm_path] if helm_path else []
    return gpulint_in_process("check", "--render", *flags, *args, cwd=cwd)


def _copy(tmp_path: Path, name: str) -> Path:
    """A fixture copied into its own repository (a ``.git`` folder) under ``tmp_path``."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    return Path(shutil.copytree(CASES / name, tmp_path / name))


@pytest.mark.parametrize("helm_path", HELMS)
def test_diff_shows_the_values_file_change(helm_path: str) -> None:
    proc = _run(helm_path, "--diff", str(REL / "trainer"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    values = f"{REL}/trainer/values.yaml"
    assert proc.stdout == (
        f"--- {values}\n+++ {values}\n"
        "@@ -7,6 +7,6 @@\n"
        "   requests:\n"
        '     cpu: "8"\n'
        "     memory: 64Gi\n"
        "+  limits:\n"
        "     nvidia.com/gpu: 2   # requested, never limited\n"
        "-  limits:\n"
        "     memory: 64Gi\n"
    )
    assert proc.stderr.endswith("Would fix 1 problem.\n"), proc.stderr


@pytest.mark.parametrize("helm_path", HELMS)
def test_fix_writes_the_values_file(helm_path: str, tmp_path: Path) -> None:
    chart = _copy(tmp_path, "trainer")
    before = (chart / "templates" / "job.yaml").read_text()
    proc = _run(helm_path, "--fix", "trainer", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "GPU001" not in proc.stdout
    assert "Fixed 1 problem." in proc.stdout
    values = (chart / "values.yaml").read_text()
    assert "  limits:\n    nvidia.com/gpu: 2   # requested, never limited\n" in values
    assert (chart / "templates" / "job.yaml").read_text() == before  # templates untouched
    again = _run(helm_path, "trainer", cwd=tmp_path)
    assert "GPU001" not in again.stdout, again.stdout


@pytest.mark.parametrize("helm_path", HELMS)
def test_fix_writes_the_values_file_given_with_values(helm_path: str, tmp_path: Path) -> None:
    chart = _copy(tmp_path, "serving")
    h100 = ["--values", "serving/values-h100.yaml"]
    shown = _run(helm_path, *h100, "--diff", "serving", cwd=tmp_path)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    assert shown.stdout.startswith("--- serving/values-h100.yaml\n"), shown.stdout
    proc = _run(helm_path, *h100, "--fix", "serving", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (chart / "values-h100.yaml").read_text() == (
        "# H100 nodes: one GPU per replica.\n"
        "resources:\n"
        "  limits:\n"
        "    nvidia.com/gpu: 1\n"
        "  requests:\n"
        "    memory: 48Gi\n"
    )
    assert (chart / "values.yaml").read_text() == (CASES / "serving" / "values.yaml").read_text()


@needs_kustomize
def test_fix_writes_the_strategic_merge_patch(tmp_path: Path) -> None:
    tree = _copy(tmp_path, "kustomize")
    overlay = "kustomize/overlays/a100"
    shown = _run(None, "--diff", overlay, cwd=tmp_path)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    patch = f"{overlay}/gpu.yaml"
    assert shown.stdout == (
        f"--- {patch}\n+++ {patch}\n"
        "@@ -9,5 +9,5 @@\n"
        "       containers:\n"
        "         - name: embedder\n"
        "           resources:\n"
        "-            requests:\n"
        "+            limits:\n"
        "               nvidia.com/gpu: 1   # requested, never limited\n"
    )
    proc = _run(None, "--fix", overlay, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "            limits:\n              nvidia.com/gpu: 1" in (tree / patch[10:]).read_text()
    base = (tree / "base" / "deployment.yaml").read_text()
    assert base == (CASES / "kustomize" / "base" / "deployment.yaml").read_text()


@pytest.mark.parametrize("helm_path", HELMS)
def test_a_value_two_objects_use_differently_gets_no_fix(helm_path: str, tmp_path: Path) -> None:
    chart = _copy(tmp_path, "worker")
    proc = _run(helm_path, "--diff", "worker", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert (
        "worker/values.yaml:6:5: GPU001 not fixed: the value written there is also used by "
        "Job/release-name-warmup, which this change would change too"
    ) in proc.stderr
    assert (
        "worker/values.yaml:6:5: GPU001 not fixed: its fix changes more than the value "
        "written at worker/values.yaml:6"
    ) in proc.stderr
    assert proc.stderr.endswith("No fixes to apply.\n")
    fixed = _run(helm_path, "--fix", "worker", cwd=tmp_path)
    assert fixed.returncode == 1
    report = [line for line in fixed.stdout.splitlines() if "GPU001" in line]
    assert len(report) == 2 and all("(no fix: " in line for line in report), fixed.stdout
    assert (chart / "values.yaml").read_text() == (CASES / "worker" / "values.yaml").read_text()


@pytest.mark.parametrize("helm_path", HELMS)
def test_a_fix_the_re_render_still_reports_is_refused(helm_path: str, tmp_path: Path) -> None:
    _copy(tmp_path, "serving")
    files = ["--values", "serving/values-gpu.yaml", "--values", "serving/values-large.yaml"]
    proc = _run(helm_path, *files, "--diff", "serving", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    # values-gpu.yaml's request is merged back under the moved limit: requests 1, limits 2.
    assert (
        "serving/values-large.yaml:4:5: GPU001 not fixed: rendered again with the fix, it "
        "reports GPU002"
    ) in proc.stderr


@pytest.mark.parametrize("helm_path", HELMS)
def test_a_value_written_in_the_template_gets_no_fix(helm_path: str) -> None:
    proc = _run(helm_path, "--fix", str(REL / "notebook"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(line for line in proc.stdout.splitlines() if "GPU001" in line)
    assert line.startswith(f"{REL}/notebook/templates/statefulset.yaml:24:15: GPU001")
    assert "(no fix: its value is written in the template itself" in line


def test_changes_are_written_as_the_repair_kinds() -> None:
    old = {"requests": {"cpu": "1", "nvidia.com/gpu": 1}}
    assert _changes(old, {"limits": {"nvidia.com/gpu": 1}, "requests": {"cpu": "1"}}, (), ()) == [
        MoveKey(("requests", "nvidia.com/gpu"), ("limits",), "nvidia.com/gpu", prune=0)
    ]
    assert _changes({"requests": {"x": 1}}, {"limits": {"x": 1}}, (), ()) == [
        RenameKey(("requests",), "limits")
    ]
    assert _changes({"a": 1, "b": 2}, {"a": 1, "c": 3}, (), ()) == [
        DeleteKey(("b",), prune=0),
        AddEntry((), "c", 3),
    ]


@needs_kustomize
def test_a_base_two_overlays_build_gets_no_fix(tmp_path: Path) -> None:
    tree = _copy(tmp_path, "shared")
    proc = _run(None, "--diff", "shared/overlays/staging", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert (
        "shared/base/job.yaml:18:15: GPU001 not fixed: the file is also built into "
        "shared/overlays/production, which this change would change too"
    ) in proc.stderr
    fixed = _run(None, "--fix", "shared", cwd=tmp_path)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert (tree / "base" / "job.yaml").read_text() == (
        CASES / "shared" / "base" / "job.yaml"
    ).read_text()


@pytest.mark.parametrize("helm_path", HELMS)
def test_two_fixes_in_one_values_file_traced_through_a_range(helm_path: str) -> None:
    proc = _run(helm_path, "--diff", str(REL / "jobs"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    values = f"{REL}/jobs/values.yaml"
    assert proc.stdout == (
        f"--- {values}\n+++ {values}\n"
        "@@ -1,10 +1,11 @@\n"
        " # One Job per entry: templates/jobs.yaml ranges over them.\n"
        " trainer:\n"
        "   resources:\n"
        "-    requests:\n"
        "+    limits:\n"
        "       nvidia.com/gpu: 2\n"
        " evaluator:\n"
        "   resources:\n"
        "+    limits:\n"
        "+      nvidia.com/gpu: 1\n"
        "     requests:\n"
        "-      nvidia.com/gpu: 1\n"
        "       cpu: 2\n"
    )
    assert proc.stderr.endswith("Would fix 2 problems.\n"), proc.stderr


_WORKERS = """\
{{- range $name, $w := .Values.workers }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ $name }}
spec:
  tolerations:
    {{- toYaml $w.tolerations | nindent 4 }}
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      {{- toYaml $w.resources | nindent 6 }}
{{- end }}
"""


@pytest.mark.parametrize("helm_path", HELMS[:1])
def test_many_fixes_in_one_output_parse_it_once(
    helm_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """n workers of one values file, each a GPU requested and not limited, rendered as n
    documents: each fix is planned on its own document, the values file is parsed once, and
    the diff compares the lines around the edits (each fix parsed the whole output again:
    planning was findings x output)."""
    import gpulint.render.fixvalues as fixvalues

    n = 40
    chart = tmp_path / "chart"
    (tmp_path / ".git").mkdir()
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    (chart / "templates" / "workers.yaml").write_text(_WORKERS)
    worker = (
        "  w{i:02}:\n    tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]\n"
        "    resources:\n      requests:\n        memory: {i}Mi\n        nvidia.com/gpu: 1\n"
    )
    values = "workers:\n" + "".join(worker.format(i=i) for i in range(n))
    (chart / "values.yaml").write_text(values)
    parsed: list[int] = []
    real = fixvalues.load_documents

    def counted(text: str) -> Any:
        parsed.append(len(text))
        return real(text)

    monkeypatch.setattr(fixvalues, "load_documents", counted)
    proc = _run(helm_path, "--diff", "chart", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.count("+      limits:\n") == n, proc.stdout
    assert proc.stderr.endswith(f"Would fix {n} problems.\n"), proc.stderr
    # The whole output (n documents) is parsed by the check of the fixes, not per fix.
    large = [size for size in parsed if size > 20 * len(worker)]
    assert len(large) <= 3, (len(large), len(parsed))
