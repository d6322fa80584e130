"""The work a run hands to a process, its own or a pool worker: read and triage one file, analyse one job.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..config.settings import Settings
from ..core.model import FileResult
from ..core.source import digest
from ..engine.analysis import analyze
from ..registry import Entry

if TYPE_CHECKING:
    from .linter import Linter


@dataclass
class Job:
    """A file that must be parsed: everything a worker process needs."""

    rel: str
    text: str
    data: bytes
    entries: list[Entry]
    active: list[Entry]
    module: str | None
    key: str | None  # cache key, None without a cache
    facts: list = field(default_factory=list)  # of the ``ast`` collectors, already collected
    client_index: dict = field(default_factory=dict)  # facts/client_index.py, set before analysis


def analyze_job(job: Job, settings: Settings) -> FileResult:
    """Analyse one file.  Its facts are passed through JSON here, as the cache
    stores them, so that the project phase sees the same values (lists, not
    tuples) whether a file was analysed now or served from the cache."""
    result = analyze(job.rel, job.text, job.data, settings, job.entries, job.active, job.module, job.client_index)
    if result.facts:
        import json

        result.facts = json.loads(json.dumps(result.facts, default=str))
    result.facts[:0] = job.facts  # the ``ast`` collectors' facts are JSON data already (syntax_pass.collect)
    return result


def triage_path(linter: Linter, path: Path) -> tuple[FileResult, str | None, Job | None, str | None]:
    """Read and prefilter one file, in whichever process: its result so far,
    a notice, the job when libcst must parse it, and its digest when fixing."""
    sig = linter.signature(path)
    data, result, notice = linter.read(path)
    if data is None:
        return result, notice, None, None
    result, job = linter.prepare(path, data)
    result.signature = sig
    return result, notice, job, digest(data) if linter.keep_digests else None
