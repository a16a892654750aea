"""Output that cannot be forged or lost, whatever the linted tree holds.

A stranger's pull request chooses object names, keys, label and annotation values and file
names -- with line breaks, terminal escapes, GitHub workflow commands and bytes that are not
UTF-8. A property test writes such manifests under such names, lints them and renders every
format and ``inspect``; each output is read by its real consumer (``json.loads`` and the JSON
Schemas, the SARIF 2.1.0 schema, the Jenkins JUnit schema and junitparser, the Actions
runner's workflow-command grammar), every line that reports a finding starts with the real
(escaped) path, and no control character or line separator is left raw. End-to-end tests run
the installed command on the issue's reproduction and check ``--output``: written
atomically, never through a symbolic link.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from jsonschema import Draft202012Validator
from junitparser import Failure, JUnitXml

from gpulint.commands import outfiles
from gpulint.commands.inspect import Inspector, render_json, render_text
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.lint.runner import run
from gpulint.model import Finding, Severity
from gpulint.reporters import FORMATS, ReportContext, renderer
from gpulint.reporters.github import display_path
from gpulint.util.discover import targets
from gpulint.util.textsafe import escape, json_text
from tests.conftest import ROOT, gpulint_in_process
from tests.externals import assert_schema_valid, junit_schema, multitool_validate
from tests.test_github_format import parse_command
from tests.test_workflow_commands import assert_no_command

RULES = load_rules()
LINTER = Linter(RULES)

#: What may never be printed raw: every C0 control but LF (which ends a line), DEL, C1
#: controls, U+2028/U+2029, bidi formatting characters, lone surrogates (not UTF-8).
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
SUMMARY = re.compile(r"(All checks passed: no findings|Found \d+ problems?) .*\.")
INSPECT_SUMMARY = re.compile(r"\d+ workloads?, \d+ pod specs? \(\d+ with a GPU request\) in .*\.")
#: One workflow command: ``::name key=value,...::data``; escapeProperty leaves no ``:`` or
#: ``,`` in a value, and nothing may break the line.
COMMAND = re.compile(
    r"::(error|warning|notice) (file|line|endLine|col|endColumn|title)=[^,:\r\n]*"
    r"(,(file|line|endLine|col|endColumn|title)=[^,:\r\n]*)*::[^\r\n]*"
)
#: RFC 3986 URI characters (percent-encoding checked apart).
URI_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")
REPORT_SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text("utf-8"))
INSPECT_SCHEMA = json.loads((ROOT / "schemas" / "inspect.schema.json").read_text("utf-8"))

#: Characters an attacker reaches for, mixed into otherwise ordinary text.
HOSTILE = (
    "\n", "\r", "\t", "\x00", "\x07", "\x08", "\x1b", "\x7f", "\x85", "\x9b", "\x9d",
    "\u2028", "\u2029", "\u202e", "\u2066", "\ufeff", "\ufffe", "\uffff", ":", ",", "%",
    "%0A", '"', "'", "\\", "<", "&", "]]>", "#", "::error file=x.yaml,line=1::forged",
    "::add-mask::", "\x1b]0;title\x07", "\x1b[31m", "other.yaml:1:1: GPU001 error: x",
    "##[error]forged", "[", " ::", "\u3000",
)  # fmt: skip
#: Pieces of file names: invalid UTF-8 (a lone continuation byte, a truncated sequence),
#: line breaks, escapes and the characters that workflow commands and URIs treat specially.
NAME_PIECES = (
    b"a", b"k8s", b"-", b" ", b"\n", b"\r", b"\t", b"\x1b[31m", b"\xff", b"\xc3", b"\x80",
    b"\xed\xa0\x80", "\u2028".encode(), "\x85".encode(), "é".encode(), b":", b",", b"%",
    b"%25", b"#", b"?", b"\\", b"::error ", b"x.yaml:1:1: ", b"##[",
)  # fmt: skip

text = st.lists(
    st.one_of(st.sampled_from(HOSTILE), st.characters(exclude_categories=("Cs",))),
    max_size=6,
).map("".join)
file_names = st.lists(st.sampled_from(NAME_PIECES), min_size=1, max_size=6).map(
    lambda parts: b"".join(parts) + b".yaml"
)


def yaml_quoted(value: str) -> str:
    """A YAML double-quoted scalar holding exactly ``value`` (escapes for all but ASCII)."""
    out = []
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def manifest(v: dict[str, str]) -> str:
    """A GPU pod whose every user-chosen string is ``v``'s: each reaches some output."""
    q = {key: yaml_quoted(value) for key, value in v.items()}
    return f"""\
apiVersion: v1
kind: Pod
metadata:
  name: {q["name"]}
  namespace: {q["namespace"]}
  labels:
    app: {q["label"]}
    {q["label_key"]}: "x"
  annotations:
    gpulint.io/ignore: "GPU020"
    gpulint.io/ignore-reason: {q["reason"]}
    note: {q["annotation"]}
spec:
  containers:
    - name: {q["container"]}
      image: cuda
      resources:
        limits:
          {yaml_quoted("nvidia.com/gpu" + v["key"])}: 1
          nvidia.com/gpu: {q["quantity"]}
"""


