"""A hostile pull request: nothing in the linted tree runs code, reads or requests anything
outside it, or hangs gpulint -- unless the user opted in for the run or the machine.

Each attack ends in a finding or a one-line error. Subprocesses have a generous ``timeout``
only so that a regression fails instead of hanging the suite; no test measures time.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpulint.lint.declarative import load_declarative
from gpulint.lint.engine import Linter
from gpulint.rule import RuleLoadError
from tests.conftest import ROOT, gpulint_cmd, gpulint_in_process

# Without a described cluster its GPU020 is an info finding (an assumed taint): exit 0.
GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  labels:
    team: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!
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
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return gpulint_in_process(*args, cwd=cwd, env=env)


def rule_file(tmp_path: Path, body: str, name: str = "rule.yaml") -> Path:
    path = tmp_path / name
    path.write_text(
        "code: ORG001\nname: hostile\ntarget: pod\nmessage: '{name}: {error}'\n"
        + textwrap.dedent(body)
    )
    return path


# -- declarative rules: references ------------------------------------------------------------
@pytest.fixture
def http_server() -> Iterator[tuple[str, list[str]]]:
    """A local web server that records every request made to it."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def test_a_ref_to_a_url_is_a_load_error_and_no_request_is_made(
    tmp_path: Path, http_server: tuple[str, list[str]]
) -> None:
    url, hits = http_server
    path = rule_file(tmp_path, f"schema:\n  properties:\n    spec: {{$ref: '{url}/s.json'}}\n")
    with pytest.raises(RuleLoadError) as info:
        load_declarative(path)
    assert str(info.value) == (
        f"declarative rule {path}:5: schema: $ref '{url}/s.json' does not resolve inside the "
        "rule file (references to files, URLs or other documents are not followed)"
    )
    assert hits == []


@pytest.mark.parametrize(
    "ref",
    [
        "file:///dev/zero",
        "file://{secret}",
        "secret.json",  # relative: next to the rule file
        "secret.json#/type",
        "https://json-schema.org/draft/2020-12/schema",  # even a meta-schema
    ],
)
def test_a_ref_out_of_the_rule_file_is_never_read(tmp_path: Path, ref: str) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "integer", "description": "TOP-SECRET"}')
    ref = ref.format(secret=secret)
    path = rule_file(tmp_path, f"schema:\n  properties:\n    spec: {{$ref: '{ref}'}}\n")
    with pytest.raises(RuleLoadError, match=r"does not resolve inside the rule file") as info:
        load_declarative(path)
    assert "TOP-SECRET" not in str(info.value)
    assert str(path) in str(info.value)


def test_a_ref_under_another_id_is_not_followed_either(tmp_path: Path) -> None:
    path = rule_file(
        tmp_path,
        """\
        schema:
          $id: http://127.0.0.1:9/base/
          properties:
            spec: {$ref: other.json}
        """,
    )
    with pytest.raises(RuleLoadError, match=r"\$ref 'other.json' does not resolve"):
        load_declarative(path)


def test_refs_inside_the_rule_file_still_work(tmp_path: Path) -> None:
    path = rule_file(
        tmp_path,
        """\
        schema:
          $defs:
            labelled: {required: [labels]}
          properties:
            metadata: {$ref: "#/$defs/labelled"}
        """,
    )
    rule = load_declarative(path)
    found = Linter([rule]).lint_text("pod.yaml", GPU_POD.replace("  labels:\n", "  lbls:\n"))
    assert [(f.line, f.message) for f in found] == [
        (3, "notebook: 'labels' is a required property")
    ]


