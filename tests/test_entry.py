"""The console entry point's fast path: ``gpulint check`` parsed without typer."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from enum import Enum
from typing import Any

import pytest

import gpulint.commands.check
from gpulint.cli.entry import _fast_check
from gpulint.commands.checkoptions import (
    CHECK_OPTIONS,
    FLAG,
    LEFT_TO_TYPER,
    MANY,
    SWITCH,
    CheckOptions,
)
from tests.conftest import ROOT, gpulint_cmd

Call = tuple[Any, CheckOptions]

# Command lines the fast parser must take, each parsed exactly as typer parses it.
FAST = [
    ["check"],
    ["check", "a.yaml", "k8s/"],
    ["check", "-"],
    ["check", "--select", "GPU001", "--select=GPU0,YML", "a.yaml"],
    ["check", "--fail-on", "warning", "--format", "json", "a.yaml"],
    ["check", "--fail-on=info", "--format=sarif", "-o", "out.sarif", "a.yaml"],
    ["check", "-fjson", "-oout.json", "-j2", "a.yaml"],
    ["check", "-f", "github", "-j", "1", "a.yaml", "b.yml"],
    ["check", "-o=out.json", "a.yaml"],  # click keeps the "=" of a short option's value
    ["check", "-o", "-", "a.yaml"],
    ["check", "--output=report.xml", "--format", "junit", "a.yaml"],
    ["check", "--ignore", "GPU020", "--extend-select", "GL", "--ignore=YML002", "a.yaml"],
    ["check", "--extend-select=GL100", "--extend-select", "GPU040"],
    ["check", "--config", "cfg.yaml", "--isolated", "--color", "never", "a.yaml"],
    ["check", "--config=pyproject.toml", "--color=always", "--jobs=02"],
    ["check", "--isolated", "--isolated"],
    ["check", "--stdin-filename", "k8s/pod.yaml", "-"],
    ["check", "--stdin-filename=k8s/pod.yaml", "--format", "json", "-"],
    ["check", "--", "-odd.yaml", "--select", "--"],
    ["check", "--select", "GPU0", "--", "a.yaml"],
    ["check", "a.yaml", "--format", "json", "b.yaml", "--jobs", "3"],  # options anywhere
    ["check", "--format", "json", "--format", "text", "-j4", "-j", "1"],  # the last wins
    ["check", "--select", "-", "a.yaml"],
    ["check", "--select", "GPU0,GL", "--fail-on", "warning", "--format", "github", "x.yaml"],
    ["check", "--fail-if-no-files", "a.yaml"],
    ["check", "--fail-if-no-files", "--no-fail-if-no-files", "a.yaml"],  # the last wins
    ["check", "--allow-plugins", "--plugin", "acme.rules", "--rule-dir=policy", "a.yaml"],
    ["check", "--rule-dir", "p1", "--rule-dir", "p2", "--plugin=a", "--plugin", "b"],
    ["check", "--render", "--render-timeout", "120", "--render-timeout=2.5", "a.yaml"],
]

# Command lines left to typer (its messages, its help, its conversions).
TYPER = [
    [],
    ["--version"],
    ["rules"],
    ["inspect", "a.yaml"],
    ["check", "--help"],
    ["check", "-h"],
    ["check", "a.yaml", "--help"],
    ["check", "--bogus"],
    ["check", "--bogus=1", "a.yaml"],
    ["check", "-x"],
    ["check", "-1"],
    ["check", "--format", "JSON"],
    ["check", "--format", "yaml"],
    ["check", "--format"],
    ["check", "a.yaml", "-j"],
    ["check", "--jobs", "0"],
    ["check", "--jobs", "+2"],
    ["check", "-j", " 2"],
    ["check", "--jobs", "1_0"],
    ["check", "--jobs", "two"],
    ["check", "--select", ""],
    ["check", "--select=", "a.yaml"],
    ["check", "--select", "--isolated"],
    ["check", "--output", "--"],
    ["check", "--isolated=true"],
    ["check", "-f=json"],
    ["check", "--fail-on", "Error"],
    ["check", "--color", "yes"],
    ["check", "--render-timeout", "1e3"],
    ["check", "--render-timeout", "ten"],
]


def _typer_call(args: list[str], monkeypatch: pytest.MonkeyPatch) -> Call:
    """The run_check call typer makes for ``args``."""
    from gpulint.cli.app import app

    calls: list[Call] = []

    def record(paths: Any, options: CheckOptions) -> int:
        calls.append((paths, options))
        return 0

    monkeypatch.setattr(gpulint.commands.check, "run_check", record)
    with contextlib.suppress(SystemExit):  # cli.check exits with run_check's code
        app(args=args, standalone_mode=False)
    (call,) = calls
    return call


@pytest.mark.parametrize("args", FAST, ids=" ".join)
def test_the_fast_parse_is_typers(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _fast_check(args)
    assert fast is not None, "this command line should not need typer"
    assert fast == _typer_call(args, monkeypatch)


@pytest.mark.parametrize("args", TYPER, ids=lambda a: " ".join(a) or "(nothing)")
def test_the_rest_is_left_to_typer(args: list[str]) -> None:
    assert _fast_check(args) is None


def _typer_check_options() -> list[Any]:
    import typer.main

    from gpulint.cli.app import app

    # typer vendors its own click: reached through the command, not imported by name.
    group = typer.main.get_command(app)
    command = group.commands["check"]  # type: ignore[attr-defined]
    ctx = command.context_class(command)
    return [p for p in command.get_params(ctx) if p.param_type_name == "option"]


def test_typers_check_options_are_the_tables() -> None:
    """typer's ``check`` is built from CHECK_OPTIONS: every option of it is a row (or in
    LEFT_TO_TYPER), with the row's names, way of taking values, default and choices."""
    rows = {row.field: row for row in CHECK_OPTIONS}
    seen: set[str] = set()
    for option in _typer_check_options():
        names = set(option.opts) | set(option.secondary_opts)
        if names <= set(LEFT_TO_TYPER):
            continue
        assert option.name in rows, (
            f"`gpulint check {option.opts[0]}` is neither in CHECK_OPTIONS nor in LEFT_TO_TYPER"
        )
        row = rows[option.name]
        flags, key, takes, convert, default = (
            row.names,
            row.field,
            row.takes,
            row.convert,
            row.default,
        )
        seen.add(key)
        assert set(flags) == names, key
        assert (takes in (FLAG, SWITCH)) == option.is_flag, key
        assert (takes == SWITCH) == bool(option.secondary_opts), key
        assert (takes == MANY) == option.multiple, key
        typer_default = option.default.value if isinstance(option.default, Enum) else option.default
        assert default == typer_default, key
        choices = getattr(option.type, "choices", None)
        if choices is not None:
            assert list(convert.choices) == [getattr(c, "value", c) for c in choices], key
        assert (option.help, option.show_default) == (row.help, row.show_default), key
        if row.metavar is not None:
            assert option.metavar == row.metavar, key
    assert seen == set(rows), "rows for options `gpulint check` does not have"


