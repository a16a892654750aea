"""``gpulint lsp`` end to end: a real client (pytest-lsp) drives the server through the
protocol, and what it publishes is compared with ``gpulint check --format json`` on the
same text."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import pytest_lsp
from lsprotocol import types as t
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.conftest import ROOT, gpulint_in_process
from tests.lsp_support import SERVER, apply_edits, as_tuples, check_json, expected_diagnostics

#: A GPU pod whose finding sits after characters outside the Basic Multilingual Plane (two
#: UTF-16 units each, one code point each): the columns differ between gpulint and LSP.
ASTRAL = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  labels: {team: "🚀🚀"}
spec:
  containers:
    - {name: "\U0001d524\U0001d52d\U0001d532",
       image: "🚀🚀", resources: {requests: {nvidia.com/gpu: 1}}}
"""

GPU_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
spec:
  template:
    spec:
      containers:
        - name: server
          image: registry.example/llama:1
          resources:
            requests:
              nvidia.com/gpu: 1
"""


async def _start(lsp_client: LanguageClient, root: Path) -> None:
    """Record every publishDiagnostics and initialize a session rooted at ``root``."""
    (root / ".git").mkdir(exist_ok=True)  # the configuration search stops here
    registrations: list[t.RegistrationParams] = []

    @lsp_client.feature(t.CLIENT_REGISTER_CAPABILITY)
    def register(params: t.RegistrationParams) -> None:
        registrations.append(params)

    # Every publishDiagnostics, in order (``wait_for_notification`` misses a notification
    # that arrives before the test waits for it again).
    lsp_client.published = asyncio.Queue()  # type: ignore[attr-defined]
    handle = lsp_client.protocol._handle_notification

    def record(method: str, params: Any) -> None:
        if method == t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            lsp_client.published.put_nowait(params)  # type: ignore[attr-defined]
        handle(method, params)

    lsp_client.protocol._handle_notification = record  # type: ignore[method-assign]

    await lsp_client.initialize_session(
        t.InitializeParams(
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            initialization_options={"debounceMs": 20},
        )
    )


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def server(lsp_client: LanguageClient, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One server for the tests of this module that open documents of their own and read
    what is published for them (the start-up, pygls and gpulint imported and the rules
    loaded, costs about a second of CPU). Its root is a folder with no configuration, as
    each test's own folder is (an ``untitled:`` buffer's configuration is the root's)."""
    await _start(lsp_client, tmp_path_factory.mktemp("lsp-root"))
    yield
    await lsp_client.shutdown_session()


@pytest_asyncio.fixture(loop_scope="module")
async def client(server: LanguageClient, tmp_path: Path) -> Any:
    """The shared server, for one test. Nothing of an earlier test can change this one's
    results: its documents are its own (``tmp_path`` differs per test, and so do the URIs),
    each in a folder with no configuration (the ``.git`` ends the search there), so the
    server lints them with the built-in defaults, as a new server would; ``published`` is a
    new queue, and ``diagnostics_for`` reads only this test's URIs from it anyway; and every
    document the test opened is closed, and its clearing awaited, before the next test, so
    the server holds no document of another test. Tests that change the server's own state
    (a configuration reloaded, shutdown, malformed messages) start servers of their own."""
    (tmp_path / ".git").mkdir()  # the configuration search stops here
    server.published = asyncio.Queue()  # type: ignore[attr-defined]
    opened: list[str] = []
    closed: set[str] = set()
    did_open, did_close = server.text_document_did_open, server.text_document_did_close

    def track_open(params: t.DidOpenTextDocumentParams) -> None:
        opened.append(params.text_document.uri)
        did_open(params)

    def track_close(params: t.DidCloseTextDocumentParams) -> None:
        closed.add(params.text_document.uri)
        did_close(params)

    server.text_document_did_open = track_open  # type: ignore[method-assign]
    server.text_document_did_close = track_close  # type: ignore[method-assign]
    try:
        yield server
    finally:
        server.text_document_did_open = did_open  # type: ignore[method-assign]
        server.text_document_did_close = did_close  # type: ignore[method-assign]
    left = [uri for uri in dict.fromkeys(opened) if uri not in closed]
    for uri in left:
        did_close(t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(uri=uri)))
    # Closing clears a document's diagnostics: once every clearing is in, the server has
    # forgotten them all (a lint still running for one is dropped unpublished).
    waiting = set(left)
    while waiting:
        params = await asyncio.wait_for(server.published.get(), 60)  # type: ignore[attr-defined]
        if params.uri in waiting and not params.diagnostics:
            waiting.discard(params.uri)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def own_client(lsp_client: LanguageClient, tmp_path: Path) -> Any:
    """A server of the test's own, rooted at its ``tmp_path``."""
    await _start(lsp_client, tmp_path)
    yield
    await lsp_client.shutdown_session()


