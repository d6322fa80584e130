"""CL002 (unused-noqa), computed by the run: a ``# noqa`` code of celerylint
that silenced nothing.

What each comment silenced is known from the run itself: the per-file
phase records a ``noqa-used`` fact for every finding a comment silenced
(engine.py), and the project phase hands over the project findings it
dropped (project.py).  A code is reported only when celerylint can be sure
it is unused: a full code ``CLnnn`` (not a prefix, not another tool's code,
not a bare ``# noqa``) of a rule that ran on the file (selected, not
ignored for it, and not kept off it by its ``PATHS``: the task-code rules
do not run in tests), or a ``CLnnn`` that is no celerylint code at all.  A line
whose comment names CL002 is left alone, and so is a file with
``# celerylint: skip-file``.  The comment must be a real comment (Python's
tokenizer says so): a ``"# noqa: CL203"`` inside a string is text.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.model import Edit, FileResult, Finding, Fix
from ..engine.noqa import NOQA

if TYPE_CHECKING:
    from .linter import Linter

CODE, NAME = "CL002", "unused-noqa"
_OURS = re.compile(r"CL[0-9]{3}")
_DOCTOR = frozenset(f"CL{n}" for n in range(150, 156))  # celerylint doctor's, placed on configuration lines


def unused_noqa(results: dict[Path, FileResult], silenced: list[Finding], linter: Linter,
                texts: dict[str, str]) -> list[Finding]:
    from ..config.settings import relative_path
    from ..registry import by_code, known_codes

    used: dict[str, set[tuple[int, str]]] = {}
    for result in results.values():
        for fact in result.facts:
            if fact.get("kind") == "noqa-used":
                _mark(used, result.path, fact["code"], fact["line"], fact["end_line"])
    for finding in silenced:
        _mark(used, finding.path, finding.code, finding.line, finding.end_line)
    known = known_codes()
    settings = linter.settings
    out: list[Finding] = []
    for path, result in results.items():
        rel = result.path
        local = relative_path(path, settings.config_dir or settings.root) if settings.per_file_ignores else None
        if not settings.enabled(CODE, local):
            continue
        text = texts.get(rel)
        if text is None:
            text = _read(path)
        if text is None or "noqa" not in text.lower() or "skip-file" in text and _skipped(text):
            continue
        here = used.get(rel, set())

        def ran(code: str, rel: str = rel, local=local) -> bool:  # enabled, and its ``PATHS`` take the file
            entry = by_code(code)
            return settings.enabled(code, local) and (entry is None or entry.wanted_for(rel))

        for line, col, comment, line_text in _comments(text):
            finding = _check(rel, line, col, comment, line_text, here, known, ran)
            if finding is not None:
                out.append(finding)
    return out


def _mark(used: dict[str, set[tuple[int, str]]], path: str, code: str, line: int, end_line: int) -> None:
    used.setdefault(path, set()).update({(line, code), (end_line, code)})


def _read(path: Path) -> str | None:
    from ..core.source import DecodeError, decode, read_source

    try:
        return decode(read_source(path)).text
    except (OSError, DecodeError):
        return None


def _skipped(text: str) -> bool:
    from ..engine.analysis import SKIP_FILE

    return SKIP_FILE.search(text.encode("utf-8", "surrogatepass")) is not None


def _comments(text: str):
    """(line, column, text) of every comment holding ``noqa``."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT and "noqa" in token.string.lower():
                yield token.start[0], token.start[1], token.string, token.line
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return


def _check(rel: str, line: int, col: int, comment: str, line_text: str, used: set[tuple[int, str]], known, enabled) -> Finding | None:
    match = NOQA.search(comment)
    if match is None or not match.group("codes"):
        return None
    raw = [c for c in re.split(r"[\s,]+", match.group("codes")) if c]
    codes = [c.upper() for c in raw]
    if CODE in codes:
        return None
    unused = [c for c in codes if _OURS.fullmatch(c) and c not in _DOCTOR and (c not in known or (enabled(c) and not any(
        u_line == line and u_code.startswith(c) for u_line, u_code in used)))]
    if not unused:
        return None
    unknown = [c for c in unused if c not in known]
    what = ", ".join(f"`{c}`" for c in unused)
    if unknown and len(unknown) == len(unused):
        message = f"`noqa` names {what}, which {'is' if len(unused) == 1 else 'are'} no celerylint code"
    else:
        message = (f"unused `noqa` code{'s' * (len(unused) != 1)} {what}: nothing on this line is reported as "
                   f"{'that code' if len(unused) == 1 else 'these codes'}"
                   + (f" ({', '.join(f'`{c}`' for c in unknown)} is no celerylint code)" if unknown else ""))
    start, end = col + match.start(), col + match.end()
    return Finding(code=CODE, name=NAME, message=message, path=rel, line=line, col=start, end_line=line, end_col=end,
                   severity="warning", fix=_fix(line, col, comment, line_text, match, raw, set(unused)))


def _fix(line: int, col: int, comment: str, line_text: str, match: re.Match, raw: list[str], unused: set[str]) -> Fix:
    kept = [c for c in raw if c.upper() not in unused]
    if kept:
        start, end = match.span("codes")
        edit = Edit(line, col + start, line, col + end, ", ".join(kept))
        return Fix(f"remove {', '.join(sorted(unused))} from the `noqa` comment", (edit,), safe=True)
    start, end = match.span()
    rest = comment[end:]
    if not comment[:start].strip("# \t") and not rest.strip():
        # the comment is only this noqa: remove it, and the spaces before it on the line
        begin = col
        while begin > 0 and line_text[begin - 1] in " \t":
            begin -= 1
        return Fix("remove the unused `noqa` comment", (Edit(line, begin, line, col + len(comment), ""),), safe=True)
    if rest.strip():  # "# noqa: CL203  # why": keep "# why"
        end += len(rest) - len(rest.lstrip())
    else:  # "# why  # noqa: CL203": drop the spaces before it too
        while start > 0 and comment[start - 1] in " \t":
            start -= 1
    return Fix("remove the unused `noqa` code", (Edit(line, col + start, line, col + end, ""),), safe=True)
