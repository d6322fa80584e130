"""``full`` (the default, as in ruff) and ``grouped``.

``full``: each finding's line as ``concise`` prints it, then the source
lines with a caret range under the finding's span, the fix as a small diff
(or the hint), and a blank line.  ``grouped``: the file name once, then its
findings' ``line:col CODE [name] message`` indented below it."""

from __future__ import annotations

import re
import unicodedata

from ..core.source import apply_edits
from .color import Style
from .printable import printable
from .secrets import password_spans
from .sources import Sources
from .text import fit, fix_words, footer, location, title

CONTEXT = 2  # lines shown before and after the span
MAX_SPAN_LINES = 8  # a longer span shows its first and last lines
MAX_DIFF_LINES = 12  # per side of one hunk
TAB = "    "
MAX_CONTEXT_WIDTH = 200  # a longer context line is cut (the span's own lines never are: the carets need them)
_NEWLINES = re.compile(r"\r\n|\r|\n")


def render(result, settings, *, style: Style, width: int | None = None, unsafe: bool = False,
           summary_line: str | None = None, show_fixes: bool = False) -> str:
    sources = Sources(settings.root, getattr(result, "texts", None))
    out: list[str] = []
    for f in result.findings:
        styled, plain = title(f, style)
        out += fit(f"{style(location(f), bold=True)} {styled}", f"{location(f)} {plain}",
                   printable(f.message), width, wrap=True)
        source = sources.get(f.path)
        if source is not None:
            out += snippet(f, source, style)
        out += remedy(f, sources, style, width)
        out.append("")
    out += footer(result, unsafe, summary_line, show_fixes)
    return "\n".join(out) + "\n"


def render_grouped(result, settings, *, style: Style, width: int | None = None, unsafe: bool = False,
                   summary_line: str | None = None, show_fixes: bool = False) -> str:
    out: list[str] = []
    current = None
    for f in result.findings:
        if f.path != current:
            if current is not None:
                out.append("")
            current = f.path
            out.append(style(f"{printable(f.path)}:", bold=True, underline=True))
        styled, plain = title(f, style)
        where = f"{f.line}:{f.col + 1}"
        out += fit(f"  {style(where, bold=True)} {styled}", f"  {where} {plain}", printable(f.message), width, wrap=True)
        if f.fix is not None:
            out.append(style(f"      {fix_words(f.fix)}: {printable(f.fix.description)}", fg="cyan"))
        elif f.hint:
            out.append(style(f"      hint: {printable(f.hint)}", dim=True))
    if out:
        out.append("")
    out += footer(result, unsafe, summary_line, show_fixes)
    return "\n".join(out) + "\n"


def shown(text: str) -> tuple[str, list[int]]:
    """The line as printed (tabs as four spaces, control characters
    escaped, URL passwords as ``****``) and the display column of each
    character (wide characters take two, combining ones none), plus one for
    the end."""
    secret: dict[int, str] = {}
    for start, end in password_spans(text):
        secret.update(dict.fromkeys(range(start + 1, end), ""))
        secret[start] = "****"
    parts, cols, at = [], [], 0
    for i, ch in enumerate(text):
        cols.append(at)
        piece = secret.get(i)
        if piece is not None:
            parts.append(piece)
            at += len(piece)
            continue
        piece = TAB if ch == "\t" else printable(ch)
        parts.append(piece)
        if piece != ch or len(piece) > 1:
            at += len(piece)
        elif unicodedata.combining(ch):
            pass
        else:
            at += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    cols.append(at)
    return "".join(parts), cols


