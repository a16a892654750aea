"""Pluggable rules: rule folders, plugin modules, declarative rules, load errors, and a real
third-party plugin package installed into a fresh virtual environment."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from gpulint.lint.declarative import load_declarative
from gpulint.lint.engine import Linter
from gpulint.lint.finder import RuleSource, builtin_sources, load_rules
from gpulint.rule import RuleLoadError
from gpulint.settings import Settings
from tests.conftest import FIXTURES, ROOT, expectations, gpulint_in_process

EXAMPLE_RULES = ROOT / "examples" / "rules"
DECLARATIVE_FIXTURES = sorted((FIXTURES / "declarative").glob("*.yaml"))

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: jupyter
    image: jupyter/tensorflow-notebook:latest
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def run(
    args: list[str], cwd: Path, exe: list[str] | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``gpulint ARGS`` in-process, or the console script ``exe`` (a plugin's own install)
    as a real process; ``env`` is added to this environment."""
    environ = None if env is None else {**os.environ, **env}
    if exe is None:
        return gpulint_in_process(*args, cwd=cwd, env=environ)
    return subprocess.run(
        [*exe, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=environ
    )


# -- declarative rules ------------------------------------------------------------------------
@pytest.mark.parametrize("path", DECLARATIVE_FIXTURES, ids=[p.name for p in DECLARATIVE_FIXTURES])
def test_example_declarative_rules(path: Path) -> None:
    rules = load_rules(rule_dirs=[EXAMPLE_RULES])
    text = path.read_text()
    expected = expectations(text)
    codes = {code for _, code, _ in expected}
    linter = Linter(rules, Settings(select=frozenset(codes)))
    found = linter.lint_text(str(path), text)
    assert {(f.line, f.rule) for f in found} == {(line, code) for line, code, _ in expected}, [
        f"{f.line}:{f.column} {f.rule} {f.message}" for f in found
    ]
    for line, code, col in expected:
        if col is not None:
            assert any(f.line == line and f.column == col for f in found), (line, code, col)


def test_declarative_rules_load_with_their_docs() -> None:
    memory = load_declarative(EXAMPLE_RULES / "gpu-container-memory-limit.yaml")
    assert (memory.code, memory.name, memory.scope, memory.severity.label) == (
        "EXA001",
        "gpu-container-memory-limit",
        "pod",
        "warning",
    )
    team = load_declarative(EXAMPLE_RULES / "gpu-pod-team-label.yaml")
    assert team.severity.label == "error"
    for rule in (memory, team):
        assert rule.section("What it does") and rule.section("Use instead")


def test_declarative_message_placeholders(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(
        textwrap.dedent(
            """\
            code: ORG001
            name: gpu-image-registry
            target: container
            when: {gpu: true, kinds: [Pod]}
            message: "{kind}/{name}: container {container} fails at {path}: {error}"
            schema:
              properties:
                image: {pattern: "^registry\\\\.example\\\\.com/"}
            """
        )
    )
    rule = load_declarative(tmp_path / "rule.yaml")
    found = Linter([rule]).lint_text("pod.yaml", GPU_POD)
    assert [(f.line, f.column, f.message) for f in found] == [
        (
            10,
            5,
            "Pod/notebook: container jupyter fails at image: 'jupyter/tensorflow-notebook:latest'"
            " does not match '^registry\\\\.example\\\\.com/'",
        )
    ]


BAD_DECLARATIVE = [
    pytest.param(
        "code: ORG001\nname: x\nmessage: m\nschema: {}\n",
        "declarative rule rules/bad.yaml:1: missing required key 'target'",
        id="missing-target",
    ),
    pytest.param(
        "code: ORG001\nname: x\nmessage: m\ntarget: node\nschema: {}\n",
        'declarative rule rules/bad.yaml:4: target: "node" is not allowed; allowed values: '
        '"container", "pod", "object"',
        id="bad-target",
    ),
    pytest.param(
        "code: ORG001\nname: x\nmessage: m\ntarget: pod\nschema:\n  type: 12\n",
        "declarative rule rules/bad.yaml:5: schema: not a valid JSON Schema: type: 12 is not valid",
        id="invalid-schema",
    ),
    pytest.param(
        "code: ORG001\nname: x\nmessage: '{team} is missing'\ntarget: pod\nschema: {}\n",
        "declarative rule rules/bad.yaml:3: message: unknown placeholder {team}; allowed "
        "placeholders: {container}, {error}, {kind}, {name}, {namespace}, {path}",
        id="unknown-placeholder",
    ),
    pytest.param(
        "code: GPU001\nname: x\nmessage: m\ntarget: pod\nschema: {}\n",
        "rule rules/bad.yaml (rule-dir",
        id="duplicate-code",
    ),
    pytest.param(
        "code: ORG001\nname: x\nmessage: m\ntarget: pod\nschema: {}\nseverity: fatal\n",
        'declarative rule rules/bad.yaml:6: severity: "fatal" is not allowed',
        id="bad-severity",
    ),
]


@pytest.mark.parametrize(("content", "message"), BAD_DECLARATIVE)
def test_bad_declarative_rule_is_exit_2(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "bad.yaml").write_text(content)
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [rules]\n")
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    proc = run(["check", "pod.yaml"], tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    shown = message.replace("rules/bad.yaml", str((tmp_path / "rules" / "bad.yaml").resolve()))
    assert proc.stderr.startswith(f"gpulint: error: {shown}"), proc.stderr


# -- Python rule modules in a rule folder, and plugin modules ----------------------------------
LOCAL_RULE = '''\
"""Pod without a priority class.

## What it does
Flags a GPU pod without `priorityClassName`.

## Why it matters
Preemption needs priorities.

## Example
```yaml
spec: {}
```

## Use instead
```yaml
spec: {priorityClassName: batch}
```

## Options
`classes`: the allowed priority classes.

## References
- https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/
"""

from gpulint.k8s.resources import wants_accelerator
from gpulint.rule import Violation

from . import helpers

CODE = "ORG010"
NAME = "gpu-pod-priority-class"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS = {
    "classes": {
        "type": "array",
        "items": {"type": "string"},
        "default": ["batch"],
        "description": "Allowed priority classes.",
    }
}


def check(pod, ctx):
    if pod.location != "pod" or not wants_accelerator(pod, ctx.registry, ctx.claims):
        return
    value = pod.spec.get("priorityClassName")
    if value not in ctx.options["classes"]:
        yield Violation(pod.path, helpers.message(value, ctx.options["classes"]))
'''

HELPERS = """\
def message(value, classes):
    return f"priority class {value!r} is not one of {', '.join(classes)}"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    return tmp_path


def test_rule_folder_module_fires_with_configured_options(project: Path) -> None:
    # Helper modules start with "_": they are importable (from . import) but not rules.
    folder = project / "policy"
    folder.mkdir()
    (folder / "_helpers.py").write_text(HELPERS)
    (folder / "org010_priority.py").write_text(
        LOCAL_RULE.replace("from . import helpers", "from . import _helpers as helpers")
    )
    (project / ".gpulint.yaml").write_text(
        "rule-dirs: [policy]\nrules:\n  ORG010:\n    classes: [gpu-batch, gpu-online]\n"
    )
    proc = run(["check", "--allow-plugins", "-f", "json", "--select", "ORG", "pod.yaml"], project)
    found = json.loads(proc.stdout)["findings"]
    assert [(f["rule"], f["line"], f["message"]) for f in found] == [
        ("ORG010", 5, "priority class None is not one of gpu-batch, gpu-online")
    ]
    listed = run(["rules", "--allow-plugins"], project).stdout
    assert any(
        line.startswith("ORG010  gpu-pod-priority-class") and "[rule-dir " in line
        for line in listed.splitlines()
    )
    doc = run(["rule", "ORG010", "--allow-plugins"], project).stdout
    assert doc.startswith("# ORG010: gpu-pod-priority-class\n")
    # Its options are validated like built-in ones.
    (project / ".gpulint.yaml").write_text(
        "rule-dirs: [policy]\nrules:\n  ORG010:\n    classes: 3\n"
    )
    bad = run(["check", "--allow-plugins", "pod.yaml"], project)
    assert bad.returncode == 2
    assert bad.stderr == (
        "gpulint: error: .gpulint.yaml:4: rules.ORG010.classes: expected a list, got a number\n"
    )


LOAD_FAILURES = [
    pytest.param(
        {"org011_broken.py": "import not_a_module_anywhere\nCODE = 'ORG011'\n"},
        "failed to import: ModuleNotFoundError: No module named 'not_a_module_anywhere'",
        id="import-error",
    ),
    pytest.param(
        {"dup.py": LOCAL_RULE.replace("from . import helpers\n", "").replace("ORG010", "GPU020")},
        "declares code GPU020, already declared by gpulint.rules.gpu020_missing_gpu_toleration",
        id="duplicate-code",
    ),
    pytest.param(
        {
            "opts.py": LOCAL_RULE.replace("from . import helpers\n", "").replace(
                '"type": "array"', '"type": "list"'
            )
        },
        "invalid OPTIONS schema: ",
        id="invalid-options-schema",
    ),
    pytest.param(
        {
            "default.py": LOCAL_RULE.replace("from . import helpers\n", "").replace(
                '"default": ["batch"]', '"default": "batch"'
            )
        },
        "the default of option 'classes' does not match its schema",
        id="default-breaks-schema",
    ),
    pytest.param(
        {"nocheck.py": "'''Doc.'''\nCODE = 'ORG012'\nNAME = 'x'\n"},
        "no check(target, ctx) function",
        id="no-check",
    ),
]


@pytest.mark.parametrize(("files", "message"), LOAD_FAILURES)
def test_broken_rule_modules_are_exit_2_naming_the_module(
    project: Path, files: dict[str, str], message: str
) -> None:
    folder = project / "policy"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_text(content)
    (project / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    # A trusted CI job opts in with the environment variable.
    proc = run(["check", "pod.yaml"], project, env={"GPULINT_ALLOW_PLUGINS": "1"})
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("gpulint: error: ")
    assert str(folder.resolve() / next(iter(files))) in proc.stderr
    assert message in proc.stderr, proc.stderr


def test_plugins_key_imports_modules_by_name(project: Path) -> None:
    (project / ".gpulint.yaml").write_text("plugins: [gpulint_no_such_plugin.rules]\n")
    proc = run(["check", "--allow-plugins", "pod.yaml"], project)
    assert proc.returncode == 2
    assert proc.stderr == (
        "gpulint: error: rule module gpulint_no_such_plugin.rules (plugin module "
        "gpulint_no_such_plugin.rules) failed to import: ModuleNotFoundError: No module named "
        "'gpulint_no_such_plugin'\n"
    )


def test_entry_point_registered_under_the_wrong_code() -> None:
    source = RuleSource("GPU999", "gpulint.rules.gpu001_requests_without_limits", "plugin x")
    with pytest.raises(
        RuleLoadError, match="registered under the code prefix GPU999 but declares CODE = 'GPU001'"
    ):
        load_rules([source])


def test_built_in_rules_are_the_modules_of_the_rules_folder() -> None:
    # Found by file name, no entry point each: a rule added to rules/ is found at once.
    files = sorted(p.stem for p in (ROOT / "rules").glob("*.py") if p.stem != "__init__")
    sources = builtin_sources()
    assert [s.module.rpartition(".")[2] for s in sources] == files
    assert [s.code for s in sources] == [f.partition("_")[0].upper() for f in files]
    assert {r.code for r in load_rules()} >= {s.code for s in sources}


def test_a_built_in_rule_declares_the_code_its_file_is_named_for() -> None:
    source = RuleSource("GPU002", "gpulint.rules.gpu001_requests_without_limits", "built-in")
    with pytest.raises(RuleLoadError, match="is named for GPU002 but declares CODE = 'GPU001'"):
        load_rules([source])


RULE = """CODE = "{code}"
NAME = "{name}"
SEVERITY = "warning"
SCOPE = "pod"


def check(pod, ctx):
    return iter(())
"""


def test_a_plugin_package_under_a_code_prefix_brings_each_of_its_rule_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One entry point per prefix, as flake8's plugins register: ACME = "acme_rules".
    package = tmp_path / "acme_rules"
    package.mkdir()
    (package / "__init__.py").write_text('"""Acme\'s rules."""\n')
    (package / "_helpers.py").write_text("X = 1\n")  # not a rule: no code in its name
    (package / "acme001_pinned_image.py").write_text(RULE.format(code="ACME001", name="one"))
    (package / "acme002_no_probe.py").write_text(RULE.format(code="ACME002", name="two"))
    monkeypatch.syspath_prepend(str(tmp_path))
    rules = load_rules([RuleSource("ACME", "acme_rules", "plugin acme-rules")])
    assert [(r.code, r.origin) for r in rules] == [
        ("ACME001", "plugin acme-rules"),
        ("ACME002", "plugin acme-rules"),
    ]
    (package / "acme003_other.py").write_text(RULE.format(code="XYZ003", name="three"))
    with pytest.raises(RuleLoadError, match="is named for ACME003 but declares CODE = 'XYZ003'"):
        load_rules([RuleSource("ACME", "acme_rules", "plugin acme-rules")])
    (package / "acme003_other.py").unlink()
    (package / "zed001_stray.py").write_text(RULE.format(code="ZED001", name="stray"))
    with pytest.raises(RuleLoadError, match="code prefix ACME but declares CODE = 'ZED001'"):
        load_rules([RuleSource("ACME", "acme_rules", "plugin acme-rules")])


# -- a real plugin package in a fresh virtual environment ----------------------------------------
def _copy_tree(src: Path, dst: Path) -> Path:
    skip = shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "tests", "bench"
    )
    shutil.copytree(src, dst, ignore=skip)
    return dst


def _dependency_dir(tmp: Path) -> Path:
    """This environment's installed packages minus gpulint itself, as a folder of symlinks,
    so the fresh venv reuses them (no network) but can only import the installed wheel."""
    deps = tmp / "deps"
    deps.mkdir()
    roots = {Path(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    for root in roots:
        for entry in root.iterdir():
            name = entry.name.lower()
            if name.startswith(("gpulint", "__editable__", "_gpulint")) or name.endswith(".pth"):
                continue
            target = deps / entry.name
            if not target.exists():
                target.symlink_to(entry)
    return deps


@pytest.fixture(scope="module")
def plugin_venv(tmp_path_factory: pytest.TempPathFactory, gpulint_wheel: Path) -> Path:
    """gpulint's wheel (the run's, conftest's ``gpulint_wheel``) and the plugin's, built
    here, installed into a fresh venv."""
    tmp = tmp_path_factory.mktemp("plugin-venv")
    plugin = _copy_tree(ROOT / "tests" / "plugin_pkg", tmp / "plugin-src")
    wheels = tmp / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(wheels),
         str(plugin)],
        check=True, cwd=tmp, capture_output=True, timeout=300,
    )  # fmt: skip
    shutil.copy2(gpulint_wheel, wheels / gpulint_wheel.name)
    venv = tmp / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", "--no-compile",
         *map(str, sorted(wheels.glob("*.whl")))],
        check=True, cwd=tmp, capture_output=True, timeout=300,
    )  # fmt: skip
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "gpulint-test-deps.pth").write_text(str(_dependency_dir(tmp)) + "\n")
    return venv


