"""The ``gpulint`` command line: its options, messages and exit codes.

Run in-process through the console entry point (tests/conftest.py, gpulint_in_process), except
where the process itself is the subject: the installed console script, stdin and stdout on a
pipe, colour on a terminal (gpulint_subprocess).
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gpulint import __version__
from gpulint.lint.finder import load_rules
from tests.conftest import ROOT, RULE_FIXTURES, gpulint_cmd, gpulint_in_process, gpulint_subprocess

REPORT_SCHEMA = ROOT / "schemas" / "report.schema.json"

#: ``path:line:col: CODE severity: message [Kind/name]`` (the object is absent for YMLxxx
#: findings about the file itself).
LINE = re.compile(
    r"^(?P<path>.+?):(?P<line>[1-9]\d*):(?P<col>[1-9]\d*): (?P<rule>[A-Z]+\d+) "
    r"(?P<severity>error|warning|info): (?P<message>.+?)(?: \[(?P<object>[^\[\]/]+/[^\[\]]+)\])?$"
)
#: The line before the summary that says what was assumed of an undescribed cluster.
NOTE = "note: assumed GPU taint "
SUMMARY = re.compile(
    r"^(All checks passed: no findings in \d+ files?\.|No files linted: nothing was checked\."
    r"|(Found \d+ problems? \(\d+ errors?, \d+ warnings?, \d+ info\)( and \d+ notices?)?"
    r" in \d+ files?|No problems found( and \d+ notices?)? in \d+ files?|No files linted)"
    r"(, \d+ suppressed)?(\.|; \d+ tool errors?: not everything was checked\.))$"
)
ANSI = re.compile(r"\x1b\[[0-9;]*m")

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  containers:
  - name: train
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      requests:
        nvidia.com/gpu: 1
"""
# GPU021, which (with no cluster described, on gpulint's assumed taint) is info.
WARNING_ONLY = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  tolerations:
  - operator: Exists
  containers:
  - name: web
    image: nginx:1.27.0
"""
# GPU024 (a warning, whatever the cluster): a pod field inside a container.
MISPLACED = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx:1.27.0
    nodeSelector: {disktype: ssd}
"""
CLEAN = """\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx:1.27.0
"""


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.update(extra)
    return env


def gpulint(
    *args: str | Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    run: Callable[..., subprocess.CompletedProcess[Any]] = gpulint_in_process,
) -> subprocess.CompletedProcess[str]:
    """``gpulint ARGS`` in the environment without NO_COLOR and FORCE_COLOR (unless ``env``)."""
    return run(*args, stdin=stdin, env=env if env is not None else clean_env(), cwd=cwd)


def parse_text(stdout: str) -> list[dict[str, str]]:
    """The finding lines of text output, each with its help line (``help``, or None);
    asserts the shape of every line."""
    lines = stdout.splitlines()
    assert lines, "text output ends with a summary line"
    assert SUMMARY.match(lines[-1]), lines[-1]
    if len(lines) > 1 and lines[-2].startswith(NOTE):
        del lines[-2]  # what the rules assumed of the cluster, once, before the summary
    findings = []
    for line in lines[:-1]:
        if line.startswith("  help: ") and findings and findings[-1]["help"] is None:
            findings[-1]["help"] = line[len("  help: ") :]
            continue
        match = LINE.match(line)
        assert match, f"not `path:line:col: CODE severity: message [Kind/name]`: {line!r}"
        findings.append({**match.groupdict(), "help": None})
    return findings


