"""A hostile pull request: nothing in the linted tree runs code, reads or requests anything
outside it, or hangs gpulint -- unless the user opted in for the run or the machine.

Each attack ends in a finding or a one-line error. Subprocesses have a generous ``timeout``
only so that a regression fails instead of hanging the suite; no test measures time.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpulint.declarative import load_declarative
from gpulint.engine import Linter
from gpulint.rule import RuleLoadError
from tests.conftest import gpulint_cmd

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
    return subprocess.run(
        [*gpulint_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


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
    ],
)
def test_patterns_re2_cannot_run_are_load_errors(
    tmp_path: Path, schema: str, problem: str
) -> None:
    path = rule_file(tmp_path, f"schema: {schema}\n")
    with pytest.raises(RuleLoadError) as info:
        load_declarative(path)
    assert str(info.value).startswith(f"declarative rule {path}:5: schema: {problem}")


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


def test_a_value_that_looks_like_a_placeholder_is_printed_as_is(tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text(
        "code: ORG001\nname: x\ntarget: container\nmessage: 'container {container}'\n"
        "schema: false\n"
    )
    text = GPU_POD.replace("name: jupyter", "name: '{name:>99999999}'")
    found = Linter([load_declarative(path)]).lint_text("pod.yaml", text)
    assert [f.message for f in found] == ["container {name:>99999999}"]
