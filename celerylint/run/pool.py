"""Worker processes, in two phases for a large tree: reading and
prefiltering every file (``triage_chunks``), then parsing the files that need
libcst (``run_pool``, also used alone for a few large files).

In both, this process works too: it and ``workers - 1`` children take the
next piece of work from a shared counter, and each child sends all it did
back at the end, in one message.  Forked children inherit the work list and
what this process imported, so no file's text crosses a pipe and libcst is
imported once; elsewhere children are spawned and import what they need.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config.settings import Settings
from ..core.model import FileResult
from .project import warm_up

if TYPE_CHECKING:
    from .jobs import Job
    from .linter import Linter

    Triaged = tuple[FileResult, str | None, Job | None, str | None]

PARALLEL_MIN_FILES = 2
# what another process can take beside the largest file: a few tenths of a
# second of libcst (a run on one file whose project's settings module is large)
PARALLEL_MIN_BYTES = 50_000
PARALLEL_MIN_PATHS = 400  # enough prefiltering to pay for starting workers
CHUNK_PATHS = 32  # files read and prefiltered per turn
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}  # cli.py turns them into an exception (``Stopped``)


def parallel_worthwhile(jobs: list[Job]) -> bool:
    sizes = [len(j.data) for j in jobs]
    return len(sizes) >= PARALLEL_MIN_FILES and sum(sizes) - max(sizes) >= PARALLEL_MIN_BYTES


def _context():
    import multiprocessing

    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def _turns(counter, count: int) -> Iterator[int]:
    while True:
        with counter.get_lock():
            turn = counter.value
            counter.value = turn + 1
        if turn >= count:
            return
        yield turn


def _mask(how: str, signals):
    """``signal.pthread_sigmask``, where there is one (not on Windows)."""
    sigmask = getattr(signal, "pthread_sigmask", None)
    return sigmask(getattr(signal, how), signals) if sigmask is not None else set()


def _bind_to_parent(parent: int, inherited: list) -> None:
    """A child dies with this process and never outlives it in a blocked write.

    Ctrl-C reaches the whole process group: the parent decides, and ends
    the children (SIGINT is ignored here; SIGTERM keeps its default, which
    ends the child).  On Linux the kernel kills the child when the parent
    dies, even by SIGKILL (``PR_SET_PDEATHSIG``).  The read ends of the
    pipes the child inherited are closed: holding its own pipe's read end, a
    child whose parent is gone would wait forever to write its results to
    it, with the caller's stdout and stderr still open."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # no-op where SIGTERM is not a real signal
    _mask("SIG_UNBLOCK", _STOP_SIGNALS)
    for receive in inherited:
        receive.close()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the closed pipes still free us
            pass
    if os.getppid() != parent:  # the parent died before the kernel was told
        os._exit(1)


def _child(work: Callable[[Any, int], Any], state: Any, count: int, counter, send, parent: int,
           inherited: list) -> None:
    _bind_to_parent(parent, inherited)
    results = {turn: work(state, turn) for turn in _turns(counter, count)}
    try:
        send.send(results)
        send.close()
    except OSError:  # the parent is gone: nobody to tell
        os._exit(1)


def _share(work: Callable[[Any, int], Any], state: Any, count: int, workers: int,
           between: Callable[[], None] | None = None) -> dict[int, Any]:
    """``work(state, turn)`` for every turn below ``count``, shared by this
    process and ``workers - 1`` children: ``{turn: result}``.  ``between``
    runs here after each turn this process takes.  The turns of a child that
    died are done here."""
    context = _context()
    counter = context.Value("i", 0)
    for stream in (sys.stdout, sys.stderr):  # a forked child must not write our buffers again
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    children: list = []
    forked = context.get_start_method() == "fork"
    try:
        for _ in range(min(workers, count) - 1):
            receive, send = context.Pipe(duplex=False)
            # a forked child inherits every read end open here (a spawned one, none)
            inherited = [receive, *(r for _, r in children)] if forked else []
            child = context.Process(target=_child, args=(work, state, count, counter, send, os.getpid(), inherited),
                                    daemon=True)
            # no SIGINT or SIGTERM until the child has its own handlers: this
            # process's would make it raise (and print a traceback)
            mask = _mask("SIG_BLOCK", _STOP_SIGNALS)
            try:
                child.start()
                children.append((child, receive))  # before a pending signal can stop us
                send.close()
            finally:
                _mask("SIG_SETMASK", mask)
        done: dict[int, Any] = {}
        for turn in _turns(counter, count):
            done[turn] = work(state, turn)
            if between is not None:
                between()
        for child, receive in children:
            try:
                done.update(receive.recv())
            except (EOFError, OSError):
                pass
            receive.close()
            child.join()
    except BaseException:  # a signal (cli.py turns SIGINT and SIGTERM into an exception) or an error
        for child, receive in children:
            if child.is_alive():
                child.kill()
        for child, receive in children:
            child.join()
            receive.close()
        raise
    for turn in range(count):
        if turn not in done:
            done[turn] = work(state, turn)
    return done


