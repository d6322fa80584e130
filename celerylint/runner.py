"""One run: discover, lint every file, run the project phase, apply fixes."""

from __future__ import annotations

import difflib
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .config import Settings, relative_path
from .discovery import discover
from .engine import lint_source, module_name_for, parse, unparsable
from .model import FileResult, Finding, Fix
from .project import Project, run_project
from .registry import Entry, entries as all_entries
from .source import DecodeError, NotAFile, SourceText, apply_edits, decode, digest, overlaps, read_source

MAX_FIX_ROUNDS = 5


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


class Linter:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.entries = enabled_entries(settings)

    def rel(self, path: Path) -> str:
        return relative_path(path, self.settings.root)

    def entries_for(self, path: Path) -> list[Entry]:
        if not self.settings.per_file_ignores:
            return self.entries
        rel = relative_path(path, self.settings.config_dir or self.settings.root)
        return [e for e in self.entries if not e.code or self.settings.enabled(e.code, rel)]

    def lint_bytes(self, path: Path, data: bytes) -> FileResult:
        return lint_source(self.rel(path), data, self.settings, self.entries_for(path), module_name_for(path.resolve()))

    def lint_path(self, path: Path) -> tuple[FileResult, str | None]:
        """Lint a file on disk; the second value is a notice when it was skipped."""
        try:
            data = read_source(path)
        except FileNotFoundError:
            why = "a broken symbolic link" if path.is_symlink() else "the file disappeared"
            return FileResult(self.rel(path)), f"{self.rel(path)}: skipped: {why}"
        except (IsADirectoryError, NotAFile) as exc:
            return FileResult(self.rel(path)), f"{self.rel(path)}: skipped: {exc.strerror or exc}"
        except OSError as exc:
            result = FileResult(self.rel(path))
            if any(e.code == "CL001" for e in self.entries_for(path)):
                result.findings.append(unparsable(result.path, f"cannot read the file: {exc.strerror or exc}"))
            return result, None
        return self.lint_bytes(path, data), None


def run(paths: list[Path], settings: Settings, *, fix: bool = False, unsafe: bool = False,
        diff: bool = False) -> RunResult:
    out = RunResult()
    linter = Linter(settings)
    found = discover(paths, settings)
    out.notices.extend(f"{p}: skipped: {why}" for p, why in found.skipped)
    out.files = len(found.python)
    results: dict[Path, FileResult] = {}
    for path in found.python:
        result, notice = linter.lint_path(path)
        results[path] = result
        if notice:
            out.notices.append(notice)
    other = _read_other(found.other, linter)
    project_findings = _project(results, other, linter, out)
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
    if not any(e.kind == "project" for e in linter.entries):
        return []
    project = Project(
        settings=linter.settings,
        facts=[fact for r in results.values() for fact in r.facts],
        other_files=other,
        python_files=tuple(r.path for r in results.values()),
    )
    findings, errors = run_project(project, linter.entries)
    out.errors.extend(errors)
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