def assert_usage_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines, "a usage error says what is wrong"
    assert all(line.startswith("gpulint: error: ") for line in lines), proc.stderr
    for needle in needles:
        assert needle in proc.stderr


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A folder of manifests with the kinds of clutter a repository has."""
    (tmp_path / "apps" / "nested").mkdir(parents=True)
    (tmp_path / "apps" / "trainer.yaml").write_text(GPU_POD)
    (tmp_path / "apps" / "nested" / "web.yml").write_text(WARNING_ONLY)
    (tmp_path / "apps" / "notes.txt").write_text(GPU_POD)
    (tmp_path / "apps" / "Chart.yaml.bak").write_text(GPU_POD)
    (tmp_path / "a-first.yaml").write_text(CLEAN)
    for skipped in (".git", "node_modules", ".venv", "__pycache__", ".tox"):
        (tmp_path / skipped).mkdir()
        (tmp_path / skipped / "pod.yaml").write_text(GPU_POD)
    return tmp_path


# -- text output -----------------------------------------------------------------------------


def test_text_lines_have_the_documented_shape() -> None:
    fixture = RULE_FIXTURES / "GPU001" / "fail-every-workload-kind.yaml"
    proc = gpulint("check", fixture)
    assert proc.returncode == 1
    assert proc.stderr == ""
    findings = parse_text(proc.stdout)
    assert {f["rule"] for f in findings} == {"GPU001"}
    assert [f["object"] for f in findings] == [
        "Pod/cuda-vectoradd",
        "Deployment/triton",
        "StatefulSet/milvus-querynode",
        "DaemonSet/gpu-burn-in",
        "ReplicaSet/stable-diffusion",
        "ReplicationController/caffe-classifier",
        "Job/nccl-tests",
        "CronJob/nightly-embeddings",
        "PodTemplate/gpu-runner-template",
    ]
    assert all(f["path"] == str(fixture) for f in findings)
    assert (
        proc.stdout.splitlines()[-1] == "Found 9 problems (9 errors, 0 warnings, 0 info) in 1 file."
    )


def test_text_and_json_report_the_same_findings() -> None:
    folder = RULE_FIXTURES / "GPU020"
    text = parse_text(gpulint("check", folder).stdout)
    report = json.loads(gpulint("check", "--format", "json", folder).stdout)
    as_text = [(f["path"], int(f["line"]), int(f["col"]), f["rule"]) for f in text]
    # JSON also lists what a suppression comment silenced (with its ``suppression``).
    as_json = [
        (f["path"], f["line"], f["column"], f["rule"])
        for f in report["findings"]
        if f.get("suppression") is None
    ]
    assert as_text == as_json
    assert len(as_text) > 10


def test_clean_input_says_so(tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(CLEAN)
    proc = gpulint("check", tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "All checks passed: no findings in 1 file.\n")


def test_findings_about_the_file_have_no_object(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [model]-server\n")
    (finding,) = parse_text(gpulint("check", broken).stdout)
    assert (finding["rule"], finding["line"], finding["col"]) == ("YML001", "4", "16")
    assert finding["object"] is None


# -- files, directories and stdin ------------------------------------------------------------


def test_directories_are_walked_in_order_skipping_clutter(tree: Path) -> None:
    report = json.loads(
        gpulint("check", "--format", "json", "--fail-on", "info", ".", cwd=tree).stdout
    )
    paths = [f["path"] for f in report["findings"]]
    # Sorted names, a folder's files before its subfolders (as `find` lists them).
    assert paths == [
        os.path.join("apps", "trainer.yaml"),
        os.path.join("apps", "trainer.yaml"),
        os.path.join("apps", "nested", "web.yml"),
    ]
    assert report["summary"]["files"] == 3  # a-first.yaml, apps/nested/web.yml, trainer.yaml
    assert report["summary"]["exit_code"] == 1


@pytest.mark.parametrize(
    "layout",
    [
        {"go.mod": "module example.com/gpu-scheduler\n"},
        {"glide.yaml": "package: github.com/example/gpu-scheduler\n"},
        {"vendor/modules.txt": "# k8s.io/api v0.31.0\n"},
        {},  # the folder holds only import paths' hosts
    ],
)
def test_a_go_vendor_folder_is_not_walked(tmp_path: Path, layout: dict[str, str]) -> None:
    """A Go project's vendored dependencies (a copy of Kubernetes' tree with its old
    manifests) are not the project's files; a folder named vendor that holds manifests of
    the project's own is walked."""
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "scheduler.yaml").write_text(CLEAN)
    vendored = tmp_path / "vendor" / "k8s.io" / "kubernetes" / "examples"
    vendored.mkdir(parents=True)
    (vendored / "pod.yaml").write_text(GPU_POD)
    for name, text in layout.items():
        (tmp_path / name).write_text(text)
    proc = gpulint("check", ".", cwd=tmp_path)
    files = 2 if "glide.yaml" in layout else 1  # glide.yaml is YAML, read and left alone
    assert (proc.returncode, proc.stdout) == (
        0,
        f"All checks passed: no findings in {files} file{'s' if files > 1 else ''}.\n",
    )
    # Named on the command line, a vendored file is linted like any other.
    assert gpulint("check", vendored / "pod.yaml").returncode == 1