def _import_for_parsing(entries) -> None:
    """libcst, the checkers and what the project phase needs, imported once
    here: forked children inherit them rather than import each (a quarter
    of a second apiece)."""
    import libcst  # noqa: F401

    for entry in entries:
        if entry.kind != "project":
            entry.load()
    warm_up(entries)


# -- parsing -----------------------------------------------------------------

def _analyse(state: tuple[Settings, list[Job]], index: int) -> FileResult:
    from .jobs import analyze_job

    settings, jobs = state
    job = jobs[index]
    try:
        return analyze_job(job, settings)
    except Exception:
        import traceback

        return FileResult(job.rel, errors=[f"{job.rel}: internal error:\n{traceback.format_exc()}"])


def run_pool(jobs: list[Job], settings: Settings, workers: int) -> list[FileResult]:
    """Analyse ``jobs`` in ``workers`` processes; results in the order of ``jobs``.
    The biggest files are taken first so that no process is left with a
    large file at the end."""
    _import_for_parsing({e for job in jobs for e in job.active})
    order = sorted(jobs, key=lambda job: -len(job.data))
    done = _share(_analyse, (settings, order), len(order), workers)
    by_job = {id(job): done[turn] for turn, job in enumerate(order)}
    return [by_job[id(job)] for job in jobs]


# -- reading and prefiltering ------------------------------------------------

def _triage(state: tuple[Linter, list[Path], int, Any], turn: int) -> list[tuple[int, Triaged]]:
    """Triage one chunk of paths: what is not the empty result of a file
    nothing wants (a cached result, a notice, a job...) comes back, with its
    index; ``found`` is set when a file needs parsing."""
    from .jobs import triage_path

    linter, paths, size, found = state
    done = []
    for index in range(turn * size, min(len(paths), (turn + 1) * size)):
        path = paths[index]
        try:
            triaged = triage_path(linter, path)
        except Exception:
            import traceback

            rel = linter.rel(path)
            triaged = (FileResult(rel, errors=[f"{rel}: internal error:\n{traceback.format_exc()}"]), None, None, None)
        result, notice, job, data_digest = triaged
        if job is not None:
            found.value = 1
        if notice or job or data_digest or result != FileResult(result.path):
            done.append((index, triaged))  # not the empty result of a file nothing wants
    return done


def triage_chunks(paths: list[Path], linter: Linter, workers: int) -> list[Triaged]:
    """Read and prefilter ``paths`` in ``workers`` processes; the results in
    the order of ``paths``.  Once a file needs parsing, this process imports
    libcst (and what the checkers and the project phase need) between its
    chunks while the children go on, so that the parsing phase's children
    inherit it; a large tree without Celery content never pays for it."""
    found = _context().Value("b", 0, lock=False)
    imported = False

    def between() -> None:
        nonlocal imported
        if found.value and not imported:
            imported = True
            _import_for_parsing(linter.entries)

    count = -(-len(paths) // CHUNK_PATHS)
    done = _share(_triage, (linter, paths, CHUNK_PATHS, found), count, workers, between)
    triaged: list[Triaged | None] = [None] * len(paths)
    for chunk in done.values():
        for index, item in chunk:
            triaged[index] = item
    return [item or (FileResult(linter.rel(path)), None, None, None) for item, path in zip(triaged, paths)]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