def expected_json_path(label: str) -> str:
    """How JSON carries a path: exact, but an undecodable byte written ``\\xNN``."""
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in label)


def printed(output: str) -> str:
    """The output as written to a UTF-8 stdout: a lone surrogate would fail here."""
    output.encode("utf-8")  # strict
    found = RAW.search(output)
    assert found is None, f"raw {found.group()!r} in output: {output!r}"
    return output


def lines_of(output: str) -> list[str]:
    assert output.endswith("\n")
    lines = output[:-1].split("\n")
    assert output.splitlines() == lines  # no other line break (\x85, \u2028, \x1c...)
    return lines


# -- the checks, one per format ---------------------------------------------------------------


def check_text(out: str, active: list[Finding], _: str, helps: bool = True) -> None:
    *shown, summary = lines_of(printed(out))
    # Each finding's line, then (text, not concise) its help line when it has one, set in.
    findings = [line for line in shown if not line.startswith("  help: ")]
    assert len(shown) - len(findings) == (sum(1 for f in active if f.help) if helps else 0)
    assert SUMMARY.fullmatch(summary), summary
    assert len(findings) == len(active)
    for line, f in zip(findings, active, strict=True):
        assert line.startswith(f"{escape(f.path)}:{f.line}:{f.column}: {f.rule} "), line


def check_github(out: str, active: list[Finding], cwd: str) -> None:
    *commands_, summary = lines_of(printed(out))
    assert SUMMARY.fullmatch(summary), summary
    assert len(commands_) == len(active)
    names = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    for line, f in zip(commands_, active, strict=True):
        assert COMMAND.fullmatch(line), line
        parsed = parse_command(line)
        assert parsed is not None
        name, props, data = parsed
        assert name == names[f.severity]
        assert props["file"] == escape(display_path(f.path, cwd))
        assert props["line"] == str(f.line)
        obj = f" [{f.object.label()}]" if f.object is not None else ""
        assert data == escape(f.message + obj)


def check_json(out: str, findings: list[Finding], _: str) -> None:
    doc = json.loads(printed(out))
    Draft202012Validator(REPORT_SCHEMA).validate(doc)
    assert len(doc["findings"]) == len(findings)
    for item, f in zip(doc["findings"], findings, strict=True):
        assert item["path"] == expected_json_path(f.path)
        assert item["message"] == f.message  # exact: the values have no surrogates
        if f.object is not None:
            assert item["object"] == f.object.as_json()


def check_sarif(out: str, findings: list[Finding], cwd: str) -> None:
    log = json.loads(printed(out))
    assert_schema_valid(log)
    results = log["runs"][0]["results"]
    assert len(results) == len(findings)
    for result, f in zip(results, findings, strict=True):
        artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
        uri = artifact["uri"]
        assert artifact["uriBaseId"] == "%SRCROOT%"
        assert URI_CHARS.fullmatch(uri), uri
        assert all(re.fullmatch("%[0-9A-F]{2}", uri[i : i + 3]) for i in _percents(uri)), uri
        # The URI names exactly the file's bytes.
        assert unquote_to_bytes(uri) == os.fsencode(os.path.relpath(f.path, cwd))