def test_the_other_commands_share_checks_rows() -> None:
    """``config``'s --select, ``inspect``'s --plugin, ...: the check table's rows, same help."""
    import typer.main

    from gpulint.cli.app import app

    by_name = {name: row for row in CHECK_OPTIONS for name in row.names}
    group = typer.main.get_command(app)
    shared = 0
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        if name == "check":
            continue
        for option in command.get_params(command.context_class(command)):
            row = by_name.get(option.opts[0])
            if row is None or option.param_type_name != "option":
                continue
            if row.field == "output_format":  # each command's own formats
                continue
            shared += 1
            assert option.help == row.help, (name, option.opts[0])
    assert shared >= 20


def test_check_options_has_a_typed_slot_per_row() -> None:
    fields = [row.field for row in CHECK_OPTIONS]
    assert list(CheckOptions.__slots__) == fields
    assert list(CheckOptions.__annotations__) == fields
    assert len(set(fields)) == len(fields)
    names = [name for row in CHECK_OPTIONS for name in row.names]
    assert len(set(names)) == len(names)


def test_check_options_defaults_and_unknown_fields() -> None:
    options = CheckOptions(select=["GPU0"])
    assert options.select == ["GPU0"]
    assert options.output_format == "text" and options.color == "auto"
    assert options.isolated is False and options.jobs is None
    assert options == CheckOptions(select=["GPU0"]) != CheckOptions()
    assert repr(options) == "CheckOptions(select=['GPU0'])"
    with pytest.raises(TypeError, match="selekt"):
        CheckOptions(selekt=["GPU0"])


def _schema_keys(schema: dict[str, Any], prefix: str = "") -> set[str]:
    keys = set()
    for name, sub in schema.get("properties", {}).items():
        keys.add(prefix + name)
        keys |= _schema_keys(sub, f"{prefix}{name}.")
    return keys


def test_every_config_key_of_an_option_is_in_the_config_schema() -> None:
    """An option's ``config`` names the key it overrides or adds to: a real one."""
    from gpulint.config.keys import KEYS, base_schema

    keys = _schema_keys(base_schema())
    configured = {row.field: row.config for row in CHECK_OPTIONS if row.config is not None}
    assert {field: key for field, key in configured.items() if key not in keys} == {}
    # The keys a flag overrides (gpulint.config.keys: the precedence resolve applies) are
    # those of the options named so.
    by_name = {name: row for row in CHECK_OPTIONS for name in row.names}
    for key in KEYS:
        if key.flag is not None:
            assert by_name[key.flag].config == key.name, key.name


