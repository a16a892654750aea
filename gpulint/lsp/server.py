"""The pygls server behind ``gpulint lsp``: open documents in, diagnostics out.

Linting runs off the event loop, on one worker thread, so requests (hover, completion, code
actions, the next change) are answered while a large file is linted, and lints never
overlap. A change is linted once the document has been quiet for the debounce delay
(``initializationOptions.debounceMs``, default 200 ms; opening is linted at once); a lint
whose document changed meanwhile is dropped unpublished, so the diagnostics shown are
always those of the last text. Closing a document clears its diagnostics and forgets it.

Only YAML documents (language ``yaml``, or a ``.yaml``/``.yml`` file) are linted, and among
them only Kubernetes objects give findings, as for ``gpulint check``. gpulint's own
configuration files are not manifests: a change to one (saved, or reported by the client's
file watcher, which the server registers when the client allows it) reloads the
configuration of every open document, and one that cannot be used is a diagnostic on it.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path as FsPath
from typing import Any, cast

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import from_fs_path, to_fs_path

from gpulint import __version__
from gpulint.commands.common import Trust
from gpulint.lsp import features
from gpulint.lsp.incremental import IncrementalLinter
from gpulint.lsp.project import CONFIG_FILE_NAMES, Project, Projects, is_config_file
from gpulint.lsp.rendered import Renders
from gpulint.lsp.text import Buffer, LineIndex
from gpulint.model import Finding

#: Quiet time after the last change before a document is linted (seconds).
DEFAULT_DEBOUNCE = 0.2
YAML_SUFFIXES = (".yaml", ".yml")


class _Open:
    """What the server knows of one open document: the last text it linted, its findings
    (those an editor shows) and the project it was linted with."""

    __slots__ = ("findings", "index", "linter", "project", "version")

    def __init__(self) -> None:
        self.version: int | None = None
        self.index = LineIndex("")
        self.findings: list[Finding] = []
        self.project: Project | None = None
        self.linter: IncrementalLinter | None = None


class _Dropped:
    """A message that could not be read: ``handle_message`` ignores it (wrong version)."""

    jsonrpc = "unreadable"


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, answering a request whose parameters cannot be read with an error
    response (JSON-RPC's "Invalid params"), as the specification asks: pygls only logs it,
    and the client would wait for an answer forever."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
            return _Dropped()

    def _check_handler_result(self, future: Any) -> None:
        """pygls keeps the future of every notification handled by a generator or a
        coroutine (``didOpen``, ``didChange``, ...) in ``_request_futures`` for good: 2 KB
        an edit, 20 MB over 10,000 edits. Forget each one once it is done."""
        super()._check_handler_result(future)
        done = [k for k, v in self._request_futures.items() if v is future]
        for key in done:
            del self._request_futures[key]

    # Open documents are kept in gpulint's own buffers (gpulint.lsp.text.Buffer), not in
    # pygls's workspace, whose documents re-split the whole text on every change.
    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams) -> Any:
        doc = params.text_document
        cast("GpulintServer", self._server).buffers[doc.uri] = Buffer(
            doc.text, doc.version, doc.language_id
        )
        handler = self.fm.features.get(lsp.TEXT_DOCUMENT_DID_OPEN)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Any:
        buffer = cast("GpulintServer", self._server).buffers.get(params.text_document.uri)
        if buffer is None:
            return  # a change to a document never opened: nothing to apply it to
        for change in params.content_changes:
            if isinstance(change, lsp.TextDocumentContentChangePartial):
                r = change.range
                start = (r.start.line, r.start.character)
                buffer.change(start, (r.end.line, r.end.character), change.text)
            else:
                buffer.change(None, (0, 0), change.text)
        buffer.version = params.text_document.version
        handler = self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams) -> Any:
        cast("GpulintServer", self._server).buffers.pop(params.text_document.uri, None)
        handler = self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CLOSE)
        if handler is not None:
            yield handler, (params,), None


class _OneLine(logging.Formatter):
    """Log records as one line each on stderr (the editor's log): the first line of the
    message, never a traceback, as every gpulint message."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage().split("\n", 1)[0]
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f": {type(exc).__name__}: {' '.join(str(exc).split())}"
        return f"gpulint lsp: {record.levelname.lower()}: {text}"


class GpulintServer(LanguageServer):
    def __init__(self, trust: Trust) -> None:
        super().__init__("gpulint", __version__, protocol_cls=_Protocol)
        self.projects = Projects(trust)
        self.debounce = DEFAULT_DEBOUNCE
        self.open: dict[str, _Open] = {}
        #: The text of every open document.
        self.buffers: dict[str, Buffer] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        #: Configuration files with a diagnostic published, to clear once they are fixed.
        self.config_uris: set[str] = set()
        self.executor = ThreadPoolExecutor(1, thread_name_prefix="gpulint-lint")
        #: The ``gpulint.render`` setting: render charts and Kustomize roots (runs helm and
        #: kubectl on the workspace, as ``check --render``); off by default.
        self.render = False
        self.renders = Renders()

    # -- which documents ---------------------------------------------------------------------
    def lintable(self, uri: str) -> bool:
        buffer = self.buffers.get(uri)
        if buffer is None:
            return False
        path = to_fs_path(uri)
        if path is not None:
            name = FsPath(path).name
            if name in CONFIG_FILE_NAMES:
                return False
            if name.endswith(YAML_SUFFIXES):
                return True
        return buffer.language in ("yaml", "yml")

    def folder_of(self, uri: str) -> FsPath | None:
        path = to_fs_path(uri)
        if path is not None and uri.startswith("file:"):
            return FsPath(path).parent
        root = self.workspace.root_path
        return FsPath(root) if root else None

    # -- linting ------------------------------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        if not self.lintable(uri):
            return
        self.pending[uri] = asyncio.ensure_future(self._lint_later(uri, delay))

    async def _lint_later(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        buffer = self.buffers[uri]
        text, version = buffer.text, buffer.version
        loop = asyncio.get_running_loop()
        state = self.open.setdefault(uri, _Open())
        result = await loop.run_in_executor(self.executor, self._lint, uri, state, text)
        if self.open.get(uri) is not state or self.buffers.get(uri) is not buffer:
            return  # closed meanwhile
        if buffer.version != version:
            return  # changed meanwhile: the lint scheduled by that change publishes
        index, findings = result
        state.version, state.index, state.findings = version, index, findings
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=uri, diagnostics=features.diagnostics(index, findings), version=version
            )
        )
        self.publish_config_problems()
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]

    def _lint(self, uri: str, state: _Open, text: str) -> tuple[LineIndex, list[Finding]]:
        """On the worker thread: the findings of ``text`` under its project."""
        folder = self.folder_of(uri)
        project = self.projects.for_folder(folder)
        path = to_fs_path(uri) if uri.startswith("file:") else None
        label = path if path is not None else uri
        # Its project's facts, as `gpulint check` judges it (gpulint.commands.projects).
        linter = project.linter_for(path)
        if (
            state.project is not project
            or state.linter is None
            or state.linter.linter is not linter
        ):
            state.project = project
            state.linter = IncrementalLinter(linter, label)
        if path is not None and project.excludes(FsPath(path)):
            return LineIndex(""), []
        # A chart's file is not YAML until rendered: GL201, or with gpulint.render what the
        # render maps into it (gpulint.lsp.rendered), never the text linted as YAML.
        rendered = self.renders.findings(project, path, label, self.render) if path else None
        if rendered is not None:
            return LineIndex(text), features.shown(rendered)
        findings = features.shown(state.linter.lint(text))
        return LineIndex(text), findings

    def publish_config_problems(self) -> None:
        problems = {
            from_fs_path(str(p.problem.path)) or str(p.problem.path): p.problem
            for p in self.projects.projects()
            if p.problem is not None
        }
        for uri in self.config_uris - set(problems):
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[])
            )
        for uri, problem in problems.items():
            diag = features.config_diagnostic(problem.line, problem.message)
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[diag])
            )
        self.config_uris = set(problems)

    async def reload(self) -> None:
        """A configuration file changed: read every configuration again, lint again."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self.executor, self.projects.forget)
        await loop.run_in_executor(self.executor, self.renders.forget)
        for state in self.open.values():
            state.project = None
        for uri in list(self.open):
            self.schedule(uri, 0)
        if not self.open:
            self.publish_config_problems()

    def close(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.open.pop(uri, None)
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[])
        )


def render_setting(settings: Any) -> bool | None:
    """``gpulint.render`` from the client's settings (``{"gpulint": {"render": true}}``,
    ``{"render": true}`` as initialization options); None when not given."""
    if isinstance(settings, dict) and isinstance(settings.get("gpulint"), dict):
        settings = settings["gpulint"]
    value = settings.get("render") if isinstance(settings, dict) else None
    return value if isinstance(value, bool) else None


def _debounce(options: Any) -> float | None:
    if isinstance(options, dict):
        value = options.get("debounceMs")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 10_000:
            return float(value) / 1000
    return None


def build(trust: Trust | None = None) -> GpulintServer:
    """The language server with every feature registered (nothing runs until it serves)."""
    server = GpulintServer(trust or Trust())
    _lifecycle(server)
    _documents(server)
    _language(server)
    return server


def _lifecycle(server: GpulintServer) -> None:
    """Start-up and settings: the client's options, the configuration files watched, a
    configuration changed or saved."""

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: GpulintServer, params: lsp.InitializeParams) -> None:
        delay = _debounce(params.initialization_options)
        if delay is not None:
            ls.debounce = delay
        ls.render = render_setting(params.initialization_options) or False
        root = ls.workspace.root_path
        ls.projects.fallback = FsPath(root) if root else None

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: GpulintServer, params: lsp.InitializedParams) -> None:
        caps = ls.client_capabilities.workspace
        watched = caps.did_change_watched_files if caps is not None else None
        if watched is None or not watched.dynamic_registration:
            return  # the configuration is reloaded when it is saved in the editor
        watchers = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILE_NAMES]
        registration = lsp.Registration(
            id="gpulint-configuration",
            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            await ls.client_register_capability_async(
                lsp.RegistrationParams(registrations=[registration])
            )
        except Exception as exc:  # the client refused: saving in the editor still reloads
            ls.window_log_message(
                lsp.LogMessageParams(lsp.MessageType.Warning, f"no file watcher: {exc}")
            )

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def configuration(ls: GpulintServer, params: lsp.DidChangeConfigurationParams) -> None:
        render = render_setting(params.settings)
        if render is not None and render != ls.render:
            ls.render = render
            for uri in list(ls.open):
                ls.schedule(uri, 0)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched(ls: GpulintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = to_fs_path(change.uri)
            if path is not None and is_config_file(FsPath(path)):
                await ls.reload()
                return


def _documents(server: GpulintServer) -> None:
    """The open documents: linted when opened, changed or saved, forgotten when closed."""

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: GpulintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: GpulintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: GpulintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        if path is not None and is_config_file(FsPath(path)):
            await ls.reload()
            return
        # What the saved file says of its project (its tolerations, pools, device plugins)
        # is gathered again, on the lint thread before the lints.
        ls.executor.submit(ls.projects.forget_facts)
        if ls.render:  # a chart or root may render otherwise now: what it renders again
            ls.executor.submit(ls.renders.saved)
        for uri in list(ls.open):
            ls.schedule(uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: GpulintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)


def _language(server: GpulintServer) -> None:
    """What an editor asks of a position: quick fixes, hovers, completions."""

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]),
    )
    def code_action(ls: GpulintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        state = ls.open.get(params.text_document.uri)
        if state is None or state.version is None:
            return []
        buffer = ls.buffers.get(params.text_document.uri)
        if buffer is None or buffer.version != state.version:
            return []  # the findings are of an older text: their edits would land wrong
        return features.code_actions(
            params.text_document.uri,
            state.index.text,
            state.index,
            state.findings,
            params.range,
        )

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: GpulintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        uri = params.text_document.uri
        if not ls.lintable(uri):
            return None
        state = ls.open.get(uri)
        text = ls.buffers[uri].text
        current = state is not None and state.index.text == text
        index = state.index if state is not None and current else LineIndex(text)
        findings = state.findings if state is not None and current else []
        project = state.project if state is not None and state.project is not None else None
        if project is None:
            return None
        return features.hover(
            index, findings, project.rules, project.linter.registry, params.position
        )

    @server.feature(
        lsp.TEXT_DOCUMENT_COMPLETION,
        lsp.CompletionOptions(trigger_characters=[".", "/", "-"]),
    )
    def completion(ls: GpulintServer, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        uri = params.text_document.uri
        if not ls.lintable(uri):
            return None
        state = ls.open.get(uri)
        if state is None or state.project is None:
            return None
        text = ls.buffers[uri].text
        return features.completions(LineIndex(text), state.project.linter.registry, params.position)


def serve(trust: Trust | None = None) -> None:
    """Serve the protocol on stdin and stdout until the client exits or goes away."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    server = build(trust)
    try:
        server.start_io(sys.stdin.buffer, sys.stdout.buffer)
    finally:
        server.executor.shutdown(wait=False, cancel_futures=True)