def test_a_ref_to_a_url_through_the_cli_is_one_line_and_exit_2(
    tmp_path: Path, http_server: tuple[str, list[str]]
) -> None:
    url, hits = http_server
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy").mkdir()
    rule_file(tmp_path / "policy", f"schema: {{$ref: '{url}/'}}\n")
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    (tmp_path / "pod.yaml").write_text(GPU_POD)
    proc = run(["check", "pod.yaml"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "ORG001" not in proc.stderr
    assert proc.stderr.startswith("gpulint: error: declarative rule ")
    assert "rule.yaml:5: schema: $ref" in proc.stderr
    assert hits == []


# -- declarative rules: regular expressions ---------------------------------------------------
BACKTRACKING = "^(a+)+$"  # exponential in Python's re on "aaa...a!"


@pytest.mark.parametrize(
    "schema",
    [
        f"properties:\n  metadata:\n    properties:\n      labels:\n"
        f"        properties:\n          team: {{pattern: '{BACKTRACKING}'}}\n",
        f"properties:\n  metadata:\n    properties:\n      labels:\n"
        f"        propertyNames: {{pattern: '{BACKTRACKING}'}}\n",
        f"properties:\n  metadata:\n    properties:\n      labels:\n"
        f"        patternProperties: {{'{BACKTRACKING}': false}}\n",
        f"properties:\n  metadata:\n    properties:\n      labels:\n"
        f"        additionalProperties: false\n"
        f"        patternProperties: {{'{BACKTRACKING}': true}}\n",
    ],
    ids=["pattern", "propertyNames", "patternProperties", "additionalProperties"],
)
def test_a_catastrophic_pattern_is_a_finding_not_a_hang(tmp_path: Path, schema: str) -> None:
    value = "a" * 80 + "!"
    text = GPU_POD.replace("team: " + value, f"{value}: {value}")
    if "team:" in schema:
        text = GPU_POD
    path = rule_file(tmp_path, "schema:\n" + textwrap.indent(schema, "  "))
    found = Linter([load_declarative(path)]).lint_text("pod.yaml", text)
    if "patternProperties: {'^(a+)+$': false}" in schema:
        assert found == []  # the key does not match the pattern: nothing to check
    else:
        assert [f.rule for f in found] == ["ORG001"], found


def test_patterns_keep_their_meaning(tmp_path: Path) -> None:
    path = rule_file(
        tmp_path,
        """\
        schema:
          properties:
            metadata:
              properties:
                labels:
                  additionalProperties: false
                  patternProperties:
                    "^team$": {pattern: "^[a-z]+$"}
        """,
    )
    rule = load_declarative(path)
    lint = Linter([rule]).lint_text
    assert [f.message for f in lint("pod.yaml", GPU_POD.replace("a!", "a"))] == []
    assert [f.message for f in lint("pod.yaml", GPU_POD)] == [
        "notebook: '" + "a" * 80 + "!' does not match '^[a-z]+$'"
    ]
    assert [f.message for f in lint("pod.yaml", GPU_POD.replace("team:", "owner:"))] == [
        "notebook: 'owner' does not match any of the regexes: '^team$'"
    ]


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ("{pattern: '(?=a)b'}", "pattern '(?=a)b' cannot run on RE2"),
        ("{pattern: '(a)\\1'}", "pattern '(a)\\\\1' cannot run on RE2"),
        ("{patternProperties: {'(?<!x)y': true}}", "pattern '(?<!x)y' cannot run on RE2"),
        (
            "{patternProperties: {a: true}, unevaluatedProperties: false}",
            "unevaluatedProperties cannot be combined with patternProperties",
        ),
        # Linear, but ~1 s per 10,000-character value: too large a program.
        ("{pattern: '" + "(a|b)" * 5000 + "c'}", "pattern '(a|b)(a|b)"),
    ],
    ids=["lookahead", "backreference", "lookbehind", "unevaluated", "too-large"],
)
def test_patterns_re2_cannot_run_are_load_errors(tmp_path: Path, schema: str, problem: str) -> None:
    path = rule_file(tmp_path, f"schema: {schema}\n")
    with pytest.raises(RuleLoadError) as info:
        load_declarative(path)
    assert str(info.value).startswith(f"declarative rule {path}:5: schema: {problem}")
    if "a|b" in problem:
        assert str(info.value).endswith(
            "it compiles to 5005 RE2 instructions, more than the 1000 a rule may use"
        )


def test_capture_groups_cost_no_memory(tmp_path: Path) -> None:
    """RE2 with capture groups keeps each group's position per state: this pattern took
    1.1 GB and 2 s for each value. Rules only ask whether a pattern matches."""
    from gpulint.util.schemacost import compiled_pattern

    pattern = "(((a*)*)*)*" * 2000 + "!"
    path = rule_file(tmp_path, f"schema:\n  properties:\n    metadata:\n"
                     f"      properties: {{name: {{pattern: '{pattern}'}}}}\n")  # fmt: skip
    found = Linter([load_declarative(path)]).lint_text("pod.yaml", GPU_POD)
    assert [f.rule for f in found] == ["ORG001"]
    assert compiled_pattern(pattern).options.never_capture


