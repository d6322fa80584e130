"""A rule's Markdown documentation as plain text (SARIF ``help.text``,
which viewers show as it is): headings without ``#``, code blocks indented
by four spaces without their fences, inline code without backticks, links
as ``text (url)``, no emphasis markers.  Lists stay as they are."""

from __future__ import annotations

import re

_INLINE_CODE = re.compile(r"(`+)([\s\S]+?)\1")  # may span a line break
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS = re.compile(r"(?<![\w*])\*(?=\S)([^*]+?)(?<=\S)\*(?![\w*])")


def _prose(text: str) -> str:
    text = _STRONG.sub(lambda m: m.group(2), text)
    return _EMPHASIS.sub(lambda m: m.group(1), text)


def _line(line: str) -> str:
    line = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", line)
    out, pos = [], 0
    for match in _INLINE_CODE.finditer(line):
        out.append(_prose(line[pos:match.start()]))
        out.append(match.group(2).strip() if match.group(1) != "`" else match.group(2))
        pos = match.end()
    out.append(_prose(line[pos:]))
    return "".join(out)


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
