"""A Helm template rendered as far as its chart's values make it certain.

Only the shapes charts use to place a value read: a line that is wholly
``{{ if COND }}`` / ``{{ else }}`` / ``{{ end }}`` / ``{{ with .Values.x }}``,
and in-line actions that print a value: ``.Values.a.b`` (through ``quote``,
``default x``, ``toString``, ``int``), ``toYaml``/``toJson`` of a value (also
through ``tpl (...) .``, ``nindent N``, ``indent N``), and ``.`` inside a
``with``.  A condition is ``.Values.a.b``, ``not``, ``and``/``or`` of those,
or ``eq``/``ne`` of a value and a literal; any other condition is unknown,
and the lines under it are *uncertain*.  ``range`` and ``define`` blocks
are left out (what they repeat is not known).  Any other action prints
``${HELM}``, which the command-line reader takes as unknown, as it takes
``{{ }}`` left in a value's string (``tpl`` renders it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .yamlfile import _yaml

MARK = "${HELM}"  # what an action that cannot be evaluated prints
_MISSING = object()


class Unknown(Exception):
    """A value the chart's values files do not settle."""


@dataclass
class Values:
    """``values.yaml`` and the chart's other values files, which a release
    may use instead: a key they set differently is unknown."""

    main: dict[str, Any]
    others: list[dict[str, Any]] = field(default_factory=list)

    def get(self, path: tuple[str, ...]) -> Any:
        value = _lookup(self.main, path)
        for other in self.others:
            found = _lookup(other, path)
            if found is not _MISSING and found != value:
                raise Unknown(".".join(path))
        return None if value is _MISSING else value