def test_plugin_package_rule_fires_from_the_installed_cli(
    plugin_venv: Path, tmp_path: Path
) -> None:
    exe = [str(plugin_venv / "bin" / "gpulint")]
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    env_free = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [*exe, "check", "-f", "json", "pod.yaml"],
        cwd=tmp_path, capture_output=True, text=True, env=env_free, timeout=120,
    )  # fmt: skip
    found = json.loads(proc.stdout)["findings"]
    assert [(f["rule"], f["line"], f["column"]) for f in found] == [("EXP001", 10, 12)]
    assert found[0]["message"].startswith("GPU container image jupyter/tensorflow-notebook:latest")
    listed = run(["rules"], tmp_path, exe).stdout.splitlines()
    assert any(
        line.startswith("EXP001  unpinned-gpu-image") and "[plugin gpulint-example-plugin]" in line
        for line in listed
    )
    # Plugin options are configured and validated like built-in ones.
    (tmp_path / ".gpulint.yaml").write_text("rules:\n  EXP001:\n    require_digest: yes\n")
    (tmp_path / "pod.yaml").write_text(GPU_POD.replace(":latest", ":2024-05-27"))
    proc = run(["check", "-f", "json", "pod.yaml"], tmp_path, exe)
    assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["EXP001"]
    (tmp_path / ".gpulint.yaml").write_text("rules:\n  EXP001:\n    require_digest: 3\n")
    proc = run(["check", "pod.yaml"], tmp_path, exe)
    assert proc.returncode == 2
    assert "rules.EXP001.require_digest: expected true or false, got a number" in proc.stderr