def test_a_folder_named_vendor_with_manifests_of_its_own_is_walked(tmp_path: Path) -> None:
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "pod.yaml").write_text(GPU_POD)
    assert gpulint("check", ".", cwd=tmp_path).returncode == 1


def test_the_order_of_output_does_not_depend_on_the_order_of_creation(tmp_path: Path) -> None:
    names = ["b.yaml", "a.yaml", "c.yml", "A.yaml"]
    for name in names:
        (tmp_path / name).write_text(GPU_POD)
    report = json.loads(gpulint("check", "--format", "json", tmp_path).stdout)
    seen = list(dict.fromkeys(Path(f["path"]).name for f in report["findings"]))
    assert seen == sorted(names)


def test_files_named_explicitly_are_linted_whatever_their_extension(tree: Path) -> None:
    proc = gpulint("check", tree / "apps" / "notes.txt", tree / "apps" / "notes.txt")
    findings = parse_text(proc.stdout)
    assert [f["rule"] for f in findings] == ["GPU020", "GPU001"]
    assert proc.stdout.splitlines()[-1].endswith("in 1 file.")  # the repeat is linted once


def test_stdin_with_a_filename(tmp_path: Path) -> None:
    # A real pipe on stdin.
    proc = gpulint(
        "check",
        "--stdin-filename",
        "charts/trainer/pod.yaml",
        "-",
        stdin=GPU_POD,
        run=gpulint_subprocess,
    )
    findings = parse_text(proc.stdout)
    assert {f["path"] for f in findings} == {"charts/trainer/pod.yaml"}
    assert [(f["rule"], f["line"]) for f in findings] == [("GPU020", "6"), ("GPU001", "12")]
    assert proc.returncode == 1


