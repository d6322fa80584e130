"""Worker processes: for the files libcst must parse (``run_pool``), or for
a whole large tree in chunks of paths (``lint_chunks``)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Settings
from .model import FileResult
from .project import warm_up

if TYPE_CHECKING:
    from .runner import Job, Linter

PARALLEL_MIN_FILES = 4
PARALLEL_MIN_BYTES = 200_000  # a few seconds of libcst on one core
PARALLEL_MIN_PATHS = 400  # enough prefiltering to pay for starting workers
CHUNK_PATHS = 16


def parallel_worthwhile(jobs: list[Job]) -> bool:
    return len(jobs) >= PARALLEL_MIN_FILES and sum(len(j.data) for j in jobs) >= PARALLEL_MIN_BYTES


_worker_settings: Settings | None = None


def _init_worker(settings: Settings) -> None:
    global _worker_settings
    _worker_settings = settings


def _work(item: tuple[int, Job]) -> tuple[int, FileResult]:
    from .runner import analyze_job

    index, job = item
    try:
        return index, analyze_job(job, _worker_settings)
    except Exception:
        import traceback

        return index, FileResult(job.rel, errors=[f"{job.rel}: internal error:\n{traceback.format_exc()}"])


def _context(entries):
    """Where ``fork`` is safe (Linux), libcst and the checkers are imported
    here once and inherited by the workers, rather than imported by each
    (half a second apiece); elsewhere workers are spawned and import what
    they need."""
    import multiprocessing

    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    import libcst  # noqa: F401

    for entry in entries:
        if entry.kind != "project":
            entry.load()
    return multiprocessing.get_context("fork")


def run_pool(jobs: list[Job], settings: Settings, workers: int) -> list[FileResult]:
    """Analyse ``jobs`` in ``workers`` processes; results in the order of ``jobs``.
    The biggest files are handed out first so that no worker is left with a
    large file at the end."""
    context = _context({e for job in jobs for e in job.active})
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i].data))
    results: list[FileResult | None] = [None] * len(jobs)
    with context.Pool(workers, initializer=_init_worker, initargs=(settings,)) as pool:
        for index, result in pool.imap_unordered(_work, [(i, jobs[i]) for i in order], chunksize=1):
            results[index] = result
    return results  # type: ignore[return-value]


_worker_linter: Linter | None = None


def _init_chunk_worker(linter: Linter) -> None:
    global _worker_linter
    _worker_linter = linter


def _lint_chunk(item: tuple[int, list[Path]]) -> tuple[int, list[tuple[FileResult, str | None]]]:
    from .runner import lint_path

    index, paths = item
    done = []
    for path in paths:
        try:
            done.append(lint_path(_worker_linter, path))
        except Exception:
            import traceback

            rel = _worker_linter.rel(path)
            done.append((FileResult(rel, errors=[f"{rel}: internal error:\n{traceback.format_exc()}"]), None))
    return index, done


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def lint_chunks(paths: list[Path], linter: Linter, workers: int) -> tuple[dict[Path, FileResult], list[str]]:
    """``paths`` in chunks, each read, prefiltered and analysed by a worker;
    the results by path, and the notices in the order of ``paths``.  The
    workers import libcst only if a file of theirs needs it: a large tree
    without Celery content never pays for the import."""
    import multiprocessing

    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    # Largest files first, so that the last chunks are small and no worker
    # is left with a big file while the other waits (the order of the
    # results does not depend on it).
    order = sorted(paths, key=lambda p: -_size(p))
    chunks = [(i, order[start:start + CHUNK_PATHS]) for i, start in enumerate(range(0, len(order), CHUNK_PATHS))]
    done: list[list[tuple[FileResult, str | None]]] = [[] for _ in chunks]
    with context.Pool(workers, initializer=_init_chunk_worker, initargs=(linter,)) as pool:
        warmed = False
        for index, results in pool.imap_unordered(_lint_chunk, chunks, chunksize=1):
            done[index] = results
            if not warmed and any(result.facts for result, _ in results):
                warm_up(linter.entries)  # the project phase will run: import for it while the workers work
                warmed = True
    results: dict[Path, FileResult] = {}
    notices: dict[Path, str] = {}
    for (_, chunk), chunk_results in zip(chunks, done):
        for path, (result, notice) in zip(chunk, chunk_results):
            if notice:
                notices[path] = notice
            results[path] = result
    return {path: results[path] for path in paths}, [notices[p] for p in paths if p in notices]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