def _percents(uri: str) -> list[int]:
    return [i for i, c in enumerate(uri) if c == "%"]


def check_junit(out: str, active: list[Finding], _: str) -> None:
    xml = printed(out)
    junit_schema().validate(xml)
    parsed = JUnitXml.fromstring(xml)
    paths = {escape(f.path) for f in active}
    failures = 0
    for suite in parsed:
        for case in suite:
            for result in case.result:
                if isinstance(result, Failure):
                    for line in (result.text or "").split("\n"):
                        if line.startswith("  help: "):
                            continue  # the finding's help line, below it
                        failures += 1
                        assert any(line.startswith(p + ":") for p in paths), line
    assert failures == len(active)


def check_gitlab(out: str, active: list[Finding], cwd: str) -> None:
    from tests.test_gitlab_format import _valid

    issues = json.loads(printed(out))
    _valid(issues)
    assert len(issues) == len(active)
    for issue, f in zip(issues, active, strict=True):
        assert issue["location"]["path"] == expected_json_path(display_path(f.path, cwd))
        assert issue["check_name"] == f.rule


CHECKS = {
    "text": check_text,
    "concise": lambda out, active, tmp: check_text(out, active, tmp, helps=False),
    "github": check_github,
    "json": check_json,
    "sarif": check_sarif,
    "junit": check_junit,
    "gitlab": check_gitlab,
}


def test_every_format_is_checked() -> None:
    assert set(CHECKS) == set(FORMATS)


def check_inspect(root: str, labels: set[str]) -> None:
    report = Inspector().inspect_targets(targets([root])[0])
    doc = json.loads(printed(render_json(report)))
    Draft202012Validator(INSPECT_SCHEMA).validate(doc)
    assert {entry["path"] for entry in doc["files"]} == {expected_json_path(x) for x in labels}
    assert_no_command(render_json(report))
    assert_no_command(render_text(report))
    *lines, summary = lines_of(printed(render_text(report)))
    assert INSPECT_SUMMARY.fullmatch(summary), summary
    shown = {escape(label) for label in labels}
    for line in lines:
        # A detail line is indented; every other line starts with the file it is about.
        assert line.startswith(" ") or any(line.startswith(p + ":") for p in shown), line


# -- the property ------------------------------------------------------------------------------


#: Every user-chosen string in :func:`manifest`.
FIELDS = ("name", "namespace", "label", "label_key", "reason", "annotation", "container", "key")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.fixed_dictionaries({key: text for key in (*FIELDS, "quantity")}),
    name=file_names,
    broken=text,
)
def test_hostile_names_keys_values_and_paths_in_every_format(
    values: dict[str, str], name: bytes, broken: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = os.fsencode(tmp)
        with open(os.path.join(root, name), "wb") as fh:
            fh.write(manifest(values).encode("utf-8"))
        # Raw text in a file that does not parse: the YAML error message quotes it.
        with open(os.path.join(root, b"broken-" + name), "wb") as fh:
            fh.write(f"key: {broken}\nother: [unclosed {broken}\n".encode("utf-8", "replace"))
        labels = {os.path.normpath(os.path.join(tmp, os.fsdecode(n))) for n in os.listdir(root)}

        report = run(LINTER, targets([tmp])[0], collect_objects=True)
        assert {f.path for f in report.findings} <= labels
        active = [f for f in report.findings if f.suppression is None]
        ctx = ReportContext(RULES, Severity.ERROR, 1, cwd=tmp, argv=["gpulint", "check", tmp])
        outputs = {}
        for fmt, check in CHECKS.items():
            findings = report.findings if fmt in ("json", "sarif") else active
            outputs[fmt] = renderer(fmt)(report, ctx)
            check(outputs[fmt], findings, tmp)
            assert_no_command(outputs[fmt], fmt)
        # SARIF fingerprints do not depend on anything but the finding (stable across runs):
        # the rendering checked above against a second one.
        assert _fingerprints(outputs["sarif"]) == _fingerprints(renderer("sarif")(report, ctx))
        check_inspect(tmp, labels)


def _fingerprints(sarif: str) -> list[str]:
    results = json.loads(sarif)["runs"][0]["results"]
    return [r["partialFingerprints"]["gpulint/v1"] for r in results]


# -- the escaping itself -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain ünïcødé 😀", "plain ünïcødé 😀"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x00\x1b[31m\x7f", "\\x00\\x1b[31m\\x7f"),
        ("\x85\x9b", "\\x85\\x9b"),
        ("\u2028\u2029\u202e\u2066", "\\u2028\\u2029\\u202e\\u2066"),
        (os.fsdecode(b"bad\xff\xc3.yaml"), "bad\\xff\\xc3.yaml"),
        ("\ud800", "\\ud800"),
        ("C:\\k8s\\a.yaml", "C:\\k8s\\a.yaml"),  # a backslash is not escaped
    ],
)
def test_escape_is_one_visible_line(raw: str, shown: str) -> None:
    assert escape(raw) == shown
    assert escape(raw).splitlines() == [shown]