async def diagnostics_for(client: LanguageClient, uri: str, version: int | None = None) -> Any:
    """The next diagnostics published for ``uri`` (for ``version``, when given)."""
    for _ in range(200):
        params = await asyncio.wait_for(client.published.get(), 60)  # type: ignore[attr-defined]
        if params.uri == uri and (version is None or params.version == version):
            return params.diagnostics
    raise AssertionError(f"no diagnostics for {uri} version {version}")


def open_file(client: LanguageClient, path: Path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(
            t.TextDocumentItem(
                uri=uri,
                language_id="yaml",
                version=1,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )
    return uri


@pytest.mark.asyncio(loop_scope="module")
async def test_diagnostics_are_the_command_lines(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "bad-inference.yaml"
    path.write_text((ROOT / "examples" / "bad-inference.yaml").read_text(encoding="utf-8"))
    uri = open_file(client, path)
    got = await diagnostics_for(client, uri)
    assert as_tuples(got) == expected_diagnostics(path)
    assert len(got) >= 5
    first = got[0]
    assert first.source == "gpulint"
    assert first.code_description.href == (
        f"https://gpulint.github.io/gpulint/rules/{first.code.lower()}.html"
    )
    assert first.data["name"]


@pytest.mark.asyncio(loop_scope="module")
async def test_positions_count_utf16_units(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "astral.yaml"
    path.write_text(ASTRAL, encoding="utf-8")
    uri = open_file(client, path)
    got = await diagnostics_for(client, uri)
    assert as_tuples(got) == expected_diagnostics(path)
    (gpu001,) = [d for d in got if d.code == "GPU001"]
    cli = next(f for f in check_json(path) if f["rule"] == "GPU001")
    # Two astral characters before the key on its line: two more UTF-16 units.
    assert gpu001.range.start.character == cli["column"] - 1 + 2
    line = ASTRAL.splitlines()[gpu001.range.start.line].encode("utf-16-le")
    start, end = gpu001.range.start.character, gpu001.range.end.character
    assert line[2 * start : 2 * end].decode("utf-16-le") == "nvidia.com/gpu"


@pytest.mark.asyncio(loop_scope="module")
async def test_multi_document_file_and_syntax_error(client: LanguageClient, tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(GPU_POD + "---\n" + ASTRAL + "---\nkind: [oops\n", encoding="utf-8")
    uri = open_file(client, path)
    got = await diagnostics_for(client, uri)
    assert as_tuples(got) == expected_diagnostics(path)
    assert {"GPU001", "YML001"} <= {d.code for d in got}


@pytest.mark.asyncio(loop_scope="module")
async def test_changes_last_state_wins_and_close_clears(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(GPU_POD, encoding="utf-8")
    uri = open_file(client, path)
    await diagnostics_for(client, uri, 1)
    # 100 incremental edits in a burst: the value typed and retyped, the last one wins.
    line = GPU_POD.splitlines().index("              nvidia.com/gpu: 1")
    text = GPU_POD
    for version in range(2, 102):
        value = str(version % 7 + 1) if version < 101 else "0.5"
        old_end = len(text.splitlines()[line])
        new_line = f"              nvidia.com/gpu: {value}"
        client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                text_document=t.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[
                    t.TextDocumentContentChangePartial(
                        range=t.Range(t.Position(line, 0), t.Position(line, old_end)),
                        text=new_line,
                    )
                ],
            )
        )
        lines = text.splitlines(keepends=True)
        lines[line] = new_line + "\n"
        text = "".join(lines)
    got = await diagnostics_for(client, uri, 101)
    path.write_text(text, encoding="utf-8")
    assert as_tuples(got) == expected_diagnostics(path)
    assert "GPU004" in {d.code for d in got}  # 0.5 GPUs
    client.text_document_did_close(t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(uri=uri)))
    assert list(await diagnostics_for(client, uri)) == []


async def _actions(client: LanguageClient, uri: str, diag: t.Diagnostic) -> list[t.CodeAction]:
    result = await client.text_document_code_action_async(
        t.CodeActionParams(
            t.TextDocumentIdentifier(uri), diag.range, t.CodeActionContext(diagnostics=[diag])
        )
    )
    return [a for a in result or [] if isinstance(a, t.CodeAction)]


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("text", [GPU_POD, ASTRAL], ids=["block", "flow-astral"])
async def test_disable_actions_silence_the_finding(
    client: LanguageClient, tmp_path: Path, text: str
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(text, encoding="utf-8")
    uri = open_file(client, path)
    got = await diagnostics_for(client, uri)
    (gpu001,) = [d for d in got if d.code == "GPU001"]
    actions = await _actions(client, uri, gpu001)
    titles = [a.title for a in actions]
    assert "Disable GPU001 for this line" in titles
    kind = "Deployment/llama" if text == GPU_POD else "Pod/trainer"
    assert f"Disable GPU001 for {kind} (annotation)" in titles
    before = {(f["rule"], f["line"]) for f in check_json(path)}
    for action in actions:
        if not action.title.startswith("Disable GPU001"):
            continue
        assert action.edit is not None and action.edit.changes is not None
        fixed = apply_edits(text, action.edit.changes[uri])
        path.write_text(fixed, encoding="utf-8")
        after = check_json(path)
        # GPU001 is silenced, with no stale-suppression finding and nothing else changed.
        assert "GPU001" not in {f["rule"] for f in after}, (action.title, fixed)
        assert "GL100" not in {f["rule"] for f in after}
        assert len(after) == len(before) - 1, (action.title, fixed)


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_on_a_gpu_resource_and_a_finding(
    client: LanguageClient, tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(GPU_POD, encoding="utf-8")
    uri = open_file(client, path)
    got = await diagnostics_for(client, uri)
    (gpu001,) = [d for d in got if d.code == "GPU001"]
    hover = await client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), gpu001.range.start)
    )
    assert hover is not None and isinstance(hover.contents, t.MarkupContent)
    value = hover.contents.value
    assert "**nvidia.com/gpu**" in value and "nvidia" in value and "sharing scheme" in value
    assert "**GPU001**" in value and "## What it does" in value
    line = GPU_POD.splitlines().index("  name: llama")
    nothing = await client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(line, 4))
    )
    assert nothing is None


