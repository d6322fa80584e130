"""What a checker requires of a file's bytes before the file is parsed for it.

A requirement is a tuple of alternatives; each alternative is a byte string
(a substring), a ``Regex``, an ``All`` (every part must occur) or a nested
tuple (any part).  This module declares these atoms once, for the rule API
(``celerylint.rule`` re-exports them) and for the catalog, and does not
import libcst: a run decides which files to parse before libcst is loaded.
"""

from __future__ import annotations

import re
from functools import cache



class Regex(bytes):
    """A regular expression (bytes), with a literal every match contains and
    the fixed distance from a match's start to it (see ``required_literal``).
    The catalog stores both, so a run compiles only the expressions whose
    literal occurs in some file."""

    def __new__(cls, pattern: bytes, literal: bytes | None = None, offset: int | None = None) -> Regex:
        self = super().__new__(cls, pattern)
        if literal is None:
            literal, offset = required_literal(pattern)
        self.literal, self.offset = literal, offset
        return self

    def __repr__(self) -> str:
        return f"Regex({bytes(self)!r}, {self.literal!r}, {self.offset!r})"


class All(tuple):
    """Parts that must all occur; a part is a byte string, a ``Regex``, or a
    tuple of alternatives.  Each part is a fast substring search, where a
    regular expression with lookaheads would step through the whole file
    character by character."""

    def __repr__(self) -> str:
        return f"All({tuple(self)!r})"


def normalized(needle):
    """A declared requirement as catalog data: tuples, ``All``, ``Regex`` and bytes."""
    if isinstance(needle, All):
        return All(normalized(part) for part in needle)
    if isinstance(needle, (tuple, list)):
        return tuple(normalized(part) for part in needle)
    if isinstance(needle, Regex):
        return needle
    if isinstance(needle, bytes):
        return bytes(needle)
    raise TypeError(f"a requirement is bytes, Regex, All or a tuple of them, not {needle!r}")


def matches(needle, data: bytes) -> bool:
    """Whether ``data`` holds a requirement (bytes, ``Regex``, ``All`` or a
    tuple of alternatives), as a prefilter would decide."""
    if isinstance(needle, Regex):
        return search(needle, data)
    if isinstance(needle, All):
        return all(matches(part, data) for part in needle)
    if isinstance(needle, tuple):
        return any(matches(part, data) for part in needle)
    return needle in data


def search(needle: Regex, data: bytes) -> bool:
    """Does the regular expression occur in ``data``?  Searched only where its literal is."""
    literal, offset, pattern = _compiled(needle)
    if literal not in data:
        return False
    if offset is None or offset < 0:  # offset -1: the pattern starts with its literal,
        return pattern.search(data) is not None  # which the regex engine scans for in C
    # Every match starts ``offset`` bytes before an occurrence of ``literal``:
    # try only there (a search for ``\\beta\\s*=`` scans the whole file slowly).
    find, match = data.find, pattern.match
    pos = find(literal)
    while pos != -1:
        if pos >= offset and match(data, pos - offset):
            return True
        pos = find(literal, pos + 1)
    return False


@cache
def _compiled(pattern: bytes) -> tuple[bytes, int | None, re.Pattern[bytes]]:
    if isinstance(pattern, Regex):
        literal, offset = pattern.literal, pattern.offset
    else:
        literal, offset = required_literal(pattern)
    return literal, offset, re.compile(pattern)


def required_literal(pattern: bytes) -> tuple[bytes, int | None]:
    """The longest run of literal characters in the top-level sequence of
    ``pattern`` and the fixed width of what precedes it (None when not
    fixed; -1 when the pattern starts with it), or (b"", None)."""
    from .re_internals import regex_top_level

    try:
        parsed = regex_top_level(pattern)
    except Exception:  # an unexpected parser shape: no shortcut
        return b"", None
    if parsed is None:
        return b"", None
    items, width_of_prefix = parsed
    best, best_start, run, start = b"", 0, b"", 0
    for i, (is_literal, value) in enumerate(items):
        if is_literal:
            if not run:
                start = i
            run += bytes([value])
            if len(run) > len(best):
                best, best_start = run, start
        else:
            run = b""
    if not best:
        return b"", None
    if best_start == 0:
        return best, -1
    low, high = width_of_prefix(best_start)
    return best, (low if low == high else None)
