"""Configuration: discovery, precedence, validation errors and ``gpulint config``.

Error cases run the installed ``gpulint`` as a subprocess: what a user sees is the contract
(exit 2, ``file:line: key: why`` with the allowed values, no traceback).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpulint.config.file import ConfigError, find_config, load_config, read_config
from gpulint.config.resolve import Overrides, resolve
from gpulint.config.schema import config_schema
from gpulint.config.validate import SELECTOR_HELP
from gpulint.lint.finder import load_rules
from gpulint.loader.ownfiles import SourceError, load_one_document
from tests.conftest import ROOT, gpulint_in_process
from tests.test_cli import GPU_POD

GPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
  namespace: ml
spec:
  template:
    spec:
      tolerations:
      - key: sku
        operator: Equal
        value: gpu
        effect: NoSchedule
      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
"""

#: requests equal to limits: GPU003, a warning by default.
REDUNDANT = GPU_DEPLOYMENT.replace(
    "          limits:\n", "          requests:\n            nvidia.com/gpu: 1\n          limits:\n"
)

CPU_JOB_TOLERATING_SKU = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: report
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations:
      - key: sku
        operator: Exists
      containers:
      - name: report
        image: python:3.12-slim
"""


def run(args: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return gpulint_in_process(*args, cwd=cwd, stdin=stdin)


def findings(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository root (it holds .git) with a nested working directory."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "deploy" / "prod").mkdir(parents=True)
    return tmp_path / "repo"


@pytest.fixture(scope="module")
def rules() -> list[Any]:
    return load_rules()


# -- discovery --------------------------------------------------------------------------------
def test_found_from_the_working_directory_upward(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("ignore: [GPU021]\n")
    assert find_config(repo / "deploy" / "prod") == (repo / ".gpulint.yaml").resolve()


def test_the_nearest_file_wins(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("ignore: [GPU021]\n")
    (repo / "deploy" / ".gpulint.yml").write_text("ignore: [GPU003]\n")
    assert find_config(repo / "deploy" / "prod") == (repo / "deploy" / ".gpulint.yml").resolve()


def test_search_stops_at_the_repository_root(repo: Path) -> None:
    (repo.parent / ".gpulint.yaml").write_text("ignore: [GPU021]\n")
    assert find_config(repo / "deploy") is None
    # A worktree or submodule has a .git file rather than a folder: also a root.
    (repo / "deploy" / ".git").write_text("gitdir: ../.git/worktrees/x\n")
    (repo / ".gpulint.yaml").write_text("ignore: [GPU021]\n")
    assert find_config(repo / "deploy" / "prod") is None


def test_pyproject_counts_only_with_a_tool_gpulint_table(repo: Path) -> None:
    (repo / "deploy" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (repo / "pyproject.toml").write_text('[tool.gpulint]\nignore = ["GPU021"]\n')
    found = find_config(repo / "deploy" / "prod")
    assert found == (repo / "pyproject.toml").resolve()
    config = read_config(found)
    assert config.data == {"ignore": ["GPU021"]}
    assert config.where(("ignore",)).endswith("pyproject.toml:2")


def test_yaml_file_wins_over_pyproject_in_the_same_folder(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.gpulint]\nignore = ["GPU021"]\n')
    (repo / ".gpulint.yaml").write_text("ignore: [GPU003]\n")
    assert find_config(repo) == (repo / ".gpulint.yaml").resolve()


def test_explicit_and_isolated(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("ignore: [GPU021]\n")
    other = repo / "ci.yaml"
    other.write_text("ignore: [GPU003]\n")
    explicit = load_config(str(other), cwd=repo)
    assert explicit is not None and explicit.data == {"ignore": ["GPU003"]}
    assert load_config(None, isolated=True, cwd=repo) is None
    found = load_config(None, cwd=repo)
    assert found is not None and found.data == {"ignore": ["GPU021"]}


def test_cli_finds_the_config_from_a_subfolder(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "gpu-taints:\n- {key: sku, value: gpu, effect: NoSchedule}\n"
    )
    (repo / "deploy" / "prod" / "train.yaml").write_text(GPU_DEPLOYMENT)
    proc = run(["check", "-f", "json", "."], repo / "deploy" / "prod")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    isolated = run(["check", "-f", "json", "--isolated", "."], repo / "deploy" / "prod")
    # Without the configuration, nothing says the GPU nodes carry gpulint's assumed taint,
    # and the pod tolerates a taint of particular nodes (sku=gpu): GPU020 holds it to
    # nothing it cannot verify.
    assert isolated.returncode == 0
    assert [(f["rule"], f["severity"]) for f in findings(isolated)] == []


# -- what the configuration does --------------------------------------------------------------
def test_taints_repointed_for_aks(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "gpu-taints:\n- key: sku\n  value: gpu\n  effect: NoSchedule\n"
    )
    (repo / "train.yaml").write_text(GPU_DEPLOYMENT)
    (repo / "report.yaml").write_text(CPU_JOB_TOLERATING_SKU)
    proc = run(["check", "-f", "json", "."], repo)
    got = [(Path(f["path"]).name, f["line"], f["rule"]) for f in findings(proc)]
    # The GPU pod tolerates sku=gpu (no GPU020); the CPU job tolerating sku is GPU021.
    assert got == [("report.yaml", 10, "GPU021")]
    assert proc.returncode == 0  # GPU021 is a warning


def test_gke_needs_no_taint(repo: Path) -> None:
    (repo / "pyproject.toml").write_text("[tool.gpulint]\ngpu-taints = []\n")
    bare = GPU_DEPLOYMENT.replace(
        "      tolerations:\n      - key: sku\n        operator: Equal\n        value: gpu\n"
        "        effect: NoSchedule\n",
        "",
    )
    (repo / "train.yaml").write_text(bare)
    assert run(["check", "."], repo).stdout.startswith("All checks passed")
    assert "GPU020 info" in run(["check", "--isolated", "."], repo).stdout


def test_per_rule_option_wins_over_gpu_taints(rules: list[Any], tmp_path: Path) -> None:
    path = tmp_path / ".gpulint.yaml"
    path.write_text(
        "gpu-taints: []\nrules:\n  GPU020:\n    taints: [{key: gpu, effect: NoExecute}]\n"
    )
    effective = resolve(read_config(path), rules)
    assert effective.settings.options["GPU020"]["taints"] == [{"key": "gpu", "effect": "NoExecute"}]
    assert effective.settings.options["GPU021"]["taints"] == []
    assert effective.entries["rules.GPU020.taints"].origin.endswith(".gpulint.yaml:4")
    assert effective.entries["rules.GPU021.taints"].origin.endswith(":1 (gpu-taints)")


def test_select_ignore_severity_and_fail_on(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "select: [ALL]\nignore: [GPU020]\nseverity:\n  GPU003: error\nfail-on: warning\n"
    )
    (repo / "train.yaml").write_text(REDUNDANT)
    proc = run(["check", "-f", "json", "."], repo)
    got = [(f["rule"], f["severity"]) for f in findings(proc)]
    assert got == [("GPU003", "error")]
    assert proc.returncode == 1
    # The command line wins: --select replaces, --fail-on overrides.
    proc = run(["check", "-f", "json", "--select", "GPU001", "--fail-on", "error", "."], repo)
    assert findings(proc) == [] and proc.returncode == 0


def test_config_command_shows_origins(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "# team settings\nignore: [GPU021]\nseverity:\n  GPU003: error\n"
        "gpu-taints: [{key: sku, value: gpu, effect: NoSchedule}]\n"
    )
    proc = run(["config", "-f", "json", "--extend-select", "GL100", "--fail-on", "warning"], repo)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    settings = doc["settings"]
    assert settings["ignore"] == {"value": ["GPU021"], "origin": ".gpulint.yaml:2"}
    assert settings["severity.GPU003"] == {"value": "error", "origin": ".gpulint.yaml:4"}
    assert settings["severity.GPU001"]["origin"] == "default"
    assert settings["fail-on"] == {"value": "warning", "origin": "command line (--fail-on)"}
    assert settings["extend-select"]["origin"] == "command line (--extend-select)"
    assert settings["rules.GPU020.taints"]["origin"] == ".gpulint.yaml:5 (gpu-taints)"
    assert "GPU021" not in doc["enabled"] and "GPU020" in doc["enabled"]
    text = run(["config"], repo).stdout
    assert text.startswith("# configuration file: .gpulint.yaml\n")
    assert any(
        line.startswith('ignore: ["GPU021"]') and line.endswith("# .gpulint.yaml:2")
        for line in text.splitlines()
    )


def test_devices_merge_over_the_registry(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "devices:\n- name: example.com/fpga\n  hardware: fpga\n  schemes: [inhouse-fpga]\n"
    )
    # A fork's GPU-sharing name in NVIDIA's domain: unknown to the built-in registry, so
    # GPU010 warns that the registry may be behind; the configuration entry makes it known.
    manifest = GPU_DEPLOYMENT.replace("nvidia.com/gpu", "nvidia.com/vgpu-slice")
    (repo / "slice.yaml").write_text(manifest)
    isolated = run(["check", "-f", "json", "--isolated", "slice.yaml"], repo)
    assert "GPU010" in {f["rule"] for f in findings(isolated)}
    (repo / ".gpulint.yaml").write_text(
        (repo / ".gpulint.yaml").read_text()
        + "- name: nvidia.com/vgpu-slice\n  hardware: inhouse\n  schemes: [inhouse-share]\n"
        + "  constraints: {max: 8, source: in-house device plugin}\n"
    )
    proc = run(["check", "-f", "json", "slice.yaml"], repo)
    assert findings(proc) == [], proc.stdout
    # Its constraints apply like the built-in ones (GPU011).
    (repo / "slice.yaml").write_text(manifest.replace("vgpu-slice: 1", "vgpu-slice: 9"))
    proc = run(["check", "-f", "json", "slice.yaml"], repo)
    assert [f["rule"] for f in findings(proc)] == ["GPU011"]
    effective = resolve(read_config(repo / ".gpulint.yaml"), load_rules())
    registry = effective.settings.registry
    assert registry is not None and registry.get("example.com/fpga") is not None
    assert registry.get("example.com/fpga").hardware == "fpga"  # type: ignore[union-attr]
    assert registry.get("nvidia.com/gpu") is not None


def test_workloads_add_kinds(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "workloads:\n- group: example.com\n  kind: Trainer\n  pods: [spec.podTemplate.spec]\n"
    )
    (repo / "trainer.yaml").write_text(
        "apiVersion: example.com/v1\nkind: Trainer\nmetadata:\n  name: t\nspec:\n"
        "  podTemplate:\n    spec:\n      containers:\n      - name: a\n        resources:\n"
        "          requests:\n            nvidia.com/gpu: 1\n"
    )
    proc = run(["check", "-f", "json", "."], repo)
    assert "GPU001" in {f["rule"] for f in findings(proc)}
    # Without the row the pod spec is still found, by its shape; the row names the kind.
    isolated = run(["check", "-f", "json", "--isolated", "."], repo)
    assert "GPU001" in {f["rule"] for f in findings(isolated)}
    seen = json.loads(run(["inspect", "-f", "json", "."], repo).stdout)
    (workload,) = seen["files"][0]["workloads"]
    assert (workload["found_by"], workload["pods"][0]["pattern"]) == (
        "table",
        "spec.podTemplate.spec",
    )
    seen = json.loads(run(["inspect", "-f", "json", "--isolated", "."], repo).stdout)
    (workload,) = seen["files"][0]["workloads"]
    assert workload["found_by"] == "shape"


def test_a_workload_row_says_its_operator_mounts_shm(repo: Path) -> None:
    # A trainer of four GPUs running torchrun: GPU042 asks for /dev/shm, unless the kind's
    # row says its operator mounts one in the pods it makes.
    (repo / "trainer.yaml").write_text(
        "apiVersion: example.com/v1\nkind: Trainer\nmetadata:\n  name: t\nspec:\n"
        "  podTemplate:\n    spec:\n      containers:\n      - name: a\n"
        "        image: ghcr.io/example/train:1.0\n"
        "        command: [torchrun, --nproc_per_node=4, train.py]\n"
        "        resources:\n          limits:\n            nvidia.com/gpu: 4\n"
    )
    row = "workloads:\n- group: example.com\n  kind: Trainer\n  pods: [spec.podTemplate.spec]\n"
    (repo / ".gpulint.yaml").write_text(row)
    assert "GPU042" in {f["rule"] for f in findings(run(["check", "-f", "json", "."], repo))}
    (repo / ".gpulint.yaml").write_text(row + "  mounts_shm: true\n")
    assert "GPU042" not in {f["rule"] for f in findings(run(["check", "-f", "json", "."], repo))}


def test_exclude_and_force_exclude(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("exclude: [vendor, '**/*.generated.yaml']\n")
    (repo / "vendor").mkdir()
    (repo / "vendor" / "chart.yaml").write_text(GPU_DEPLOYMENT)
    (repo / "deploy" / "x.generated.yaml").write_text(GPU_DEPLOYMENT)
    (repo / "deploy" / "own.yaml").write_text(CPU_JOB_TOLERATING_SKU)
    proc = run(["check", "-f", "json", "."], repo)
    assert json.loads(proc.stdout)["summary"]["files"] == 1  # own.yaml (a walk skips the config)
    assert {Path(f["path"]).name for f in findings(proc)} <= {"own.yaml"}
    # Files named on the command line are linted unless force-exclude is set.
    named = run(["check", "-f", "json", "vendor/chart.yaml"], repo)
    assert json.loads(named.stdout)["summary"]["files"] == 1
    (repo / ".gpulint.yaml").write_text("exclude: [vendor]\nforce-exclude: true\n")
    forced = run(["check", "-f", "json", "vendor/chart.yaml"], repo)
    assert json.loads(forced.stdout)["summary"]["files"] == 0


def test_selectors_in_the_file_are_case_insensitive_as_on_the_command_line(repo: Path) -> None:
    (repo / "train.yaml").write_text(GPU_DEPLOYMENT)
    (repo / "report.yaml").write_text(CPU_JOB_TOLERATING_SKU)
    (repo / ".gpulint.yaml").write_text("gpu-taints: [{key: sku, value: gpu}]\n")
    assert {f["rule"] for f in findings(run(["check", "-f", "json", "."], repo))} == {"GPU021"}
    for content in (
        "gpu-taints: [{key: sku, value: gpu}]\nignore: [gpu02]\n",
        "gpu-taints: [{key: sku, value: gpu}]\nselect: [Gpu0, yml]\nignore: [gpu021]\n",
        "gpu-taints: [{key: sku, value: gpu}]\nper-file-ignores:\n  report.yaml: [gpu021]\n",
        "gpu-taints: [{key: sku, value: gpu}]\nper-object-ignores:\n"
        "- {name: report*, rules: [gpu021], reason: reports may run anywhere}\n",
    ):
        (repo / ".gpulint.yaml").write_text(content)
        proc = run(["check", "-f", "json", "."], repo)
        assert proc.returncode == 0, (content, proc.stderr)
        assert [f for f in findings(proc) if f["suppression"] is None] == [], content


@pytest.mark.parametrize("value", ["", "GPU9", "GPU-1", "gpu0200"])
def test_one_selector_check_for_the_command_line_and_the_file(repo: Path, value: str) -> None:
    (repo / "train.yaml").write_text(GPU_DEPLOYMENT)
    cli = run(["check", "--ignore", value, "train.yaml"], repo)
    (repo / ".gpulint.yaml").write_text(f"ignore: ['{value}']\n")
    file = run(["check", "train.yaml"], repo)
    assert cli.returncode == file.returncode == 2
    said_cli = cli.stderr.removeprefix("gpulint: error: --ignore: ")
    said_file = file.stderr.removeprefix("gpulint: error: .gpulint.yaml:1: ignore[0]: ")
    assert said_cli == said_file and said_cli != cli.stderr and said_file != file.stderr


# -- errors -----------------------------------------------------------------------------------
BAD_CONFIGS = [
    pytest.param(
        "select: [GPU001]\nseverty:\n  GPU003: error\n",
        ".gpulint.yaml:2: severty: unknown key; did you mean severity? allowed keys: baseline, "
        "cache, cluster, devices, "
        "exclude, extend-select, fail-if-no-files, fail-on, force-exclude, gpu-taints, "
        "ignore, node-pools, per-file-ignores, per-object-ignores, platform, plugins, project, "
        "render, rule-dirs, rules, select, severity, workloads",
        id="unknown-key",
    ),
    pytest.param(
        "severity:\n  GPU003: fatal\n",
        '.gpulint.yaml:2: severity.GPU003: "fatal" is not allowed; allowed values: "error", '
        '"warning", "info"',
        id="bad-severity",
    ),
    pytest.param(
        # QQQ: far from every code, so no "did you mean" whatever rules are added
        "severity:\n  QQQ999: error\n",
        ".gpulint.yaml:2: severity.QQQ999: unknown key; allowed keys: GL100, GL101, GL200, "
        "GL201, GL202, GL203, GL204, GL205, GPU001,",
        id="unknown-rule-in-severity",
    ),
    pytest.param(
        "rules:\n  GPU020:\n    taints:\n    - key: sku\n      effect: NoSchedul\n",
        '.gpulint.yaml:5: rules.GPU020.taints[0].effect: "NoSchedul" is not allowed; allowed '
        'values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
        id="bad-option-value",
    ),
    pytest.param(
        "rules:\n  GPU020:\n    tains: []\n",
        ".gpulint.yaml:3: rules.GPU020.tains: unknown key; did you mean taints? "
        "allowed keys: taints",
        id="unknown-option",
    ),
    pytest.param(
        "gpu-taints: {key: sku}\n",
        ".gpulint.yaml:1: gpu-taints: expected a list, got a mapping",
        id="wrong-type",
    ),
    pytest.param(
        "ignore: [QQQ9]\n",
        ".gpulint.yaml:1: ignore[0]: 'QQQ9' matches no rule; allowed values: GL100, GL101, "
        "GL200, GL201, GL202, GL203, GL204, GL205, GL900, GPU001,",
        id="selector-matches-nothing",
    ),
    pytest.param(
        "select: []\n",
        ".gpulint.yaml:1: select: an empty list selects no rule; leave `select` out to run",
        id="empty-select",
    ),
    pytest.param(
        "select: [GPU020, '']\n",
        ".gpulint.yaml:1: select[1]: an empty selector selects no rule; give a rule code",
        id="empty-selector",
    ),
    pytest.param(
        "per-file-ignores:\n  'charts/**': [GPU-1]\n",
        ".gpulint.yaml:2: per-file-ignores.\"charts/**\"[0]: 'GPU-1' is not a rule code (GPU001)",
        id="malformed-selector",
    ),
    pytest.param(
        "per-object-ignores:\n- kind: Deployment\n  name: nvidia-*\n",
        ".gpulint.yaml:2: per-object-ignores[0]: missing required key 'reason'",
        id="object-ignore-without-reason",
    ),
    pytest.param(
        "devices:\n- name: example.com/fpga\n  container_request: maybe\n",
        ".gpulint.yaml:3: devices[0].container_request: expected true or false, got a string",
        id="bad-device-entry",
    ),
    # A bad `workloads` row gets validate_row's hint, at the line of the field it names (the
    # README's "Supported workloads" examples, and the silently accepted row).
    pytest.param(
        "workloads:\n- group: example.com\n  kind: Trainer\n  pods: ['spec..x']\n",
        ".gpulint.yaml:4: workloads[0].pods[0]: 'spec..x' has an empty segment (two dots in a "
        "row, or a trailing dot)",
        id="bad-workload-row",
    ),
    pytest.param(
        "workloads:\n- group: batch.volcano.sh\n  kind: Job\n"
        "  pods: ['spec.tasks[].template.spec']\n",
        ".gpulint.yaml:4: workloads[0].pods[0]: 'spec.tasks[].template.spec': list items are "
        "written as '.*' (every item) or '.0' (one item), not brackets: "
        "'spec.tasks.*.template.spec'",
        id="workload-row-brackets",
    ),
    pytest.param(
        "workloads:\n- group: example.com/v1\n  kind: Trainer\n  pods: [spec.template.spec]\n",
        ".gpulint.yaml:2: workloads[0].group: 'example.com/v1' is an apiVersion; write the API "
        "group without the version ('example.com')",
        id="workload-row-apiversion",
    ),
    pytest.param(
        "select: [GPU]\nworkloads:\n- group: example.com\n  kind: Trainer\n"
        "  pods: [spec.template.spec.containers]\n",
        ".gpulint.yaml:5: workloads[0].pods[0]: 'spec.template.spec.containers' names a "
        "container list; the pod spec holding it is 'spec.template.spec'",
        id="workload-row-container-list",
    ),
    pytest.param(
        "workloads:\n- kind: Trainer\n  pods: [spec.template.spec]\n",
        ".gpulint.yaml:2: workloads[0].group: required (the API group, '' for the core group)",
        id="workload-row-missing-group",
    ),
    pytest.param(
        "rule-dirs: [no-such-folder]\n",
        ".gpulint.yaml:1: rule-dirs[0]: 'no-such-folder' is not a folder",
        id="missing-rule-dir",
    ),
    pytest.param(
        "ignore: [GPU021\n",
        ".gpulint.yaml:2: YAML syntax error",
        id="yaml-syntax",
    ),
    pytest.param(
        "ignore: [GPU021]\nignore: [GPU003]\n",
        ".gpulint.yaml:2: duplicate key 'ignore'",
        id="duplicate-key",
    ),
    pytest.param(
        "- GPU021\n",
        ".gpulint.yaml:1: the configuration must be a mapping",
        id="not-a-mapping",
    ),
]


@pytest.mark.parametrize(("content", "message"), BAD_CONFIGS)
def test_bad_configuration_is_exit_2_with_file_line_and_allowed_values(
    repo: Path, content: str, message: str
) -> None:
    (repo / ".gpulint.yaml").write_text(content)
    (repo / "train.yaml").write_text(GPU_DEPLOYMENT)
    proc = run(["check", "train.yaml"], repo)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"gpulint: error: {message}"), proc.stderr


PYPROJECT_ERRORS = [
    pytest.param(
        '[project]\nname = "x"\n\n[tool.gpulint]\nignore = ["GPU021"]\n\n'
        '[tool.gpulint.severity]\nGPU003 = "fatal"\n',
        'pyproject.toml:8: severity.GPU003: "fatal" is not allowed; allowed values: "error"',
        id="subtable",
    ),
    pytest.param(
        '[tool.gpulint]\nignore = ["GPU021"]\nrules = { GPU020 = { taints = [{ key = "sku", '
        'effect = "Nope" }] } }\n',
        'pyproject.toml:3: rules.GPU020.taints[0].effect: "Nope" is not allowed',
        id="inline-table",
    ),
    pytest.param(
        '[tool.gpulint]\nignore = ["GPU021"\n',
        "pyproject.toml: invalid TOML",
        id="toml-syntax",
    ),
]


def test_every_bad_workload_row_and_other_error_is_reported_in_file_order(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "workloads:\n- group: a.io\n  kind: A\n  containers: [spec.containers]\n"
        "- group: b.io\n  kind: B\n  podz: [spec]\nfail-on: bogus\n"
    )
    (repo / "train.yaml").write_text(GPU_DEPLOYMENT)
    proc = run(["check", "train.yaml"], repo)
    assert proc.returncode == 2
    lines = [line.split(": ", 4)[2:4] for line in proc.stderr.splitlines()]
    assert lines == [
        [".gpulint.yaml:4", "workloads[0].containers[0]"],
        [".gpulint.yaml:5", "workloads[1]"],  # no location: at the row
        [".gpulint.yaml:7", "workloads[1].podz"],
        [".gpulint.yaml:8", "fail-on"],
    ], proc.stderr


@pytest.mark.parametrize(("content", "message"), PYPROJECT_ERRORS)
def test_bad_pyproject_is_exit_2(repo: Path, content: str, message: str) -> None:
    (repo / "pyproject.toml").write_text(content)
    proc = run(["check", "--config", "pyproject.toml", "."], repo)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"gpulint: error: {message}"), proc.stderr


def test_every_problem_is_reported_at_once(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text("severity:\n  GPU003: fatal\ncolour: red\n")
    proc = run(["check", "."], repo)
    lines = proc.stderr.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("gpulint: error: .gpulint.yaml:2: severity.GPU003")
    assert lines[1].startswith("gpulint: error: .gpulint.yaml:3: colour: unknown key")


def test_missing_explicit_config(repo: Path) -> None:
    proc = run(["check", "--config", "nope.yaml", "."], repo)
    assert proc.returncode == 2
    assert proc.stderr == "gpulint: error: nope.yaml: no such configuration file\n"


def test_resolve_raises_config_error(rules: list[Any], tmp_path: Path) -> None:
    path = tmp_path / ".gpulint.yaml"
    path.write_text("fail-on: never\n")
    with pytest.raises(ConfigError, match=r':1: fail-on: "never" is not allowed'):
        resolve(read_config(path), rules, Overrides())


# -- the schema -------------------------------------------------------------------------------
def _builtin_rules() -> list[Any]:
    return [r for r in load_rules() if r.origin == "built-in"]


def test_committed_schema_is_generated_from_the_rule_options() -> None:
    committed = json.loads((ROOT / "schemas" / "config.schema.json").read_text())
    assert committed == config_schema(_builtin_rules()), (
        "schemas/config.schema.json is stale: run `make generate`"
    )


def test_the_static_part_of_the_schema_says_what_a_selector_is_as_messages_do() -> None:
    from gpulint.config.keys import base_schema

    base = base_schema()
    props = base["properties"]
    selectors = [props[k] for k in ("select", "extend-select", "ignore")]
    selectors.append(props["per-file-ignores"]["additionalProperties"])
    selectors.append(props["per-object-ignores"]["items"]["properties"]["rules"])
    assert [s["items"]["description"] for s in selectors] == [SELECTOR_HELP] * 5


def test_schema_is_valid_and_carries_every_option() -> None:
    from jsonschema import Draft202012Validator

    schema = config_schema(_builtin_rules())
    Draft202012Validator.check_schema(schema)
    rules_schema = schema["properties"]["rules"]["properties"]
    for rule in _builtin_rules():
        assert rules_schema[rule.code]["properties"] == dict(rule.options_schema)
        for name, spec in rule.options_schema.items():
            Draft202012Validator(spec).validate(spec["default"])
            assert spec.get("description") or name in (rule.section("Options") or ""), (
                f"{rule.code} option {name} is undocumented"
            )


def test_device_entries_use_the_registry_schema() -> None:
    devices = json.loads((ROOT / "schemas" / "devices.schema.json").read_text())
    schema = config_schema(_builtin_rules())
    device = schema["$defs"]["device"]
    assert set(device["properties"]) == set(devices["$defs"]["resource"]["properties"])
    assert device["required"] == ["name"]


def test_one_selector_matcher_for_selection_and_ignores() -> None:
    """`select`/`ignore`, `per-file-ignores` and `per-object-ignores` choose rules alike."""
    from gpulint.lint import engine
    from gpulint.model import selects
    from gpulint.suppress import findings as suppress

    cases = [
        ("GPU020", ("GPU0",), True),
        ("GPU020", ("GPU020",), True),
        ("GPU020", ("GPU1", "GL"), False),
        ("GL100", ("ALL",), True),
        ("GPU020", (), False),
    ]
    for code, selectors, expected in cases:
        assert selects(code, selectors) is expected
    # Selection (engine.is_enabled) and the ignores (suppress) call this one matcher.
    assert engine.selects is selects
    assert suppress.selects is selects


def test_a_huge_configuration_file_is_refused_before_it_is_composed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    padding = "# padding\n" * 120_000  # 1.2 MB: no real configuration is near 1 MiB
    (tmp_path / ".gpulint.yaml").write_text("ignore: [GPU021]\n" + padding, encoding="utf-8")
    (tmp_path / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    proc = run(["check", "pod.yaml"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "gpulint: error: .gpulint.yaml: larger than 1 MiB: not read (a mistake?)\n"
    )


def test_a_fifo_named_like_a_configuration_file_never_blocks(tmp_path: Path) -> None:
    """A pipe planted in a pull request cannot hang a run: discovery passes over it, --config
    refuses it, and the reader opens without blocking and takes regular files only."""
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".gpulint.yaml")
    (tmp_path / "pod.yaml").write_text(GPU_POD, encoding="utf-8")
    found = run(["check", "--format", "json", "pod.yaml"], tmp_path)
    assert json.loads(found.stdout)["summary"]["files"] == 1, found.stderr
    named = run(["check", "--config", ".gpulint.yaml", "pod.yaml"], tmp_path)
    assert named.returncode == 2 and named.stdout == ""
    with pytest.raises(SourceError, match="not a regular file"):
        load_one_document(tmp_path / ".gpulint.yaml")


def test_every_configuration_problem_in_one_run(repo: Path) -> None:
    """The schema's problems and the ones past it (selectors that match no rule) come in
    one run, in file order: a user fixes them all at once, not in waves."""
    (repo / "train.yaml").write_text(GPU_DEPLOYMENT)
    (repo / ".gpulint.yaml").write_text(
        "select: [QQQ1]\nignore: [ZZZ9]\nper-file-ignores:\n  '*.yaml': [YYY1]\nfail-on: fatal\n"
    )
    proc = run(["check", "train.yaml"], repo)
    assert proc.returncode == 2
    where = [line.split(": ", 3)[2] for line in proc.stderr.splitlines()]
    assert where == [".gpulint.yaml:1", ".gpulint.yaml:2", ".gpulint.yaml:4", ".gpulint.yaml:5"]


def test_each_key_feeds_a_setting_and_each_configured_setting_has_its_key() -> None:
    """gpulint.config.keys says which Settings value each key feeds: a real one, and every
    value the configuration builds (the rest are the project's facts) comes from a key."""
    from gpulint.config.keys import KEYS
    from gpulint.settings import Settings

    fed = {key.setting for key in KEYS if key.setting is not None}
    facts = {"evidence", "dra", "config_maps", "crds", "runtimes"}  # gathered from the files
    assert fed == set(Settings.__slots__) - facts


#: A value for every key's flag (gpulint.config.keys.Key.flag): a key that gets a flag gets a
#: row here, or the test below fails.
_FLAG_VALUES: dict[str, Any] = {
    "select": ["GPU001"],
    "extend-select": ["GPU003"],
    "ignore": ["GPU002"],
    "fail-on": "info",
    "fail-if-no-files": True,
    "plugins": ["tests.plugin_pkg"],
    "rule-dirs": ["rules-here"],
    "cluster": ["nodes.yaml"],
    "platform": "gke",
    "baseline": "other-baseline.json",
}

_NODES = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: gpu-1, labels: {kubernetes.io/hostname: gpu-1}}
  status: {allocatable: {nvidia.com/gpu: "8", cpu: "64", memory: 512Gi, pods: "110"}}
