"""Form feeds in indentation, which CPython accepts and libcst does not.

CPython's tokenizer resets the indentation count at a form feed (``^L``, a
page break in Emacs style files), so ``"\\f    return x"`` is indented by four
columns.  libcst keeps indentation as text: it rejects a block whose lines
do not all start with the same form feeds ("no matching outer block for
dedent") and drops a form feed before a statement, which puts everything
after it one column off (a fix would land one character early).

libcst is therefore given the text without those form feeds (and without
the blanks before the last of them, which CPython ignores as well), and the
columns of every position on such a line are moved back by what was taken
away: the characters removed all precede the line's first token, so the
mapping is exact.  The removal is used only when CPython reads the same
program from both texts; a form feed at the start of a line inside a string
is content and is kept.  A form feed on a line of its own or before a
comment troubles neither and is left alone.
"""

from __future__ import annotations

import re

from libcst.metadata import CodePosition, CodeRange

# At a line start (after \n, \r or at the top): blanks up to the last form
# feed, when a statement follows on that line.
_PREFIX = re.compile(r"(?<![^\r\n])[ \t\f]*\f(?=[ \t]*[^\s#])")
_NEWLINE = re.compile(r"\r\n|\r|\n")
MAX_CHECKED = 200  # form feeds checked one by one when some are inside strings


def without_indent_form_feeds(text: str) -> tuple[str, dict[int, int]] | None:
    """``(text for libcst, {line: characters removed at its start})``, or
    None when no line needs it (or CPython cannot tell that the program
    stays the same: libcst then judges the text as it is)."""
    if "\f" not in text:
        return None
    matches = list(_PREFIX.finditer(text))
    if not matches:
        return None
    program = _program(text)
    if program is None:  # not valid Python: libcst reports the error
        return None
    stripped = _strip(text, matches)
    if _program(stripped) != program:  # some are in strings: keep those
        if len(matches) > MAX_CHECKED:
            return None
        matches = [m for m in matches if _program(_strip(text, [m])) == program]
        stripped = _strip(text, matches)
        if not matches or _program(stripped) != program:
            return None
    starts = [0, *(m.end() for m in _NEWLINE.finditer(text))]
    shifts: dict[int, int] = {}
    line = 0
    for match in matches:
        while line + 1 < len(starts) and starts[line + 1] <= match.start():
            line += 1
        shifts[line + 1] = match.end() - match.start()
    return stripped, shifts


def _strip(text: str, matches: list[re.Match]) -> str:
    out, pos = [], 0
    for match in matches:
        out.append(text[pos:match.start()])
        pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def _program(text: str) -> str | None:
    import ast

    from .guard import compile_quietly

    try:
        return ast.dump(compile_quietly(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class ShiftedPositions:
    """Positions of the text libcst parsed, as positions in the file."""

    def __init__(self, positions, shifts: dict[int, int]) -> None:
        self.positions = positions
        self.shifts = shifts

    def __getitem__(self, node) -> CodeRange:
        r = self.positions[node]
        start, end = self.shifts.get(r.start.line, 0), self.shifts.get(r.end.line, 0)
        if not start and not end:
            return r
        return CodeRange(CodePosition(r.start.line, r.start.column + start),
                         CodePosition(r.end.line, r.end.column + end))

    def __contains__(self, node) -> bool:
        return node in self.positions

    def get(self, node, default=None):
        return self[node] if node in self.positions else default