def test_installed_wheel_ships_rules_and_schemas(plugin_venv: Path, tmp_path: Path) -> None:
    python = str(plugin_venv / "bin" / "python")
    script = textwrap.dedent(
        """\
        import json, gpulint, gpulint.rules, gpulint.schemas
        from gpulint.data import data_path, schema_path
        names = ["config.schema.json", "devices.schema.json",
                 "workloads.schema.json", "declarative-rule.schema.json"]
        print(json.dumps({
            "gpulint": gpulint.__file__,
            "rules": gpulint.rules.__file__,
            "schemas": [schema_path(n).is_file() for n in names],
            "data": [data_path("gpulint.data", n).is_file()
                     for n in ("devices.json", "workloads.json")],
        }))
        """
    )
    out = json.loads(
        subprocess.run(
            [python, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True
        ).stdout
    )
    venv = str(plugin_venv.resolve())
    assert out["gpulint"].startswith(venv) and out["rules"].startswith(venv)
    assert all(out["schemas"]) and all(out["data"])
    installed = json.loads(
        run(["rules", "--format", "json"], tmp_path, [str(plugin_venv / "bin" / "gpulint")]).stdout
    )
    here = {r.code for r in load_rules() if r.origin == "built-in"}
    assert {r["code"] for r in installed if r["origin"] == "built-in"} == here
    example = run(
        ["check", "--isolated", str(ROOT / "examples" / "bad-inference.yaml")],
        tmp_path,
        [str(plugin_venv / "bin" / "gpulint")],
    )
    assert example.returncode == 1 and "GPU001" in example.stdout
