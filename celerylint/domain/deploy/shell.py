"""Shell scripts: every line (with its backslash continuations) that starts
a worker or beat.  A script that chooses with ``case``/``if`` runs one of
its branches, so its command lines are marked conditional."""

from __future__ import annotations

import re

from .cmdline import Command, parse_text

_BRANCH = re.compile(r"^[ \t]*(?:case|if|elif|else|then)\b", re.M)


def logical_lines(text: str):
    """``(first line number, text)`` with backslash continuations joined."""
    pending, start = "", 0
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        yield start, pending + line
        pending = ""
    if pending:
        yield start, pending


def commands(text: str) -> list[tuple[int, Command, bool]]:
    """``(line, command, conditional)`` of each Celery process the script starts."""
    if "celery" not in text:
        return []
    conditional = _BRANCH.search(text) is not None
    out = []
    for number, line in logical_lines(text):
        if "celery" not in line or line.lstrip().startswith("#"):
            continue
        found = parse_text(line)
        if found is not None:
            out.append((number, found, conditional))
    return out
