"""The project phase: rules over the facts that every file contributed.

Facts are plain dicts (``kind``, ``path``, positions, data) recorded by
checkers during the per-file phase; they survive the cache and cross process
boundaries.  Non-Python files (Redis configuration, compose files) are given
to the project as text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pathlib import Path
from typing import TYPE_CHECKING

from ..config.settings import Settings
from ..core.model import FileResult, Finding
from ..registry import Entry
from ..core.source import DecodeError, decode

if TYPE_CHECKING:
    from .linter import Linter


@dataclass
class Project:
    settings: Settings
    facts: list[dict[str, Any]] = field(default_factory=list)
    other_files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    python_files: tuple[str, ...] = ()  # every linted Python file, relative
    # the text of files a fix has changed in memory (relative path -> text):
    # what a project fix reads and positions itself in, not the file on disk
    texts: dict[str, str] = field(default_factory=dict)
    # files the rules read from disk (domain/celeryconf/texts.py) -> their stat
    # signature, taken before reading: kept with the project's findings in the
    # stat index, which serves them again only while every one is unchanged
    reads: dict[str, str | None] = field(default_factory=dict)

    def of_kind(self, kind: str) -> Iterable[dict[str, Any]]:
        return (f for f in self.facts if f["kind"] == kind)

    def note_read(self, rel: str, path: Path) -> None:
        if rel not in self.reads:
            from .stat_index import current_signature

            self.reads[rel] = current_signature(path)


def warm_up(entries: Iterable[Entry]) -> None:
    """Import what the project phase will need (the project rules, libcst,
    Celery's table of settings): done by a process that would otherwise
    wait for its workers."""
    wanted = [e for e in entries if e.in_project_phase]
    for entry in wanted:
        entry.load()
    if wanted:
        from ..domain.celeryconf.settings_table import table

        table()


def run_project(project: Project, entries: Iterable[Entry]) -> tuple[list[Finding], list[str]]:
    findings: list[Finding] = []
    errors: list[str] = []
    for entry in entries:
        if not entry.in_project_phase:
            continue
        try:
            cls = entry.load()
            for finding in (cls.check_project(project) if entry.project_part else cls().check(project)):
                if project.settings.enabled(finding.code, finding.path):
                    findings.append(finding)
        except Exception:
            import traceback

            errors.append(f"internal error in {entry.code}:\n{traceback.format_exc()}")
    return _distinct(findings), errors


def _distinct(findings: list[Finding]) -> list[Finding]:
    """Findings without exact repeats: several apps sharing one configuration
    module each find the same thing at the same place.  Only findings equal
    in every field (code, place, message, fix) are merged."""
    seen: set[Finding] = set()
    out = []
    for finding in findings:
        try:
            if finding in seen:
                continue
            seen.add(finding)
        except TypeError:  # a fix built with a list of edits: kept, as before
            pass
        out.append(finding)
    return out


def reads_every_file(linter: Linter) -> bool:
    """Whether the project phase reads the comments of every file: CL002
    (unused_noqa.py, as ruff's RUF100)."""
    return any(e.code == "CL002" for e in linter.entries) and not linter.settings.ignore_noqa


def make_project(results: dict[Path, FileResult], other: dict[str, str], linter: Linter,
                 texts: dict[str, str] | None = None) -> Project:
    """The whole run as the project rules see it: every file's facts, the
    non-Python files' text, the Python files linted."""
    return Project(
        settings=linter.settings,
        facts=[fact for r in results.values() for fact in r.facts],
        other_files=other,
        python_files=(linter.python_files if linter.python_files is not None
                      else tuple(r.path for r in results.values())),
        texts=dict(texts or {}),
    )


@dataclass
class Memo:
    """For a long-lived caller (the language server): the project rules'
    findings of its last run, reused while the caller's ``want`` equals the
    ``key`` they were computed for (the caller changes ``want`` whenever an
    input of the project phase changed)."""

    want: object = None
    key: object = None
    findings: list[Finding] | None = None


def project_findings(results: dict[Path, FileResult], other: dict[str, str], linter: Linter,
                     errors: list[str], texts: dict[str, str] | None = None,
                     memo: Memo | None = None) -> list[Finding]:
    """The project phase over the files' facts.  ``texts`` holds the current
    text of the files the fix loop has changed (by relative path): fixes are
    computed, and noqa comments read, from it instead of the disk.  noqa
    comments are applied to the rules' findings every time, ``memo`` or not."""
    project = make_project(results, other, linter, texts)
    facts = project.facts
    findings: list[Finding] = []
    # every project rule reasons over facts (CL002's ``noqa-used`` are not for them)
    if any(f["kind"] != "noqa-used" for f in facts) and any(e.in_project_phase for e in linter.entries):
        if memo is not None and memo.findings is not None and memo.key == memo.want:
            findings = memo.findings
        else:
            problems = len(errors)
            findings = _run_or_cached(project, results.values(), linter, errors)
            if memo is not None and len(errors) == problems:
                memo.key, memo.findings = memo.want, findings
    by_rel = {r.path: p for p, r in results.items()}
    kept: list[Finding] = []
    silenced: list[Finding] = []
    for finding in findings:
        suppressed = _suppressed_on_disk(finding, by_rel, project.texts, not linter.settings.ignore_noqa)
        (silenced if suppressed else kept).append(finding)
    if reads_every_file(linter):
        from .unused_noqa import unused_noqa

        kept += unused_noqa(results, silenced, linter, project.texts)
    return kept


def _run_or_cached(project: Project, results: Iterable[FileResult], linter: Linter,
                   errors: list[str]) -> list[Finding]:
    key = findings = None
    if linter.index is not None:
        key = _project_key(project, results, linter)
        findings = linter.index.project_findings(key)
    if findings is None:
        findings, problems = run_project(project, linter.entries)
        errors.extend(problems)
        if key is not None and not problems:
            linter.index.put_project(key, findings, project.reads)
    return findings


def _project_key(project: Project, results: Iterable[FileResult], linter: Linter) -> str:
    """A hash of what the project phase reads: every file's facts (as part
    of its result's JSON, which the stat index keeps: a result it gives is
    not written again), the non-Python files, the Python files' names and
    the launch files."""
    import hashlib
    import json

    h = hashlib.sha256(json.dumps([project.other_files, project.python_files, linter.launch_files],
                                  default=str).encode())
    for result in results:
        if not result.blank():  # a blank one is left out of warm runs (runner._unchanged_quiet)
            h.update(b"\0" + result.stored_json().encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _suppressed_on_disk(finding: Finding, by_rel: dict[str, Path], texts: dict[str, str], noqa: bool = True) -> bool:
    """noqa and skip-file for project findings, which no per-file pass saw
    (``noqa`` False: ``--ignore-noqa``, skip-file alone)."""
    from ..engine.analysis import SKIP_FILE
    from ..engine.noqa import file_noqa, is_suppressed, silences
    from ..core.source import LineIndex

    path = by_rel.get(finding.path)
    if path is None:
        return False
    if finding.path in texts:
        text = texts[finding.path]
        data = text.encode("utf-8", "surrogatepass")
        if SKIP_FILE.search(data) or noqa and silences(file_noqa(data), finding.code):
            return True
        return noqa and "noqa" in text.lower() and is_suppressed(LineIndex(text), finding.code, finding.line, finding.end_line)
    try:
        data = path.read_bytes()
        text = decode(data).text
    except (OSError, DecodeError):
        return False
    if SKIP_FILE.search(data) or noqa and silences(file_noqa(data), finding.code):
        return True
    return noqa and b"noqa" in data.lower() and is_suppressed(LineIndex(text), finding.code, finding.line, finding.end_line)
