"""No output line is a GitHub workflow command the linted tree chose.

The Actions runner reads a step's output line by line (``StreamReader.ReadLine``: a line ends
at LF, CR or CR LF) and takes a line for a command when, after ``TrimStart`` (every .NET white
space character), it starts with ``::`` (``ActionCommand.TryParseV2``), or when ``##[``
occurs anywhere in it (the legacy ``ActionCommand.TryParse``). :func:`commands` below reads
output that way. A folder named ``::error file=README.md::Approved``, a quoted value holding
``##[error]forged`` and ``--diff`` context lines (a file's line behind one space, which the
runner trims) must produce none, in any format and on stderr; ``--format github`` produces
its own commands only, each with the real file as its one ``file`` property.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from gpulint.reporters import FORMATS
from tests.conftest import gpulint_in_process
from tests.test_github_format import parse_command

#: .NET's ``char.IsWhiteSpace``, what ``string.TrimStart()`` removes.
DOTNET_WHITE_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
RUNNER_LINE_END = re.compile(r"\r\n|\r|\n")

FOLDER = "::error file=README.md::Approved"
#: A GPU pod (GPU001: fixable, requests without limits; GPU020: no toleration) whose name
#: holds a legacy command and whose container arguments hold lines that are commands, next
#: to the line the fix changes (so they are the diff's context lines).
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: "train-##[error]forged"
  annotations:
    note: "x ##[add-mask]secret"
spec:
  containers:
  - name: train
    image: pytorch/pytorch
    args:
    - |
      ::error::x
      ##[error]x
    resources:
      requests:
        nvidia.com/gpu: 1
"""


def commands(output: str) -> list[str]:
    """The lines of ``output`` the Actions runner would try as workflow commands."""
    return [
        line
        for line in RUNNER_LINE_END.split(output)
        if line.lstrip(DOTNET_WHITE_SPACE).startswith("::") or "##[" in line
    ]


def assert_no_command(output: str, fmt: str = "text", path: str | None = None) -> None:
    """No line of ``output`` is a command, but ``--format github``'s own annotations: each
    gpulint's shape, no legacy command in it, and (given ``path``) about that file."""
    for line in commands(output):
        assert fmt == "github", line
        parsed = parse_command(line)
        assert parsed is not None and "##[" not in line, line
        name, props, _ = parsed
        assert name in ("error", "warning", "notice"), line
        assert set(props) <= {"file", "line", "endLine", "col", "endColumn", "title"}, line
        assert path is None or props["file"] == path, line


def run(*args: str, cwd: Path) -> Any:
    return gpulint_in_process(*args, cwd=cwd)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    (tmp_path / FOLDER).mkdir()
    (tmp_path / FOLDER / "pod.yaml").write_text(POD, "utf-8")
    return tmp_path


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_folder_named_like_a_command_forges_nothing(tree: Path, fmt: str) -> None:
    proc = run("check", "--isolated", "-f", fmt, ".", cwd=tree)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout and proc.stderr == ""
    assert_no_command(proc.stdout, fmt, path=f"{FOLDER}/pod.yaml")
    if fmt == "github":
        assert len(commands(proc.stdout)) == 2  # GPU001 and GPU020, real annotations
    if fmt == "text":
        # The path still names the file: ./ before it, not a backslash inside it.
        assert proc.stdout.startswith(f"./{FOLDER}/pod.yaml:")
        assert "train-##\\[error]forged" in proc.stdout
    if fmt in ("json", "sarif", "gitlab"):
        # The exact values, for a JSON reader.
        assert "train-##[error]forged" in json.dumps(json.loads(proc.stdout), ensure_ascii=False)


def test_the_default_text_report_and_a_file_named_on_the_command_line(tree: Path) -> None:
    for target in (".", FOLDER, f"{FOLDER}/pod.yaml"):
        proc = run("check", "--isolated", "--show-rendered", target, cwd=tree)
        assert proc.returncode == 1, proc.stderr
        assert_no_command(proc.stdout)
        assert proc.stdout.startswith(f"./{FOLDER}/pod.yaml:7:1: GPU020 info: "), proc.stdout


def test_diff_context_lines_are_no_commands(tree: Path) -> None:
    proc = run("check", "--isolated", "--diff", FOLDER, cwd=tree)
    assert proc.returncode == 1, proc.stderr
    assert "+      limits:\n" in proc.stdout
    # A context line is the file's line behind a space: the runner trims it.
    assert "       \\::error::x\n" in proc.stdout
    assert "       ##\\[error]x\n" in proc.stdout
    assert_no_command(proc.stdout)
    assert_no_command(proc.stderr)