@pytest.mark.asyncio(loop_scope="module")
async def test_completion_of_resource_names(client: LanguageClient, tmp_path: Path) -> None:
    text = GPU_POD.replace("              nvidia.com/gpu: 1\n", "              nvidia.com/mig\n")
    path = tmp_path / "pod.yaml"
    path.write_text(text, encoding="utf-8")
    uri = open_file(client, path)
    await diagnostics_for(client, uri)
    line = text.splitlines().index("              nvidia.com/mig")
    result = await client.text_document_completion_async(
        t.CompletionParams(t.TextDocumentIdentifier(uri), t.Position(line, 28))
    )
    assert isinstance(result, t.CompletionList)
    labels = {item.label for item in result.items}
    assert {"nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "amd.com/gpu"} <= labels
    item = next(i for i in result.items if i.label == "nvidia.com/mig-1g.10gb")
    assert isinstance(item.text_edit, t.TextEdit)
    assert item.text_edit.range.start == t.Position(line, 14)
    assert item.text_edit.new_text == "nvidia.com/mig-1g.10gb: "
    # Outside resources.limits / requests: nothing offered.
    elsewhere = await client.text_document_completion_async(
        t.CompletionParams(t.TextDocumentIdentifier(uri), t.Position(3, 4))
    )
    assert elsewhere is None


@pytest.mark.asyncio
async def test_configuration_is_applied_and_reloaded(
    own_client: LanguageClient, tmp_path: Path
) -> None:
    # Its own server: a configuration reloaded changes what the server holds (it reads
    # every configuration again and lints every open document again).
    client = own_client
    config = tmp_path / ".gpulint.yaml"
    config.write_text("ignore: [GPU001]\n", encoding="utf-8")
    path = tmp_path / "pod.yaml"
    path.write_text(GPU_POD, encoding="utf-8")
    uri = open_file(client, path)
    got = await diagnostics_for(client, uri)
    assert "GPU001" not in {d.code for d in got}
    assert as_tuples(got) == expected_diagnostics(path)

    # A broken configuration: one diagnostic on it, the manifest linted with the defaults.
    config.write_text("ignore: [GPU001]\nselcet: [GPU]\n", encoding="utf-8")
    client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(
            [t.FileEvent(uri=config.as_uri(), type=t.FileChangeType.Changed)]
        )
    )
    # The manifest is linted again first, then the configuration's problem published.
    again = await diagnostics_for(client, uri)
    assert "GPU001" in {d.code for d in again}
    (problem,) = await diagnostics_for(client, config.as_uri())
    assert "selcet" in problem.message and problem.range.start.line == 1

    # Fixed and saved: the problem is cleared and the configuration applies again.
    config.write_text("ignore: [GPU001]\n", encoding="utf-8")
    client.text_document_did_save(
        t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri=config.as_uri()))
    )
    fixed = await diagnostics_for(client, uri)
    assert "GPU001" not in {d.code for d in fixed}
    assert list(await diagnostics_for(client, config.as_uri())) == []


