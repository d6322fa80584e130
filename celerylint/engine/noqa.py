"""``# noqa`` comments: a bare ``# noqa`` silences every rule on its line,
``# noqa: CL203, CL206`` only those codes (prefixes allowed, case-insensitive).

A finding is silenced by a comment on the line where it starts or on the line
where it ends (so a call spread over several lines can carry the comment
after its closing parenthesis).

A comment line ``# celerylint: noqa`` silences every finding in its file,
``# celerylint: noqa: CL203, CL2`` those codes (ruff's ``# ruff: noqa``):
the file is still read, so its settings and tasks still count for the
rest of the project, unlike ``# celerylint: skip-file``."""

from __future__ import annotations

import re

from ..core.source import LineIndex

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?", re.IGNORECASE)
ALL = frozenset({""})  # matches every code
# the rest of the line is split in Python: no backtracking over it here
FILE_NOQA = re.compile(rb"^[ \t]*#[ \t]*celerylint:[ \t]*noqa(?P<rest>[^\r\n]*)", re.MULTILINE)
_SEPARATORS = re.compile(r"[\s,]+")


def parse_noqa(line: str) -> frozenset[str] | None:
    """The codes a line's noqa comment names, ALL for a bare one, None if none."""
    if "#" not in line:
        return None
    match = NOQA.search(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return ALL
    return frozenset(c.upper() for c in re.split(r"[\s,]+", codes) if c)


def is_suppressed(index: LineIndex, code: str, line: int, end_line: int) -> bool:
    for number in {line, end_line}:
        if number > len(index.starts):
            continue
        codes = parse_noqa(index.line_text(number))
        if codes is not None and (codes is ALL or any(code.startswith(c) for c in codes)):
            return True
    return False


def file_noqa(data: bytes) -> frozenset[str] | None:
    """The codes the file-level ``# celerylint: noqa`` comments of a file
    name, ALL for a bare one, None if it has none."""
    if b"celerylint" not in data:
        return None
    codes: set[str] = set()
    for match in FILE_NOQA.finditer(data):
        rest = match.group("rest").decode("utf-8", "replace").strip()
        if not rest:
            return ALL
        if rest.startswith(":"):
            codes.update(c.upper() for c in _SEPARATORS.split(rest[1:]) if c)
    return frozenset(codes) or None


def silences(codes: frozenset[str] | None, code: str) -> bool:
    """Do ``codes`` (``parse_noqa``'s or ``file_noqa``'s) silence ``code``?"""
    return codes is not None and (codes is ALL or any(code.startswith(c) for c in codes))