# -- declarative rules: messages --------------------------------------------------------------
@pytest.mark.parametrize(
    "message",
    [
        "{container:>200000000}",
        "{name!r}",
        "{container.__class__}",
        "{container[0]}",
        "{0}",
        "{}",
        "{name:{container}}",
    ],
)
def test_messages_take_plain_placeholders_only(tmp_path: Path, message: str) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text(
        f"code: ORG001\nname: hostile\ntarget: container\nmessage: '{message}'\nschema: false\n"
    )
    with pytest.raises(RuleLoadError) as info:
        load_declarative(path)
    assert str(info.value).startswith(f"declarative rule {path}:4: message: {{"), info.value
    assert "is not a plain placeholder" in str(info.value) or "unknown placeholder" in str(
        info.value
    )


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("policy/deep.yaml", "code: ORG001\nname: deep\ntarget: pod\nmessage: m\nschema: "
         + "{not: " * 3000 + "{}" + "}" * 3000 + "\n",
         "declarative rule {repo}/policy/deep.yaml: the schema is nested too deeply to check"),
        ("pyproject.toml", "[tool.gpulint]\nselect = " + "[" * 50000 + "]" * 50000 + "\n",
         "pyproject.toml: invalid TOML: nested too deeply"),
    ],
    ids=["declarative-rule", "pyproject"],
)  # fmt: skip
def test_deep_nesting_in_a_rule_or_config_is_one_line_not_an_internal_error(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    repo = tmp_path / "pr"
    (repo / ".git").mkdir(parents=True)
    (repo / "policy").mkdir()
    (repo / "pod.yaml").write_text(GPU_POD)
    if name.startswith("policy/"):
        (repo / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    (repo / name).write_text(text)
    proc = run(["check", "pod.yaml"], repo)
    assert (proc.returncode, proc.stderr) == (
        2,
        f"gpulint: error: {message.format(repo=repo.resolve())}\n",
    )


def test_a_value_that_looks_like_a_placeholder_is_printed_as_is(tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text(
        "code: ORG001\nname: x\ntarget: container\nmessage: 'container {container}'\n"
        "schema: false\n"
    )
    text = GPU_POD.replace("name: jupyter", "name: '{name:>99999999}'")
    found = Linter([load_declarative(path)]).lint_text("pod.yaml", text)
    assert [f.message for f in found] == ["container {name:>99999999}"]


def test_the_error_placeholder_never_prints_more_than_its_cap(tmp_path: Path) -> None:
    from gpulint.lint.declarative import MAX_ERROR

    path = tmp_path / "rule.yaml"
    path.write_text(
        "code: ORG001\nname: x\ntarget: object\nmessage: '{error}'\nschema: {not: {}}\n"
    )
    # 60 aliases of a 2,000-item anchor: within the alias budget, but jsonschema's message
    # quotes the expanded object (7.5 MB from 120 KB).
    items = ", ".join(f"value-{i:05d}-" + "x" * 40 for i in range(2000))
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nbase: &b [" + items + "]\n"
    text += "data:\n" + "".join(f"  k{i}: *b\n" for i in range(60))
    found = Linter([load_declarative(path)]).lint_text("cm.yaml", text)
    assert [f.rule for f in found] == ["ORG001"]
    assert len(found[0].message) == MAX_ERROR
    assert found[0].message.startswith("{'apiVersion': 'v1'") and found[0].message[-1] == "\u2026"


# -- the trust model: Python from the linted tree runs only when the user opts in ---------------
#: A manifest with one built-in finding: GPU020 (no toleration for the GPU taint).
UNTOLERATED = GPU_POD.replace(
    "  tolerations:\n  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n", ""
)
DECLARATIVE = (
    "code: ORG001\nname: team-label\nseverity: warning\ntarget: pod\n"
    "message: '{name} has no owner label'\n"
    "schema:\n  properties:\n    metadata:\n      required: [labels]\n"
    "      properties:\n        labels: {required: [owner]}\n"
)


def planted(marker: Path, name: str, code: str | None = None) -> str:
    """A module that proves it ran by creating ``marker/name`` (and, as the "rule" of an
    attack, hides every finding)."""
    rule = (
        f"\nCODE = {code!r}\nNAME = 'x'\nSCOPE = 'object'\n\ndef check(obj, ctx):\n    return []\n"
        if code
        else ""
    )
    return f"import pathlib\npathlib.Path({str(marker / name)!r}).touch()\n{rule}"


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


@pytest.fixture
def hostile(tmp_path: Path, markers: Path) -> Path:
    """A pull request's tree: a configuration naming Python rules, a rule folder with a
    module and a declarative rule, a plugin module and an entry point planted in the
    working directory."""
    repo = tmp_path / "pr"
    (repo / ".git").mkdir(parents=True)
    (repo / "policy").mkdir()
    (repo / "policy" / "evil.py").write_text(planted(markers, "rule-dir", "EVIL001"))
    (repo / "policy" / "team.yaml").write_text(DECLARATIVE)
    (repo / "evil_plugin.py").write_text(planted(markers, "plugin", "EVIL002"))
    (repo / "evil_ep.py").write_text(planted(markers, "entry-point", "EVIL003"))
    info = repo / "evil-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[gpulint.rules]\nEVIL003 = evil_ep\n")
    (repo / ".gpulint.yaml").write_text(
        "rule-dirs: [policy]\nplugins: [evil_plugin]\n"
        "severity: {EVIL001: error, ORG001: error}\nignore: [EVIL002]\n"
        "rules:\n  EVIL001: {}\n"
    )
    (repo / "pod.yaml").write_text(UNTOLERATED)
    return repo


def python_m() -> list[str]:
    """``python -m gpulint``: the working directory is first on sys.path."""
    return [sys.executable, "-m", "gpulint"]


def run_in(
    cmd: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "GPULINT_ALLOW_PLUGINS"}
    # The plugin module is importable (as an installed one would be): only trust decides.
    environ["PYTHONPATH"] = str(cwd)
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=120, env={**environ, **(env or {})}
    )


def run_here(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """:func:`run_in` for what gpulint prints for a command line: the same environment, and
    the working directory importable as ``PYTHONPATH`` makes it, in this process. Code from
    the tree that ran would have touched its marker file here as in a process of its own."""
    environ = {k: v for k, v in os.environ.items() if k != "GPULINT_ALLOW_PLUGINS"}
    environ["PYTHONPATH"] = str(cwd)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(cwd))
        return gpulint_in_process(*args, cwd=cwd, env={**environ, **(env or {})})


@pytest.mark.parametrize("how", ["console script", "python -m"])
def test_a_hostile_tree_runs_no_code_and_still_reports(
    hostile: Path, markers: Path, how: str
) -> None:
    exe = gpulint_cmd() if how == "console script" else python_m()
    proc = run_in([*exe, "check", "-f", "json", "pod.yaml"], hostile)
    assert sorted(markers.iterdir()) == []
    assert proc.returncode == 1, proc.stderr
    found = json.loads(proc.stdout)["findings"]
    # Built-in rules, and the repository's declarative rule (data) with its configured
    # severity; what the file says about the skipped codes is set aside.
    assert [(f["rule"], f["severity"]) for f in found] == [
        ("ORG001", "error"),
        ("GPU020", "info"),
    ]
    assert proc.stderr == (
        "gpulint: warning: .gpulint.yaml: skipped the Python rules it names (plugins: "
        "evil_plugin; 1 Python file in rule-dirs); run them with --allow-plugins or "
        "GPULINT_ALLOW_PLUGINS=1 if you trust this repository\n"
    )
    for args in (["rules"], ["rule", "GPU020"], ["config"], ["inspect", "pod.yaml"]):
        other = run_in([*exe, *args], hostile)
        assert other.returncode == 0, (args, other.stderr)
        assert other.stderr.startswith("gpulint: warning: .gpulint.yaml: skipped")
    assert sorted(markers.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--allow-plugins"], None),
        ([], {"GPULINT_ALLOW_PLUGINS": "1"}),
    ],
    ids=["--allow-plugins", "GPULINT_ALLOW_PLUGINS"],
)
def test_with_the_opt_in_the_python_rules_run(
    hostile: Path, markers: Path, args: list[str], env: dict[str, str] | None
) -> None:
    proc = run_in([*python_m(), "check", *args, "pod.yaml"], hostile, env)
    # The planted rule returns no finding, so only the others report; the working
    # directory's entry point is still never read (it is not installed).
    assert sorted(p.name for p in markers.iterdir()) == ["plugin", "rule-dir"], proc.stderr
    assert proc.returncode == 1
    assert "warning" not in proc.stderr
    listed = run_here(["rules", *args], hostile, env).stdout
    assert "EVIL001" in listed and "EVIL002" in listed and "EVIL003" not in listed


