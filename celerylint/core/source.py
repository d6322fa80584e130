"""Reading source files: decoding as Python does, line tables, text edits.

Python source is decoded the way the interpreter decodes it (PEP 263 cookie,
UTF-8 BOM, UTF-8 default).  The decoded text keeps its line endings; edits
are applied to the text and the result is encoded back with the same
encoding and BOM, so a fix changes nothing but the edited characters.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass

from .model import Edit

_NEWLINE = re.compile(r"\r\n|\r|\n")


class NotAFile(OSError):
    """The path is a directory, a pipe, a device or a socket: never read."""


def _open_regular(path: os.PathLike | str) -> tuple[int, os.stat_result]:
    """A descriptor and the status of a regular file, opened without waiting
    for a writer; ``NotAFile`` (the descriptor closed) for anything else."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise NotAFile(f"is {kind}")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_source(path: os.PathLike | str) -> bytes:
    """The bytes of a regular file.  Pipes, devices and sockets are refused
    before a read could block or never end (a FIFO named ``x.py``, a symlink
    to ``/dev/zero``); the open itself must not wait for a writer."""
    fd, st = _open_regular(path)
    try:
        chunks, size = [], max(st.st_size, 1 << 16)
        while chunk := os.read(fd, size):
            chunks.append(chunk)
            if len(chunk) < size:  # a short read of a regular file is its end: no read just to see it
                break
        return b"".join(chunks)
    finally:
        os.close(fd)


class TooLarge(OSError):
    """A regular file larger than the cap of what it is read for."""


MAX_PARSE_CHARS = 1_000_000  # twice the largest source file of large public Django projects (engine/guard.py)
# The most bytes a file within MAX_PARSE_CHARS can take (UTF-8: at most 4 a
# character, and a BOM): what a read of standard input stops at.
MAX_PARSE_BYTES = 4 * MAX_PARSE_CHARS + 3
OTHER_FILE_MAX_BYTES = 1 << 20  # redis.conf, compose files, Procfiles...: 1 MiB


def read_capped(path: os.PathLike | str, limit: int) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, for everything
    that is not a Python file being linted (configuration files the project
    phase reads, cache entries).  As in ``read_source``, pipes, devices and
    sockets raise ``NotAFile`` without a blocking open or an endless read;
    a file larger than ``limit`` (by its size, or by what a read finds when
    it grows meanwhile) raises ``TooLarge``."""
    fd, st = _open_regular(path)
    try:
        if st.st_size > limit:
            raise TooLarge(f"is larger than {_size(limit)}")
        chunks, left = [], limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, max(st.st_size, 1 << 16)))):
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise TooLarge(f"is larger than {_size(limit)}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 and not limit % (1 << 20) else f"{limit} bytes"


def digest(data: bytes) -> str:
    import hashlib  # only fixing needs it; start-up stays light
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class DecodeError(Exception):
    """The bytes are not Python source text; ``line`` is 1-based."""

    def __init__(self, reason: str, line: int = 1, col: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line
        self.col = col


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # codec name to encode back with
    bom: bool

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data


def decode(data: bytes) -> SourceText:
    """Decode Python source bytes; raise DecodeError with a position."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE)):
        raise DecodeError("UTF-16/UTF-32 byte order mark: Python source must be UTF-8 or declare an ASCII-compatible encoding")
    if b"\x00" in data:
        line = data.count(b"\n", 0, data.index(b"\x00")) + 1
        raise DecodeError("source contains a NUL byte", line)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise DecodeError(str(exc), getattr(exc, "lineno", None) or 1) from None
    bom = encoding == "utf-8-sig"
    body = data[len(codecs.BOM_UTF8):] if bom else data
    codec = "utf-8" if bom else encoding
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        col = exc.start - (body.rfind(b"\n", 0, exc.start) + 1)
        bad = f"byte 0x{body[exc.start]:02x}" if exc.start < len(body) else "the end of the file"
        raise DecodeError(f"cannot decode {bad} as {codec}", line, col) from None
    except (UnicodeError, LookupError, ValueError) as exc:  # codecs that are not text encodings
        raise DecodeError(f"unsupported source encoding {codec}: {exc}") from None
    if codec != "utf-8" and not _round_trips(text, body, codec):
        raise DecodeError(f"unsupported source encoding {codec}: not ASCII-compatible, or it does not "
                          "read back to the same bytes")
    return SourceText(text=text, encoding=codec, bom=bom)


def _round_trips(text: str, body: bytes, codec: str) -> bool:
    """Fixes encode the text back: only codecs that give the same bytes, and
    that keep ASCII as ASCII (the cookie line itself), are usable."""
    try:
        return "# -*- x\n".encode(codec) == b"# -*- x\n" and text.encode(codec) == body
    except (UnicodeError, LookupError, ValueError):
        return False


class LineIndex:
    """Maps (line, column) positions to offsets of a text and back."""

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        starts.extend(m.end() for m in _NEWLINE.finditer(text))
        self.starts = starts

    def offset(self, line: int, col: int) -> int:
        if line > len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + col, len(self.text))

    def line_text(self, line: int) -> str:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def utf16_col(self, line: int, col: int) -> int:
        """Convert a code-point column to UTF-16 code units (SARIF, editors)."""
        if line > len(self.starts):
            return col
        prefix = self.line_text(line)[:col]
        return col + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply non-overlapping edits (positions in the unmodified text)."""
    index = LineIndex(text)
    spans = sorted(
        (index.offset(e.line, e.col), index.offset(e.end_line, e.end_col), e.content) for e in edits
    )
    out, pos = [], 0
    for start, end, content in spans:
        if start < pos:
            raise ValueError("overlapping edits")
        out.append(text[pos:start])
        out.append(content)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def overlaps(a: list[Edit], b: list[Edit]) -> bool:
    """True when any edit of ``a`` touches the range of an edit of ``b``.

    Two insertions at the same point count as overlapping: their order would
    be arbitrary."""
    for x in a:
        for y in b:
            x0, x1 = (x.line, x.col), (x.end_line, x.end_col)
            y0, y1 = (y.line, y.col), (y.end_line, y.end_col)
            if x0 < y1 and y0 < x1:
                return True
            if x0 == y0 or (x0 == x1 and y0 <= x0 <= y1) or (y0 == y1 and x0 <= y0 <= x1):
                return True
    return False


_NEWLINES = re.compile(r"\r\n|\r|\n")


def newline_at(text: str, index: LineIndex, line: int) -> str:
    """The line ending of ``line`` (else of the line before it, else the
    file's first, else ``\\n``): what lines inserted there must end with."""
    for n in (line, line - 1):
        if 1 <= n < len(index.starts):
            start, end = index.starts[n - 1], index.starts[n]
            return text[start:end][len(text[start:end].rstrip("\r\n")):] or "\n"
    found = _NEWLINES.search(text)
    return found.group() if found else "\n"