"""


def test_every_flag_of_the_table_wins_over_the_file_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each key with a flag, given on the command line, is taken from it (added to the
    file's list when its row says ``extend``) and ``gpulint config`` says it came from
    that flag: --plugin, --rule-dir and --baseline as --select does."""
    from gpulint.config.keys import COMMAND_LINE, KEYS

    flagged = {key.name: key for key in KEYS if key.flag is not None}
    assert set(_FLAG_VALUES) == set(flagged)
    (tmp_path / "nodes.yaml").write_text(_NODES, encoding="utf-8")
    (tmp_path / ".gpulint.yaml").write_text(
        "plugins: [tests.other]\nrule-dirs: [mine]\nbaseline: base.json\n", encoding="utf-8"
    )
    (tmp_path / "mine").mkdir()
    monkeypatch.chdir(tmp_path)
    config = load_config(str(tmp_path / ".gpulint.yaml"))
    cli = Overrides(**{name.replace("-", "_"): value for name, value in _FLAG_VALUES.items()})
    entries = resolve(config, _builtin_rules(), cli).entries
    for name, key in flagged.items():
        value = _FLAG_VALUES[name]
        assert entries[name].origin.endswith(f"{COMMAND_LINE} ({key.flag})"), name
        if key.combine == "extend" and name in config.data:
            assert entries[name].value == [*config.data[name], *value], name
        else:
            assert entries[name].value == value, name


