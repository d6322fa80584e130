"""The one use of a private part of Python's ``re`` package.

``needles.required_literal`` needs the parsed form of a regular expression
(to find a literal every match contains); only ``re._parser``
(``sre_parse`` before Python 3.11) gives it.  It relies on: ``parse()``
returning a ``SubPattern`` that iterates as ``(opcode, value)`` pairs, the
``LITERAL`` opcode with a code point as its value, ``state.flags``, and
``SubPattern(state, items).getwidth()`` returning ``(min, max)``.
``tests/test_internals.py`` checks each of these, so a change in a Python
release fails there rather than making prefilters silently weaker.
"""

from __future__ import annotations

import re
from collections.abc import Callable

try:
    from re import _parser as _sre
except ImportError:  # pragma: no cover - Python < 3.11
    import sre_parse as _sre


def regex_top_level(pattern: bytes) -> tuple[list[tuple[bool, int]], Callable[[int], tuple[int, int]]] | None:
    """The top-level items of ``pattern`` as ``(is_literal, value)`` and a
    function giving the (min, max) width of the first ``n`` items; None when
    the pattern's flags make literals inexact (IGNORECASE, VERBOSE)."""
    parsed = _sre.parse(pattern)
    if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    items = list(parsed)

    def width_of_prefix(n: int) -> tuple[int, int]:
        return _sre.SubPattern(parsed.state, items[:n]).getwidth()

    return [(op is _sre.LITERAL, value) for op, value in items], width_of_prefix