def test_inspect_forges_nothing(tree: Path) -> None:
    proc = run("inspect", "--isolated", ".", cwd=tree)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"./{FOLDER}/pod.yaml:1:1: Pod/train-##\\[error]forged")
    assert_no_command(proc.stdout)
    data = run("inspect", "--isolated", "-f", "json", ".", cwd=tree)
    assert_no_command(data.stdout)
    assert json.loads(data.stdout)["files"][0]["workloads"][0]["name"] == "train-##[error]forged"


def test_stderr_names_a_missing_path_without_a_command(tmp_path: Path) -> None:
    for command in ("check", "inspect"):
        proc = run(command, "--isolated", "##[error]nope.yaml", cwd=tmp_path)
        assert proc.returncode == 2
        assert proc.stderr == "gpulint: error: ##\\[error]nope.yaml: no such file or directory\n"
        assert_no_command(proc.stderr)


# -- rule folders: the tree's documentation -------------------------------------------------

EVIL_RULE = """\
code: EVIL001
name: evil-docs
target: object
message: "x"
schema: {type: object}
docs: |
  Looks harmless. [click](https://evil.example) ![x](https://evil.example/i.png)

  ::error file=README.md::Approved
    ::stop-commands::token
  ##[error]forged
"""


@pytest.fixture()
def rule_tree(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "evil.yaml").write_text(EVIL_RULE, "utf-8")
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [policy]\n", "utf-8")
    (tmp_path / "pod.yaml").write_text(POD, "utf-8")
    return tmp_path


def test_a_wrapped_summary_starts_no_command(rule_tree: Path) -> None:
    """`gpulint rules` wraps a summary on indented lines: one may start with the tree's word."""
    (rule_tree / "policy" / "evil.yaml").write_text(
        EVIL_RULE.replace("Looks harmless.", "Looks " + "harmless ::error::x " * 8), "utf-8"
    )
    for width in range(40, 121, 7):
        env = {**os.environ, "COLUMNS": str(width)}
        proc = gpulint_in_process("rules", "--long", cwd=rule_tree, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count("::error::x") == 8
        assert_no_command(proc.stdout)


def test_rule_folder_docs_print_no_command(rule_tree: Path) -> None:
    for args in (["rules"], ["rule", "EVIL001"], ["rules", "--format", "markdown"]):
        proc = run(*args, cwd=rule_tree)
        assert proc.returncode == 0, proc.stderr
        assert "EVIL001" in proc.stdout
        assert_no_command(proc.stdout)
    page = run("rule", "EVIL001", cwd=rule_tree).stdout
    assert "\n\\::error file=README.md::Approved\n  \\::stop-commands::token\n" in page
    listing = run("rules", "--format", "json", cwd=rule_tree)
    assert_no_command(listing.stdout)
    (evil,) = [r for r in json.loads(listing.stdout) if r["code"] == "EVIL001"]
    assert "##[error]forged" in evil["doc"]


# -- the functions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("::error::x", "\\::error::x"),
        ("  ::error::x", "  \\::error::x"),
        ("\u3000\xa0\u2007::warning::x", "\u3000\xa0\u2007\\::warning::x"),
        ("a ::error::x", "a ::error::x"),  # not at the start: no command
        ("x ##[error]y", "x ##\\[error]y"),
        ("###[error]y##[", "###\\[error]y##\\["),
        ("ok\r::error::x\n ::notice::y", "ok\r\\::error::x\n \\::notice::y"),
        ("path.yaml:1:1: GPU001 error: a::b", "path.yaml:1:1: GPU001 error: a::b"),
    ],
)
def test_plain_leaves_no_command(line: str, shown: str) -> None:
    from gpulint.util.textsafe import plain

    assert plain(line) == shown
    assert commands(plain(line)) == []
    assert plain(shown) == shown


def test_escape_and_its_companions() -> None:
    from gpulint.util.textsafe import escape, escape_line, json_text, lead

    assert escape("##[error]x") == "##\\[error]x"
    assert escape_line("\n::error::x") == "\\n::error::x"
    assert escape_line(" ::error::x") == " \\::error::x"
    assert lead("::a.yaml") == "./::a.yaml"
    assert lead(" :a.yaml") == "./ :a.yaml"
    assert lead("a::b.yaml") == "a::b.yaml" and lead("/abs/::x") == "/abs/::x"
    doc = {"a": "##[error]x", "##[k": ["##[", "\\##["]}
    text = json_text(doc)
    assert "##[" not in text and json.loads(text) == doc
