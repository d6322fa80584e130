"""Renaming a setting where it is written: the new name takes the kind of
node the old one is (a string key stays a string with its prefix and
quotes, a keyword or an assignment target stays a name), and no rename lands
on a name its source already sets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.model import Edit
from ...core.source import LineIndex
from .settings import Assignment
from .texts import read

if TYPE_CHECKING:
    from .model import Model

# the ways a setting is written as a string: ``app.conf["X"]``, ``{"X": ...}``
STRING_VIA = frozenset({"conf_item", "update_dict"})
_QUOTES = ('"""', "'''", '"', "'")
_PREFIXES = frozenset({"", "r", "R", "u", "U"})  # a plain ``str`` whose body is its value


def _identifier(name: str) -> bool:
    """A name that reads the same as a keyword, a target and a string body."""
    return name.isidentifier() and name.isascii()


def respelled(written: str, old: str, new: str, string: bool) -> str | None:
    """``written`` (the old name's source text) with ``new`` in place of
    ``old``, in the same kind of node; None when ``written`` is not plainly
    ``old`` in that kind (a constant used as a key, a concatenation, an
    f-string, a bytes literal, an escape)."""
    if not (_identifier(old) and _identifier(new)):
        return None
    if not string:
        return new if written == old else None
    for quote in _QUOTES:
        start = written.find(quote)
        if start < 0 or written[:start] not in _PREFIXES:
            continue
        if written == f"{written[:start]}{quote}{old}{quote}":
            return f"{written[:start]}{quote}{new}{quote}"
        return None
    return None


_indexed: list = [None, None]  # the last text indexed, its LineIndex: a source renames many names of one file


def _index(text: str) -> LineIndex:
    if _indexed[0] != text:
        _indexed[:] = [text, LineIndex(text)]
    return _indexed[1]


def rename_edit(model: Model, a: Assignment, new: str) -> Edit | None:
    """The edit that renames assignment ``a`` to ``new`` where its name is
    written, or None when its name is not written plainly (see ``respelled``)."""
    line, col, end_line, end_col = a.pos
    text = read(model, a.path)
    if text is None or line != end_line:
        return None
    index = _index(text)
    written = text[index.offset(line, col):index.offset(end_line, end_col)]
    content = respelled(written, a.name, new, a.via in STRING_VIA)
    return Edit(line, col, end_line, end_col, content) if content is not None else None


def already_set(assigned: dict[str, list[Assignment]], new: str, near: Assignment) -> Assignment | None:
    """An assignment of ``new`` in a source's assignments by name, the one
    on the line of ``near`` first: renaming ``near`` onto it would repeat a
    keyword (a SyntaxError), a dict key or a module name (either silently
    changes which value wins)."""
    found = assigned.get(new)
    if not found:
        return None
    return next((a for a in found if (a.path, a.line) == (near.path, near.line)), found[0])


def where(a: Assignment, path: str) -> str:
    """``line N``, or ``path:N`` when ``a`` is in another file than ``path``."""
    return f"line {a.line}" if a.path == path else f"{a.path}:{a.line}"
