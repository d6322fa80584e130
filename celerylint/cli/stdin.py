"""``celerylint -``: lint the source read from standard input, for editors
(nvim-lint, flycheck, efm).  Findings carry ``--stdin-filename`` (else
``-``), which also decides ``per-file-ignores`` and, with
``--force-exclude``, ``exclude``.  The file is linted alone: project rules
see it and nothing else.  With ``--fix`` the fixed source is what goes to
standard output (the report then goes to standard error), as ruff does;
with ``--diff``, the patch.  Standard input is read up to what a file
within ``guard.MAX_PARSE_CHARS`` can take (``guard.MAX_PARSE_BYTES``): more
is the file's "too large to analyse" finding (``--fix`` then fails: what
was not read cannot be written back)."""

from __future__ import annotations

from pathlib import Path

from ..config.settings import Settings
from ..engine.analysis import UNPARSABLE, unparsable
from ..engine.guard import MAX_PARSE_BYTES, MAX_PARSE_CHARS
from ..run.fixing import DROPPED, MAX_FIX_ROUNDS, _apply, _applicable
from ..run.linter import Linter
from ..run.project import project_findings
from ..run.runner import RunResult
from ..core.source import DecodeError, decode


def run_stdin(data: bytes, filename: str | None, settings: Settings, *, fix: bool = False,
              unsafe: bool = False, diff: bool = False) -> tuple[RunResult, bytes | None]:
    """The run over ``data``, and the fixed bytes (None unless fixing)."""
    from ..run.discovery import _excluded, _pattern_rel

    out = RunResult(files=1)
    path = Path(filename or "-")
    if filename and settings.force_exclude and _excluded(_pattern_rel(path, settings), settings):
        out.files = 0
        return out, data if (fix or diff) else None
    linter = Linter(settings)
    rel = linter.rel(path)
    if len(data) > MAX_PARSE_BYTES:  # the caller read one byte more than a file may be: no further
        if any(e.code == UNPARSABLE[0] for e in linter.entries_for(path)):
            out.findings.append(unparsable(rel, f"too large to analyse: more than {MAX_PARSE_BYTES:,} bytes "
                                                f"(the limit is {MAX_PARSE_CHARS:,} characters); "
                                                "exclude generated files"))
        return out, None
    try:
        source = decode(data)
    except DecodeError:
        source = None
    current = source.text if source is not None else None
    applied_total = 0
    for _ in range(MAX_FIX_ROUNDS + 1):
        body = source.encode(current) if source is not None else data
        result = linter.lint_bytes(path, body)
        found = project_findings({path: result}, {}, linter, out.errors, {rel: current} if current is not None else None)
        findings = result.findings + found
        if not (fix or diff) or source is None:
            break
        fixes = [f.fix for f in findings if _applicable(f, unsafe) and (f.fix.path or f.path) == rel]
        if not fixes:
            break
        new, applied, rejected = _apply(current, fixes)
        if rejected and DROPPED not in "".join(out.notices):
            out.notices.append(f"{rel}: {DROPPED}")
        if not applied or new == current:
            break
        current, applied_total = new, applied_total + applied
    out.errors.extend(result.errors)
    out.findings = sorted(findings, key=lambda f: f.sort_key())
    fixed = None
    if fix or diff:
        fixed = source.encode(current) if source is not None else data
        if applied_total:
            out.fixed[rel] = applied_total
        if diff and fixed != data:
            from ..run.patch import unified_diff

            out.diffs.append(unified_diff(data, fixed, rel))
    return out, fixed