def test_json_keeps_values_and_makes_undecodable_bytes_visible() -> None:
    value = {"path": os.fsdecode(b"a\xff\n.yaml"), "name": "x\u2028\x85\x1b\ufffe😀"}
    out = json_text(value)
    out.encode("utf-8")
    assert RAW.search(out) is None
    assert json.loads(out) == {"path": "a\\xff\n.yaml", "name": value["name"]}


@pytest.mark.parametrize("value", ["\x7f", "a\x7fb", "\x7f\u2028"])
def test_json_escapes_del_even_in_otherwise_ascii_text(value: str) -> None:
    """DEL is ASCII: an all-ASCII shortcut must not let it through raw (inspect's JSON
    printed `nvidia.com/gpu: "\\x7f"` as a raw byte)."""
    out = json_text({"value": value})
    assert RAW.search(out) is None
    assert json.loads(out) == {"value": value}


# -- end to end: the installed command -------------------------------------------------------

FORGED = """\
apiVersion: v1
kind: Pod
metadata:
  name: "x\\n::error file=evil.yaml,line=1::forged\\n::add-mask::secret\\nfake.yaml:1:1: \
GPU001 error: fake \\e]0;title\\a\\e[31m\\L\\N"
spec:
  containers:
    - name: "c\\r\\nbad.yaml:2:2: X"
      image: cuda
      resources:
        limits:
          nvidia.com/gpu: 1
          "nvidia.com/gpu\\nfake.yaml:3:3: GPU010 error: z": 1
"""
#: A file name that is not UTF-8 and holds a line break and a fake finding.
FORGED_NAME = b"bad\xff\nfake.yaml:9:9: GPU001 error: x.yaml"
SHOWN_NAME = "bad\\xff\\nfake.yaml:9:9: GPU001 error: x.yaml"


