"""Worker processes, in two phases for a large tree: reading and
prefiltering every file (``triage_chunks``), then parsing the files that need
libcst (``run_pool``, also used alone for a few large files)."""

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

    Triaged = tuple[FileResult, str | None, Job | None, str | None]

PARALLEL_MIN_FILES = 4
PARALLEL_MIN_BYTES = 200_000  # a few seconds of libcst on one core
PARALLEL_MIN_PATHS = 400  # enough prefiltering to pay for starting workers
CHUNKS_PER_WORKER = 8


def parallel_worthwhile(jobs: list[Job]) -> bool:
    return len(jobs) >= PARALLEL_MIN_FILES and sum(len(j.data) for j in jobs) >= PARALLEL_MIN_BYTES


# What a worker was started with: forked workers inherit it, so tasks are
# indices and no file's text crosses a pipe (spawned workers receive it once).
_worker_settings: Settings | None = None
_worker_jobs: list[Job] = []


def _init_worker(settings: Settings, jobs: list[Job]) -> None:
    global _worker_settings, _worker_jobs
    _worker_settings, _worker_jobs = settings, jobs


def _work(index: int) -> tuple[int, FileResult]:
    from .runner import analyze_job

    job = _worker_jobs[index]
    try:
        return index, analyze_job(job, _worker_settings)
    except Exception:
        import traceback

        return index, FileResult(job.rel, errors=[f"{job.rel}: internal error:\n{traceback.format_exc()}"])


def _import_for_parsing(entries) -> None:
    """libcst, the checkers and what the project phase needs, imported once
    in the parent: forked workers inherit them rather than import each
    (half a second apiece)."""
    import libcst  # noqa: F401

    for entry in entries:
        if entry.kind != "project":
            entry.load()
    warm_up(entries)


def _context(entries):
    """``fork`` where it is safe (Linux), after importing what the workers
    need; elsewhere workers are spawned and import what they need."""
    import multiprocessing

    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    _import_for_parsing(entries)
    return multiprocessing.get_context("fork")


def run_pool(jobs: list[Job], settings: Settings, workers: int) -> list[FileResult]:
    """Analyse ``jobs`` in ``workers`` processes; results in the order of ``jobs``.
    The biggest files are handed out first so that no worker is left with a
    large file at the end."""
    context = _context({e for job in jobs for e in job.active})
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i].data))
    results: list[FileResult | None] = [None] * len(jobs)
    with context.Pool(workers, initializer=_init_worker, initargs=(settings, jobs)) as pool:
        for index, result in pool.imap_unordered(_work, order, chunksize=1):
            results[index] = result
    return results  # type: ignore[return-value]


_worker_linter: Linter | None = None
_worker_chunks: list[list[tuple[int, Path]]] = []


def _init_triage_worker(linter: Linter, chunks: list[list[tuple[int, Path]]]) -> None:
    global _worker_linter, _worker_chunks
    _worker_linter, _worker_chunks = linter, chunks


def _triage_chunk(number: int) -> list[tuple[int, Triaged]]:
    """Triage one chunk; only what is not the empty result of a file nothing
    wants comes back, with its index."""
    from .runner import triage_path

    done = []
    for index, path in _worker_chunks[number]:
        try:
            triaged = triage_path(_worker_linter, path)
        except Exception:
            import traceback

            rel = _worker_linter.rel(path)
            triaged = (FileResult(rel, errors=[f"{rel}: internal error:\n{traceback.format_exc()}"]), None, None, None)
        result, notice, job, data_digest = triaged
        if notice or job or data_digest or result.findings or result.errors or result.signature:
            done.append((index, triaged))
    return done


def triage_chunks(paths: list[Path], linter: Linter, workers: int) -> list[Triaged]:
    """Read and prefilter ``paths`` in worker processes; the results in the
    order of ``paths``.

    libcst is not imported by these workers: the parent imports it (and what
    the checkers and the project phase need) while they work, once a file
    needs parsing, so that the parsing pool forked afterwards inherits it; a
    large tree without Celery content never pays for the import.  An
    importing parent holds the GIL that its pool's feeding threads need, so
    the work goes out in a few chunks of about equal size (every ``n``-th
    file) rather than in many small ones."""
    import multiprocessing

    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    count = min(len(paths), workers * CHUNKS_PER_WORKER)
    chunks = [[(i, paths[i]) for i in range(k, len(paths), count)] for k in range(count)]
    triaged: list[Triaged | None] = [None] * len(paths)
    with context.Pool(workers, initializer=_init_triage_worker, initargs=(linter, chunks)) as pool:
        warmed = False
        for done in pool.imap_unordered(_triage_chunk, range(count)):
            for index, item in done:
                triaged[index] = item
            if not warmed and any(item[2] is not None for _, item in done):
                _import_for_parsing(linter.entries)
                warmed = True
    return [item or (FileResult(linter.rel(path)), None, None, None) for item, path in zip(triaged, paths)]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
