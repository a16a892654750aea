"""The habits of ruff's command line on ``gpulint check``: ``--format concise``,
``--statistics``, ``-q/--quiet``, ``--exit-zero``; each through the fast parser and typer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import gpulint_in_process, gpulint_subprocess
from tests.externals import helm, needs_helm

BAD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: a
    image: x
    resources:
      requests: {nvidia.com/gpu: 1}
  - name: b
    image: x
    resources:
      requests: {nvidia.com/gpu: 2}
      limits: {nvidia.com/gpu: 0.5}
"""


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod.yaml").write_text(BAD)
    return tmp_path


#: Both parsers: the fast one, and typer's (an option the fast parser sends on: --help=no).
PARSERS = [[], ["--show-rendered"]]


@pytest.mark.parametrize("extra", PARSERS)
def test_concise_keeps_the_diagnostic_and_drops_the_advice(repo: Path, extra: list[str]) -> None:
    full = gpulint_in_process("check", *extra, "pod.yaml", cwd=repo).stdout.splitlines()
    short = gpulint_in_process("check", *extra, "-f", "concise", "pod.yaml", cwd=repo)
    lines = short.stdout.splitlines()
    assert short.returncode == 1
    # The text format's lines without the help lines, and the same summary.
    helps = [line for line in full if line.startswith("  help: ")]
    assert helps and lines == [line for line in full if line not in helps]
    assert lines[0] == (
        "pod.yaml:12:18: GPU001 error: nvidia.com/gpu is requested without a limit: the API "
        "server rejects the pod [Pod/train]"
    )
    assert full[1] == "  help: move it under resources.limits, which also sets the request"


def test_statistics_counts_per_rule_most_first(repo: Path) -> None:
    proc = gpulint_in_process("check", "--statistics", "pod.yaml", cwd=repo)
    lines = proc.stdout.splitlines()
    rows = [line.split("\t") for line in lines[:-1]]
    counts = [(-int(count), code) for count, code, _ in rows]
    assert counts == sorted(counts)  # most first, then by code
    assert ["1", "GPU001", "[*] extended-resource-requests-without-limits"] in rows
    assert lines[-1].startswith("Found ")
    assert proc.returncode == 1