@pytest.mark.asyncio(loop_scope="module")
async def test_unsaved_buffer_and_suppressions(client: LanguageClient, tmp_path: Path) -> None:
    text = GPU_POD.replace(
        "nvidia.com/gpu: 1\n", "nvidia.com/gpu: 1  # gpulint: disable=GPU001,GPU004\n"
    )
    uri = "untitled:Untitled-1"
    client.text_document_did_open(
        t.DidOpenTextDocumentParams(t.TextDocumentItem(uri, "yaml", 1, text))
    )
    got = await diagnostics_for(client, uri)
    path = tmp_path / "same.yaml"
    path.write_text(text, encoding="utf-8")
    assert as_tuples(got) == expected_diagnostics(path)
    (stale,) = [d for d in got if d.code == "GL100"]
    assert "GPU004" in stale.message and list(stale.tags) == [t.DiagnosticTag.Unnecessary]
    assert "GPU001" not in {d.code for d in got}


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _messages(out: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a server's output."""
    found = []
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        fields = dict(line.split(b":", 1) for line in head.split(b"\r\n"))
        length = int(fields[b"Content-Length"])
        found.append(json.loads(rest[:length]))
        out = rest[length:]
    return found


def test_malformed_messages_are_answered_and_the_server_goes_on(tmp_path: Path) -> None:
    """Garbage, an unknown method, bad parameters: error responses, no crash; the server
    still lints what comes after and exits cleanly when the client goes away."""
    path = tmp_path / "pod.yaml"
    uri = path.as_uri()

    def message(**fields: Any) -> bytes:
        return _frame(json.dumps({"jsonrpc": "2.0", **fields}).encode())

    stream = b"".join(
        [
            message(id=1, method="initialize", params={"capabilities": {}}),
            message(method="initialized", params={}),
            _frame(b"{this is not json"),
            message(id=2, method="gpulint/nothing", params={}),
            message(id=3, method="textDocument/hover", params={"position": "x"}),
            message(id=4, method="textDocument/hover", params={
                "textDocument": {"uri": "file:///nowhere.yaml"},
                "position": {"line": 0, "character": 0},
            }),
            message(method="textDocument/didChange", params={"textDocument": {"uri": uri}}),
            message(method="textDocument/didOpen", params={"textDocument": {
                "uri": uri, "languageId": "yaml", "version": 1, "text": GPU_POD,
            }}),
        ]
    )  # fmt: skip
    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(stream)
    proc.stdin.flush()
    # Wait for the diagnostics of the document opened last, then hang up.
    out = b""
    while b"publishDiagnostics" not in out:
        chunk = proc.stdout.read1(65536)
        assert chunk, "the server stopped before publishing diagnostics"
        out += chunk
    rest, err = proc.communicate(timeout=60)
    replies = {m.get("id"): m for m in _messages(out + rest)}
    assert "result" in replies[1]
    assert replies[2]["error"]["code"] == -32601  # method not found
    assert "error" in replies[3]
    assert replies[4]["result"] is None
    (published,) = [m for m in _messages(out + rest) if m.get("method", "").endswith("Diagnostics")]
    assert {d["code"] for d in published["params"]["diagnostics"]} == {"GPU001", "GPU020"}
    assert b"Traceback" not in err, err.decode()


def test_a_client_that_goes_away_ends_the_server_quietly() -> None:
    """Standard input closed mid-message: the server exits, with no traceback."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
    proc = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    out, err = proc.communicate(
        _frame(body) + b'Content-Length: 40\r\n\r\n{"jsonrpc": "2.0", "method"', timeout=60
    )
    assert b'"result"' in out  # it answered initialize before the client went away
    assert b"Traceback" not in err, err.decode()


def test_without_the_extra_the_command_says_what_to_install(tmp_path: Path) -> None:
    """pygls missing: one line naming the extra, exit 2."""
    blocker = tmp_path / "pygls"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('blocked', name='pygls')\n")
    out = subprocess.run(
        SERVER,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert out.returncode == 2
    assert "pip install 'gpulint[lsp]'" in out.stderr
    assert "Traceback" not in out.stderr


def test_check_never_imports_the_language_server(tmp_path: Path) -> None:
    """``gpulint check`` (fast path and typer path) and ``gpulint rules`` run without
    importing pygls, lsprotocol or gpulint.lsp."""
    path = tmp_path / "pod.yaml"
    path.write_text(GPU_POD, encoding="utf-8")
    probe = (
        "import sys\n"
        "sys.argv[0] = 'gpulint'\n"
        "from gpulint.cli.entry import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')"
        " or m.startswith('gpulint.lsp'))\n"
        "sys.stderr.write('LOADED=' + ','.join(bad) + '\\n')\n"
    )
    for args in (["check", str(path)], ["check", "--help"], ["rules"]):
        out = subprocess.run(
            [sys.executable, "-c", "import sys; sys.argv[0] = 'gpulint'; " + probe, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.stderr.strip().endswith("LOADED="), (args, out.stderr)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_rules_fix_is_offered_and_matches_check_fix(
    client: LanguageClient, tmp_path: Path
) -> None:
    """The safe fix of GPU001 (requests -> limits) as the preferred quick fix, the unsafe
    fix of GPU020 marked and not preferred; the safe one applied by the editor gives the text
    ``gpulint check --fix`` writes."""
    path = tmp_path / "pod.yaml"
    path.write_text(GPU_POD, encoding="utf-8")
    uri = open_file(client, path)
    got = await diagnostics_for(client, uri)
    (gpu001,) = [d for d in got if d.code == "GPU001"]
    assert gpu001.data["fix"] == "safe"
    (safe,) = [a for a in await _actions(client, uri, gpu001) if a.is_preferred]
    assert safe.title.startswith("GPU001: ") and "unsafe" not in safe.title
    (gpu020,) = [d for d in got if d.code == "GPU020"]
    unsafe = [a for a in await _actions(client, uri, gpu020) if a.title.startswith("GPU020: ")]
    assert unsafe and all(a.title.endswith("(unsafe fix)") and not a.is_preferred for a in unsafe)

    assert safe.edit is not None and safe.edit.changes is not None
    edited = apply_edits(GPU_POD, safe.edit.changes[uri])
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(GPU_POD, encoding="utf-8")
    # The command line's fix, run in this process: its subject is the text written, not
    # the process (check_json runs the same way).
    gpulint_in_process("check", "--fix", fixed.name, cwd=tmp_path)
    assert edited == fixed.read_text(encoding="utf-8")
    assert "GPU001" not in {f["rule"] for f in check_json(fixed)}


@pytest.mark.asyncio
async def test_a_nested_configuration_is_the_command_lines_from_the_root(
    own_client: LanguageClient, tmp_path: Path
) -> None:
    # repo/.gpulint.yaml ignores nothing, repo/team/.gpulint.yaml ignores GPU020: the server
    # publishes for each file what `gpulint check .` run from the root reports for it.
    from tests.test_config_nested import POD, codes_by_file

    client = own_client
    (tmp_path / ".gpulint.yaml").write_text("ignore: []\n", encoding="utf-8")
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / ".gpulint.yaml").write_text("ignore: [GPU020]\n", encoding="utf-8")
    for path in (tmp_path / "pod.yaml", tmp_path / "team" / "pod.yaml"):
        path.write_text(POD.format(name=path.parent.name), encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "gpulint", "check", "--format", "json", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    cli = codes_by_file(out.stdout, tmp_path, tmp_path)
    assert cli == {"pod.yaml": {"GPU020"}}, out.stderr
    published = {}
    for name in ("pod.yaml", "team/pod.yaml"):
        uri = open_file(client, tmp_path / name)
        published[name] = {d.code for d in await diagnostics_for(client, uri)}
    assert published == {"pod.yaml": cli["pod.yaml"], "team/pod.yaml": set()}


@pytest.mark.asyncio(loop_scope="module")
async def test_a_file_is_judged_with_its_projects_facts_as_check_judges_it(
    client: LanguageClient, tmp_path: Path
) -> None:
    # Three Jobs of the repository tolerate sku=gpu: the fourth, opened alone in the editor,
    # is the warning `gpulint check` reports for it (every other pod tolerates the taint),
    # not the assumption's info.
    from tests.test_projects import SKU, job

    for name in "abc":
        (tmp_path / f"train-{name}.yaml").write_text(job(f"train-{name}", SKU), encoding="utf-8")
    path = tmp_path / "train-d.yaml"
    path.write_text(job("train-d"), encoding="utf-8")
    uri = open_file(client, path)
    got = [(d[0], d[1], d[6]) for d in as_tuples(await diagnostics_for(client, uri))]
    assert got == [(d[0], d[1], d[6]) for d in expected_diagnostics(path)]
    assert got == [("GPU020", 6, 2)]  # LSP severity 2: a warning