def test_stdin_without_a_filename_and_with_files(tmp_path: Path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(GPU_POD)
    proc = gpulint("check", "-", pod, stdin="---\n" + GPU_POD)
    paths = [f["path"] for f in parse_text(proc.stdout)]
    assert paths == ["<stdin>", "<stdin>", str(pod), str(pod)]
    assert proc.stdout.splitlines()[-1].endswith("in 2 files.")


def test_helm_template_output_on_stdin() -> None:
    rendered = "---\n# Source: chart/templates/sa.yaml\n---\n" + GPU_POD + "---\n"
    proc = gpulint("check", "-", stdin=rendered)
    assert [f["line"] for f in parse_text(proc.stdout)] == ["9", "15"]


def test_a_fifo_is_reported_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    proc = gpulint("check", tmp_path)
    findings = parse_text(proc.stdout)
    assert [(Path(f["path"]).name, f["rule"]) for f in findings] == [
        ("pipe.yaml", "YML005"),
        ("pod.yaml", "GPU020"),
        ("pod.yaml", "GPU001"),
    ]


def test_broken_files_do_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "a-binary.yaml").write_bytes(b"\x00\x01\x02")
    (tmp_path / "b-latin1.yaml").write_bytes("name: modèle\n".encode("latin-1"))
    (tmp_path / "c-syntax.yaml").write_text("apiVersion: v1\nkind: Pod\na: [\n")
    (tmp_path / "d-pod.yaml").write_text(GPU_POD)
    proc = gpulint("check", tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == ""
    rules = [(Path(f["path"]).name, f["rule"]) for f in parse_text(proc.stdout)]
    assert rules == [
        ("a-binary.yaml", "YML005"),
        ("b-latin1.yaml", "YML005"),
        ("c-syntax.yaml", "YML001"),
        ("d-pod.yaml", "GPU020"),
        ("d-pod.yaml", "GPU001"),
    ]


# -- JSON contract ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report_schema() -> dict[str, Any]:
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert isinstance(schema, dict)
    return schema


def undocumented(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Iterator[str]:
    """Fields in ``value`` that the schema does not describe (it allows extra ones)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        yield from undocumented(value, root["$defs"][name], root)
        return
    for option in schema.get("oneOf", ()):
        if option.get("type") != "null" and value is not None:
            yield from undocumented(value, option, root)
    if isinstance(value, dict) and "properties" in schema:
        for key, item in value.items():
            if key not in schema["properties"]:
                yield key
            else:
                yield from undocumented(item, schema["properties"][key], root)
    if isinstance(value, list) and "items" in schema:
        for item in value:
            yield from undocumented(item, schema["items"], root)


def test_json_report_follows_the_schema(report_schema: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\na: [\n")
    proc = gpulint(
        "check",
        "--format",
        "json",
        RULE_FIXTURES / "GPU020",
        RULE_FIXTURES / "YML003",
        RULE_FIXTURES / "GPU001" / "fail-list-items.yaml",
        tmp_path,
    )
    report = json.loads(proc.stdout)
    Draft202012Validator(report_schema).validate(report)
    assert list(undocumented(report, report_schema, report_schema)) == []
    # Every field the issue names is there, with the documented meaning.
    finding = next(f for f in report["findings"] if f["rule"] == "GPU001")
    assert finding["object"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "serving",
        "name": "llm-worker-0",
    }
    assert (finding["line"], finding["column"], finding["end_line"], finding["end_column"]) == (
        41,
        11,
        41,
        25,
    )
    assert finding["yaml_path"] == [
        "items",
        1,
        "spec",
        "containers",
        0,
        "resources",
        "requests",
        "nvidia.com/gpu",
    ]
    assert finding["name"] == "extended-resource-requests-without-limits"
    assert finding["severity"] == "error"
    assert finding["document"] == 0
    syntax = next(f for f in report["findings"] if f["rule"] == "YML001")
    assert syntax["object"] is None
    summary = report["summary"]
    assert report["version"] == __version__
    counted = [f for f in report["findings"] if f.get("suppression") is None]
    assert summary["findings"] == len(counted)
    assert summary["suppressed"] == len(report["findings"]) - len(counted)
    assert summary["errors"] == sum(f["severity"] == "error" for f in counted)
    assert summary["warnings"] == sum(f["severity"] == "warning" for f in counted)
    assert summary["exit_code"] == proc.returncode == 1
    assert summary["fail_on"] == "error"


def test_json_report_of_a_clean_run(report_schema: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "web.yaml").write_text(CLEAN)
    proc = gpulint("check", "-f", "json", "--fail-on", "warning", tmp_path)
    report = json.loads(proc.stdout)
    Draft202012Validator(report_schema).validate(report)
    assert report["findings"] == []
    assert report["summary"] == {
        "files": 1,
        "findings": 0,
        "errors": 0,
        "warnings": 0,
        "info": 0,
        "notices": 0,
        "suppressed": 0,
        "fixed": 0,
        "fixable": 0,
        "unsafe_fixable": 0,
        "fail_on": "warning",
        "exit_code": 0,
        "tool_errors": 0,
    }
    assert proc.returncode == 0


def test_json_is_never_coloured() -> None:
    proc = gpulint("check", "--format", "json", "--color", "always", RULE_FIXTURES / "GPU004")
    assert not ANSI.search(proc.stdout)
    json.loads(proc.stdout)


# -- rules and rule --------------------------------------------------------------------------


def rule_entries(stdout: str) -> list[list[str]]:
    """`gpulint rules` output as one list of lines per rule (continuations are indented)."""
    entries: list[list[str]] = []
    for line in stdout.splitlines():
        if line.startswith(" "):
            entries[-1].append(line)
        else:
            entries.append([line])
    return entries


def test_rules_lists_one_line_per_rule_gpu_rules_first() -> None:
    env = {k: v for k, v in clean_env().items() if k != "COLUMNS"}
    proc = gpulint("rules", env=env)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    rules = {r.code: r for r in load_rules()}
    assert sorted(line.split()[0] for line in lines) == sorted(rules)
    families = [line.split()[0].rstrip("0123456789") for line in lines]
    assert families == sorted(families, key=["GPU", "YML", "GL"].index)
    for line in lines:
        code, name, severity, *rest = line.split()
        rule = rules[code]
        assert (name, severity) == (rule.name, rule.severity.label)
        # "fix": --fix applies it; "unsafe-fix": only --unsafe-fixes does (as ruff marks them)
        marks = {"safe": "fix", "unsafe": "unsafe-fix", None: None}
        assert marks[rule.fix] in (None, *rest) and ("opt-in" in rest) == rule.opt_in
        assert ("fix" in rest or "unsafe-fix" in rest) == rule.fixable
        assert len(line) <= 100
    gpu003 = next(line for line in lines if line.startswith("GPU003"))
    assert gpu003.split()[3:5] == ["fix", "opt-in"]


def test_rules_long_lists_the_catalog() -> None:
    env = {k: v for k, v in clean_env().items() if k != "COLUMNS"}
    proc = gpulint("rules", "--long", env=env)
    assert proc.returncode == 0
    entries = rule_entries(proc.stdout)
    rules = load_rules()
    assert [entry[0].split()[0] for entry in entries] == [r.code for r in rules]
    for entry, rule in zip(entries, rules, strict=True):
        assert entry[0].split()[1:3] == [rule.name, rule.severity.label]
        # The whole summary, wrapped between words: nothing cut off, no word split.
        words = " ".join(" ".join(entry).split())
        assert words == f"{rule.code} {rule.name} {rule.severity.label} {rule.summary}"


@pytest.mark.parametrize("columns", [None, "60", "80", "120", "250"])
def test_rules_lines_fit_the_terminal(columns: str | None) -> None:
    # Not a terminal here: COLUMNS when set (as shells export it), else 100 columns.
    env = {k: v for k, v in clean_env().items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    width = int(columns or 100)
    lines = gpulint("rules", "--long", env=env).stdout.splitlines()
    assert len(rule_entries("\n".join(lines))) == len(load_rules())
    short = gpulint("rules", env=env).stdout.splitlines()
    assert len(short) == len(load_rules())
    assert all(len(line) <= max(width, 70) for line in short)
    # A line is longer only when it holds a single word that is (a URL, say).
    assert all(len(line) <= width or len(line.split()) == 1 for line in lines)
    if width >= 120:
        assert max(len(line) for line in lines) > width - 20, "wide terminals are used"


@pytest.mark.parametrize(
    "spelling", ["GPU001", "gpu001", "extended-resource-requests-without-limits"]
)
def test_rule_prints_its_documentation(spelling: str) -> None:
    proc = gpulint("rule", spelling)
    assert proc.returncode == 0
    assert proc.stdout.startswith("# GPU001: extended-resource-requests-without-limits\n")
    assert "Default severity: error" in proc.stdout
    for section in ("What it does", "Why it matters", "Example", "Use instead", "Options"):
        assert f"## {section}" in proc.stdout


def test_every_rule_has_the_documented_sections() -> None:
    sections = ("What it does", "Why it matters", "Example", "Use instead", "Options", "References")
    for rule in load_rules():
        for section in sections:
            assert rule.section(section), f"{rule.code} has no '## {section}' section"


def test_unknown_rule_is_a_usage_error() -> None:
    assert_usage_error(gpulint("rule", "GPU999"), "GPU999")


# -- selection -------------------------------------------------------------------------------


def codes(*args: str | Path) -> set[str]:
    report = json.loads(gpulint("check", "--format", "json", *args).stdout)
    return {f["rule"] for f in report["findings"]}


@pytest.fixture(scope="module")
def busy_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One file with findings of several rules: GPU001, GPU004, GPU020, GPU021, YML002."""
    path = tmp_path_factory.mktemp("busy") / "busy.yaml"
    path.write_text(
        GPU_POD
        + "        nvidia.com/gpu: 1\n"
        + "      limits:\n        rdma/ib: 0.5\n---\n"
        + WARNING_ONLY
    )
    return path


def test_all_rules_run_by_default(busy_file: Path) -> None:
    assert codes(busy_file) == {"GPU001", "GPU004", "GPU020", "GPU021", "YML002"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--select", "GPU0"], {"GPU001", "GPU004", "GPU020", "GPU021"}),
        (["--select", "GPU00"], {"GPU001", "GPU004"}),
        (["--select", "GPU020,GPU021"], {"GPU020", "GPU021"}),
        (["--select", "gpu020", "--select", "YML"], {"GPU020", "YML002"}),
        (["--select", "ALL", "--ignore", "GPU02"], {"GPU001", "GPU004", "YML002"}),
        (["--ignore", "YML,GPU004"], {"GPU001", "GPU020", "GPU021"}),
        (["--select", "GPU001", "--extend-select", "YML002"], {"GPU001", "YML002"}),
        (["--extend-select", "GPU004", "--ignore", "GPU"], {"YML002"}),
    ],
)
def test_select_ignore_and_extend_select(
    busy_file: Path, args: list[str], expected: set[str]
) -> None:
    assert codes(*args, busy_file) == expected


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
def test_a_selector_that_matches_no_rule_is_a_usage_error(option: str, busy_file: Path) -> None:
    proc = gpulint("check", option, "GPU999", busy_file)
    assert_usage_error(proc, option, "GPU999")
    assert proc.stdout == ""


@pytest.mark.parametrize("option", ["--select", "--ignore", "--extend-select"])
@pytest.mark.parametrize("value", ["", " ", "GPU0,", "GPU0,,YML"])
def test_an_empty_selector_is_a_usage_error(option: str, value: str, busy_file: Path) -> None:
    proc = gpulint("check", option, value, busy_file)
    assert_usage_error(proc, f"{option}: an empty selector selects no rule")
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("GPU-1", "'GPU-1' is not a rule code (GPU001), a prefix of codes (GPU0, GPU) or ALL"),
        ("GPU0200", "'GPU0200' matches no rule (did you mean GPU020?); allowed values: GL100,"),
    ],
)
def test_a_malformed_selector_names_what_selectors_are(
    value: str, needle: str, busy_file: Path
) -> None:
    assert_usage_error(gpulint("check", "--select", value, busy_file), f"--select: {needle}")


