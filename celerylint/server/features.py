"""The LSP methods the server answers, registered on a ``CeleryLintServer``."""

from __future__ import annotations

import asyncio
import threading
import traceback

from lsprotocol import types

from .actions import FIX_ALL, fix_actions, fix_all_action, has_safe_fix, noqa_actions, wanted
from .diagnostics import Text
from .engine import Session
from .hover import hover
from .protocol import WATCHED, CeleryLintServer, _is_python
from .settings import Overrides


def build() -> CeleryLintServer:
    server = CeleryLintServer()
    feature = server.feature

    @feature(types.INITIALIZE)
    def initialize(ls: CeleryLintServer, params: types.InitializeParams) -> None:
        ls.event_loop, ls.loop_thread = asyncio.get_running_loop(), threading.current_thread()
        ls.initialization_options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        ls.overrides = _overrides(ls, params.initialization_options)
        folders = [ls.uri_path(f.uri) for f in params.workspace_folders or ()]
        if not folders and params.root_uri:
            folders = [ls.uri_path(params.root_uri)]
        ls.folders = folders
        ls.session = Session(folders, ls.overrides, ls.log)

    @feature(types.INITIALIZED)
    async def initialized(ls: CeleryLintServer, params: types.InitializedParams) -> None:
        workspace = ls.client_capabilities.workspace
        watched = workspace.did_change_watched_files if workspace else None
        if watched is not None and watched.dynamic_registration:
            options = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern=g) for g in WATCHED])
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations=[types.Registration(
                    id="celerylint-watched-files", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=options)]))
            except Exception as exc:
                ls.log(f"the client refused to watch files: {exc}")
        await _pull_configuration(ls)

    @feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: CeleryLintServer, params: types.DidChangeConfigurationParams) -> None:
        if not await _pull_configuration(ls) and isinstance(params.settings, dict):
            _use(ls, _overrides(ls, params.settings))

    @feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: CeleryLintServer, params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        if document.uri.startswith("file:") and _is_python(document.uri, document.language_id):
            ls.uris[ls.uri_path(document.uri)] = document.uri
            ls.schedule(document.uri, 0)

    @feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: CeleryLintServer, params: types.DidChangeTextDocumentParams) -> None:
        if ls.uri_path(params.text_document.uri) in ls.uris:
            ls.schedule(params.text_document.uri, ls.overrides.debounce_ms / 1000)

    @feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: CeleryLintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.uri_path(uri) in ls.uris:
            ls.schedule(uri, 0)
        else:  # a configuration, compose or Redis file open in the editor
            await ls.on_disk([ls.uri_path(uri)])

    @feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: CeleryLintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = ls.uri_path(uri)
        if path not in ls.uris:
            return
        timer = ls.timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        del ls.uris[path]
        ls.shown.pop(uri, None)
        session = ls.session
        if session is None or path not in session.open:
            return
        try:  # the file on disk replaces the buffer in the project view
            ls.publish_all(await ls.worker.run(lambda: session.analyse(path, None)), {})
        except Exception:
            ls.log(f"closing {path}:\n{traceback.format_exc()}", types.MessageType.Error)

    @feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: CeleryLintServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        """Folders added or removed: each file's project is found from the
        innermost folder holding it (engine.Session), so the projects are read
        again, what was held for the removed folders is dropped, and every
        open file is judged again."""
        removed = {ls.uri_path(f.uri) for f in params.event.removed or ()}
        folders = [f for f in ls.folders if f not in removed]
        folders += [p for p in (ls.uri_path(f.uri) for f in params.event.added or ()) if p not in folders]
        ls.folders = folders
        ls.session = Session(folders, ls.overrides, ls.log)
        for uri in list(ls.uris.values()):
            ls.schedule(uri, 0)

    @feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: CeleryLintServer, params: types.DidChangeWatchedFilesParams) -> None:
        await ls.on_disk([ls.uri_path(change.uri) for change in params.changes])

    @feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL]))
    async def code_action(ls: CeleryLintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        shown = ls.shown.get(uri)
        if shown is None or ls.session is None:
            return None
        version, text, findings = shown
        document = ls.workspace.get_text_document(uri)
        if document.source != text:
            return None  # the buffer moved on: its diagnostics are on their way
        current = Text(text, ls.workspace.position_codec)
        only = params.context.only
        actions: list[types.CodeAction] = []
        if wanted(types.CodeActionKind.QuickFix, only):
            actions += fix_actions(uri, version, findings, current, params.range, unsafe=ls.overrides.unsafe_fixes,
                                   other=ls.other_file(uri))
            actions += noqa_actions(uri, version, findings, current, params.range)
        if wanted(FIX_ALL, only) and has_safe_fix(findings):
            session, path = ls.session, ls.uri_path(uri)
            try:
                fixed = await ls.worker.run(lambda: session.fixed_text(path, text))
            except Exception:
                ls.log(f"fixing {path}:\n{traceback.format_exc()}", types.MessageType.Error)
                fixed = text
            action = fix_all_action(uri, version, current, fixed)
            if action is not None:
                actions.append(action)
        return actions

    @feature(types.TEXT_DOCUMENT_HOVER)
    def on_hover(ls: CeleryLintServer, params: types.HoverParams) -> types.Hover | None:
        shown = ls.shown.get(params.text_document.uri)
        if shown is None:
            return None
        return hover(shown[2], Text(shown[1], ls.workspace.position_codec), params.position)

    return server


def _overrides(ls: CeleryLintServer, raw) -> Overrides:
    overrides, problems = Overrides.parse(raw)
    for problem in problems:
        ls.log(problem, types.MessageType.Warning)
    return overrides


def _use(ls: CeleryLintServer, overrides: Overrides) -> None:
    """New overrides: the projects are read again and every open file judged again."""
    if overrides == ls.overrides:
        return
    ls.overrides = overrides
    ls.session = Session(ls.folders, overrides, ls.log)
    for uri in list(ls.uris.values()):
        ls.schedule(uri, 0)


async def _pull_configuration(ls: CeleryLintServer) -> bool:
    """Ask the client for the ``celerylint`` section; False when it cannot answer."""
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return False
    try:
        answer = await asyncio.wait_for(ls.workspace_configuration_async(types.ConfigurationParams(
            items=[types.ConfigurationItem(section="celerylint")])), 5)
    except Exception as exc:
        ls.log(f"workspace/configuration failed: {exc}")
        return False
    if answer and isinstance(answer[0], dict):  # on top of initializationOptions
        _use(ls, _overrides(ls, {**ls.initialization_options, **answer[0]}))
    return True


def serve() -> None:
    """Serve on the standard streams.  The messages go through buffered
    streams of the server's own over descriptors 0 and 1: a worker process
    forked while the reader thread waits on ``sys.stdin`` (holding its
    lock) would otherwise hang closing it, as ``multiprocessing`` does in
    every child.  ``print`` goes to standard error, never into the protocol."""
    import io
    import sys

    stdin = io.BufferedReader(io.FileIO(0, "rb", closefd=False))
    stdout = io.BufferedWriter(io.FileIO(1, "wb", closefd=False))
    sys.stdout = sys.stderr
    build().start_io(stdin, stdout)
