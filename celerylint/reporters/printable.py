"""Text from the linted files (string constants, file names, source quoted
in messages), made safe to show: control characters (C0, DEL, C1) and the
bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) are shown
as escapes (``\\x1b``, ``\\u202e``) in the human-readable formats, so a lock
key cannot set the terminal's title, clear its screen or reorder what it
shows.  JSON keeps the characters, written as JSON escapes."""

from __future__ import annotations

import re

_BIDI = "\u202a-\u202e\u2066-\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_CONTROL_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_BIDI}]")
_JSON_RAW = re.compile(f"[\x7f-\x9f{_BIDI}]")  # what json.dumps(ensure_ascii=False) leaves raw
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` with its control characters escaped; with ``newlines``,
    ``\\n`` is kept (tracebacks, multi-line notices)."""
    return (_CONTROL_BUT_NEWLINE if newlines else _CONTROL).sub(_escape, text)


def json_escaped(text: str) -> str:
    """JSON text with DEL, C1 and the bidi controls written as ``\\uXXXX``
    (``json.dumps`` escapes C0 itself).  Outside strings JSON holds none of
    them, so the document's meaning is unchanged."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)

