"""``celerylint --watch``: lint, then lint again whenever a file that can
change a finding changes, as ``ruff check --watch`` does.

Each run is a child ``celerylint`` process with the same arguments but
``--watch``: a syntax error, a configuration error or a crash ends that run,
never the watch, and the warm cache makes the runs after the first cheap.
Changes are found by polling modification times and sizes (standard library
only; a tree of saleor's size takes tens of milliseconds to stat): the
Python files and launch files (compose, Procfile, Dockerfile, ``*.toml``,
``*.cfg``, ...) under each named path and under the project root each of
them belongs to, since a settings module or a compose file elsewhere in the
project moves the findings of the files named.  Ctrl-C ends the watch with
status 0."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ..core.walk import DEFAULT_EXCLUDE, LAUNCH_FILES, walk

POLL_SECONDS = 0.5
_SKIP = frozenset(DEFAULT_EXCLUDE)


def watched(tops: list[str]) -> dict[str, tuple[int, int]]:
    """The (mtime, size) of every file under ``tops`` whose change can move a finding."""
    seen: dict[str, tuple[int, int]] = {}
    for top in tops:
        if os.path.isfile(top):
            _stat(top, seen)
            continue
        for directory, dirs, files in walk(top):
            dirs[:] = [d for d in dirs if d not in _SKIP]
            for name in files:
                if name.endswith((".py", ".pyi")) or LAUNCH_FILES.match(name):
                    _stat(os.path.join(directory, name), seen)
    return seen


def _stat(path: str, seen: dict[str, tuple[int, int]]) -> None:
    try:
        st = os.stat(path)
    except OSError:
        return
    seen[path] = (st.st_mtime_ns, st.st_size)


def child_args(argv: list[str]) -> list[str]:
    """The command line of one run: this one without ``--watch``."""
    return [sys.executable, "-m", "celerylint", *(a for a in argv if a not in ("--watch", "-W"))]


def watch(argv: list[str], tops: list[str], stopped: type[BaseException]) -> None:
    """Run, poll, run again on a change, until interrupted (``stopped`` is the
    exception the command's signal handler raises); then exit 0."""
    args = child_args(argv)
    child: subprocess.Popen | None = None
    try:
        before = watched(tops)
        _header("Starting linter in watch mode...")
        while True:
            child = subprocess.Popen(args)
            child.wait()
            child = None
            while True:
                time.sleep(POLL_SECONDS)
                now = watched(tops)
                if now != before:
                    before = now
                    break
            _header("File change detected...")
    except stopped:
        if child is not None and child.poll() is None:
            child.terminate()
            child.wait()
        sys.exit(0)


def _header(what: str) -> None:
    if sys.stdout.isatty():
        sys.stdout.write("\x1b[2J\x1b[H")  # clear the screen, as ruff does
    sys.stdout.write(f"[{time.strftime('%H:%M:%S')}] {what}\n")
    sys.stdout.flush()


def tops_of(paths: list[Path], roots) -> list[str]:
    """What to watch: each named path and the project root it belongs to."""
    tops: list[str] = []
    for path in paths:
        root = roots.root_of(path)
        for top in (os.path.abspath(path), *((str(root.directory),) if root is not None else ())):
            if top not in tops and not any(top.startswith(t.rstrip(os.sep) + os.sep) for t in tops):
                tops = [t for t in tops if not t.startswith(top.rstrip(os.sep) + os.sep)] + [top]
    return tops
