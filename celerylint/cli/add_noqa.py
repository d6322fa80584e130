"""``--add-noqa``: a ``# noqa: CODE`` comment for every finding, so that a
project adopting celerylint starts clean and sees only new findings.

The comment goes on a line the noqa parser reads (noqa.py: the line where
the finding starts, else where it ends) and whose end is not inside a
string that spans lines nor continued by a backslash, where a comment would
change the code.  A line that already has a ``# noqa: ...`` gets the new
codes appended to it; other comments on the line are kept.  Findings in
files that are not Python (compose files, ``redis.conf``) and CL001 (the
file cannot be parsed) are left alone, with a notice.
"""

from __future__ import annotations

import io
import tokenize
from collections import defaultdict
from pathlib import Path

from ..core.model import Edit, Finding
from ..engine.noqa import NOQA
from ..core.source import DecodeError, LineIndex, apply_edits, decode, read_source


def unsafe_line_ends(text: str) -> set[int]:
    """Lines whose end is inside a token that spans lines (a triple-quoted
    string, an f-string) or continued by a backslash."""
    lines: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.start[0] != token.end[0] and token.type != tokenize.NL:
                lines.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return set(range(1, text.count("\n") + 2))  # cannot tell: only lines proven safe below
    for number, line in enumerate(text.splitlines(), 1):
        if line.rstrip().endswith("\\"):
            lines.add(number)
    return lines


def comment_edit(line_text: str, line: int, codes: list[str], reason: str | None = None) -> Edit | None:
    """The edit adding ``codes`` to the noqa comment of ``line`` (or a new
    one at its end, followed by `` -- reason`` when one is given: ruff
    writes the reason right after the codes, where celerylint would read
    its first word as one more code); None when it names them all already."""
    body = line_text.rstrip("\r\n")
    match = NOQA.search(body) if "#" in body else None
    if match is not None:
        if not match.group("codes"):
            return None  # a bare noqa silences everything already
        have = {c.upper() for c in match.group("codes").replace(",", " ").split()}
        new = [c for c in codes if c not in have]
        if not new:
            return None
        end = match.end("codes")
        return Edit(line, end, line, end, ", " + ", ".join(new))
    stripped = body.rstrip()
    why = f" -- {reason}" if reason else ""
    return Edit(line, len(stripped), line, len(body), f"  # noqa: {', '.join(codes)}{why}")


def add_noqa(findings: list[Finding], root: Path, reason: str | None = None) -> tuple[int, list[str]]:
    """Write the comments; returns how many lines changed and the notices."""
    from ..run.writer import WriteError, write_atomic

    by_file: dict[str, list[Finding]] = defaultdict(list)
    notices: list[str] = []
    for finding in findings:
        if finding.code == "CL001":
            continue
        if not finding.path.endswith((".py", ".pyi")):
            notices.append(f"{finding.path}:{finding.line}: {finding.code}: no noqa added: not a Python file")
            continue
        by_file[finding.path].append(finding)
    changed = 0
    for rel, found in sorted(by_file.items()):
        path = Path(rel) if Path(rel).is_absolute() else root / rel
        try:
            data = read_source(path)
            source = decode(data)
        except (OSError, DecodeError) as exc:
            notices.append(f"{rel}: no noqa added: {getattr(exc, 'reason', None) or getattr(exc, 'strerror', None) or exc}")
            continue
        text = source.text
        index = LineIndex(text)
        unsafe = unsafe_line_ends(text)
        wanted: dict[int, list[str]] = defaultdict(list)
        for finding in found:
            line = next((n for n in (finding.line, finding.end_line) if n not in unsafe), None)
            if line is None:
                notices.append(f"{rel}:{finding.line}: {finding.code}: no noqa added: the line ends inside a string")
                continue
            if finding.code not in wanted[line]:
                wanted[line].append(finding.code)
        edits = [e for line, codes in sorted(wanted.items())
                 if (e := comment_edit(index.line_text(line), line, sorted(codes), reason)) is not None]
        if not edits:
            continue
        new = source.encode(apply_edits(text, edits))
        try:
            write_atomic(path, new, data)
        except WriteError as exc:
            notices.append(f"{rel}: no noqa added: {exc}")
            continue
        changed += len(edits)
    return changed, notices