@pytest.mark.parametrize("command", ["check", "inspect"])
def test_stdin_filename_without_dash_is_a_usage_error(command: str, busy_file: Path) -> None:
    proc = gpulint(command, "--stdin-filename", "chart.yaml", busy_file)
    assert_usage_error(
        proc, "--stdin-filename names the input read from stdin, but '-' is not among the paths"
    )
    assert proc.stdout == ""
    # With '-' it names what stdin holds.
    piped = gpulint(command, "-", "--stdin-filename", "chart.yaml", stdin=busy_file.read_text())
    assert piped.returncode in (0, 1) and "chart.yaml" in piped.stdout


@pytest.mark.parametrize(
    ("typo", "suggested"),
    [
        ("--bogus", None),  # click suggested --jobs
        ("--xyz", None),
        ("--jbos", "--jobs"),
        ("--selct", "--select, --set"),  # --set: a Helm value for charts rendered
        ("--ignroe", "--ignore"),
        ("--isloated", "--isolated"),
    ],
)
def test_an_unknown_option_suggests_only_close_names(
    typo: str, suggested: str | None, busy_file: Path
) -> None:
    proc = gpulint("check", typo, busy_file)
    assert_usage_error(proc, f"No such option: {typo}")
    if suggested is None:
        assert "Possible options" not in proc.stderr
    else:
        assert f"(Possible options: {suggested})" in proc.stderr