def cli(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """gpulint's output as bytes (a str reader would hide bad UTF-8), in-process through the
    console entry point (tests/conftest.py)."""
    return gpulint_in_process(*args, cwd=cwd, text=False)


@pytest.fixture()
def forged(tmp_path: Path) -> Path:
    (tmp_path / os.fsdecode(FORGED_NAME)).write_text(FORGED, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_forged_manifest_under_a_forged_name(forged: Path, fmt: str) -> None:
    proc = cli("check", "--isolated", "-f", fmt, ".", cwd=forged)
    assert proc.returncode == 0, proc.stderr  # a warning and an info (an assumed taint)
    assert proc.stderr == b""
    out = printed(proc.stdout.decode("utf-8"))  # strict: valid UTF-8
    lines = lines_of(out)
    # Nothing but gpulint's own lines: no line starts a workflow command or a finding of
    # a file that is not there.
    for line in lines:
        assert not line.startswith(("fake.yaml", "evil.yaml", "bad.yaml", "::add-mask"))
        if line.startswith("::"):
            assert fmt == "github" and COMMAND.fullmatch(line), line
    if fmt == "text":
        # GPU010 (the forged key) and GPU020 (no toleration, info: an assumed taint), the
        # note on the assumed GPU taint, then the summary.
        # Each finding with its help line.
        assert len(lines) == 6
        assert lines[4].startswith("note: assumed GPU taint ")
        for line in (lines[0], lines[2]):
            assert line.startswith(SHOWN_NAME + ":"), line
        for line in (lines[1], lines[3]):
            assert line.startswith("  help: "), line
    if fmt == "sarif":
        log = json.loads(out)
        assert_schema_valid(log)
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]
        }
        assert uris == {"bad%FF%0Afake.yaml%3A9%3A9%3A%20GPU001%20error%3A%20x.yaml"}
    if fmt == "json":
        paths = {f["path"] for f in json.loads(out)["findings"]}
        assert paths == {"bad\\xff\nfake.yaml:9:9: GPU001 error: x.yaml"}
    if fmt == "junit":
        junit_schema().validate(out)


def test_the_forged_sarif_is_clean_under_the_multitool(forged: Path, tmp_path: Path) -> None:
    proc = cli("check", "--isolated", "-f", "sarif", "-o", "out.sarif", ".", cwd=forged)
    assert proc.returncode == 0, proc.stderr
    results = multitool_validate([forged / "out.sarif"], tmp_path)
    assert results == [], results


def test_inspect_escapes_names_and_paths(forged: Path) -> None:
    text = cli("inspect", "--isolated", ".", cwd=forged)
    assert text.returncode == 0, text.stderr
    lines = lines_of(printed(text.stdout.decode("utf-8")))
    assert lines[0].startswith(SHOWN_NAME + ":1:1: Pod/x\\n::error file=evil.yaml"), lines[0]
    data = cli("inspect", "--isolated", "-f", "json", ".", cwd=forged)
    doc = json.loads(printed(data.stdout.decode("utf-8")))
    assert doc["files"][0]["workloads"][0]["name"].startswith("x\n::error file=evil.yaml")


def test_stderr_messages_are_one_escaped_line(tmp_path: Path) -> None:
    missing = "nope\n::error file=evil.yaml::forged\x1b[2J.yaml"
    for command in ("check", "inspect"):
        proc = cli(command, "--isolated", missing, cwd=tmp_path)
        assert proc.returncode == 2
        err = printed(proc.stderr.decode("utf-8"))
        assert err == (
            "gpulint: error: nope\\n::error file=evil.yaml::forged\\x1b[2J.yaml: "
            "no such file or directory\n"
        )