@pytest.mark.parametrize("value", ["", "0", "no"])
def test_other_values_of_the_variable_do_not_opt_in(
    hostile: Path, markers: Path, value: str
) -> None:
    proc = run_here(["check", "pod.yaml"], hostile, {"GPULINT_ALLOW_PLUGINS": value})
    assert proc.returncode == 1
    assert "skipped the Python rules" in proc.stderr
    assert sorted(markers.iterdir()) == []


def test_ci_recipes_never_opt_in_on_pull_requests() -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "docs" / "ci.md").read_text(), re.S)
    checks = [b for b in blocks if "gpulint check" in b]
    assert len(checks) >= 5
    for block in checks:
        if "GPULINT_ALLOW_PLUGINS" in block:  # the opt-in recipe: pushes to main only
            assert "github.event_name == 'push'" in block
            assert "--allow-plugins" not in block
            continue
        assert "--allow-plugins" not in block and "python -m" not in block, block


def test_rule_folders_and_plugins_named_on_the_command_line_are_trusted(
    hostile: Path, markers: Path
) -> None:
    (hostile / ".gpulint.yaml").unlink()
    proc = run_here(["rules", "--rule-dir", "policy", "--plugin", "evil_plugin"], hostile)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in markers.iterdir()) == ["plugin", "rule-dir"]
    assert "ORG001" in proc.stdout and "EVIL001" in proc.stdout
    # The same folder named in the file and on the command line loads once.
    (hostile / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    again = run_here(["check", "--rule-dir", "policy", "pod.yaml"], hostile)
    assert again.returncode == 0 and again.stderr == "" and "ORG001" in again.stdout, again.stderr


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--rule-dir", "nope", "gpulint: error: --rule-dir: 'nope' is not a folder\n"),
        ("--plugin", "os;x", "gpulint: error: --plugin: 'os;x' is not a dotted module name\n"),
    ],
)
def test_bad_trust_options(tmp_path: Path, option: str, value: str, message: str) -> None:
    proc = run_here(["check", option, value, "--isolated", "."], tmp_path)
    assert (proc.returncode, proc.stderr) == (2, message)