def test_config_shows_the_rule_dirs_and_plugins_of_the_command_line(repo: Path) -> None:
    (repo / "mine").mkdir()
    (repo / ".gpulint.yaml").write_text("baseline: base.json\n")
    proc = run(["config", "-f", "json", "--rule-dir", "mine"], repo)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads(proc.stdout)["settings"]
    assert settings["rule-dirs"] == {"value": ["mine"], "origin": "command line (--rule-dir)"}
    assert settings["baseline"] == {"value": "base.json", "origin": ".gpulint.yaml:1"}


def _schema_at(schema: dict[str, Any], where: tuple[str, ...]) -> dict[str, Any]:
    from gpulint.config.keys import EVERY, NAMES

    for step in where:
        if step == NAMES:
            return {"type": "string"}  # a mapping's names are strings
        if step == EVERY:
            schema = schema.get("items") or schema["additionalProperties"]
        else:
            schema = (
                schema["items"]["properties"][step]
                if "items" in schema
                else schema["properties"][step]
            )
    return schema


def test_each_rows_selectors_and_globs_are_strings_of_its_schema() -> None:
    """Where a row says its value holds selectors or globs is a string of its schema, so
    validation finds every one through the table (and a new key's are checked with it)."""
    from gpulint.config.keys import KEYS, SELECTOR

    for key in KEYS:
        for where in key.selectors:
            assert _schema_at(key.schema, where) == SELECTOR, (key.name, where)
        for where in key.globs:
            assert _schema_at(key.schema, where)["type"] == "string", (key.name, where)


