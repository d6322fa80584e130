"""Configuration options, declared where they are used.

A rule declares the options it reads (``OPTIONS = (Option(...),)``); the
framework declares the few that several rules or the run itself read
(``config.GLOBAL_OPTIONS``).  The configuration loader validates every key
of ``[tool.celerylint]`` against these declarations, and the rule pages and
docs/configuration.md's options table are generated from them.  Nothing here
imports libcst: the loader runs before any rule is imported.
"""

from __future__ import annotations

import math
from typing import Any


# The longest glob the configuration accepts (``exclude``, ``per-file-ignores``,
# ``redis-config-files``): as long as the longest path Linux accepts.  A glob
# is matched against every file and directory discovery walks.
MAX_GLOB = 4096


def glob_problem(pattern: str) -> str | None:
    """Why ``pattern`` is refused as a glob, or None."""
    if len(pattern) > MAX_GLOB:
        return f"a glob of {len(pattern):,} characters ({pattern[:24]!r}...): at most {MAX_GLOB:,}"
    return None


# The longest TTL the configuration accepts (``lock-ttl``): ten years.  Redis
# itself refuses an EX (or PX) whose milliseconds, added to the current time,
# overflow a signed 64-bit integer ("invalid expire time"), and redis-py's
# Lock and django-redis send the TTL as milliseconds; a TTL of more than ten
# years is far inside that, and past it a lock never expires in practice.
MAX_TTL = 10 * 365 * 86400


class Option:
    """``name`` as written in TOML (kebab-case); ``kind`` one of ``"seconds"``
    (a positive number), ``"integer-seconds"`` (a positive integer),
    ``"ttl"`` (a positive integer of seconds, at most ``MAX_TTL``),
    ``"strings"`` (a list of strings), ``"globs"`` (a list of globs, each
    at most ``MAX_GLOB`` characters); ``default`` its value when unset.
    A plain class, not a dataclass: the configuration loader makes these on
    every start-up."""

    __slots__ = ("name", "kind", "default", "doc")
    KINDS = ("seconds", "integer-seconds", "ttl", "strings", "globs")

    def __init__(self, name: str, kind: str, default: Any, doc: str) -> None:
        if kind not in self.KINDS:
            raise ValueError(f"option {name}: kind must be one of {self.KINDS}, not {kind!r}")
        self.name, self.kind, self.default, self.doc = name, kind, default, doc

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Option) and self.as_row() == other.as_row()

    def __hash__(self) -> int:
        return hash(self.as_row())

    def __repr__(self) -> str:
        return f"Option{self.as_row()!r}"

    def parse(self, value: Any) -> Any:
        """The TOML value as the rule reads it; ValueError says what was expected."""
        if self.kind in ("strings", "globs"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError("expected a list of strings")
            for problem in (glob_problem(v) for v in value) if self.kind == "globs" else ():
                if problem:
                    raise ValueError(problem)
            return tuple(value)
        integer = self.kind in ("integer-seconds", "ttl")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
            raise ValueError(f"expected a positive {'integer' if integer else 'number'} of seconds")
        if integer and not isinstance(value, int):
            raise ValueError("expected a positive integer number of seconds")
        if self.kind == "ttl" and value > MAX_TTL:
            raise ValueError(f"expected a positive integer of seconds, at most {MAX_TTL:,} (10 years), not {value:,}")
        return value

    def shown_default(self) -> str:
        """The default as TOML."""
        if isinstance(self.default, tuple):
            return "[" + ", ".join(f'"{v}"' for v in self.default) + "]"
        return repr(self.default)

    def as_row(self) -> tuple:
        return (self.name, self.kind, self.default, self.doc)


# Options several rules (or the run itself) read; a rule's own options are
# declared in its OPTIONS and reach this module through the catalog.
GLOBAL_OPTIONS = (
    Option("side-effect-calls", "strings", (),
           "extra dotted call names (`billing.gateway.charge`) that count as external side effects"),
    Option("settings-modules", "strings", (),
           "dotted names of modules that hold Celery or Django settings, read even when no app loads them"),
    Option("settings-profiles", "strings", (),
           "settings profiles (`proj.settings.staging`, or its last part `staging`) the configuration rules "
           "check; default: every profile whose name is not a test, CI, development or local one"),
    Option("redis-config-files", "globs", ("**/redis*.conf", "**/docker-compose*.y*ml", "**/compose*.y*ml"),
           "globs of the non-Python files read for Redis settings (redis.conf, compose files)"),
)