def test_quiet_prints_the_findings_and_nothing_else(repo: Path) -> None:
    proc = gpulint_in_process("check", "-q", "pod.yaml", cwd=repo)
    assert proc.returncode == 1
    assert all(line.startswith(("pod.yaml:", "  help: ")) for line in proc.stdout.splitlines())
    (repo / "pod.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    clean = gpulint_in_process("check", "--quiet", "pod.yaml", cwd=repo)
    assert (clean.returncode, clean.stdout) == (0, "")


def test_exit_zero_reports_and_exits_zero_but_never_hides_a_tool_error(repo: Path) -> None:
    proc = gpulint_in_process("check", "--exit-zero", "pod.yaml", cwd=repo)
    assert proc.returncode == 0 and "GPU001 error" in proc.stdout
    missing = gpulint_in_process("check", "--exit-zero", "nowhere.yaml", cwd=repo)
    assert missing.returncode == 2


def test_a_yaml_error_names_the_tab_it_stopped_at(repo: Path) -> None:
    (repo / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n")
    proc = gpulint_in_process("check", "pod.yaml", cwd=repo)
    assert "pod.yaml:4:1: YML001 error: " in proc.stdout
    assert "(the character there is a tab: YAML indents with spaces only)" in proc.stdout


def test_config_that_is_a_device_is_not_called_missing(repo: Path) -> None:
    proc = gpulint_in_process("check", "--config", "/dev/null", "pod.yaml", cwd=repo)
    assert proc.returncode == 2
    assert proc.stderr.startswith("gpulint: error: /dev/null: not a regular file")


def test_gpulint_config_prints_yaml_that_pasted_back_changes_nothing(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "ignore: [GPU021]\nseverity: {GPU003: error}\ngpu-taints: ['sku=gpu:NoSchedule']\n"
        "rules:\n  GPU040: {max_per_node: 4}\n"
    )
    shown = gpulint_in_process("config", "-f", "json", cwd=repo).stdout
    text = gpulint_in_process("config", cwd=repo).stdout
    assert "\nselect:" not in text  # the default selection is no [ALL] (opt-in rules)
    assert "# select: not set, so every rule but the opt-in ones (GPU003" in text
    (repo / ".gpulint.yaml").write_text(text)
    again = gpulint_in_process("config", "-f", "json", cwd=repo)
    assert again.returncode == 0, again.stderr
    import json

    def values(doc: str) -> dict[str, object]:
        return {k: v["value"] for k, v in json.loads(doc)["settings"].items()}

    assert values(again.stdout) == values(shown)


def test_the_text_report_says_the_same_evidence_once() -> None:
    """Twenty GPU020 lines of a run share one piece of evidence (the GPU pods that agree on
    the taint): the text report prints it on the first line and ``(as above)`` after; JSON
    keeps every message whole."""
    from gpulint.model import Finding, Severity, Span
    from gpulint.reporters.text import once

    evidence = "(tolerated by 22 of the 25 GPU pods of this project: a.yaml:20, b.yaml:39, …)"
    message = f"the pod does not tolerate the GPU node taint {evidence}: it stays Pending"
    first = Finding("GPU020", "missing", Severity.ERROR, "a.yaml", Span(1, 1, 1, 1), message)
    said: set[str] = set()
    assert once(first, said).message == message
    again = once(first._replace(path="b.yaml"), said)
    assert again.message == (
        "the pod does not tolerate the GPU node taint (as above): it stays Pending"
    )
    short = first._replace(message="a value (0.5) that is short")  # short asides stay
    assert once(short, said) == short and once(short, said) == short
    both = f"{message} (assumed: the pool's taint is the device plugin's, nvidia.com/gpu)"
    once(first._replace(message=both), said)
    assert once(first._replace(message=both), said).message == (  # two in a row: one mark
        "the pod does not tolerate the GPU node taint (as above): it stays Pending (as above)"
    )
    twice = f"{evidence} {evidence[:-1]}, again)"
    once(first._replace(message=twice), said)
    assert once(first._replace(message=twice), said).message == "(as above)"


def test_a_platform_is_named_in_any_case(tmp_path: Path) -> None:
    # As rule codes are (`--select gpu020`): `--platform GKE` is GKE.
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - {name: c, image: busybox}\n"
    )
    proc = gpulint_in_process("check", "--isolated", "--platform", "GKE", "pod.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_a_job_count_that_is_no_number_is_refused_in_words(tmp_path: Path) -> None:
    proc = gpulint_subprocess("check", "-j", "abc", ".", cwd=tmp_path)
    assert proc.returncode == 2
    assert "'abc' is not a whole number of 1 or more" in proc.stderr
    assert "int range" not in proc.stderr


def test_statistics_mark_a_rule_only_unsafe_fixes_fix_apart(tmp_path: Path) -> None:
    # GPU020's fix adds a toleration: only --unsafe-fixes applies it ("[-]", as ruff marks).
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    )
    proc = gpulint_in_process(
        "check", "--statistics", "--fail-on", "info", "pod.yaml", cwd=tmp_path
    )
    rows = [line.split("\t") for line in proc.stdout.splitlines() if "\t" in line]
    assert ["1", "GPU020", "[-] gpu-pod-missing-toleration"] in rows, proc.stdout


#: A GPU pod with no toleration: GPU020 is info, on the assumed GPU taint.
UNTOLERATED = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
    "  - name: c\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
    "    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
)


def test_the_note_on_an_assumed_cluster_is_one_short_line_the_text_format_alone_prints(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod.yaml").write_text(UNTOLERATED)
    lines = gpulint_in_process("check", "pod.yaml", cwd=tmp_path).stdout.splitlines()
    note = lines[-2]
    assert note == (
        "note: assumed GPU taint nvidia.com/gpu=present:NoSchedule and 8 GPUs per node; "
        '`gpu-taints: ["nvidia.com/gpu=present:NoSchedule"]` in .gpulint.yaml makes it '
        "certain (docs/cluster.md)"
    )
    for quiet in (["-f", "concise"], ["-q"]):
        out = gpulint_in_process("check", *quiet, "pod.yaml", cwd=tmp_path).stdout
        assert "GPU020 info" in out and "note:" not in out


def test_notices_that_something_was_not_checked_are_counted_apart_from_problems(
    tmp_path: Path,
) -> None:
    # A chart linted without --render (GL201, a notice) beside a pod with a problem.
    import json

    (tmp_path / ".git").mkdir()
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "d.yaml").write_text("kind: {{ .Values.kind }}\n")
    lines = gpulint_in_process("check", "--fail-on", "info", ".", cwd=tmp_path).stdout
    assert "GL201 info" in lines
    assert lines.splitlines()[-1] == "No problems found and 1 notice in 1 file."
    (tmp_path / "pod.yaml").write_text(BAD)
    proc = gpulint_in_process("check", ".", cwd=tmp_path)
    assert proc.stdout.splitlines()[-1] == (
        "Found 3 problems (3 errors, 0 warnings, 0 info) and 1 notice in 2 files."
    ), proc.stdout
    doc = json.loads(gpulint_in_process("check", "-f", "json", ".", cwd=tmp_path).stdout)
    assert doc["summary"]["findings"] == 4 and doc["summary"]["notices"] == 1


REDUNDANT = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: c
    image: x
    resources:
      requests: {nvidia.com/gpu: 1}
      limits: {nvidia.com/gpu: 1}
