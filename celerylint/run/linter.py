"""The per-file phase: read, triage, look up the cache, parse what must be parsed.

``Linter`` holds what every file of a run shares (settings, enabled checkers,
cache, stat index); ``lint_files`` runs the phase over a list of paths, in
this process or shared with worker processes (``pool``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path, PosixPath

from . import pool
from .cache import Cache
from ..config.settings import Settings, posix_base, relative_path
from ..engine.analysis import split_syntax, triage, unparsable
from ..core.model import FileResult
from ..core.modules import module_name_for
from ..registry import Entry, entries as all_entries
from ..facts.client_index import PROVIDERS_FACT, build, stale
from ..facts.task_class_index import TASK_CLASS_FACTS
from ..facts.task_class_index import entries as task_classes
from ..core.source import NotAFile, digest, read_source
from .closure import CONFIG_MODULES, INDEX_MODULES, config_entries, is_configuration, makes_app
from .jobs import Job, analyze_job, triage_path


def enabled_entries(settings: Settings) -> list[Entry]:
    """Checkers a run needs: selected rules, plus the fact collectors when a
    rule with a part in the project phase is selected (a collector that names
    its readers, ``consumers``, only when one of them is)."""
    chosen = [e for e in all_entries() if e.code and settings.enabled(e.code)]
    if any(e.in_project_phase for e in chosen):
        chosen += [e for e in all_entries() if e.kind in ("collector", "syntax")
                   and (not e.consumers or any(settings.enabled(code) for code in e.consumers))]
    elif any(e.code.startswith("CL2") for e in chosen):  # the task-code rules ask the client and task class index
        chosen += [e for e in all_entries() if (e.module, e.cls) in INDEX_COLLECTORS]
    return chosen


INDEX_COLLECTORS = {("celerylint.facts.clients", "ClientProviders"), ("celerylint.facts.tasks", "TaskCollector"),
                    ("celerylint.facts.task_defs", "TaskDefinitions"),
                    ("celerylint.facts.task_decorators", "TaskDecorators"),
                    ("celerylint.facts.task_decorators", "TaskDecoratorExports")}


class Linter:
    def __init__(self, settings: Settings, cache: Cache | None = None) -> None:
        self.settings = settings
        self.entries = enabled_entries(settings)
        self.cache = cache
        self.keep_digests = False  # fixing: remember what each file held when linted
        # where the working directory is under the root: a relative Path
        # (normal already, and without "..") is reported as prefix + itself
        here = relative_path(Path(os.getcwd()), settings.root) if os.sep == "/" else "/"
        self.prefix = None if here.startswith("/") else ("" if here == "." else here + "/")
        self.base = posix_base(str(settings.root))  # an absolute path under it is reported as the rest
        self.index = None  # a StatIndex, for runs over many files that fix nothing
        self.launch_files: list[tuple[str, int, int]] = []  # discovery.Discovery.launch: part of the project key
        self.client_index: dict[str, str] | None = None  # of the last ``lint_files``, for ``lint_bytes``
        # absolute path -> the bytes to lint instead of the file's (standard
        # input, an editor's unsaved buffer): never taken from or put in the stat index
        self.overlay: dict[str, bytes] = {}
        # a run on some files of a project (focus.py): the other files are read
        # only for what the project phase and the indexes take from them
        self.focus = None
        self.context = [e for e in self.entries if e.kind in ("collector", "syntax") or e.project_part == "project"]
        # with ``closure`` (closure.py): the files outside it give only the configuration's facts
        self._closure: set[str] | None = None
        self._closure_from: Callable[[], set[str] | None] | None = None
        # every Python file of the run, relative, when some are left out of the
        # results (unchanged, with nothing to say: runner._unchanged_quiet)
        self.python_files: tuple[str, ...] | None = None
        self.config_context = config_entries(self.context)

    @property
    def closure(self) -> set[str] | None:
        """closure.py's files, computed when first asked (``defer_closure``):
        a warm run whose files all come whole from the stat index never asks."""
        if self._closure_from is not None:
            compute, self._closure_from = self._closure_from, None
            self._closure = compute()
        return self._closure

    def defer_closure(self, compute: Callable[[], set[str] | None]) -> None:
        self._closure, self._closure_from = None, compute

    def signature(self, path: Path) -> tuple[int, ...] | None:
        """The file's stat signature, taken before it is read, when the stat
        index will record it."""
        if self.index is None or (self.overlay and os.path.abspath(path) in self.overlay):
            return None
        from .stat_index import signature

        try:
            return tuple(signature(os.stat(path)))
        except OSError:
            return None

    def rel(self, path: Path) -> str:
        """``relative_path(path, root)``, without its two ``abspath`` calls for
        the paths discovery makes (a ``Path`` is normal but for ``..``)."""
        return self.rel_name(str(path)) if type(path) is PosixPath else relative_path(path, self.settings.root)

    def rel_name(self, name: str) -> str:
        """``rel`` of a path given as the text of a normal ``Path`` (what
        discovery finds), without making the ``Path``."""
        if os.sep == "/" and ".." not in name:
            if not name.startswith("/"):
                if self.prefix is not None:
                    return self.prefix + name
            elif self.base is not None and name.startswith(self.base):
                return name[len(self.base):]
        return relative_path(Path(name), self.settings.root)

    def entries_for(self, path: Path, rel: str | None = None) -> list[Entry]:
        """The checkers of a file: every enabled one, or, for a file of the
        project outside the focus (``rel`` given), those that record facts."""
        entries = self.entries
        if self.focus is not None and rel is not None and not self.focus.holds(rel):
            entries = self.context if self.closure is None or rel in self.closure else self.config_context
        if not self.settings.per_file_ignores:
            return entries
        local = relative_path(path, self.settings.config_dir or self.settings.root)
        return [e for e in entries if not e.code or self.settings.enabled(e.code, local)]

    def partial(self, rel: str) -> bool:
        """Whether the result of ``rel`` holds only what its facts need (see
        ``entries_for``): kept in the stat index apart from whole results."""
        return self.focus is not None and not self.focus.holds(rel)

    def partial_kind(self, rel: str) -> str:
        """How ``entries_for`` reads ``rel``: "" (whole), "context" (every fact
        collector) or "config" (the configuration's, outside the closure)."""
        if not self.partial(rel):
            return ""
        return "config" if self.closure is not None and rel not in self.closure else "context"

    def partial_kinds(self, rel: str) -> tuple[str, ...]:
        """The partial results that serve ``rel`` in this run: its own kind,
        and "context" for "config" (more facts than the closure needs are the
        facts a whole run has)."""
        kind = self.partial_kind(rel)
        return ("context", "config") if kind == "config" else (kind,) if kind else ()

    def prepare(self, path: Path, data: bytes, client_index: dict | None = None) -> tuple[FileResult, Job | None]:
        """The cheap part: the finished result, or a job when libcst must
        parse the file and the cache does not know it (or, given the
        ``client_index``, holds a result that index makes stale)."""
        rel = self.rel(path)
        entries = self.entries_for(path, rel)
        result, text, active = triage(rel, data, entries)
        if active and self.partial_kind(rel) == "config":  # outside the closure
            if makes_app(data):  # an app's module: every fact it holds (the app's task classes)
                entries = [e for e in self.context if e in entries or e.module not in CONFIG_MODULES]
                result, text, active = triage(rel, data, entries)
            elif any(e.module not in INDEX_MODULES for e in active) and not is_configuration(data, rel, active):
                # only names shaped like settings (``task_logger``), which no app reads: the client index
                entries = [e for e in entries if e.module in INDEX_MODULES]
                result, text, active = triage(rel, data, entries)
        if text is None:
            return result, None
        module = module_name_for(path.resolve())
        tree, syntax, active = split_syntax(text, active)
        if not active:  # only collectors over ``ast``: cheaper than a cache lookup
            result.facts.extend(self._collect(rel, text, module, syntax, tree))
            return result, None
        key = None
        if self.cache is not None:
            key = self.cache.key(data, rel, module, [f"{e.code}:{e.module}.{e.cls}" for e in entries])
            cached = self.cache.get(key, rel)
            if cached is not None and not (client_index is not None and stale(cached.facts, client_index)):
                return cached, None
        facts = self._collect(rel, text, module, syntax, tree) if syntax else []
        return result, Job(rel, text, data, entries, active, module, key, facts)

    def _collect(self, rel: str, text: str, module: str | None, syntax: list[Entry], tree) -> list:
        from ..engine.syntax_pass import collect

        return collect(rel, text, module, self.settings, syntax, tree)

    def store(self, job: Job, result: FileResult) -> FileResult:
        if self.cache is not None and job.key is not None:
            self.cache.put(job.key, result)
        return result

    def lint_bytes(self, path: Path, data: bytes) -> FileResult:
        result, job = self.prepare(path, data, self.client_index)
        if job is not None:
            job.client_index = self.client_index or {}
            result = self.store(job, analyze_job(job, self.settings))
        result.digest = digest(data)
        return result

    def read(self, path: Path) -> tuple[bytes | None, FileResult | None, str | None]:
        """The bytes of a file (of the overlay first), or the result and
        notice when it cannot be read."""
        if self.overlay:
            data = self.overlay.get(os.path.abspath(path))
            if data is not None:
                return data, None, None
        try:
            return read_source(path), None, None
        except FileNotFoundError:
            why = "a broken symbolic link" if path.is_symlink() else "the file disappeared"
            return None, FileResult(self.rel(path)), f"{self.rel(path)}: skipped: {why}"
        except (IsADirectoryError, NotAFile) as exc:
            return None, FileResult(self.rel(path)), f"{self.rel(path)}: skipped: {exc.strerror or exc}"
        except OSError as exc:
            result = FileResult(self.rel(path))
            if any(e.code == "CL001" for e in self.entries_for(path)):
                result.findings.append(unparsable(result.path, f"cannot read the file: {exc.strerror or exc}"))
            return None, result, None


def lint_files(paths: list[Path], linter: Linter, jobs: int | None, notices: list[str]) -> dict[Path, FileResult]:
    """The per-file phase; the result keeps the order of ``paths`` whatever
    order the workers finish in.

    With the stat index, unchanged files are taken from it unread.  The
    files of a large tree are read, prefiltered and looked up in the cache
    by worker processes (4,000 files are most of a second of one core);
    fewer files, here.  Then the files libcst must parse go to a second
    pool, when there are enough of them to pay for it."""
    results: dict[Path, FileResult] = {}
    todo = paths
    if linter.index is not None:
        todo = []
        for path in paths:
            rel = linter.rel(path)
            hit = None if linter.overlay and os.path.abspath(path) in linter.overlay else linter.index.get(rel, path, partial(linter.partial_kinds, rel))
            if hit is None:
                todo.append(path)
            else:
                results[path] = hit
    if todo:
        linter.closure  # computed here, not once per worker process
    workers = jobs or pool.default_jobs()
    if workers > 1 and len(todo) >= pool.PARALLEL_MIN_PATHS:
        triaged = pool.triage_chunks(todo, linter, workers)
    else:
        triaged = [triage_path(linter, path) for path in todo]
    pending: list[tuple[Path, Job]] = []
    digests: dict[Path, str] = {}
    for path, (result, notice, job, data_digest) in zip(todo, triaged):
        if notice:
            notices.append(notice)
        if data_digest is not None:
            digests[path] = data_digest
        if job is not None:
            pending.append((path, job))
        results[path] = result
    pending += _client_index(linter, results, pending, notices)
    _analyse(pending, results, linter, workers)
    if pending:  # the task classes of the files analysed now may answer another file's rules differently
        _analyse(_client_index(linter, results, [], notices), results, linter, workers)
    for path, value in digests.items():
        results[path].digest = value
    return {path: results[path] for path in paths}


def _analyse(pending: list[tuple[Path, Job]], results: dict[Path, FileResult], linter: Linter, workers: int) -> None:
    workers = min(workers, len(pending))
    if workers > 1 and pool.parallel_worthwhile([job for _, job in pending]):
        done = pool.run_pool([job for _, job in pending], linter.settings, workers)
    else:
        done = [analyze_job(job, linter.settings) for _, job in pending]
    for (path, job), result in zip(pending, done):
        result.signature = results[path].signature
        results[path] = linter.store(job, result)


def _client_index(linter: Linter, results: dict[Path, FileResult], pending: list[tuple[Path, Job]],
                  notices: list[str]) -> list[tuple[Path, Job]]:
    """Build the run's index of client helpers (facts/client_index.py) and
    task classes (facts/task_class_index.py) from every file's facts, give
    it to the files about to be analysed, and return the jobs of files whose
    result (cached, from the stat index, or analysed with an older index)
    it makes stale."""
    facts = [f for r in results.values() for f in r.facts if f.get("kind") == PROVIDERS_FACT]
    facts += [f for _, job in pending for f in job.facts if f.get("kind") == PROVIDERS_FACT]
    index = build(facts)
    index.update(task_classes(f for r in results.values() for f in r.facts if f.get("kind") in TASK_CLASS_FACTS))
    linter.client_index = index
    for _, job in pending:
        job.client_index = index
    queued = {path for path, _ in pending}
    again = []
    for path, result in results.items():
        if path in queued or not stale(result.facts, index):
            continue
        data, unread, notice = linter.read(path)
        if data is None:
            results[path] = unread
            if notice:
                notices.append(notice)
            continue
        fresh, job = linter.prepare(path, data, index)
        fresh.signature = result.signature
        results[path] = fresh
        if job is not None:
            job.client_index = index
            again.append((path, job))
    return again