def test_an_unknown_option_before_the_command_suggests_only_close_names() -> None:
    assert "Possible options" not in gpulint("--bogus").stderr
    assert "(Possible options: --version)" in gpulint("--verison").stderr


def test_check_help_says_what_no_path_means_and_lists_the_exit_codes() -> None:
    proc = gpulint("check", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "With no paths, lints the current directory" in text
    assert "Default: the current directory." in text
    lines = [line.strip() for line in proc.stdout.splitlines()]
    at = next(i for i, line in enumerate(lines) if line.startswith("Exit codes"))
    assert [line.split()[0] for line in lines[at + 1 : at + 4]] == ["0", "1", "2"]
    # Every way to exit 1, as the README's table says.
    assert "no file linted with --fail-if-no-files" in lines[at + 2]


def test_config_that_is_a_directory_says_so(tmp_path: Path, busy_file: Path) -> None:
    folder = tmp_path / "settings"
    folder.mkdir()
    proc = gpulint("check", "--config", folder, busy_file)
    assert_usage_error(proc, f"{folder}: is a directory; --config takes a configuration file")
    assert "did you mean" not in proc.stderr
    (folder / ".gpulint.yaml").write_text("ignore: [GPU021]\n")
    proc = gpulint("check", "--config", folder, busy_file)
    assert_usage_error(proc, f"(did you mean {folder / '.gpulint.yaml'}?)")


# -- exit codes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "fail_on", "code"),
    [
        (CLEAN, "info", 0),
        (MISPLACED, "error", 0),
        (MISPLACED, "warning", 1),
        (MISPLACED, "info", 1),
        (WARNING_ONLY, "warning", 0),
        (WARNING_ONLY, "info", 1),
        (GPU_POD, None, 1),
    ],
)
def test_fail_on(tmp_path: Path, content: str, fail_on: str | None, code: int) -> None:
    path = tmp_path / "manifest.yaml"
    path.write_text(content)
    args = ["--fail-on", fail_on] if fail_on else []
    proc = gpulint("check", *args, path)
    assert proc.returncode == code
    assert proc.stderr == ""


