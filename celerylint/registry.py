"""Where rules are found.

``catalog.py`` (generated from the rule modules by ``python -m
celerylint.devtools``) lists every checker with its byte prefilter, so a run
can decide which files to parse without importing libcst or any rule.  The
classes themselves are imported only when a file needs them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache


class Regex(bytes):
    """A needle that is a regular expression (mirrors ``rule.Regex`` without
    importing libcst), with a literal every match contains and the fixed
    distance from a match's start to it (see ``_required_literal``).  The
    catalog stores both, so that a run compiles only the expressions whose
    literal occurs in some file."""

    def __new__(cls, pattern: bytes, literal: bytes | None = None, offset: int | None = None) -> Regex:
        self = super().__new__(cls, pattern)
        if literal is None:
            literal, offset = _required_literal(pattern)
        self.literal, self.offset = literal, offset
        return self

    def __repr__(self) -> str:
        return f"Regex({bytes(self)!r}, {self.literal!r}, {self.offset!r})"


class All(tuple):
    """Parts that must all occur (mirrors ``rule.All`` without libcst)."""

    def __repr__(self) -> str:
        return f"All({tuple(self)!r})"


def _matches(needle, data: bytes) -> bool:
    if isinstance(needle, All):
        return all(_matches(part, data) for part in needle)
    if isinstance(needle, tuple):
        return any(_matches(part, data) for part in needle)
    if isinstance(needle, Regex):
        return _search(needle, data)
    return needle in data


def _plain(needle):
    """A rule's needle as catalog data (the registry's own classes)."""
    kind = type(needle).__name__
    if kind == "All":
        return All(_plain(part) for part in needle)
    if isinstance(needle, tuple):
        return tuple(_plain(part) for part in needle)
    return Regex(needle) if kind == "Regex" else bytes(needle)


@dataclass(frozen=True)
class Entry:
    code: str  # "" for a fact collector
    name: str
    kind: str  # "file" | "project" | "collector"
    severity: str
    fix: str
    summary: str
    module: str
    cls: str
    needles: tuple[bytes, ...]
    paths: str | None = None  # a regular expression the relative path must match

    def wanted_for(self, path: str) -> bool:
        return self.paths is None or re.search(self.paths, path) is not None

    def matches(self, data: bytes) -> bool:
        """The needles' meaning, plainly (the engine runs ``prefilter.py``'s
        compiled form; a test checks that both agree)."""
        return any(_matches(needle, data) for needle in self.needles)

    def load(self) -> type:
        import importlib

        return getattr(importlib.import_module(self.module), self.cls)


def _search(needle: bytes, data: bytes) -> bool:
    literal, offset, pattern = _compiled(needle)
    if literal not in data:
        return False
    if offset is None or offset < 0:  # offset -1: the pattern starts with its literal,
        return pattern.search(data) is not None  # which the regex engine scans for in C
    # Every match starts ``offset`` bytes before an occurrence of ``literal``:
    # try only there (a search for ``\\beta\\s*=`` scans the whole file slowly).
    find, match = data.find, pattern.match
    pos = find(literal)
    while pos != -1:
        if pos >= offset and match(data, pos - offset):
            return True
        pos = find(literal, pos + 1)
    return False


@cache
def _compiled(pattern: bytes) -> tuple[bytes, int | None, re.Pattern[bytes]]:
    """The compiled needle, a literal every match contains, and the fixed
    distance from a match's start to that literal (None if it varies, -1 if
    the pattern starts with it)."""
    if isinstance(pattern, Regex):
        literal, offset = pattern.literal, pattern.offset
    else:
        literal, offset = _required_literal(pattern)
    return literal, offset, re.compile(pattern)


def _required_literal(pattern: bytes) -> tuple[bytes, int | None]:
    """The longest run of literal characters in the top-level sequence of
    ``pattern`` and the fixed width of what precedes it (None when not
    fixed), or (b"", None)."""
    try:
        from re import _parser as parser
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse as parser
    try:
        parsed = parser.parse(pattern)
        if parsed.state.flags & (re.IGNORECASE | re.VERBOSE):
            return b"", None
        items = list(parsed)
        best, best_start, run, start = b"", 0, b"", 0
        for i, (op, value) in enumerate(items):
            if op is parser.LITERAL:
                if not run:
                    start = i
                run += bytes([value])
                if len(run) > len(best):
                    best, best_start = run, start
            else:
                run = b""
        if not best:
            return b"", None
        if best_start == 0:
            return best, -1
        low, high = parser.SubPattern(parsed.state, items[:best_start]).getwidth()
        return best, (low if low == high else None)
    except Exception:  # an unexpected parser shape: no shortcut
        return b"", None


@cache
def entries() -> tuple[Entry, ...]:
    from .catalog import CHECKERS

    return tuple(Entry(*row) for row in CHECKERS)


def rules() -> tuple[Entry, ...]:
    return tuple(e for e in entries() if e.code)


def known_codes() -> frozenset[str]:
    return frozenset(e.code for e in rules())


def by_code(code: str) -> Entry | None:
    code = code.upper()
    return next((e for e in rules() if e.code == code or e.name == code.lower()), None)


def discover_classes() -> list[type]:
    """Import every module under celerylint.rules and return its checkers
    (rules, project rules and collectors), in module order."""
    import importlib
    import pkgutil

    from . import rules as package
    from .rule import Checker, ProjectRule, Rule

    found: list[type] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and issubclass(value, (Checker, ProjectRule))
                and value not in (Checker, Rule, ProjectRule)
                and not value.__name__.startswith("_")
            ):
                found.append(value)
    return found


def catalog_rows() -> list[tuple]:
    """The rows catalog.py must hold, computed from the rule modules."""
    from .rule import ProjectRule, Rule

    rows = []
    for cls in discover_classes():
        if issubclass(cls, ProjectRule):
            kind = "project"
        elif issubclass(cls, Rule):
            kind = "file"
        else:
            kind = "collector"
        rows.append((
            getattr(cls, "CODE", ""), getattr(cls, "NAME", ""), kind,
            getattr(cls, "SEVERITY", ""), getattr(cls, "FIX", ""), getattr(cls, "SUMMARY", ""),
            cls.__module__, cls.__name__,
            tuple(_plain(n) for n in getattr(cls, "NEEDLES", ())),
            getattr(cls, "PATHS", None),
        ))
    codes = [r[0] for r in rows if r[0]]
    if len(codes) != len(set(codes)):
        raise RuntimeError(f"duplicate rule codes: {sorted(c for c in codes if codes.count(c) > 1)}")
    return sorted(rows, key=lambda r: (r[0] == "", r[0], r[6], r[7]))