@pytest.mark.parametrize(
    ("names", "args"),
    [
        # What pre-commit runs: the hook's entry and args, then the staged files, whose
        # names the pull request chooses (`types: [yaml]` passes any name ending in .yaml).
        (["--rule-dir=.yaml"], ["check", "-f", "json", "--rule-dir=.yaml", "pod.yaml"]),
        (["--rule-dir=.yaml"], ["check", "-f", "json", "pod.yaml", "--rule-dir=.yaml"]),
        # A shell glob in a CI step (`gpulint check *`) expands to the same names.
        (["--allow-plugins", "--rule-dir"], ["check", "-f", "json", "--allow-plugins",
                                             "--rule-dir", ".yaml", "pod.yaml"]),
    ],
    ids=["pre-commit", "pre-commit-last", "glob"],
)  # fmt: skip
def test_a_file_named_like_an_option_is_a_path_not_an_option(
    hostile: Path, markers: Path, names: list[str], args: list[str]
) -> None:
    (hostile / ".gpulint.yaml").unlink()
    (hostile / ".yaml").mkdir()
    (hostile / ".yaml" / "evil.py").write_text(planted(markers, "dash", "EVIL005"))
    for name in names:
        (hostile / name).write_text("# not a manifest\n")
    proc = run_here([*args], hostile)
    assert sorted(markers.iterdir()) == []
    # The files are linted under their own names (the last case also names `.yaml`).
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [f["rule"] for f in report["findings"]] == ["GPU020"]
    assert report["summary"]["files"] == len(names) + 1


