"""``# noqa`` comments: a bare ``# noqa`` silences every rule on its line,
``# noqa: CL203, CL206`` only those codes (prefixes allowed, case-insensitive).

A finding is silenced by a comment on the line where it starts or on the line
where it ends (so a call spread over several lines can carry the comment
after its closing parenthesis)."""

from __future__ import annotations

import re

from ..core.source import LineIndex

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?", re.IGNORECASE)
ALL = frozenset({""})  # matches every code


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
