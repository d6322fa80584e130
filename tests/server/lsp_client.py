"""A real LSP client (pygls') driving ``python -m celerylint server`` over stdio."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

TIMEOUT = float(os.environ.get("CELERYLINT_LSP_TIMEOUT", 30))  # seconds for any one answer: a cold project read on a busy machine


class Client:
    def __init__(self, settings: dict | None = None) -> None:
        self.lsp = LanguageClient("celerylint-tests", "1")
        self.diagnostics: dict[str, types.PublishDiagnosticsParams] = {}
        self.logs: list[str] = []
        self.settings = settings
        self.changed = asyncio.Condition()
        self.versions: dict[str, int] = {}
        self.published_times: dict[str, list[float]] = {}
        self.history: dict[str, list[list[types.Diagnostic]]] = {}  # every publication, oldest first

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def published(params: types.PublishDiagnosticsParams) -> None:
            async with self.changed:
                self.diagnostics[params.uri] = params
                self.published_times.setdefault(params.uri, []).append(time.perf_counter())
                self.history.setdefault(params.uri, []).append(params.diagnostics)
                self.changed.notify_all()

        @self.lsp.feature(types.WINDOW_LOG_MESSAGE)
        def logged(params: types.LogMessageParams) -> None:
            self.logs.append(params.message)

        @self.lsp.feature(types.WINDOW_SHOW_MESSAGE)
        def shown(params: types.ShowMessageParams) -> None:
            self.logs.append(params.message)

        @self.lsp.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: types.RegistrationParams) -> None:
            self.logs.append("registered " + ",".join(r.method for r in params.registrations))

        @self.lsp.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: types.ConfigurationParams) -> list:
            return [self.settings for _ in params.items]

    async def start(self, root: Path, options: dict | None = None, cwd: Path | None = None) -> None:
        await self.lsp.start_io(sys.executable, "-m", "celerylint", "server", cwd=str(cwd or root),
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
        capabilities = types.ClientCapabilities(
            workspace=types.WorkspaceClientCapabilities(
                configuration=True,
                did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)),
            text_document=types.TextDocumentClientCapabilities(
                publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)))
        self.initialized = await asyncio.wait_for(self.lsp.initialize_async(types.InitializeParams(
            capabilities=capabilities, root_uri=root.as_uri(), initialization_options=options,
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)])), TIMEOUT)
        self.lsp.initialized(types.InitializedParams())

    @property
    def process(self):
        return self.lsp._server

    async def stop(self) -> int:
        await asyncio.wait_for(self.lsp.shutdown_async(None), TIMEOUT)
        self.lsp.exit(None)
        await asyncio.wait_for(self.lsp.stop(), TIMEOUT)
        return self.process.returncode

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self.lsp.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=path.read_text() if text is None else text)))
        return uri

    def replace(self, uri: str, text: str) -> None:
        """The whole buffer now holds ``text`` (one full-content change)."""
        self.versions[uri] += 1
        self.lsp.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))

    def close(self, uri: str) -> None:
        self.lsp.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    def disk_changed(self, *paths: Path, kind=types.FileChangeType.Changed) -> None:
        self.lsp.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=p.as_uri(), type=kind) for p in paths]))

    async def diagnostics_for(self, uri: str, until=lambda d: True, version: int | None = None) -> list[types.Diagnostic]:
        """The diagnostics published for ``uri`` once ``until`` holds (of the
        newest version sent when ``version`` is None)."""
        wanted = self.versions.get(uri) if version is None else version

        def ready():
            got = self.diagnostics.get(uri)
            return got is not None and (wanted is None or got.version == wanted) and until(got.diagnostics)

        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(ready), TIMEOUT)
            return self.diagnostics[uri].diagnostics

    async def code_actions(self, uri: str, diagnostic: types.Diagnostic, only=None) -> list[types.CodeAction]:
        return await asyncio.wait_for(self.lsp.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic], only=only))), TIMEOUT) or []


def session(root: Path, scenario, options: dict | None = None, settings: dict | None = None):
    """Run ``scenario(client)`` against a server started in ``root``; the
    server must then shut down and exit with status 0, leaving no process."""

    async def main():
        client = Client(settings)
        await client.start(root, options)
        pid = client.process.pid
        children: list[int] = []
        try:
            await scenario(client)
            children = _children(pid)
        finally:
            try:
                status = await client.stop()
            except BaseException:  # a failed test leaves no server behind either
                for left in [*_children(pid), pid]:
                    try:
                        os.kill(left, 9)
                    except ProcessLookupError:
                        pass
                raise
        assert status == 0, (status, client.logs)
        for left in [pid, *children]:
            with pytest.raises(ProcessLookupError):
                os.kill(left, 0)
        assert not [m for m in client.logs if "Traceback" in m], client.logs
        return client

    return asyncio.run(main())


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(c) for c in task.read_text().split()]
    return found


def codes(diagnostics: list[types.Diagnostic]) -> list[str]:
    return [d.code for d in diagnostics]


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """``edits`` applied to ``text`` as a client does (positions in UTF-16, none overlapping)."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        before = sum(len(line) for line in lines[:position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units = line.encode("utf-16-le")[:position.character * 2].decode("utf-16-le")
        return before + len(units)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def edits_of(action: types.CodeAction) -> dict[str, list[types.TextEdit]]:
    out: dict[str, list[types.TextEdit]] = {}
    for change in action.edit.document_changes or ():
        out.setdefault(change.text_document.uri, []).extend(change.edits)
    for uri, edits in (action.edit.changes or {}).items():
        out.setdefault(uri, []).extend(edits)
    return out