def test_an_option_value_naming_a_dash_file_still_names_it(hostile: Path) -> None:
    (hostile / "-config.yaml").write_text("ignore: [GPU020]\n")
    proc = run_here(["check", "--config", "-config.yaml", "pod.yaml"], hostile)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_isolated_python_m_never_reads_the_working_directory_s_entry_points(
    hostile: Path, markers: Path
) -> None:
    proc = run_in([*python_m(), "rules", "--isolated", "--allow-plugins"], hostile)
    assert proc.returncode == 0, proc.stderr
    assert "EVIL003" not in proc.stdout
    assert sorted(markers.iterdir()) == []


def test_a_planted_module_shadowing_a_dependency_is_not_imported(
    tmp_path: Path, markers: Path
) -> None:
    # `python -m gpulint` in a checkout that has its own `jsonschema.py`.
    (tmp_path / "jsonschema.py").write_text(planted(markers, "jsonschema"))
    (tmp_path / "pod.yaml").write_text(UNTOLERATED)
    (tmp_path / ".gpulint.yaml").write_text("ignore: [GPU021]\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [*python_m(), "check", "pod.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert proc.returncode == 0 and "GPU020" in proc.stdout, proc.stderr
    assert sorted(markers.iterdir()) == []


def test_the_command_never_imports_a_planted_gpulint_package(tmp_path: Path, markers: Path) -> None:
    # README "Security": the `gpulint` command is the safe form in an untrusted checkout
    # (`python -m gpulint` would import this folder: Python resolves `-m` before gpulint runs).
    (tmp_path / "gpulint").mkdir()
    (tmp_path / "gpulint" / "__init__.py").write_text(planted(markers, "package"))
    (tmp_path / "gpulint" / "__main__.py").write_text(planted(markers, "main"))
    (tmp_path / "pod.yaml").write_text(UNTOLERATED)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [*gpulint_cmd(), "check", "--isolated", "pod.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert proc.returncode == 0 and "GPU020" in proc.stdout, proc.stderr
    assert sorted(markers.iterdir()) == []


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("rule-dirs: [/etc]\n", "rule-dirs[0]: '/etc' is absolute: write a folder relative to "
         "this file"),
        ("ignore: []\nrule-dirs: [policy, ../outside]\n", "rule-dirs[1]: '../outside' resolves "
         "to {outside}, outside the repository {repo}"),
        ("rule-dirs:\n- link\n", "rule-dirs[0]: 'link' resolves to {outside}, outside the "
         "repository {repo}"),
        ('rule-dirs: ["policy\\0"]\n', "rule-dirs[0]: 'policy\\x00' is not a usable folder: "
         "embedded null byte"),
        ("rule-dirs: [" + "a/" * 3000 + "]\n", "rule-dirs[0]: '" + "a/" * 3000 + "' is not a "
         "usable folder: File name too long"),
        ("rule-dirs: [loop]\n", "rule-dirs[0]: 'loop' is not a usable folder: "),
    ],
    ids=["absolute", "dot-dot", "symlink", "nul", "too-long", "loop"],
)  # fmt: skip
def test_rule_folders_must_be_inside_the_repository(
    hostile: Path, markers: Path, setup: str, message: str
) -> None:
    outside = hostile.parent / "outside"
    outside.mkdir()
    (outside / "evil.py").write_text(planted(markers, "outside", "EVIL009"))
    (hostile / "link").symlink_to(outside)
    (hostile / "loop").symlink_to("loop")
    (hostile / ".gpulint.yaml").write_text(setup)
    line = setup[: setup.index("rule-dirs")].count("\n") + 1 + ("\n- link" in setup)
    proc = run_here(["check", "--allow-plugins", "pod.yaml"], hostile)
    assert proc.returncode == 2
    shown = message.format(outside=outside.resolve(), repo=hostile.resolve())
    # (a link loop's reason differs between Python versions)
    assert proc.stderr.startswith(f"gpulint: error: .gpulint.yaml:{line}: {shown}"), proc.stderr
    assert proc.stderr.count("\n") == 1
    assert sorted(markers.iterdir()) == []


