"""The fix loop: apply non-overlapping fixes, re-lint, repeat; then write or diff."""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.analysis import parse
from ..core.model import FileResult, Finding, Fix
from .project import project_findings
from ..core.source import _NEWLINES, newline_at
from ..core.source import DecodeError, LineIndex, SourceText, apply_edits, decode, digest, overlaps, read_source

if TYPE_CHECKING:
    from .linter import Linter
    from .runner import RunResult

# Two fixes that insert at one place (settings added to one module) go in
# separate rounds: one per setting a project may miss, and a few more.
MAX_FIX_ROUNDS = 10
DROPPED = "a fix was dropped because CPython or libcst could not compile its result"


def parses(text: str) -> bool:
    """The fixed text must be valid for libcst and compile with CPython:
    to bytecode, not only to a syntax tree, since the compiler refuses what
    the parser accepts (a repeated keyword argument, ``nonlocal`` at module
    level, ``return`` outside a function).  Compiling runs nothing."""
    module, _ = parse(text)
    if module is None:
        return False
    from ..engine.guard import compile_quietly

    try:
        compile_quietly(text, bytecode=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def refused(path: Path, root: Path) -> str | None:
    """Why a fix must not write ``path``, or None: a fix never writes through
    a symbolic link, nor outside the linted tree (the repository root)."""
    try:
        if os.path.islink(path):
            return "it is a symbolic link"
        real = os.path.realpath(path)
        top = os.path.realpath(root)
    except (OSError, ValueError):
        return "cannot resolve its path"
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        return "it is outside the repository root"
    return None


def _applicable(finding: Finding, unsafe: bool, fixable=None) -> Fix | None:
    fix = finding.fix
    if fix is None or not fix.edits or (not fix.safe and not unsafe) or (fixable and not fixable(finding.code)):
        return None
    return fix


def fixes_shown(findings: list[Finding], settings) -> list[Finding]:
    """``findings`` with no fix on the codes ``fixable``/``unfixable`` keep
    from ``--fix`` (as ruff: a rule that is not fixable shows no fix)."""
    if not (settings.fixable or settings.unfixable):
        return findings
    from dataclasses import replace

    return [f if f.fix is None or settings.is_fixable(f.code) else replace(f, fix=None) for f in findings]


def fix_files(results: dict[Path, FileResult], other: dict[str, str], found: list[Finding],
              linter: Linter, out: RunResult, *, unsafe: bool, write: bool,
              only: frozenset[str] | None = None) -> list[Finding]:
    """Apply fixes in rounds until none is left (at most ``MAX_FIX_ROUNDS``),
    re-linting the changed files between rounds; write them (or record their
    diffs) at the end; with ``only``, to those files alone (relative paths).
    Returns the project findings of the final state."""
    by_rel = {r.path: p for p, r in results.items() if only is None or r.path in only}
    originals: dict[Path, tuple[bytes, SourceText]] = {}
    current: dict[Path, str] = {}
    fixed: dict[Path, int] = defaultdict(int)
    codes: dict[Path, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))  # --show-fixes
    origin: dict[int, Finding] = {}  # id of a pending fix -> its finding
    dropped: set[Path] = set()
    refused_paths: set[Path] = set()
    for round_ in range(MAX_FIX_ROUNDS):
        pending = _pending(results, found, by_rel, unsafe, origin, linter.settings.is_fixable)
        if round_ == 0:
            # Fixes apply to the bytes read now: a file edited since the lint
            # pass is linted again and fixed as it is, not as it was.
            stale = False
            for path in list(pending):
                if not _take(path, linter, out, refused_paths, originals, current):
                    del pending[path]
                    continue
                data = originals[path][0]
                if digest(data) != results[path].digest:
                    results[path], stale = linter.lint_bytes(path, data), True
            if stale:
                found = project_findings(results, other, linter, [], _texts(results, current))
                pending = {p: f for p, f in _pending(results, found, by_rel, unsafe, origin, linter.settings.is_fixable).items() if p in originals}
        changed = []
        for path, fixes in pending.items():
            # a project fix reaching a file first touched now
            if path not in originals and not _take(path, linter, out, refused_paths, originals, current):
                continue
            text, applied, rejected = _apply_fixes(current[path], fixes)
            if rejected and path not in dropped:
                dropped.add(path)
                out.notices.append(f"{linter.rel(path)}: {DROPPED}")
            if applied and text != current[path]:
                current[path] = text
                fixed[path] += len(applied)
                for fix in applied:
                    codes[path][origin[id(fix)].code, origin[id(fix)].name] += 1
                changed.append(path)
        if not changed:
            break
        for path in changed:
            data, source = originals[path]
            results[path] = linter.lint_bytes(path, source.encode(current[path]))
        found = project_findings(results, other, linter, [], _texts(results, current))
    else:
        if _pending(results, found, by_rel, unsafe, origin, linter.settings.is_fixable):  # the last round may have done all
            out.notices.append("fixes did not converge after %d rounds; some findings may be fixable on another run"
                               % MAX_FIX_ROUNDS)
    for path, text in current.items():
        data, source = originals[path]
        new = source.encode(text)
        if new == data:
            continue
        rel = linter.rel(path)
        if not write:
            from .patch import unified_diff

            out.diffs.append(unified_diff(data, new, rel))  # the file's bytes, as git reads them
            out.fixed[rel], out.fixed_codes[rel] = fixed[path], dict(codes[path])
            continue
        from .writer import WriteError, write_atomic

        try:
            write_atomic(path, new, data)
            out.fixed[rel], out.fixed_codes[rel] = fixed[path], dict(codes[path])
        except WriteError as exc:
            out.notices.append(f"{rel}: not fixed: {exc}")
            results[path] = linter.lint_bytes(path, data)
    return found