def _lookup(values: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(values, dict) or key not in values:
            return _MISSING
        values = values[key]
    return values


# ``{{ ... }}``: what is inside has no brace but a lone ``}`` (linear on hostile text); the trim
# marks and spaces around it are taken off by ``_inside``
_ACTION = re.compile(r"\{\{([^{}]*(?:\}(?!\})[^{}]*)*)\}\}")
_WHOLE = re.compile(r"^[ \t]*\{\{-?[ \t]*(if|else if|else|end|with|range|define|block)\b([^{}\n]*)\}\}[ \t]*$")
_KEYWORDS = re.compile(r"\{\{-?\s*(?:if|else|end|with|range|define|block)\b")
_PATH = re.compile(r"^\$?\.Values((?:\.[A-Za-z_][\w-]*)+)$")
_SILENT = re.compile(r"^(?:/\*.*\*/|\$\w+\s*:?=.*)$", re.S)
_STRING = re.compile(r'^"((?:[^"\\]|\\.)*)"$')


def _inside(text: str) -> str:
    """An action's text without its trim marks (``{{- x -}}``) and spaces."""
    text = text.strip()
    text = text[1:] if text.startswith("-") and not text[1:2].isdigit() else text
    text = text[:-1] if text.endswith("-") else text
    return text.strip()


def _path(word: str, dot: tuple[str, ...] | None) -> tuple[str, ...] | None:
    if word == "." and dot is not None:
        return dot
    found = _PATH.match(word)
    if found:
        return tuple(found.group(1)[1:].split("."))
    if dot is not None and re.match(r"^(?:\.[A-Za-z_]\w*)+$", word) and not word.startswith((".Values", ".Release",
                                                                                               ".Chart", ".Capabilities")):
        return dot + tuple(word[1:].split("."))
    return None


def _literal(word: str) -> Any:
    found = _STRING.match(word)
    if found:
        try:
            return json.loads(f'"{found.group(1)}"')
        except ValueError:
            raise Unknown(word) from None
    if re.match(r"^-?\d+$", word):
        return int(word)
    if word in ("true", "false"):
        return word == "true"
    raise Unknown(word)


def _operand(word: str, values: Values, dot) -> Any:
    path = _path(word, dot)
    return values.get(path) if path is not None else _literal(word)


def _words(expression: str) -> list[str]:
    return re.findall(r'"(?:[^"\\]|\\.)*"|\(|\)|[^\s()]+', expression)


def condition(expression: str, values: Values, dot=None) -> bool | None:
    """The truth of a template condition, or None when it is not read."""
    try:
        return _truth(_words(expression), values, dot)
    except (Unknown, IndexError):
        return None


def _truth(words: list[str], values: Values, dot) -> bool | None:
    while words and words[0] == "(" and words[-1] == ")":
        words = words[1:-1]
    if not words:
        raise Unknown("")
    head, rest = words[0], words[1:]
    if head == "not":
        inner = _truth(rest, values, dot)
        return None if inner is None else not inner
    if head in ("and", "or"):
        parts = [_truth(group, values, dot) for group in _groups(rest)]
        if head == "and":
            return False if False in parts else None if None in parts else True
        return True if True in parts else None if None in parts else False
    if head in ("eq", "ne") and len(_groups(rest)) == 2:
        a, b = (_operand(" ".join(g), values, dot) if len(g) == 1 else _raise() for g in _groups(rest))
        return (a == b) if head == "eq" else (a != b)
    if len(words) == 1:
        return bool(_operand(head, values, dot))
    raise Unknown(" ".join(words))


def _raise():
    raise Unknown("")


def _groups(words: list[str]) -> list[list[str]]:
    """The arguments of a function: single words or parenthesised groups."""
    out, depth, current = [], 0, []
    for word in words:
        current.append(word)
        depth += (word == "(") - (word == ")")
        if depth == 0:
            out.append(current)
            current = []
    if depth:
        raise Unknown(" ".join(words))
    return out


def _strip_templates(value: Any) -> Any:
    """A value with ``{{ }}`` left in its strings (``tpl``) made unknown."""
    if isinstance(value, str):
        return _ACTION.sub(MARK, value)
    if isinstance(value, list):
        return [_strip_templates(v) for v in value]
    if isinstance(value, dict):
        return {k: _strip_templates(v) for k, v in value.items()}
    return value


def _print(action: str, values: Values, dot, block: bool = False) -> tuple[str, int | None]:
    """What an action prints, and the indent ``nindent``/``indent`` asks for;
    a mapping or a list as YAML lines when ``block`` (the action is alone on
    its line, so several of them can merge into one mapping), else as JSON."""
    stages = [s.strip() for s in action.split("|")]
    indent = None
    last = stages[-1].split()
    if len(last) == 2 and last[0] in ("nindent", "indent") and last[1].isdigit():
        indent, stages = int(last[1]), stages[:-1]
    head = re.sub(r"^tpl\s*\((.*)\)\s*\.$", r"\1", stages[0]).strip()
    head = re.sub(r"^\((.*)\)$", r"\1", head).strip()
    words = head.split()
    as_json = False
    if len(words) == 2 and words[0] in ("toYaml", "toJson"):
        as_json, words = True, words[1:]
    path = _path(words[0], dot) if len(words) == 1 else None
    if path is None:
        raise Unknown(action)
    value = values.get(path)
    for stage in stages[1:]:
        name, _, arg = stage.partition(" ")
        if name in ("toYaml", "toJson"):
            as_json = True
        elif name == "default" and arg:
            value = value if value not in (None, "", [], {}) else _literal(arg.strip())
        elif name == "quote":
            return json.dumps("" if value is None else str(value)), indent
        elif name not in ("toString", "int", "trim"):
            raise Unknown(stage)
    value = _strip_templates(value)
    if block and indent is not None and isinstance(value, (list, dict)):
        if not value:
            return json.dumps(value), indent
        dumped = _yaml().safe_dump(value, default_flow_style=False, sort_keys=False, width=1 << 20)
        return "\n".join(" " * indent + part for part in dumped.splitlines()), 0
    if as_json or isinstance(value, (list, dict)):
        return json.dumps(value), indent
    if value is None:
        raise Unknown(action)
    return (json.dumps(value) if isinstance(value, bool) else str(value)), indent


@dataclass
class Rendered:
    text: str
    lines: list[int]  # the template line of each rendered line (1-based)
    uncertain: set[int]  # rendered lines (1-based) under a condition that is not read


def render(template: str, values: Values) -> Rendered:
    out: list[str] = []
    lines: list[int] = []
    uncertain: set[int] = set()
    stack: list[tuple[bool | None, tuple[str, ...] | None]] = []  # (state, what ``.`` is)
    for number, line in _joined(template):
        dot = next((d for _, d in reversed(stack) if d is not None), None)
        whole = _WHOLE.match(line)
        if whole:
            keyword, argument = whole.group(1), _inside(whole.group(2))
            if keyword in ("if", "with"):
                state = condition(argument, values, dot)
                path = _path(argument.strip(), dot) if keyword == "with" else None
                stack.append((state, path if state is not None else None))
            elif keyword in ("range", "define", "block"):
                stack.append((False, None))
            elif keyword == "end" and stack:
                stack.pop()
            elif keyword in ("else", "else if") and stack:
                state, path = stack.pop()
                if state is True:
                    stack.append((False, None))
                elif state is False:
                    stack.append((condition(argument, values, dot) if keyword == "else if" else True, None))
                else:
                    stack.append((None, None))
            continue
        states = [s for s, _ in stack]
        if False in states:
            continue
        certain = None not in states
        if _KEYWORDS.search(line):  # a block action sharing its line with text: not read
            certain = False
            line = _ACTION.sub(MARK, line)
        text = _line(line, values, dot)
        if text == "" and line.strip():
            continue
        if text is None:  # an action alone on its line that is not read: what the key above holds is unknown
            if out:
                uncertain.add(len(out))
            continue
        for part in text.split("\n"):  # a value printed as YAML lines
            out.append(part)
            lines.append(number)
            if not certain:
                uncertain.add(len(out))
    return Rendered("\n".join(out) + "\n", lines, uncertain)


def _joined(template: str):
    """``(line number, line)`` with an action spread over several lines joined onto its first."""
    pending: tuple[int, str] | None = None
    for number, line in enumerate(template.splitlines(), 1):
        if pending is not None:
            pending = (pending[0], pending[1] + " " + line.strip())
        else:
            pending = (number, line)
        if pending[1].count("{{") <= pending[1].count("}}"):
            yield pending
            pending = None
    if pending is not None:
        yield pending


def _line(line: str, values: Values, dot) -> str | None:
    found = _ACTION.search(line)
    if found is None:
        return line
    if found.start() == len(line) - len(line.lstrip()) and found.end() == len(line.rstrip()):
        if _SILENT.match(_inside(found.group(1))):  # a comment or a variable assignment prints nothing
            return ""
        try:  # an action alone on its line: ``{{- toYaml .Values.x | nindent 12 }}``
            printed, indent = _print(_inside(found.group(1)), values, dot, block=True)
        except Unknown:
            return None
        return " " * (indent if indent is not None else found.start()) + printed

    def one(match: re.Match) -> str:
        try:
            return _print(_inside(match.group(1)), values, dot)[0]
        except Unknown:
            return MARK
    return _ACTION.sub(one, line)
