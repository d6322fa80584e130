"""One run: discover, lint every file, run the project phase, apply fixes."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PosixPath

from . import pool
from .cache import Cache, cache_dir
from .config import Settings, relative_path
from .discovery import discover
from .engine import analyze, module_name_for, parse, triage, unparsable
from .model import FileResult, Finding, Fix
from .project import Project, run_project
from .registry import Entry, entries as all_entries
from .source import DecodeError, NotAFile, SourceText, apply_edits, decode, digest, overlaps, read_source

MAX_FIX_ROUNDS = 5
INDEX_MIN_FILES = 64  # below this, reading and prefiltering cost less than loading the stat index


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # internal errors: exit status 2
    notices: list[str] = field(default_factory=list)  # files skipped or not written
    fixed: dict[str, int] = field(default_factory=dict)  # path -> fixes applied
    diffs: list[str] = field(default_factory=list)
    files: int = 0


def enabled_entries(settings: Settings) -> list[Entry]:
    """Checkers a run needs: selected rules, plus the fact collectors when a
    project rule is selected."""
    chosen = [e for e in all_entries() if e.code and settings.enabled(e.code)]
    if any(e.kind == "project" for e in chosen):
        chosen += [e for e in all_entries() if e.kind == "collector"]
    return chosen


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
        self.index = None  # a StatIndex, for runs over many files that fix nothing

    def signature(self, path: Path) -> tuple[int, int, int] | None:
        """The file's stat signature, taken before it is read, when the stat
        index will record it."""
        if self.index is None:
            return None
        from .stat_index import signature

        try:
            return tuple(signature(os.stat(path)))
        except OSError:
            return None

    def rel(self, path: Path) -> str:
        if self.prefix is not None and type(path) is PosixPath:
            text = str(path)
            if not text.startswith("/") and ".." not in text:
                return self.prefix + text
        return relative_path(path, self.settings.root)

    def entries_for(self, path: Path) -> list[Entry]:
        if not self.settings.per_file_ignores:
            return self.entries
        rel = relative_path(path, self.settings.config_dir or self.settings.root)
        return [e for e in self.entries if not e.code or self.settings.enabled(e.code, rel)]

    def prepare(self, path: Path, data: bytes) -> tuple[FileResult, Job | None]:
        """The cheap part: the finished result, or a job when libcst must
        parse the file and the cache does not know it."""
        rel = self.rel(path)
        entries = self.entries_for(path)
        result, text, active = triage(rel, data, entries)
        if text is None:
            return result, None
        module = module_name_for(path.resolve())
        key = None
        if self.cache is not None:
            key = self.cache.key(data, rel, module, [f"{e.code}:{e.module}.{e.cls}" for e in entries])
            cached = self.cache.get(key, rel)
            if cached is not None:
                return cached, None
        return result, Job(rel, text, data, entries, active, module, key)

    def store(self, job: Job, result: FileResult) -> FileResult:
        if self.cache is not None and job.key is not None:
            self.cache.put(job.key, result)
        return result

    def lint_bytes(self, path: Path, data: bytes) -> FileResult:
        result, job = self.prepare(path, data)
        if job is not None:
            result = self.store(job, analyze_job(job, self.settings))
        result.digest = digest(data)
        return result

    def read(self, path: Path) -> tuple[bytes | None, FileResult | None, str | None]:
        """The bytes of a file, or the result and notice when it cannot be read."""
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


def analyze_job(job: Job, settings: Settings) -> FileResult:
    """Analyse one file.  Its facts are passed through JSON here, as the cache
    stores them, so that the project phase sees the same values (lists, not
    tuples) whether a file was analysed now or served from the cache."""
    result = analyze(job.rel, job.text, job.data, settings, job.entries, job.active, job.module)
    if result.facts:
        import json

        result.facts = json.loads(json.dumps(result.facts, default=str))
    return result


def lint_files(paths: list[Path], linter: Linter, jobs: int | None, out: RunResult) -> dict[Path, FileResult]:
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
            hit = linter.index.get(linter.rel(path), path)
            if hit is None:
                todo.append(path)
            else:
                results[path] = hit
    workers = jobs or pool.default_jobs()
    if workers > 1 and len(todo) >= pool.PARALLEL_MIN_PATHS:
        triaged = pool.triage_chunks(todo, linter, workers)
    else:
        triaged = [triage_path(linter, path) for path in todo]
    pending: list[tuple[Path, Job]] = []
    digests: dict[Path, str] = {}
    for path, (result, notice, job, data_digest) in zip(todo, triaged):
        if notice:
            out.notices.append(notice)
        if data_digest is not None:
            digests[path] = data_digest
        if job is not None:
            pending.append((path, job))
        results[path] = result
    workers = min(workers, len(pending))
    if workers > 1 and pool.parallel_worthwhile([job for _, job in pending]):
        done = pool.run_pool([job for _, job in pending], linter.settings, workers)
    else:
        done = [analyze_job(job, linter.settings) for _, job in pending]
    for (path, job), result in zip(pending, done):
        result.signature = results[path].signature
        results[path] = linter.store(job, result)
    for path, value in digests.items():
        results[path].digest = value
    return {path: results[path] for path in paths}


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


def run(paths: list[Path], settings: Settings, *, fix: bool = False, unsafe: bool = False,
        diff: bool = False, jobs: int | None = None, cache: bool = False) -> RunResult:
    out = RunResult()
    linter = Linter(settings, Cache(cache_dir(settings.root), settings) if cache else None)
    linter.keep_digests = fix or diff
    found = discover(paths, settings)
    out.notices.extend(f"{p}: skipped: {why}" for p, why in found.skipped)
    out.files = len(found.python)
    if linter.cache is not None and not (fix or diff) and len(found.python) >= INDEX_MIN_FILES:
        linter.index = linter.cache.stat_index([f"{e.code}:{e.module}.{e.cls}" for e in linter.entries])
    results = lint_files(found.python, linter, jobs, out)
    other = _read_other(found.other, linter)
    project_findings = _project(results, other, linter, out)
    if linter.index is not None:
        for result in results.values():
            linter.index.put(result)
        linter.index.save()
    if fix or diff:
        project_findings = _fix(results, other, project_findings, linter, out, unsafe=unsafe, write=not diff)
    for result in results.values():
        out.findings.extend(result.findings)
        out.errors.extend(result.errors)
    out.findings.extend(project_findings)
    out.findings.sort(key=Finding.sort_key)
    return out


def _read_other(paths: list[Path], linter: Linter) -> dict[str, str]:
    texts = {}
    for path in paths:
        try:
            texts[linter.rel(path)] = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
    return texts


def _project(results: dict[Path, FileResult], other: dict[str, str], linter: Linter, out: RunResult) -> list[Finding]:
    facts = [fact for r in results.values() for fact in r.facts]
    if not facts or not any(e.kind == "project" for e in linter.entries):
        return []  # every project rule reasons over facts; none were recorded
    project = Project(
        settings=linter.settings,
        facts=facts,
        other_files=other,
        python_files=tuple(r.path for r in results.values()),
    )
    key = findings = None
    if linter.index is not None:
        import hashlib
        import json

        key = hashlib.sha256(json.dumps([facts, other, project.python_files], default=str).encode()).hexdigest()
        findings = linter.index.project_findings(key)
    if findings is None:
        findings, errors = run_project(project, linter.entries)
        out.errors.extend(errors)
        if key is not None and not errors:
            linter.index.put_project(key, findings)
    by_rel = {r.path: p for p, r in results.items()}
    return [f for f in findings if not _suppressed_on_disk(f, by_rel)]


def _suppressed_on_disk(finding: Finding, by_rel: dict[str, Path]) -> bool:
    """noqa and skip-file for project findings, which no per-file pass saw."""
    from .engine import SKIP_FILE
    from .noqa import is_suppressed
    from .source import LineIndex

    path = by_rel.get(finding.path)
    if path is None:
        return False
    try:
        data = path.read_bytes()
        text = decode(data).text
    except (OSError, DecodeError):
        return False
    if SKIP_FILE.search(data):
        return True
    return b"noqa" in data.lower() and is_suppressed(LineIndex(text), finding.code, finding.line, finding.end_line)


# -- fixes -------------------------------------------------------------------

def parses(text: str) -> bool:
    """The fixed text must be valid for libcst and for CPython's compiler."""
    module, _ = parse(text)
    if module is None:
        return False
    from .guard import compile_quietly

    try:
        compile_quietly(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _applicable(finding: Finding, unsafe: bool) -> Fix | None:
    fix = finding.fix
    if fix is None or not fix.edits or (not fix.safe and not unsafe):
        return None
    return fix


def _fix(results: dict[Path, FileResult], other: dict[str, str], project_findings: list[Finding],
         linter: Linter, out: RunResult, *, unsafe: bool, write: bool) -> list[Finding]:
    import difflib

    by_rel = {r.path: p for p, r in results.items()}
    originals: dict[Path, tuple[bytes, SourceText]] = {}
    current: dict[Path, str] = {}
    fixed: dict[Path, int] = defaultdict(int)
    dropped: set[Path] = set()
    for round_ in range(MAX_FIX_ROUNDS):
        pending = _pending(results, project_findings, by_rel, unsafe)
        if round_ == 0:
            # Fixes apply to the bytes read now: a file edited since the lint
            # pass is linted again and fixed as it is, not as it was.
            stale = False
            for path in list(pending):
                try:
                    data = read_source(path)
                    originals[path] = (data, decode(data))
                except (OSError, DecodeError) as exc:
                    out.notices.append(f"{linter.rel(path)}: not fixed: cannot read it again: {_reason(exc)}")
                    del pending[path]
                    continue
                current[path] = originals[path][1].text
                if digest(data) != results[path].digest:
                    results[path], stale = linter.lint_bytes(path, data), True
            if stale:
                project_findings = _project(results, other, linter, RunResult())
                pending = {p: f for p, f in _pending(results, project_findings, by_rel, unsafe).items() if p in originals}
        changed = []
        for path, fixes in pending.items():
            if path not in originals:  # a project fix reaching a file first touched now
                try:
                    data = read_source(path)
                    originals[path] = (data, decode(data))
                except (OSError, DecodeError) as exc:
                    out.notices.append(f"{linter.rel(path)}: not fixed: cannot read it again: {_reason(exc)}")
                    continue
                current[path] = originals[path][1].text
            text, applied, rejected = _apply(current[path], fixes)
            if rejected and path not in dropped:
                dropped.add(path)
                out.notices.append(f"{linter.rel(path)}: a fix was dropped because the result would not parse")
            if applied and text != current[path]:
                current[path] = text
                fixed[path] += applied
                changed.append(path)
        if not changed:
            break
        for path in changed:
            data, source = originals[path]
            results[path] = linter.lint_bytes(path, source.encode(current[path]))
        project_findings = _project(results, other, linter, RunResult())
    else:
        out.notices.append("fixes did not converge after %d rounds; some findings may be fixable on another run" % MAX_FIX_ROUNDS)
    for path, text in current.items():
        data, source = originals[path]
        new = source.encode(text)
        if new == data:
            continue
        rel = linter.rel(path)
        if not write:
            out.diffs.append("".join(difflib.unified_diff(
                source.text.splitlines(keepends=True), text.splitlines(keepends=True),
                fromfile=f"a/{rel}", tofile=f"b/{rel}",
            )))
            out.fixed[rel] = fixed[path]
            continue
        from .writer import WriteError, write_atomic

        try:
            write_atomic(path, new, data)
            out.fixed[rel] = fixed[path]
        except WriteError as exc:
            out.notices.append(f"{rel}: not fixed: {exc}")
            results[path] = linter.lint_bytes(path, data)
    return project_findings


def _reason(exc: Exception) -> str:
    return getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)


