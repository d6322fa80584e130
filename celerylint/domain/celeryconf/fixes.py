"""Fixes for configuration findings: add a setting where the app's
configuration lives, or change a value in place."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...core.model import Edit, Fix
from ...core.source import LineIndex, newline_at
from .settings import App, Assignment, Pos
from .renames import rename_edit
from .texts import read

if TYPE_CHECKING:
    from .model import Model
from .settings_table import table
from .values import plain


def spelled(app: App, name: str) -> str | None:
    """How new-style setting ``name`` is written in the app's source."""
    source = app.source
    t = table()
    if source is None:
        return name
    ns = source.namespace
    if ns:
        if not ns.isupper():
            return None if source.django else f"{ns.rstrip('_')}_{name}"
        return f"{ns.rstrip('_')}_{name.upper()}"
    if source.django or source.old_style(t):
        return t.to_old.get(name)
    return name


_COMMA_ENDS_LINE = re.compile(r"[ \t]*,[ \t]*(?:#.*)?$")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _after_line(text: str, line: int, content: str) -> Edit:
    """Insert ``content`` (one or more full lines) after line ``line``, with
    the line endings of the file there (CRLF, CR or LF)."""
    index = LineIndex(text)
    content = content.replace("\n", newline_at(text, index, line))
    if line >= len(index.starts) and text and not text.endswith(("\n", "\r")):
        end = len(index.line_text(line))
        return Edit(line, end, line, end, newline_at(text, index, line) + content.rstrip("\r\n"))
    return Edit(line + 1, 0, line + 1, 0, content)


def _last_line(a: Assignment) -> int:
    return (a.value_pos or a.pos)[2]


def statement_end(text: str, a: Assignment) -> int:
    """The last line of the statement that makes assignment ``a``: the value's
    position leaves out closing parentheses (``X = (\n "a",\n)``), a
    backslash continuation or a ``;`` after it."""
    import io
    import tokenize

    index = LineIndex(text)
    first, last = a.pos[0], _last_line(a)
    if first > len(index.starts):
        return last
    rest = io.StringIO(text[index.starts[first - 1]:], newline=None)  # universal newlines: \r too
    try:
        for token in tokenize.generate_tokens(rest.readline):
            if token.type == tokenize.NEWLINE or token.type == tokenize.ENDMARKER:
                return max(last, first + token.start[0] - 1 - (token.type == tokenize.ENDMARKER))
    except (tokenize.TokenError, SyntaxError):
        pass
    return last




def misspelling(app: App, name: str) -> tuple[Assignment, str] | None:
    """An assignment of the app's configuration whose name misspells setting
    ``name`` (``task_ack_late`` for ``task_acks_late``), with the name it
    is renamed to: the one CL107 (unknown-setting) renames it to, by the same
    test.  The app's preconfiguration first (it wins), then its source."""
    found = getattr(app, "_misspellings", None)
    if found is None:  # once per app: each unknown name costs a fuzzy match
        found = app._misspellings = {}
        t = table()
        places = [([a for assigned in app.preconf.values() for a in assigned], None, False)]
        if app.source is not None:
            places.append((app.source.assignments, app.source.namespace, app.source.django))
        for assignments, namespace, django in reversed(places):  # the preconfiguration wins
            for a in assignments:  # and in each place the last assignment
                if a.cond or a.name.startswith("_") or t.known(a.name) or t.canonical(a.name, namespace):
                    continue
                if django and not (a.name.isupper() and a.name.startswith(("CELERY", "BROKER_"))):
                    continue
                if django and not namespace and t.canonical(a.name, "CELERY"):
                    continue  # a namespaced name without the namespace: CL110's
                best = t.suggestion(a.name, namespace if django or namespace else None)
                meant = t.canonical(best, namespace) if best else None
                if meant:
                    found[meant] = (a, best)
    return found.get(name)


def _respell(model: Model, a: Assignment, new: str, value: str) -> Fix | None:
    """The misspelt line *is* the setting's line: rename it, and set the
    value when the old one is a plain literal (a dict keeps its keys, an
    environment lookup its variable; a later round adjusts them).  None
    when the name cannot be renamed where it is written."""
    renamed = rename_edit(model, a, new)
    if renamed is None:
        return None
    edits = [renamed]
    current, env = plain(a.value)
    if current is not None and env is None and not isinstance(current, dict) and a.value_pos is not None:
        edits.append(Edit(*a.value_pos, value))
        return Fix(f"rename `{a.name}` to `{new}` and set it to `{value}`", tuple(edits), False, a.path)
    return Fix(f"rename `{a.name}` to `{new}`, the setting it misspells", tuple(edits), False, a.path)


