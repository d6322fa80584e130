"""A rule's Markdown documentation as plain text (SARIF ``help.text``,
which viewers show as it is): headings without ``#``, code blocks indented
by four spaces without their fences, inline code without backticks, links
as ``text (url)``, no emphasis markers.  Lists stay as they are."""

from __future__ import annotations

import re

_TICKS = re.compile(r"`+")
# Link text and target stop at a bracket that opens another: one pass over ``[[[...``.
_LINK = re.compile(r"\[([^\[\]]+)\]\(([^()\s]+)\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")


def _prose(text: str) -> str:
    text = _STRONG.sub(lambda m: m.group(2), text)
    return _EMPHASIS.sub(lambda m: m.group(1), text)


def _line(line: str) -> str:
    line = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", line)
    out, pos = [], 0
    for start, end, ticks, code in _code_spans(line):
        out.append(_prose(line[pos:start]))
        out.append(code.strip() if ticks > 1 else code)
        pos = end
    out.append(_prose(line[pos:]))
    return "".join(out)


def _code_spans(text: str):
    """(start, end, backticks, code) of each inline code span (it may span
    a line break): a run of backticks up to the next run of the same length,
    found for every run at once, from the end (linear in the text)."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text)]
    closer: list[int | None] = [None] * len(runs)
    following: dict[int, int] = {}  # run length -> the next run of that length
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        closer[i] = following.get(length)
        following[length] = i
    i = 0
    while i < len(runs):
        j = closer[i]
        if j is None:  # never closed: literal backticks
            i += 1
            continue
        yield runs[i][0], runs[j][1], runs[i][1] - runs[i][0], text[runs[i][1]:runs[j][0]]
        i = j + 1


def markdown_to_text(markdown: str) -> str:
    out: list[str] = []
    prose: list[str] = []  # consecutive lines of text, converted together

    def flush() -> None:
        if prose:
            out.append(_line("\n".join(prose)))
            prose.clear()

    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            flush()
            fenced = not fenced
        elif fenced:
            out.append(("    " + line).rstrip())
        elif line.startswith("#"):
            flush()
            out.append(_line(line.lstrip("#").strip()))
        else:
            prose.append(line)
    flush()
    return "\n".join(out).strip() + "\n"