def test_warnings_are_still_printed_below_the_failure_level(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(MISPLACED)
    proc = gpulint("check", path)
    (finding,) = parse_text(proc.stdout)
    assert (finding["rule"], finding["severity"], proc.returncode) == ("GPU024", "warning", 0)


def test_version() -> None:
    proc = gpulint("--version", run=gpulint_subprocess)  # the installed console script
    assert (proc.returncode, proc.stdout) == (0, f"gpulint {__version__}\n")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["check", "--bogus", "."], "--bogus"),
        (["check", "--format", "xml", "."], "xml"),
        (["check", "--fail-on", "fatal", "."], "fatal"),
        (["check", "--color", "sometimes", "."], "sometimes"),
        (["check", "--format"], "--format"),
        (["frobnicate"], "frobnicate"),
        (["rule"], "code"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], needle: str) -> None:
    proc = gpulint(*args)
    assert_usage_error(proc, needle)
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stdout == ""


def test_a_missing_path_is_an_error_but_the_rest_is_linted(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    proc = gpulint("check", tmp_path / "missing.yaml", tmp_path, "also-missing/")
    assert_usage_error(proc, "missing.yaml", "also-missing/")
    assert len(proc.stderr.splitlines()) == 2
    assert [f["rule"] for f in parse_text(proc.stdout)] == ["GPU020", "GPU001"]


def test_bare_gpulint_shows_help() -> None:
    proc = gpulint()
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "check" in proc.stdout + proc.stderr


def test_help_exits_zero() -> None:
    for args in (["--help"], ["check", "--help"], ["-h"]):
        proc = gpulint(*args)
        assert proc.returncode == 0
        assert "Usage" in proc.stdout


# -- colour ----------------------------------------------------------------------------------


FIXTURE = RULE_FIXTURES / "GPU004" / "fail-fractional-gpus.yaml"


@pytest.fixture(scope="module")
def plain_output() -> str:
    return gpulint("check", FIXTURE).stdout


@pytest.mark.parametrize(
    ("env", "args", "coloured"),
    [
        ({}, [], False),  # a pipe is not a terminal
        ({"FORCE_COLOR": "1"}, [], True),
        ({}, ["--color", "always"], True),
        ({"NO_COLOR": "1"}, ["--color", "always"], True),  # the explicit option wins
        ({"FORCE_COLOR": "1"}, ["--color", "never"], False),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, [], False),  # NO_COLOR wins over FORCE_COLOR
    ],
)
def test_colour_on_a_pipe(
    env: dict[str, str], args: list[str], coloured: bool, plain_output: str
) -> None:
    # stdout is not a terminal here, as on a pipe (a real pipe: test_stdin_with_a_filename
    # parses its uncoloured lines; a real terminal: test_colour_only_on_a_terminal).
    proc = gpulint("check", *args, FIXTURE, env=clean_env(**env))
    assert bool(ANSI.search(proc.stdout)) is coloured
    assert ANSI.sub("", proc.stdout) == plain_output  # colour never changes the text itself


def run_on_terminal(*args: str | Path, **env: str) -> str:
    """Run gpulint with stdout on a pseudo-terminal; return what it printed."""
    primary, secondary = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*gpulint_cmd(), *map(str, args)],
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=subprocess.PIPE,
            env=clean_env(**env),
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the terminal's other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=120) == 1
        assert proc.stderr is not None and proc.stderr.read() == b""
    finally:
        os.close(primary)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_colour_only_on_a_terminal(plain_output: str) -> None:
    out = run_on_terminal("check", FIXTURE)
    assert ANSI.search(out)
    assert ANSI.sub("", out) == plain_output
    assert not ANSI.search(run_on_terminal("check", FIXTURE, NO_COLOR="1"))
    assert not ANSI.search(run_on_terminal("check", "--color", "never", FIXTURE))
