"""The ``[tool.celerylint]`` table: discovery, validation, one frozen Settings.

A configuration problem raises ConfigError naming the file and the key; the
CLI turns it into exit status 2.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..api.options import GLOBAL_OPTIONS, Option


@cache
def declared_options() -> dict[str, Option]:
    """Every option a key of ``[tool.celerylint]`` may set, by name."""
    from ..registry import options

    return {o.name: o for o in (*GLOBAL_OPTIONS, *options())}


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    root: Path = field(default_factory=Path.cwd)  # paths in reports are relative to it
    config_file: Path | None = None
    config_dir: Path | None = None  # exclude and per-file-ignores globs are relative to it
    select: tuple[str, ...] = ()  # empty: the rules that are on by default
    extend_select: tuple[str, ...] = ()  # added to ``select`` (or to the default rules)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    options: tuple[tuple[str, Any], ...] = ()  # (name, value) of the options set, sorted
    respect_gitignore: bool = True  # discovery skips what git ignores (gitignore.py)
    cache_dir: Path | None = None  # ``cache-dir`` / ``--cache-dir``; None: the default place
    config_chain: tuple[Path, ...] = ()  # the files ``extend`` read, the base last
    ignore_noqa: bool = False  # ``--ignore-noqa``: no ``# noqa`` comment silences anything
    fixable: tuple[str, ...] = ()  # codes --fix may fix; empty: every code (ruff's ALL)
    extend_fixable: tuple[str, ...] = ()  # added to ``fixable``
    unfixable: tuple[str, ...] = ()  # codes --fix never fixes, whatever ``fixable`` says
    output_format: str | None = None  # ``output-format``: the report format when no option names one
    fix: bool | None = None  # ``fix``: as ``--fix`` when the command line says neither --fix nor --no-fix
    unsafe_fixes: bool | None = None  # ``unsafe-fixes``: likewise for ``--unsafe-fixes``

    def option(self, name: str) -> Any:
        """The value of a declared option: as configured, else its default."""
        for key, value in self.options:
            if key == name:
                return value
        return declared_options()[name].default

    @property
    def side_effect_calls(self) -> tuple[str, ...]:
        return self.option("side-effect-calls")

    @property
    def settings_modules(self) -> tuple[str, ...]:
        return self.option("settings-modules")

    @property
    def redis_config_files(self) -> tuple[str, ...]:
        return self.option("redis-config-files")

    def enabled(self, code: str, path: str | None = None) -> bool:
        """Is rule ``code`` on (for ``path``, relative posix, if given)?"""
        if not self.selected(code):
            return False
        if any(code.startswith(s) for s in self.ignore):
            return False
        if path is not None:
            for pattern, codes in self.per_file_ignores:
                if glob_match(path, pattern) and any(code.startswith(c) for c in codes):
                    return False
        return True

    def selected(self, code: str) -> bool:
        """Chosen by ``select``/``extend-select`` (before ``ignore``): as in
        ruff, without ``select`` the default rules are chosen, and a code, a
        prefix or ``ALL`` that is selected explicitly chooses every rule it
        names, off by default or not."""
        if any(code.startswith(s) for s in self.extend_select):
            return True
        if self.select:
            return any(code.startswith(s) for s in self.select)
        from ..registry import default_off_codes

        return code not in default_off_codes()

    def is_fixable(self, code: str) -> bool:
        """May ``--fix`` apply the fixes of ``code`` (``fixable``, ``extend-fixable``, ``unfixable``)?"""
        if any(code.startswith(c) for c in self.unfixable):
            return False
        return not self.fixable or any(code.startswith(c) for c in (*self.fixable, *self.extend_fixable))

    def fingerprint(self) -> str:
        """A hash of everything that changes what a file lints to."""
        import hashlib
        import json

        data = asdict(self)
        # which files a run takes, and what it does with the findings, do not change them
        for key in ("root", "config_file", "config_dir", "respect_gitignore", "force_exclude", "cache_dir",
                    "config_chain", "fixable", "extend_fixable", "unfixable", "output_format", "fix", "unsafe_fixes"):
            data.pop(key)
        return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


_LEADING_STARS = re.compile(r"(?:\*\*/)+")


def glob_match(path: str, pattern: str) -> bool:
    """Match a relative posix path against a glob; ``**/`` may match nothing,
    and a pattern without a slash matches any path component.  ``**/``
    repeated at the start counts once: fnmatch's ``*`` crosses slashes, so
    whatever ``**/**/x`` matches, ``**/x`` matches too (and the matcher
    does not try each repetition in turn)."""
    if not pattern.startswith("**/"):
        return fnmatch.fnmatchcase(path, pattern) or _glob_tail(path, pattern)
    rest = pattern[_LEADING_STARS.match(pattern).end():]
    return (fnmatch.fnmatchcase(path, "**/" + rest) or fnmatch.fnmatchcase(path, rest)
            or _glob_tail(path, "**/" + rest) or _glob_tail(path, rest) or _glob_tail(path, pattern))


def _glob_tail(path: str, pattern: str) -> bool:
    """The two shapes ``glob_match`` accepts besides fnmatch's: ``dir/**``
    (the directory itself, or anything under it) and a name without a slash."""
    if pattern.endswith("/**") and (path == pattern[:-3] or path.startswith(pattern[:-3] + "/")):
        return True
    if "/" not in pattern.rstrip("/"):
        return any(fnmatch.fnmatchcase(part, pattern.rstrip("/")) for part in path.split("/"))
    return False


def project_root(start: Path) -> Path:
    """Paths are reported relative to the repository root (SARIF needs
    repo-relative URIs), found by its ``.git``; else the working directory."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


@cache
def posix_base(root: str) -> str | None:
    """``root`` with a trailing slash when it is absolute and normal on a posix system."""
    return root.rstrip("/") + "/" if os.sep == "/" and root == os.path.abspath(root) else None


def relative_path(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` in posix form; absolute when outside it."""
    text, base = os.path.abspath(path), str(root)
    prefix = posix_base(base)
    if prefix is not None:  # the common case, without pathlib (hot in big runs)
        if text.startswith(prefix):
            return text[len(prefix):]
        if text != base:
            return text  # outside the root: absolute, already posix
    absolute = Path(text)
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_posix()