def _texts(results: dict[Path, FileResult], current: dict[Path, str]) -> dict[str, str]:
    """The in-memory text of every file the loop holds, by relative path: the
    project phase computes its fixes from it, never from the stale disk."""
    return {results[p].path: text for p, text in current.items() if p in results}


def _refuse(path: Path, linter: Linter, out: RunResult, seen: set[Path]) -> bool:
    """True (with one notice per file) when fixes must leave ``path`` alone."""
    why = refused(path, linter.settings.root)
    if why is None:
        return False
    if path not in seen:
        seen.add(path)
        out.notices.append(f"{linter.rel(path)}: not fixed: {why}")
    return True


def _take(path: Path, linter: Linter, out: RunResult, refused: set[Path],
          originals: dict[Path, tuple[bytes, SourceText]], current: dict[Path, str]) -> bool:
    """Read ``path`` to fix it (into ``originals`` and ``current``); False,
    with a notice, when it must not be fixed or cannot be read again."""
    if _refuse(path, linter, out, refused):
        return False
    try:
        data = read_source(path)
        originals[path] = (data, decode(data))
    except (OSError, DecodeError) as exc:
        out.notices.append(f"{linter.rel(path)}: not fixed: cannot read it again: {_reason(exc)}")
        return False
    current[path] = originals[path][1].text
    return True


def _reason(exc: Exception) -> str:
    return getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)


def _pending(results: dict[Path, FileResult], project_findings: list[Finding], by_rel: dict[str, Path],
             unsafe: bool, origin: dict[int, Finding], fixable=None) -> dict[Path, list[Fix]]:
    pending: dict[Path, list[Fix]] = defaultdict(list)
    for finding in [f for r in results.values() for f in r.findings] + project_findings:
        fix = _applicable(finding, unsafe, fixable)
        path = by_rel.get(fix.path or finding.path) if fix else None
        if fix and path is not None:
            pending[path].append(fix)
            origin[id(fix)] = finding  # the finding keeps its fix alive: the id stays its own
    return pending


def _native_newlines(text: str, index: LineIndex, fix: Fix) -> Fix:
    """Line breaks in a fix's new text take the file's line endings (Python
    reads every ending alike, so this changes nothing but the bytes)."""
    if not any("\n" in e.content or "\r" in e.content for e in fix.edits):
        return fix
    edits = tuple(replace(e, content=_NEWLINES.sub(newline_at(text, index, e.line), e.content)) for e in fix.edits)
    return replace(fix, edits=edits)


def _apply(text: str, fixes: list[Fix]) -> tuple[str, int, bool]:
    """``_apply_fixes`` with the number of fixes applied."""
    new, applied, rejected = _apply_fixes(text, fixes)
    return new, len(applied), rejected


def _apply_fixes(text: str, fixes: list[Fix]) -> tuple[str, list[Fix], bool]:
    """Apply as many non-overlapping fixes as parse; return (text, the fixes
    applied (as given), whether a fix was rejected because its result would
    not parse)."""
    index = LineIndex(text)
    pairs = [(_native_newlines(text, index, f), f) for f in fixes]
    chosen: list[tuple[Fix, Fix]] = []
    for fix, given in sorted(pairs, key=lambda p: p[0].edits[0]):
        if not any(overlaps(list(fix.edits), list(c.edits)) for c, _ in chosen):
            chosen.append((fix, given))
    edits = [e for f, _ in chosen for e in f.edits]
    try:
        new = apply_edits(text, edits)
    except ValueError:
        new = None
    if new is not None and parses(new):
        return new, [given for _, given in chosen], False
    # Some fix breaks the file: apply the first one that parses alone; the
    # positions of the others are stale, the next round lints again.
    for i, (fix, given) in enumerate(chosen):
        try:
            candidate = apply_edits(text, list(fix.edits))
        except ValueError:
            continue
        if parses(candidate):
            return candidate, [given], i > 0
    return text, [], True