def test_warnings_and_rule_errors_on_stderr_are_escaped(tmp_path: Path) -> None:
    # A folder with nothing to lint, named by a glob over the pull request's tree.
    folder = "empty\n::error file=evil.yaml::forged\x1b]0;title\x07"
    (tmp_path / folder).mkdir()
    proc = cli("check", "--isolated", folder, cwd=tmp_path)
    err = printed(proc.stderr.decode("utf-8"))
    assert lines_of(err)[0] == (
        "gpulint: warning: no files linted: empty\\n::error file=evil.yaml::forged"
        "\\x1b]0;title\\x07 held no *.yaml, *.yml or Markdown file to lint "
        "(or every one was excluded)"
    )
    # A plugin name with a trailing line break (a schema pattern's `$` accepts one) in the
    # warning that says the configuration's Python rules were skipped.
    (tmp_path / ".gpulint.yaml").write_text('plugins: ["evil\\n"]\n', "utf-8")
    (tmp_path / "pod.yaml").write_text(GPU_POD, "utf-8")
    proc = cli("check", "pod.yaml", cwd=tmp_path)
    err = printed(proc.stderr.decode("utf-8"))
    assert lines_of(err) == [
        "gpulint: warning: .gpulint.yaml: skipped the Python rules it names (plugins: evil\\n); "
        "run them with --allow-plugins or GPULINT_ALLOW_PLUGINS=1 if you trust this repository"
    ]
    # A rule that raises (GL900) repeats its finding on stderr when stdout is a document:
    # the file name and the exception's text come from the tree.
    (tmp_path / ".gpulint.yaml").unlink()
    (tmp_path / "raiser.py").write_text(
        "CODE = 'RAI001'\nNAME = 'raiser'\nSCOPE = 'object'\n\n"
        "def check(obj, ctx):\n    raise ValueError(obj.ref.name)\n",
        "utf-8",
    )
    hostile = "x\n::error file=evil.yaml::forged\x1b[2J"
    (tmp_path / f"{hostile}.yaml").write_text(
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {json.dumps(hostile)}\n", "utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    exe = Path(sys.executable).with_name("gpulint")
    proc = subprocess.run(
        [str(exe), "check", "--plugin", "raiser", "-f", "json", f"{hostile}.yaml"],
        cwd=tmp_path, capture_output=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    err = printed(proc.stderr.decode("utf-8"))
    (line,) = lines_of(err)
    assert line.startswith("gpulint: error: x\\n::error file=evil.yaml::forged\\x1b[2J.yaml:")
    # (GL900 joins the exception's lines with spaces; the rest is escaped here.)
    assert "raised ValueError: x ::error file=evil.yaml::forged\\x1b[2J: " in line, line


def test_a_config_error_quoting_a_hostile_key_stays_on_its_lines(tmp_path: Path) -> None:
    (tmp_path / ".gpulint.yaml").write_text('"bad\\nkey\\e[31m\\L::error::x": 1\n', "utf-8")
    (tmp_path / "a.yaml").write_text("a: 1\n", "utf-8")
    proc = cli("check", "a.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    err = printed(proc.stderr.decode("utf-8"))
    assert [line[:16] for line in lines_of(err)] == ["gpulint: error: "], err
    assert "key\\u001b[31m\\u2028::error::x" in err  # the configuration's quoting, then ours


# -- --output: atomic, never through a symbolic link ------------------------------------------

GPU_POD = (ROOT / "examples" / "bad-inference.yaml").read_text("utf-8")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pod.yaml").write_text(GPU_POD, "utf-8")
    return tmp_path


def test_a_symlinked_output_is_refused_and_its_target_untouched(
    repo: Path, tmp_path_factory: Any
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "authorized_keys"
    outside.write_text("precious\n", "utf-8")
    (repo / "gpulint.sarif").symlink_to(outside)
    proc = cli("check", "--isolated", "-f", "sarif", "-o", "gpulint.sarif", "pod.yaml", cwd=repo)
    assert proc.returncode == 2
    err = proc.stderr.decode("utf-8")
    assert err == (
        "gpulint: error: refusing to write gpulint.sarif: it is a symbolic link "
        "(a report is never written through one)\n"
    )
    assert outside.read_text("utf-8") == "precious\n"
    assert (repo / "gpulint.sarif").is_symlink()
    assert proc.stdout == b""  # refused before anything was linted


def test_a_symlinked_folder_on_the_way_is_refused(repo: Path, tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (repo / "reports").symlink_to(outside, target_is_directory=True)
    for output in ("reports/gpulint.sarif", str(repo / "reports" / "gpulint.sarif")):
        proc = cli("check", "--isolated", "-f", "sarif", "-o", output, "pod.yaml", cwd=repo)
        assert proc.returncode == 2
        assert b"reports is a symbolic link" in proc.stderr
        assert list(outside.iterdir()) == []


def test_a_dangling_symlink_is_refused(repo: Path, tmp_path_factory: Any) -> None:
    target = tmp_path_factory.mktemp("outside") / "new-file"
    (repo / "out.json").symlink_to(target)
    proc = cli("check", "--isolated", "-f", "json", "-o", "out.json", "pod.yaml", cwd=repo)
    assert proc.returncode == 2
    assert not target.exists()


def test_the_report_replaces_the_previous_one_and_keeps_its_mode(repo: Path) -> None:
    report = repo / "out" / "gpulint.json"
    proc = cli("check", "--isolated", "-f", "json", "-o", "out/gpulint.json", "pod.yaml", cwd=repo)
    assert proc.returncode == 1
    assert json.loads(report.read_text("utf-8"))["summary"]["findings"] > 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(report.stat().st_mode) == 0o666 & ~umask
    report.chmod(0o640)
    (repo / "pod.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    proc = cli("check", "--isolated", "-f", "json", "-o", "out/gpulint.json", "pod.yaml", cwd=repo)
    assert proc.returncode == 0
    assert json.loads(report.read_text("utf-8"))["summary"]["findings"] == 0
    assert stat.S_IMODE(report.stat().st_mode) == 0o640
    assert sorted(p.name for p in report.parent.iterdir()) == ["gpulint.json"]  # no temp file


def test_a_failed_write_leaves_the_previous_report(tmp_path: Path, monkeypatch: Any) -> None:
    report = tmp_path / "gpulint.sarif"
    report.write_text("previous report\n", "utf-8")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        outfiles.write_file(str(report), "new report\n")
    assert report.read_text("utf-8") == "previous report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["gpulint.sarif"]  # temp file removed


def test_the_temporary_file_never_follows_a_planted_link(
    tmp_path: Path, monkeypatch: Any, tmp_path_factory: Any
) -> None:
    # Whatever name the temporary file would take, a link planted there is not followed:
    # mkstemp opens with O_EXCL and tries the next name.
    outside = tmp_path_factory.mktemp("outside") / "victim"
    outside.write_text("precious\n", "utf-8")
    (tmp_path / ".gpulint-planted.tmp").symlink_to(outside)
    names = iter(["planted", "fresh"])
    monkeypatch.setattr(tempfile, "_get_candidate_names", lambda: names)
    outfiles.write_file(str(tmp_path / "out.json"), "{}\n")
    assert outside.read_text("utf-8") == "precious\n"
    assert (tmp_path / "out.json").read_text("utf-8") == "{}\n"
    assert (tmp_path / ".gpulint-planted.tmp").is_symlink()


def test_character_devices_are_written_in_place(repo: Path) -> None:
    proc = cli("check", "--isolated", "-f", "json", "-o", os.devnull, "pod.yaml", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == b""


def test_dev_stdout_is_a_link_and_the_error_says_to_use_dash(repo: Path) -> None:
    if not os.path.islink("/dev/stdout"):
        pytest.skip("/dev/stdout is not a symbolic link on this system")
    proc = cli("check", "--isolated", "-f", "json", "-o", "/dev/stdout", "pod.yaml", cwd=repo)
    assert proc.returncode == 2
    assert b"`--output -` is standard output" in proc.stderr


def test_rule_docs_from_the_repository_reach_the_terminal_escaped(tmp_path: Path) -> None:
    """A declarative rule is data from the linted repository (it loads without opt-in): its
    name, summary and documentation are printed by `gpulint rules`, `gpulint rule CODE` and
    `gpulint rules --format markdown` with control characters in their visible form."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "evil.yaml").write_text(
        "code: EVIL001\n"
        "name: evil-docs\n"
        "target: object\n"
        'message: "x"\n'
        "schema: {type: object}\n"
        'docs: "Clears the screen\\e[2J\\e]0;owned\\a here.\\n\\n'
        '## What it does\\nFakes a finding\\rk8s/a.yaml:1:1: GPU001 error: forged\\n"\n',
        encoding="utf-8",
    )
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [policy]\n", encoding="utf-8")
    for args in (["rules", "--long"], ["rule", "EVIL001"], ["rules", "--format", "markdown"]):
        proc = gpulint_in_process(*args, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "EVIL001" in proc.stdout
        assert RAW.search(proc.stdout) is None, (args, proc.stdout)
        # `rules` shows the summary (the first line of "What it does", white space folded);
        # the pages show the whole documentation, escaped.
        assert "Fakes a finding" in proc.stdout, args
        assert args == ["rules", "--long"] or "\\x1b[2J" in proc.stdout, args