def add_setting(model: Model, app: App, name: str, value: str) -> Fix | None:
    """Add ``name = value`` (new-style name, Python source of the value).

    When the configuration already misspells the setting (the name CL107
    renames into it), that line is the setting's line: the fix renames it
    and sets its value instead of adding a second assignment, so that fixes
    of two rules never write one setting twice (their edits overlap, and the
    fix loop applies overlapping fixes in different rounds)."""
    t = table()
    written = spelled(app, name)
    if written is None or app.remade:
        return None
    wrong = misspelling(app, name)
    if wrong is not None:
        return _respell(model, wrong[0], wrong[1], value)
    if app.source is not None:
        source = app.source
        if getattr(source, "shape", None):
            return None  # a class or a dict: a line at column 0 does not belong there
        keys = source.celery_keys(t)
        counts = {path: sum(1 for a in keys if a.path == path and not a.cond) for path in source.files}
        path = max(source.files, key=lambda p: (counts[p], p == source.path))
        text = read(model, path)
        if text is None:
            return None
        mine = [a for a in source.assignments if a.path == path and not a.cond and t.canonical(a.name, source.namespace)
                and (a.via != "class_attr" or a.value_pos is not None)]  # not after a property's ``def`` line
        latest = max(mine, key=_last_line, default=None)
        anchor = statement_end(text, latest) if latest is not None else None
        line = f"{written} = {value}\n"
        if latest is not None and latest.via == "class_attr":  # a settings class: in its body
            line = _indent(LineIndex(text).line_text(latest.pos[0])) + line
        if anchor is None:
            anchor = len(LineIndex(text).starts)
            if text.endswith(("\n", "\r")):
                anchor -= 1
            line = ("\n" if text.strip() else "") + line
        return Fix(f"add `{written} = {value}` to {path}", (_after_line(text, anchor, line),), False, path)
    if app.update_call is not None:
        f = app.update_call
        text = read(model, f["path"])
        if text is None:
            return None
        index = LineIndex(text)
        rest = index.line_text(f["end_line"])[f["end_col"]:]
        if f["trailing_comma"] and _COMMA_ENDS_LINE.match(rest):
            # one keyword per line, the closing parenthesis on a later line:
            # a new line after the last keyword, indented like it
            start = index.line_text(f["line"])
            indent = start[: f["col"]] if not start[: f["col"]].strip() else _indent(start) + "    "
            edit = _after_line(text, f["end_line"], f"{indent}{name}={value},\n")
        else:  # after the last keyword, on its line (before its comma, if any)
            edit = Edit(f["end_line"], f["end_col"], f["end_line"], f["end_col"], f", {name}={value}")
        return Fix(f"add `{name}={value}` to `{app.var}.conf.update(...)`", (edit,), False, f["path"])
    text = read(model, app.path)
    if text is None or app.stmt is None:
        return None
    anchors = [s["end_line"] for s in app.conf_stmts if s["path"] == app.path and s["col"] == app.stmt[1]]
    anchor = max([app.stmt[2], *anchors])
    indent = LineIndex(text).line_text(app.stmt[0])[: app.stmt[1]]
    content = f"{indent}{app.var}.conf.{name} = {value}\n"
    return Fix(f"add `{app.var}.conf.{name} = {value}` after the app is created", (_after_line(text, anchor, content),), False, app.path)


def value_text(model: Model, a: Assignment) -> str | None:
    """The source text of ``a``'s value, as the file holds it now."""
    if a.value_pos is None:
        return None
    text = read(model, a.path)
    if text is None:
        return None
    index = LineIndex(text)
    line, col, end_line, end_col = a.value_pos
    return text[index.offset(line, col):index.offset(end_line, end_col)]


def replace_at(path: str, pos: Pos, value: str, description: str, safe: bool = False) -> Fix:
    line, col, end_line, end_col = pos
    return Fix(description, (Edit(line, col, end_line, end_col, value),), safe, path)