def test_every_option_that_overrides_a_key_is_that_keys_flag() -> None:
    """Both ways: an option that overrides a top-level key (``--plugin``, ``--rule-dir``,
    ``--baseline`` too) is the flag of the key's row, so ``gpulint config`` says the value
    came from it; a key that adds the flag's values to the file's takes a repeatable
    option, and one a switch overrides is named by its ``--x`` spelling."""
    from gpulint.commands.checkoptions import MANY, SWITCH
    from gpulint.config.keys import BY_NAME

    overriding = {row.config: row for row in CHECK_OPTIONS if row.config and "." not in row.config}
    flags = {key.name: key.flag for key in BY_NAME.values() if key.flag is not None}
    assert {name: row.names[0] for name, row in overriding.items()} == flags
    for name, row in overriding.items():
        if BY_NAME[name].combine == "extend":
            assert row.takes == MANY, name
        if row.takes == SWITCH:
            assert not row.names[0].startswith("--no-"), name


#: Runs every command line of REAL_RUNS in one fresh process: first all through the fast
#: parser, then all with it switched off, recording after each run its exit code, output
#: and whether typer has been imported so far, and the files each wrote (one process for
#: the whole table: the fast runs come first, so "typer imported" stays meaningful).
_TABLE_SCRIPT = """\
import base64, io, json, os, sys
import gpulint.cli.entry as entry

cases, result_file = json.loads(sys.argv[1]), sys.argv[2]
fast_check = entry._fast_check
results = {"fast": [], "typer": []}
for mode in ("fast", "typer"):
    entry._fast_check = fast_check if mode == "fast" else (lambda args: None)
    for args, folder in cases:
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
        err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
        sys.stdout, sys.stderr = out, err
        try:
            entry.main(args)
        except SystemExit as exc:
            code = exc.code
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        out.flush()
        err.flush()
        written = {
            name: base64.b64encode(open(os.path.join(folder, name), "rb").read()).decode()
            for name in sorted(os.listdir(folder))
        }
        results[mode].append({
            "code": code,
            "stdout": out.buffer.getvalue().decode(),
            "stderr": err.buffer.getvalue().decode(),
            "typer": "typer" in sys.modules,
            "written": written,
        })
with open(result_file, "w", encoding="utf-8") as fh:
    json.dump(results, fh)
"""


REAL_RUNS = [
    ["check", "examples/bad-inference.yaml"],
    ["check", "examples"],
    ["check", "no/such.yaml"],
    ["check", "--select", "GPU0", "--fail-on", "warning", "--format", "json", "examples"],
    ["check", "--ignore=GPU020", "-fgithub", "-j1", "--", "examples/bad-inference.yaml"],
    ["check", "--isolated", "--color", "always", "--extend-select", "GL", "examples"],
    ["check", "--select", "NOPE", "examples"],
    ["check", "--config", "no-such.yaml", "examples"],
    ["check", "--format", "json", "--output", "{tmp}/out.json", "examples"],
]


@pytest.fixture(scope="module")
def table_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each REAL_RUNS row's fast and typer runs, from one process (_TABLE_SCRIPT)."""
    cases = []
    for number, _ in enumerate(REAL_RUNS):
        folder = tmp_path_factory.mktemp(f"run{number}")
        cases.append(([a.replace("{tmp}", str(folder)) for a in REAL_RUNS[number]], str(folder)))
    result_file = tmp_path_factory.mktemp("table") / "results.json"
    proc = subprocess.run(
        [sys.executable, "-c", _TABLE_SCRIPT, json.dumps(cases), str(result_file)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads(result_file.read_text(encoding="utf-8"))
    return {
        " ".join(row): {"fast": fast, "typer": typer}
        for row, fast, typer in zip(REAL_RUNS, results["fast"], results["typer"], strict=True)
    }


@pytest.mark.parametrize("args", REAL_RUNS, ids=" ".join)
def test_fast_and_typer_runs_print_the_same(
    args: list[str], table_runs: dict[str, dict[str, Any]]
) -> None:
    fast, full = table_runs[" ".join(args)]["fast"], table_runs[" ".join(args)]["typer"]
    assert fast["written"] == full["written"]
    assert fast["typer"] is False
    assert full["typer"] is True
    assert (fast["code"], fast["stdout"], fast["stderr"]) == (
        full["code"],
        full["stdout"],
        full["stderr"],
    )
    assert fast["stdout"] or fast["stderr"]
    if "--output" in args:
        assert fast["written"], "the report was written"


def test_the_console_script_uses_the_fast_path() -> None:
    fast = subprocess.run(
        [*gpulint_cmd(), "check", "--color", "never", "examples/bad-inference.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    plain = subprocess.run(
        [*gpulint_cmd(), "check", "examples/bad-inference.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        plain.returncode,
        plain.stdout,
        plain.stderr,
    )
    assert fast.returncode == 1
