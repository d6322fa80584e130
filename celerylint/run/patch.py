"""Unified diffs of a file's bytes, as ``git apply`` and ``patch`` read them.

Lines are split on ``b"\\n"`` only, as git splits them: a form feed, a
U+2028 or a lone ``\\r`` (CR-only line endings) is part of a line, a CRLF
line keeps its ``\\r``, and the text stays in the file's own encoding.  A last
line without a newline is followed by ``\\ No newline at end of file``, so
that every diff ends with a newline and diffs of several files concatenate
into one patch.
"""

from __future__ import annotations

NO_NEWLINE = b"\\ No newline at end of file\n"


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    last = lines.pop()
    out = [line + b"\n" for line in lines]
    if last:
        out.append(last)
    return out


def _range(start: int, length: int) -> bytes:
    """``start,length`` of a hunk header, 1-based; an empty range names the
    line before it (``0,0`` at the top of the file)."""
    if length == 1:
        return b"%d" % (start + 1)
    return b"%d,%d" % (start + 1 if length else start, length)


def _quote(name: str) -> bytes:
    """A path for a ``---``/``+++`` line, C-quoted as git quotes it when it
    holds a byte git would not print raw (controls, quotes, backslashes,
    non-ASCII).  A name that is not valid UTF-8 arrives with surrogate
    escapes and is written as its original bytes."""
    raw = name.encode("utf-8", "surrogateescape")
    if all(0x20 <= b < 0x7F and b not in b'"\\' for b in raw) and not raw.endswith(b" "):
        return raw
    escapes = {0x07: b"\\a", 0x08: b"\\b", 0x09: b"\\t", 0x0A: b"\\n", 0x0B: b"\\v", 0x0C: b"\\f",
               0x0D: b"\\r", 0x22: b'\\"', 0x5C: b"\\\\"}
    out = bytearray(b'"')
    for b in raw:
        if b in escapes:
            out += escapes[b]
        elif 0x20 <= b < 0x7F:
            out.append(b)
        else:
            out += b"\\%03o" % b
    out += b'"'
    return bytes(out)


def unified_diff(old: bytes, new: bytes, path: str, context: int = 3) -> bytes:
    """The unified diff turning ``old`` into ``new`` for the file at ``path``
    (``a/path`` and ``b/path``, applied with ``-p1``); empty when they are equal."""
    if old == new:
        return b""
    from difflib import SequenceMatcher

    a, b = _lines(old), _lines(new)
    name = _quote(path)
    out = [b"--- " + (b'"a/' + name[1:] if name[:1] == b'"' else b"a/" + name) + b"\n",
           b"+++ " + (b'"b/' + name[1:] if name[:1] == b'"' else b"b/" + name) + b"\n"]

    def emit(prefix: bytes, line: bytes) -> None:
        out.append(prefix + line)
        if not line.endswith(b"\n"):
            out.append(b"\n" + NO_NEWLINE)

    for group in SequenceMatcher(None, a, b).get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        out.append(b"@@ -%s +%s @@\n" % (_range(first[1], last[2] - first[1]), _range(first[3], last[4] - first[3])))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    emit(b" ", line)
                continue
            for line in a[i1:i2]:
                emit(b"-", line)
            for line in b[j1:j2]:
                emit(b"+", line)
    return b"".join(out)
