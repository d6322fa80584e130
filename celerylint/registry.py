"""Where rules are found.

``catalog.py`` (generated from the rule modules by ``python -m
celerylint.devtools``) lists every checker with its byte prefilter, so a run
can decide which files to parse without importing libcst or any rule.  The
classes themselves are imported only when a file needs them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import cache

from .api.needles import All, Regex, normalized

__all__ = ["All", "Entry", "Regex", "by_code", "catalog_rows", "default_off_codes", "discover_classes", "entries", "known_codes", "rules"]

# Set (to anything) to build the table from the rule classes instead of the
# generated catalog: the test suite does, so a stale catalog cannot hide a rule.
FROM_SOURCE = "CELERYLINT_RULES_FROM_SOURCE"


@dataclass(frozen=True)
class Entry:
    code: str  # "" for a fact collector
    name: str
    kind: str  # "file" | "project" | "collector" (libcst) | "syntax" (a collector over ``ast``)
    severity: str
    fix: str
    summary: str
    module: str
    cls: str
    requires: tuple[bytes, ...]  # alternatives: see needles.py
    # a regular expression the relative path must match, or several it must all match
    paths: str | tuple[str, ...] | None = None
    # Option rows (name, kind, default, doc) the class declares, and names of
    # the global options (config.GLOBAL_OPTIONS) it reads.
    options: tuple = ()
    # False: off by default, run only when ``select``/``extend-select`` names it
    default_enabled: bool = True
    gate: str | None = None  # "module:function" over the file's ``ast`` (rule.Checker.GATE)
    # a file rule with a ``check_project`` (rule.Rule): "project" when it reads
    # facts of every file, "own" when only of the files it reports in; "" without
    project_part: str = ""
    # a fact collector's readers (``Checker.CONSUMERS``): it runs only when one of them is enabled
    consumers: tuple[str, ...] = ()

    @property
    def in_project_phase(self) -> bool:
        return self.kind == "project" or self.project_part

    def wanted_for(self, path: str) -> bool:
        return self.paths is None or all(re.search(p, path) is not None for p in path_patterns(self.paths))

    def load(self) -> type:
        import importlib

        return getattr(importlib.import_module(self.module), self.cls)


@cache
def path_patterns(paths: str | tuple[str, ...]) -> tuple[str, ...]:
    """``Checker.PATHS`` as a tuple of patterns (all must match)."""
    return (paths,) if isinstance(paths, str) else tuple(paths)


def entries() -> tuple[Entry, ...]:
    if os.environ.get(FROM_SOURCE):
        return tuple(Entry(*row) for row in catalog_rows())
    from .catalog import CHECKERS

    return tuple(Entry(*row) for row in CHECKERS)


def rules() -> tuple[Entry, ...]:
    return tuple(e for e in entries() if e.code)


def options() -> tuple:
    """The options the rules declare (``Option`` objects), each once."""
    from .api.options import Option

    found: dict[str, Option] = {}
    for entry in entries():
        for row in entry.options:
            if isinstance(row, tuple):
                option = Option(*row)
                if found.setdefault(option.name, option) != option:
                    raise RuleDefinitionError(f"option {option.name} is declared twice, differently")
    return tuple(found.values())


@cache
def default_off_codes() -> frozenset[str]:
    """Codes of the rules that run only when selected explicitly."""
    return frozenset(e.code for e in rules() if not e.default_enabled)


def known_codes() -> frozenset[str]:
    return frozenset(e.code for e in rules())


def by_code(code: str) -> Entry | None:
    code = code.upper()
    return next((e for e in rules() if e.code == code or e.name == code.lower()), None)


def discover_classes() -> list[type]:
    """Import every module of ``celerylint.rules`` (rules) and
    ``celerylint.facts`` (fact collectors) and return their checkers, in
    module order."""
    import importlib
    import pkgutil

    from . import facts, rules
    from .api.rule import Checker, ProjectRule, Rule, SyntaxCollector

    found: list[type] = []
    names = [f"{package.__name__}.{info.name}" for package in (rules, facts)
             for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name)
             if not info.name.startswith("_")]
    for name in names:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and issubclass(value, (Checker, ProjectRule, SyntaxCollector))
                and value not in (Checker, Rule, ProjectRule, SyntaxCollector)
                and not value.__name__.startswith("_")
            ):
                found.append(value)
    return found


class RuleDefinitionError(Exception):
    """A rule or fact collector that cannot work as declared."""


def catalog_rows() -> list[tuple]:
    """The rows catalog.py must hold, computed from the rule modules."""
    from .api.rule import ProjectRule, Rule, SyntaxCollector

    rows = []
    for cls in discover_classes():
        if issubclass(cls, ProjectRule):
            kind = "project"
        elif issubclass(cls, Rule):
            kind = "file"
        elif issubclass(cls, SyntaxCollector):
            kind = "syntax"
        else:
            kind = "collector"
        if kind != "project" and not getattr(cls, "REQUIRES", ()):
            raise RuleDefinitionError(
                f"{cls.__module__}.{cls.__name__} declares no REQUIRES: a file checker runs only on "
                "files whose bytes contain one of its requirements, so without any it would never run"
            )
        from .api.options import GLOBAL_OPTIONS

        unknown = [o for o in getattr(cls, "OPTIONS", ()) if isinstance(o, str) and o not in {g.name for g in GLOBAL_OPTIONS}]
        if unknown:
            raise RuleDefinitionError(f"{cls.__module__}.{cls.__name__} reads undeclared options {unknown}: "
                                      "declare them as Option(...) in OPTIONS")
        rows.append((
            getattr(cls, "CODE", ""), getattr(cls, "NAME", ""), kind,
            getattr(cls, "SEVERITY", ""), getattr(cls, "FIX", ""), getattr(cls, "SUMMARY", ""),
            cls.__module__, cls.__name__,
            normalized(tuple(getattr(cls, "REQUIRES", ()))),
            getattr(cls, "PATHS", None),
            tuple(o if isinstance(o, str) else o.as_row() for o in getattr(cls, "OPTIONS", ())),
            bool(getattr(cls, "DEFAULT_ENABLED", True)),
            getattr(cls, "GATE", None),
            getattr(cls, "PROJECT_FACTS", "project") if kind == "file" and hasattr(cls, "check_project") else "",
            tuple(getattr(cls, "CONSUMERS", ())),
        ))
    codes = [r[0] for r in rows if r[0]]
    if len(codes) != len(set(codes)):
        raise RuntimeError(f"duplicate rule codes: {sorted(c for c in codes if codes.count(c) > 1)}")
    for row in rows:
        unknown = [c for c in row[14] if c not in codes]
        if row[14] and (row[0] or unknown):
            raise RuleDefinitionError(f"{row[6]}.{row[7]}: CONSUMERS names rules ({', '.join(row[14])}); only a "
                                      f"fact collector declares them, and only codes that exist ({unknown} do not)")
    return sorted(rows, key=lambda r: (r[0] == "", r[0], r[6], r[7]))
