"""The language server: LSP messages in, engine calls (``engine.Session``)
on one worker thread, diagnostics and code actions out.

Every analysis runs on one daemon thread, in the order asked, so the
engine's state is never shared between threads and the event loop keeps
answering the client (hover, code actions, shutdown) while a project is
read.  A change is analysed after ``debounce`` milliseconds without
another change to the same document; opening and saving are analysed at
once.  Any failure of one analysis is logged to the client, never fatal.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import traceback
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..config.settings import ConfigError
from ..core.model import Finding

from .diagnostics import Text, diagnostic
from .engine import PYTHON, Session

from .settings import Overrides

WATCHED = ("**/*.py", "**/*.toml", "**/*.{yml,yaml,conf,cfg,ini,env,json}", "**/{Procfile,Dockerfile}*", "**/.env*")


class Worker:
    """One daemon thread running the engine's calls in order: exiting the
    server never waits for a project being read."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="celerylint-engine", daemon=True).start()

    def _loop(self) -> None:
        while True:
            loop, future, call = self.jobs.get()
            try:
                value, error = call(), None
            except BaseException as exc:  # handed to the awaiting coroutine
                value, error = None, exc
            loop.call_soon_threadsafe(_settle, future, value, error)

    def run(self, call) -> asyncio.Future:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.jobs.put((loop, future, call))
        return future


def _settle(future: asyncio.Future, value, error) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class CeleryLintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("celerylint", __version__)
        self.overrides = Overrides()
        self.session: Session | None = None
        self.worker = Worker()
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.uris: dict[Path, str] = {}  # open Python documents
        self.shown: dict[str, tuple[int | None, str, list[Finding]]] = {}  # uri -> version, text, findings
        self.folders: list[Path] = []
        self.initialization_options: dict = {}
        self.event_loop: asyncio.AbstractEventLoop | None = None  # set at initialize, in its thread
        self.loop_thread: threading.Thread | None = None

    # -- logging ----------------------------------------------------------
    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        """A message in the client's log, sent from the event loop's thread
        whichever thread logs it (the worker's go through the loop)."""
        params = types.LogMessageParams(type=kind, message=f"celerylint: {message}")
        loop = self.event_loop
        if loop is None or threading.current_thread() is self.loop_thread:
            self.window_log_message(params)
        else:
            loop.call_soon_threadsafe(self.window_log_message, params)

    def warn(self, message: str) -> None:
        self.log(message, types.MessageType.Warning)
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=f"celerylint: {message}"))

    # -- analysis ---------------------------------------------------------
    def schedule(self, uri: str, delay: float) -> None:
        old = self.timers.pop(uri, None)
        if old is not None:
            old.cancel()
        loop = asyncio.get_running_loop()
        self.timers[uri] = loop.call_later(delay, lambda: asyncio.ensure_future(self.analyse(uri)))

    async def analyse(self, uri: str) -> None:
        self.timers.pop(uri, None)
        path = self.uri_path(uri)
        if path not in self.uris or self.session is None:
            return
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        session = self.session
        try:
            if not await self.worker.run(lambda: session.loaded(path)):
                # the project is read first: meanwhile, the buffer by itself
                self.publish(uri, version, text, await self.worker.run(lambda: session.alone(path, text)))
            results = await self.worker.run(lambda: session.analyse(path, text))
        except ConfigError as exc:
            self.warn(str(exc))
            self.publish(uri, version, text, [])
            return
        except Exception:
            self.log(f"analysing {path} failed:\n{traceback.format_exc()}", types.MessageType.Error)
            return
        self.publish_all(results, {path: (version, text)})

    async def on_disk(self, paths: list[Path]) -> None:
        if self.session is None:
            return
        session = self.session
        try:
            results = await self.worker.run(lambda: session.disk_changed(paths))
        except Exception:
            self.log(f"reading changed files failed:\n{traceback.format_exc()}", types.MessageType.Error)
            return
        self.publish_all(results, {})

    def publish_all(self, results: dict[Path, list[Finding]], texts: dict[Path, tuple[int | None, str]]) -> None:
        for path, findings in results.items():
            uri = self.uris.get(path)
            if uri is None:
                continue
            if path in texts:
                version, text = texts[path]
            else:
                if self.session is None or path not in self.session.open:
                    continue
                version, text = self.shown.get(uri, (None, None, None))[0], self.session.open[path]
            before = self.shown.get(uri)
            if path not in texts and before is not None and before[1] == text and before[2] == findings:
                continue  # nothing moved in this file
            self.publish(uri, version, text, findings)

    def publish(self, uri: str, version: int | None, text: str, findings: list[Finding]) -> None:
        if self.uri_path(uri) not in self.uris:
            return
        self.shown[uri] = (version, text, findings)
        shown = Text(text, self.workspace.position_codec)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=version, diagnostics=[diagnostic(f, shown) for f in findings]))

    # -- helpers ----------------------------------------------------------
    @staticmethod
    def uri_path(uri: str) -> Path:
        return Path(os.path.abspath(to_fs_path(uri) or uri))

    def other_file(self, uri: str):
        """For a fix in another file: that file's uri, version and text (its
        buffer when open, else the disk)."""
        path = self.uri_path(uri)
        session = self.session

        def find(rel: str):
            target = session.path_of(path, rel)
            if target in self.uris:
                document = self.workspace.get_text_document(self.uris[target])
                return self.uris[target], document.version, Text(document.source, self.workspace.position_codec)
            try:
                return target.as_uri(), None, Text(target.read_text("utf-8"), self.workspace.position_codec)
            except (OSError, UnicodeDecodeError):
                return None

        return find


def _is_python(uri: str, language: str | None = None) -> bool:
    return language == "python" or uri.endswith(PYTHON)