def snippet(f, source, style: Style) -> list[str]:
    last_line = max(source.lines, 1)
    line, end_line, end_col = f.line, f.end_line, f.end_col
    if end_line > line and end_col == 0:  # a span ending at a line's start ends on the line before
        end_line -= 1
        end_col = len(source.line(end_line))
    if line > last_line:
        return []
    end_line = min(end_line, last_line)
    spanned = list(range(line, end_line + 1))
    if len(spanned) > MAX_SPAN_LINES:
        half = MAX_SPAN_LINES // 2
        spanned = spanned[:half] + [0] + spanned[-half:]  # 0: the elided lines
    before = [n for n in range(max(1, line - CONTEXT), line)]
    after = [n for n in range(end_line + 1, min(last_line, end_line + CONTEXT) + 1)]
    while before and not source.line(before[0]).strip():
        before.pop(0)
    while after and not source.line(after[-1]).strip():
        after.pop()
    gutter = len(str(end_line + len(after)))
    bar = style(" " * gutter + " |", fg="blue", bold=True)
    out = [bar]

    def numbered(n: int, text: str) -> str:
        return style(f"{n:>{gutter}} |", fg="blue", bold=True) + (" " + text if text else "")

    def context(n: int) -> str:
        text, cols = shown(source.line(n))
        if cols[-1] <= MAX_CONTEXT_WIDTH:
            return numbered(n, text)
        cut = next(i for i, c in enumerate(cols) if c >= MAX_CONTEXT_WIDTH)
        return numbered(n, shown(source.line(n)[:cut])[0] + "…")

    for n in before:
        out.append(context(n))
    for n in spanned:
        if n == 0:
            out.append(style(f"{'...':>{gutter}}", fg="blue", bold=True))
            continue
        text, cols = shown(source.line(n))
        out.append(numbered(n, text))
        raw = source.line(n)
        start = f.col if n == line else len(raw) - len(raw.lstrip())
        stop = end_col if n == end_line else len(raw)
        start, stop = min(start, len(raw)), min(max(stop, start), len(raw))
        carets = "^" * max(cols[stop] - cols[start], 1)
        label = f" {f.code}" if n == end_line else ""
        out.append(bar + " " + " " * cols[start] + style(carets + label, fg="red" if f.severity == "error" else "yellow",
                                                      bold=True))
    for n in after:
        out.append(context(n))
    out.append(bar)
    return out


def _wrapped(text: str, width: int | None) -> list[str]:
    if width is None or len(text) <= width:
        return [text]
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent="      ", break_long_words=False,
                         break_on_hyphens=False) or [text]


def remedy(f, sources: Sources, style: Style, width: int | None) -> list[str]:
    if f.fix is None:
        return [style(line, dim=True) for line in _wrapped(f"  = hint: {printable(f.hint)}", width)] if f.hint else []
    target = f.fix.path or f.path
    where = f" in {printable(target)}" if target != f.path else ""
    out = [style(line, fg="cyan")
           for line in _wrapped(f"  = {fix_words(f.fix)}{where}: {printable(f.fix.description)}", width)]
    source = sources.get(target)
    if source is not None and f.fix.edits:
        out += diff(source, list(f.fix.edits), style)
    return out


def diff(source, edits, style: Style) -> list[str]:
    """The lines the edits change, before (``-``) and after (``+``), one
    hunk per group of edits on neighbouring lines."""
    groups: list[list] = []
    for e in sorted(edits):
        if groups and e.line <= max(x.end_line for x in groups[-1]) + 1:
            groups[-1].append(e)
        else:
            groups.append([e])
    text, index = source.text, source.index
    hunks, shift = [], 0
    for group in groups:
        first, last = group[0].line, max(e.end_line for e in group)
        start = index.starts[first - 1] if first <= len(index.starts) else len(text)
        end = index.offset(last, len(source.line(last))) if last <= len(index.starts) else len(text)
        try:
            new = apply_edits(text, group)
        except ValueError:
            return []
        old_lines = _NEWLINES.split(text[start:end])
        new_lines = _NEWLINES.split(new[start:end + len(new) - len(text)])
        old_n, new_n = first, first + shift
        shift += len(new_lines) - len(old_lines)
        while old_lines and new_lines and old_lines[0] == new_lines[0]:
            old_lines.pop(0), new_lines.pop(0)
            old_n, new_n = old_n + 1, new_n + 1
        while old_lines and new_lines and old_lines[-1] == new_lines[-1]:
            old_lines.pop(), new_lines.pop()
        hunks.append((old_n, old_lines, new_n, new_lines))
    numbers = [n + len(lines) for o, ol, nw, nl in hunks for n, lines in ((o, ol), (nw, nl))]
    gutter = len(str(max(numbers, default=1)))
    out = []
    for old_n, old_lines, new_n, new_lines in hunks:
        out += _side(old_n, old_lines, "-", "red", gutter, style)
        out += _side(new_n, new_lines, "+", "green", gutter, style)
    return out


def _side(first: int, lines: list[str], sign: str, color: str, gutter: int, style: Style) -> list[str]:
    out = [style(f"  {first + i:>{gutter}} {sign} {shown(line)[0]}".rstrip(), fg=color)
           for i, line in enumerate(lines[:MAX_DIFF_LINES])]
    if len(lines) > MAX_DIFF_LINES:
        out.append(style(f"  {'':>{gutter}} {sign} … {len(lines) - MAX_DIFF_LINES} more lines", fg=color))
    return out