def test_every_glob_and_selector_of_the_table_is_checked_at_its_line(repo: Path) -> None:
    (repo / ".gpulint.yaml").write_text(
        "exclude: ['a[']\n"
        "per-file-ignores:\n  'b[': [GPU001]\n  'ok/*': [QQQ1]\n"
        "per-object-ignores:\n"
        "- {kind: 'c[', namespace: 'd[', name: 'e[', path: 'f[', rules: [ZZZ2], reason: r}\n"
    )
    (repo / "pod.yaml").write_text(GPU_POD)
    proc = run(["check", "pod.yaml"], repo)
    assert proc.returncode == 2
    said = [line.split(": ")[2:4] for line in proc.stderr.splitlines()]
    assert [where for where, _ in said] == [
        ".gpulint.yaml:1", ".gpulint.yaml:3", ".gpulint.yaml:4",
        *[".gpulint.yaml:6"] * 5,
    ]  # fmt: skip
    assert [why.split(":")[0] for _, why in said] == [
        "exclude[0]", 'per-file-ignores."b["', 'per-file-ignores."ok/*"[0]',
        "per-object-ignores[0].rules[0]", "per-object-ignores[0].kind",
        "per-object-ignores[0].namespace", "per-object-ignores[0].name",
        "per-object-ignores[0].path",
    ]  # fmt: skip


def test_a_flag_replaces_or_adds_to_the_files_value_as_its_key_says(tmp_path: Path) -> None:
    """The precedence the table declares: --select replaces the file's list, --ignore adds
    to it, --fail-on replaces the value; each entry says where it came from."""
    (tmp_path / ".gpulint.yaml").write_text(
        "select: [GPU001]\nignore: [GPU002]\nfail-on: warning\n", encoding="utf-8"
    )
    config = load_config(str(tmp_path / ".gpulint.yaml"))
    cli = Overrides(select=["GPU01"], ignore=["GPU003"], fail_on="info")
    entries = resolve(config, _builtin_rules(), cli).entries
    assert entries["select"].value == ["GPU01"]
    assert entries["select"].origin == "command line (--select)"
    assert entries["ignore"].value == ["GPU002", "GPU003"]
    assert entries["ignore"].origin.endswith(":2 + command line (--ignore)")
    assert (entries["fail-on"].value, entries["fail-on"].origin) == (
        "info",
        "command line (--fail-on)",
    )
    plain = resolve(config, _builtin_rules()).entries
    assert plain["fail-on"].value == "warning" and plain["fail-on"].origin.endswith(":3")
