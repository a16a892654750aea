"""The editor set-ups of docs/editors.md, run as written where the editor is here.

- Neovim: a headless ``nvim`` with the documented Lua configuration opens a manifest and
  prints the diagnostics its built-in client received; they are ``gpulint check --format
  json``'s findings on the same file (columns in bytes, as Neovim counts them). ``make
  ci-tools`` (which `.ci/run` runs; ``make test`` changes nothing outside the project)
  installs Debian's ``neovim`` where it is missing; without it the test is skipped, saying so.
- VS Code: the extension in editors/vscode is loaded by Node.js with stand-ins for the
  ``vscode`` and ``vscode-languageclient`` modules (VS Code itself cannot run here): it starts
  ``gpulint lsp`` over stdio for YAML documents, and the command it starts is a working server.
- Helix: the documented ``languages.toml`` is valid TOML naming ``gpulint lsp``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.docblocks import block
from tests.lsp_support import check_json

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

EDITORS = "docs/editors.md"
NVIM = shutil.which("nvim")
NODE = shutil.which("node")
BIN = str(Path(sys.executable).parent)

MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  labels: {team: "🚀🚀"}
spec:
  containers:
    - name: train
      image: "registry.example/🚀:1"
      resources: {requests: {nvidia.com/gpu: 1}, limits: {"\U0001d524": "1", nvidia.com/gpu: 0.5}}
"""

PROBE = """\
local ok = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local out = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local lsp = d.user_data and d.user_data.lsp or {}
  table.insert(out, {
    code = d.code or lsp.code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum,
    end_col = d.end_col, severity = d.severity, message = d.message, source = d.source,
  })
end
local text = vim.fn.json_encode(out)
io.stdout:write(text .. "\\n")
local f = io.open(os.getenv("GPULINT_NVIM_OUT"), "w")
f:write(text)
f:close()
vim.cmd("qa!")
"""


def _byte_column(line: str, column: int) -> int:
    """Neovim's 0-based byte column of gpulint's 1-based code-point column."""
    return len(line[: column - 1].encode("utf-8"))


@pytest.mark.skipif(
    NVIM is None, reason="nvim is not installed (`make ci-tools` installs Debian's neovim, as root)"
)
def test_neovim_with_the_documented_config_gets_the_cli_findings(tmp_path: Path) -> None:
    assert NVIM is not None
    (tmp_path / ".git").mkdir()
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    init = tmp_path / "init.lua"
    init.write_text(block(EDITORS, "Neovim", "lua").text, encoding="utf-8")
    probe = tmp_path / "probe.lua"
    probe.write_text(PROBE, encoding="utf-8")
    out = tmp_path / "diagnostics.json"
    env = {
        **os.environ,
        "PATH": BIN + os.pathsep + os.environ.get("PATH", ""),
        "GPULINT_NVIM_OUT": str(out),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    run = subprocess.run(
        [NVIM, "--headless", "-u", str(init), "-c", f"luafile {probe}", str(manifest)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.exists(), run.stdout + run.stderr
    got = sorted(
        (d["code"], d["lnum"], d["col"], d["end_lnum"], d["end_col"], d["severity"], d["message"])
        for d in json.loads(out.read_text(encoding="utf-8"))
    )
    lines = MANIFEST.split("\n")
    severity = {"error": 1, "warning": 2, "info": 3}
    expected = []
    for f in check_json(manifest):
        obj = f["object"]
        label = f" [{obj['kind']}/{obj['name']}]" if obj else ""
        expected.append(
            (
                f["rule"],
                f["line"] - 1,
                _byte_column(lines[f["line"] - 1], f["column"]),
                f["end_line"] - 1,
                _byte_column(lines[f["end_line"] - 1], f["end_column"]),
                severity[f["severity"]],
                f["message"] + label + (f"\nhelp: {f['help']}" if f["help"] else ""),
            )
        )
    assert got == sorted(expected)
    assert {"GPU002", "GPU004"} <= {g[0] for g in got}


VSCODE_STANDINS = """\
const Module = require("module");
const path = require("path");
const started = [];
const fake = {
  vscode: {
    workspace: { getConfiguration: (section) => ({ get: (key, fallback) => fallback }) },
  },
  "vscode-languageclient/node": {
    TransportKind: { stdio: 0 },
    LanguageClient: class {
      constructor(id, name, server, client) {
        Object.assign(this, { id, name, server, client });
      }
      start() { started.push(this); return Promise.resolve(); }
      stop() { return Promise.resolve(); }
      dispose() {}
    },
  },
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
  return request in fake ? fake[request] : load.apply(this, arguments);
};
const extension = require(path.resolve(process.argv[2]));
const context = { subscriptions: [] };
extension.activate(context).then(() => {
  const c = started[0];
  console.log(JSON.stringify({
    id: c.id, server: c.server, selector: c.client.documentSelector,
    subscribed: context.subscriptions.length,
  }));
  return extension.deactivate();
});
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed (make test needs it)")
def test_the_vscode_extension_starts_gpulint_lsp_for_yaml(tmp_path: Path) -> None:
    assert NODE is not None
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    assert manifest["main"] == "./extension.js"
    assert "onLanguage:yaml" in manifest["activationEvents"]
    default = manifest["contributes"]["configuration"]["properties"]["gpulint.command"]
    assert default["default"] == ["gpulint", "lsp"]
    # The documented setting is the one the extension reads.
    settings = block(EDITORS, "VS Code", "jsonc").text
    documented = json.loads("\n".join(x for x in settings.split("\n") if not x.startswith("//")))
    assert list(documented) == ["gpulint.command"] and documented["gpulint.command"][-1] == "lsp"
    script = tmp_path / "standins.js"
    script.write_text(VSCODE_STANDINS, encoding="utf-8")
    run = subprocess.run(
        [NODE, str(script), str(ROOT / "editors" / "vscode" / "extension.js")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    started = json.loads(run.stdout)
    assert started["server"] == {"command": "gpulint", "args": ["lsp"], "transport": 0}
    assert {"scheme": "file", "language": "yaml"} in started["selector"]
    assert {"scheme": "untitled", "language": "yaml"} in started["selector"]
    assert started["subscribed"] == 1
    # The command it starts is a language server.
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
    answer = subprocess.run(
        [str(Path(BIN) / "gpulint"), "lsp"],
        input=b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert b'"serverInfo": {"name": "gpulint"' in answer.stdout


def test_the_helix_configuration_names_the_server() -> None:
    config = tomllib.loads(block(EDITORS, "Helix", "toml").text)
    assert config["language-server"]["gpulint"] == {"command": "gpulint", "args": ["lsp"]}
    (yaml,) = config["language"]
    assert "gpulint" in yaml["language-servers"]


def test_every_vscode_setting_that_names_a_program_is_machine_scoped() -> None:
    """A workspace's .vscode/settings.json is the repository's: a setting it may set must
    not choose the program the extension starts. Every setting whose value is text (a
    command, a path: anything that can name a program) is ``machine``-scoped, read from the
    user's (or a remote machine's) settings only; a switch that runs programs on the
    workspace is ``application``-scoped."""
    manifest = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())
    settings = manifest["contributes"]["configuration"]["properties"]
    assert "gpulint.command" in settings
    for name, setting in settings.items():
        kinds = setting["type"] if isinstance(setting["type"], list) else [setting["type"]]
        if set(kinds) - {"boolean", "number", "integer"}:
            assert setting.get("scope") == "machine", name
        else:
            assert setting.get("scope") in ("machine", "application"), name