def test_a_rule_file_linking_out_of_the_repository_is_a_load_error(
    hostile: Path, markers: Path
) -> None:
    outside = hostile.parent / "outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text("code: TOP-SECRET\n")
    (hostile / "policy" / "evil.py").unlink()
    (hostile / "policy" / "rule.yaml").symlink_to(outside / "secret.yaml")
    proc = run_here(["check", "pod.yaml"], hostile)
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        f"gpulint: error: rule file {hostile.resolve() / 'policy' / 'rule.yaml'} (rule-dir "
        f"{hostile.resolve() / 'policy'}) resolves to {(outside / 'secret.yaml').resolve()}, "
        f"outside the repository {hostile.resolve()}\n"
    )
    assert "TOP-SECRET" not in proc.stderr


@pytest.mark.parametrize("repository", [True, False], ids=["git", "no-git"])
def test_a_manifest_linking_out_of_the_repository_is_never_read(
    tmp_path: Path, repository: bool
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kubeconfig.yaml").write_text(GPU_POD.replace("notebook", "TOP-SECRET"))
    repo = tmp_path / "pr"
    (repo / "base").mkdir(parents=True)
    (repo / "overlay").mkdir()
    if repository:
        (repo / ".git").mkdir()
    (repo / "base" / "pod.yaml").write_text(UNTOLERATED)
    (repo / "overlay" / "pod.yaml").symlink_to("../base/pod.yaml")  # inside: read
    (repo / "overlay" / "leak.yaml").symlink_to(outside / "kubeconfig.yaml")
    (repo / "overlay" / "zero.yaml").symlink_to("/dev/zero")
    for paths in (["."], ["overlay/leak.yaml", "overlay/pod.yaml", "overlay/zero.yaml"]):
        proc = run(["check", "--isolated", "-f", "json", *paths], repo)
        assert proc.returncode == 1, proc.stderr
        found = {(f["path"], f["rule"]): f["message"] for f in json.loads(proc.stdout)["findings"]}
        out = "a symbolic link to a file outside the repository: not linted"
        assert found[("overlay/leak.yaml", "YML005")] == out
        assert found[("overlay/zero.yaml", "YML005")] == out
        assert ("overlay/pod.yaml", "GPU020") in found
        assert "TOP-SECRET" not in proc.stdout
    shown = run(["inspect", "--isolated", "overlay"], repo)
    assert "TOP-SECRET" not in shown.stdout and "outside the repository" in shown.stdout


# -- where the configuration is looked for ----------------------------------------------------
def test_a_config_planted_in_a_shared_temporary_folder_never_applies(
    tmp_path: Path, markers: Path
) -> None:
    shared = tmp_path / "shared"
    (shared / "policy").mkdir(parents=True)
    shared.chmod(0o1777)
    (shared / ".gpulint.yaml").write_text("ignore: [ALL]\nrule-dirs: [policy]\n")
    (shared / "policy" / "evil.py").write_text(planted(markers, "shared", "EVIL004"))
    work = shared / "work" / "deploy"  # no .git anywhere
    work.mkdir(parents=True)
    (work / "pod.yaml").write_text(UNTOLERATED)
    proc = run_here(["check", "--allow-plugins", "-f", "json", "pod.yaml"], work)
    assert proc.returncode == 0, proc.stderr
    assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["GPU020"]
    assert sorted(markers.iterdir()) == []
    shared.chmod(0o755)


def test_a_config_linking_out_of_the_repository_is_skipped_with_a_warning(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.yaml").write_text("ignore: [ALL]\napi-token: TOP-SECRET\n")
    repo = tmp_path / "pr"
    (repo / ".git").mkdir(parents=True)
    (repo / "pod.yaml").write_text(UNTOLERATED)
    (repo / ".gpulint.yaml").symlink_to(outside / "app.yaml")
    proc = run(["check", "-f", "json", "pod.yaml"], repo)
    assert proc.returncode == 0, proc.stderr
    assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["GPU020"]
    assert proc.stderr == (
        "gpulint: warning: ignoring .gpulint.yaml: a symbolic link to a file outside the "
        "repository\n"
    )
    # A link inside the repository is used; --config is the user's choice.
    (repo / "conf").mkdir()
    (repo / "conf" / "gpulint.yaml").write_text("ignore: [GPU020]\n")
    (repo / ".gpulint.yaml").unlink()
    (repo / ".gpulint.yaml").symlink_to("conf/gpulint.yaml")
    assert run(["check", "pod.yaml"], repo).returncode == 0
    named = run(["check", "--config", str(outside / "app.yaml"), "pod.yaml"], repo)
    assert named.returncode == 2 and "api-token: unknown key" in named.stderr


def test_pyproject_keys_get_their_lines_from_one_pass(tmp_path: Path) -> None:
    """Each error's line used to be a new search of the file: thousands of unknown keys in
    `[tool.gpulint]` took minutes (bench/config_errors.py measures n and 4n)."""
    from gpulint.config.file import read_config

    keys = "".join(f"k{i} = 1\n" for i in range(3000))
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.gpulint]\n"
        "rules = {GPU040 = {max_per_node = 4}, 'GPU010' = {}}\n"
        'severity."GPU001" = "warning"\n'
        "[tool.gpulint.per-file-ignores]\n"
        '"a/**" = ["GPU001"]\n' + keys
    )
    config = read_config(tmp_path / "pyproject.toml")
    lines = {
        ("rules", "GPU040", "max_per_node"): 5,
        ("rules", "GPU010"): 5,
        ("severity", "GPU001"): 6,
        ("per-file-ignores", "a/**"): 8,
        ("per-file-ignores", "k0"): 9,
        ("per-file-ignores", "k2999"): 3008,
        ("nowhere",): 4,  # not written: the table's line
    }
    for path, line in lines.items():
        assert config.line_of(path) == line, path