"""


def test_a_baseline_of_every_rule_is_not_stale_in_a_run_of_fewer(tmp_path: Path) -> None:
    # GPU003 (opt-in) finds the redundant request; a plain run does not select it.
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod.yaml").write_text(REDUNDANT)
    wrote = gpulint_in_process(
        "check", "--select", "ALL", "--write-baseline", "b.json", "pod.yaml", cwd=tmp_path
    )
    assert wrote.returncode == 0, wrote.stderr
    assert '"rule": "GPU003"' in (tmp_path / "b.json").read_text()
    plain = gpulint_in_process("check", "--baseline", "b.json", "pod.yaml", cwd=tmp_path)
    assert plain.returncode == 0 and "GL101" not in plain.stdout, plain.stdout
    # A rule that ran and no longer finds its entry: the entry is stale.
    (tmp_path / "pod.yaml").write_text(
        REDUNDANT.replace("      requests: {nvidia.com/gpu: 1}\n", "")
    )
    again = gpulint_in_process(
        "check", "--select", "ALL", "--baseline", "b.json", "pod.yaml", cwd=tmp_path
    )
    assert "GL101 warning" in again.stdout, again.stdout


def test_the_render_hook_leaves_plain_manifests_to_the_plain_hook(repo: Path) -> None:
    # Both pre-commit hooks get pod.yaml; only `gpulint` reports it (one report per file).
    import yaml  # type: ignore[import-untyped]

    from tests.conftest import ROOT

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    render = hooks["gpulint-render"]["entry"].split()[1:]
    assert render == ["check", "--render", "--rendered-only"]
    plain = gpulint_in_process(*hooks["gpulint"]["entry"].split()[1:], "pod.yaml", cwd=repo)
    assert plain.returncode == 1 and "GPU001 error" in plain.stdout
    proc = gpulint_in_process(*render, "pod.yaml", cwd=repo)
    assert (proc.returncode, proc.stderr) == (0, "") and "GPU001" not in proc.stdout
    alone = gpulint_in_process("check", "--rendered-only", "pod.yaml", cwd=repo)
    assert alone.returncode == 2 and "--rendered-only needs --render" in alone.stderr


@needs_helm
def test_the_render_hook_still_lints_the_chart_a_changed_file_belongs_to(repo: Path) -> None:
    import json
    import shutil

    from tests.conftest import ROOT

    shutil.copytree(ROOT / "tests/fixtures/render/charts/inference", repo / "charts/inference")
    named = ["charts/inference/values.yaml", "pod.yaml"]
    args = ["check", "-f", "json", "--render", "--rendered-only", "--helm", str(helm())]
    proc = gpulint_in_process(*args, *named, cwd=repo)
    paths = {f["path"] for f in json.loads(proc.stdout)["findings"]}
    assert paths and all(p.startswith("charts/inference/") for p in paths), paths


def test_gpulint_rule_shows_the_example_right_after_the_summary() -> None:
    # `gpulint rule GPU020` said 1,077 words before its example; now the summary, then
    # Example and Use instead, then the rest, every line of the docstring kept.
    from gpulint.commands.rules import example_first, printable
    from tests.conftest import builtin_rules

    for rule in builtin_rules():
        doc = printable(rule.doc)
        shown = example_first(doc)
        headings = [line for line in shown.splitlines() if line.startswith("## ")]
        assert headings[:2] == ["## Example", "## Use instead"], rule.code
        assert sorted(filter(str.strip, shown.splitlines())) == sorted(
            filter(str.strip, doc.splitlines())
        ), rule.code
    out = gpulint_in_process("rule", "GPU020", "--isolated").stdout
    before = out[: out.index("## Example")]
    assert len(before.split()) < 30 and "GPU pod does not tolerate" in before
    assert out.index("## Use instead") < out.index("## What it does")


def test_the_assumed_clause_is_short_and_the_note_says_the_rest(tmp_path: Path) -> None:
    # The clause GPU020 appends when it assumed the taint: what was assumed and the line
    # that makes it certain, nothing more; a second finding says it `(as above)`.
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod.yaml").write_text(
        UNTOLERATED + "---\n" + UNTOLERATED.replace("{name: p}", "{name: q}")
    )
    lines = gpulint_in_process("check", "pod.yaml", cwd=tmp_path).stdout.splitlines()
    # Each GPU020 line's help line, below it.
    first, second = (lines[i + 1] for i, line in enumerate(lines) if " GPU020 info: " in line)
    assert first.endswith(
        "(assumed: gpulint's default GPU taint; "
        '`gpu-taints: ["nvidia.com/gpu=present:NoSchedule"]` in .gpulint.yaml makes it certain)'
    )
    assert len(first) < 400 and second.endswith("tolerations (as above)")
