"""``celerylint -``: lint the source read from standard input, for editors
(nvim-lint, flycheck, efm).  Findings carry ``--stdin-filename`` (else
``-``), which also decides the project, ``per-file-ignores`` and, with
``--force-exclude``, ``exclude``.  With a file name inside a project, the
project is read whole with the text from standard input standing for the
file (an overlay: run/projects.py), so the file gets the findings it would
get on disk; without one, the text is linted alone and a notice says so.
A file name the project phase reads as a project file (``redis.conf``, a
compose file: ``focus.PROJECT_FILES``) is never parsed as Python: the
report is what the project phase says of it, and nothing is fixed.
Snippets, positions and fixes come from the text read.  With ``--fix`` the
fixed source is what goes to standard output (the report then goes to
standard error), as ruff does; with ``--diff``, the patch.  ``fixable``,
``unfixable`` and ``extend-fixable`` apply as they do to a file on disk:
only fixable codes are fixed, and the others show no fix.  Standard input
is read up to what a file within ``guard.MAX_PARSE_CHARS`` can take
(``guard.MAX_PARSE_BYTES``): more is the file's "too large to analyse"
finding (``--fix`` then fails: what was not read cannot be written back)."""

from __future__ import annotations

from pathlib import Path

from ..config.roots import Roots
from ..engine.analysis import UNPARSABLE, unparsable
from ..core.source import MAX_PARSE_BYTES, MAX_PARSE_CHARS
from ..run.fixing import DROPPED, MAX_FIX_ROUNDS, _apply, _applicable, fixes_shown
from ..run.focus import concerns
from ..run.linter import Linter
from ..run.project import project_findings
from ..run.projects import merge, no_project
from ..run.runner import RunResult, lint
from ..core.source import DecodeError, decode


def run_stdin(data: bytes, filename: str | None, roots: Roots, *, fix: bool = False, unsafe: bool = False,
              diff: bool = False, cache: bool = False, jobs: int | None = None) -> tuple[RunResult, bytes | None]:
    """The run over ``data``, and the fixed bytes (None unless fixing)."""
    from ..run.discovery import _excluded, _pattern_rel

    path = Path(filename or "-")
    root = roots.root_of(path) if filename else None
    settings = roots.settings(root)
    if filename and settings.force_exclude and _excluded(_pattern_rel(path, settings), settings):
        return RunResult(), data if (fix or diff) else None
    out = RunResult(files=1)
    if len(data) > MAX_PARSE_BYTES:  # the caller read one byte more than a file may be: no further
        linter = Linter(settings)
        if any(e.code == UNPARSABLE[0] for e in linter.entries_for(path)):
            out.findings.append(unparsable(linter.rel(path), f"too large to analyse: more than {MAX_PARSE_BYTES:,} "
                                                             f"bytes (the limit is {MAX_PARSE_CHARS:,} characters); "
                                                             "exclude generated files"))
        merged = RunResult()
        merge(merged, out, settings.root, roots.report_root())
        return merged, None
    if root is None:
        linter = Linter(settings)
        results, other = {path: linter.lint_bytes(path, data)}, {}
        if filename:
            out.notices.append(no_project([path]))
        seen = None
    else:
        linted = lint([path], settings, out, cache=cache, jobs=jobs, project=root.directory, overlay={path: data})
        linter, results, other, seen = linted.linter, linted.results, linted.other, linted.seen
        out.files = 1
        python = next((p for p, r in results.items() if r.path == linter.rel(path)), None)
        if python is None:  # a project file (``redis.conf``, a compose file): what the project phase says of it
            found = [f for f in linted.found if seen is None or concerns(f, seen)]
            out.findings = fixes_shown(sorted(found, key=lambda f: f.sort_key()), settings)
            out.texts[linter.rel(path)] = data.decode("utf-8", "replace")  # the snippets' text
            merged = RunResult()
            merge(merged, out, settings.root, roots.report_root())
            return merged, data if (fix or diff) else None
        path = python
    fixed = _fix_loop(data, path, linter, results, other, seen, out, fix=fix, unsafe=unsafe, diff=diff)
    merged = RunResult()
    merge(merged, out, settings.root, roots.report_root())
    return merged, fixed


def _fix_loop(data: bytes, path: Path, linter: Linter, results, other, seen, out: RunResult, *, fix: bool,
              unsafe: bool, diff: bool) -> bytes | None:
    """The findings of the text (and, fixing, of its fixed form, round by
    round) into ``out``; the fixed bytes when fixing."""
    rel = linter.rel(path)
    try:
        source = decode(data)
    except DecodeError:
        source = None
    current = source.text if source is not None else None
    applied_total = 0
    errors: list[str] = []
    for _ in range(MAX_FIX_ROUNDS + 1):
        result = results[path]
        texts = {rel: current} if current is not None else None
        found = project_findings(results, other, linter, errors, texts)
        findings = result.findings + [f for f in found if seen is None or concerns(f, seen)]
        if not (fix or diff) or source is None:
            break
        fixable = linter.settings.is_fixable  # ``fixable``/``unfixable``/``extend-fixable``, as for a file
        fixes = [f.fix for f in findings if _applicable(f, unsafe, fixable) and (f.fix.path or f.path) == rel]
        if not fixes:
            break
        new, applied, rejected = _apply(current, fixes)
        if rejected and DROPPED not in "".join(out.notices):
            out.notices.append(f"{rel}: {DROPPED}")
        if not applied or new == current:
            break
        current, applied_total = new, applied_total + applied
        results[path] = linter.lint_bytes(path, source.encode(current))
    out.errors.extend(result.errors + errors)
    out.findings = fixes_shown(sorted(findings, key=lambda f: f.sort_key()), linter.settings)
    if current is not None:
        out.texts[rel] = current
    if not (fix or diff):
        return None
    fixed = source.encode(current) if source is not None else data
    if applied_total:
        out.fixed[rel] = applied_total
    if diff and fixed != data:
        from ..run.patch import unified_diff

        out.diffs.append(unified_diff(data, fixed, rel))
    return fixed