def _pending(results: dict[Path, FileResult], project_findings: list[Finding], by_rel: dict[str, Path],
             unsafe: bool) -> dict[Path, list[Fix]]:
    pending: dict[Path, list[Fix]] = defaultdict(list)
    for finding in [f for r in results.values() for f in r.findings] + project_findings:
        fix = _applicable(finding, unsafe)
        path = by_rel.get(fix.path or finding.path) if fix else None
        if fix and path is not None:
            pending[path].append(fix)
    return pending


def _apply(text: str, fixes: list[Fix]) -> tuple[str, int, bool]:
    """Apply as many non-overlapping fixes as parse; return (text, count,
    whether a fix was rejected because its result would not parse)."""
    chosen: list[Fix] = []
    for fix in sorted(fixes, key=lambda f: f.edits[0]):
        if not any(overlaps(list(fix.edits), list(c.edits)) for c in chosen):
            chosen.append(fix)
    edits = [e for f in chosen for e in f.edits]
    try:
        new = apply_edits(text, edits)
    except ValueError:
        new = None
    if new is not None and parses(new):
        return new, len(chosen), False
    # Some fix breaks the file: apply the first one that parses alone; the
    # positions of the others are stale, the next round lints again.
    for i, fix in enumerate(chosen):
        try:
            candidate = apply_edits(text, list(fix.edits))
        except ValueError:
            continue
        if parses(candidate):
            return candidate, 1, i > 0
    return text, 0, True