def test_the_search_stops_at_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    (tmp_path / ".gpulint.yaml").write_text("ignore: [ALL]\n")
    (home / "proj" / "pod.yaml").write_text(UNTOLERATED)
    proc = run_here(["check", "pod.yaml"], home / "proj", {"HOME": str(home)})
    assert proc.returncode == 0 and "GPU020" in proc.stdout, proc.stderr
    (home / ".gpulint.yaml").write_text("ignore: [GPU020]\n")
    proc = run_here(["check", "pod.yaml"], home / "proj", {"HOME": str(home)})
    assert proc.returncode == 0 and "GPU020" not in proc.stdout, proc.stderr


@pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0,
    reason="giving a file to another user needs root",
)
def test_a_config_owned_by_another_user_is_skipped_with_a_warning(
    hostile: Path, markers: Path
) -> None:
    config = hostile / ".gpulint.yaml"
    config.write_text("ignore: [ALL]\nrule-dirs: [policy]\n")
    os.chown(config, 4242, 4242)
    proc = run_here(["check", "--allow-plugins", "-f", "json", "pod.yaml"], hostile)
    assert proc.returncode == 0, proc.stderr
    assert [f["rule"] for f in json.loads(proc.stdout)["findings"]] == ["GPU020"]
    assert proc.stderr == (
        "gpulint: warning: ignoring .gpulint.yaml: owned by another user (uid 4242, not 0)\n"
    )
    assert sorted(markers.iterdir()) == []
    # Named with --config, it is the user's choice.
    named = run_here(["check", "--config", ".gpulint.yaml", "pod.yaml"], hostile)
    assert named.returncode == 0, named.stderr


def test_setting_aside_skipped_codes_never_widens_an_ignore(tmp_path: Path) -> None:
    from gpulint.config.file import read_config
    from gpulint.config.validate import forget_codes

    path = tmp_path / ".gpulint.yaml"
    path.write_text(
        "select: [ALL, org]\nignore: [GPU021, org010]\nseverity: {ORG010: error, GPU003: error}\n"
        "rules: {ORG010: {classes: [a]}}\n"
        "per-file-ignores: {'a/**': [Org010], 'b/**': [ORG010, GPU003]}\n"
        "per-object-ignores:\n"
        "- {name: x, rules: [ORG010], reason: only ORG010}\n"
        "- {name: w, rules: [ORG010, GPU001], reason: two}\n"
        "- {name: z, reason: every rule}\n"
    )
    data = forget_codes(read_config(path), ["GPU001", "GPU003", "GPU021"]).data
    assert data == {
        "select": ["ALL"],
        "ignore": ["GPU021"],
        "severity": {"GPU003": "error"},
        "rules": {},
        "per-file-ignores": {"b/**": ["GPU003"]},
        "per-object-ignores": [
            {"name": "w", "rules": ["GPU001"], "reason": "two"},
            {"name": "z", "reason": "every rule"},
        ],
    }
