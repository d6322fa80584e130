"""The ``[tool.celerylint]`` table: discovery, validation, one frozen Settings.

A configuration problem raises ConfigError naming the file and the key; the
CLI turns it into exit status 2.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import sys
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", "node_modules", "build", "dist",
    "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".celerylint_cache", ".eggs",
)
from .options import Option, glob_problem

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


@cache
def declared_options() -> dict[str, Option]:
    """Every option a key of ``[tool.celerylint]`` may set, by name."""
    from .registry import options

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
        from .registry import default_off_codes

        return code not in default_off_codes()

    def fingerprint(self) -> str:
        """A hash of everything that changes what a file lints to."""
        import hashlib
        import json

        data = asdict(self)
        for key in ("root", "config_file", "config_dir", "respect_gitignore", "cache_dir", "config_chain"):
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


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except RecursionError:  # tomllib parses nested arrays and inline tables by recursion
        raise ConfigError(f"{path}: invalid TOML: values nested too deeply") from None


def _tool_table(data: dict[str, Any], path: Path) -> Any:
    """``[tool.celerylint]`` of a pyproject.toml, or None when absent."""
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool: expected a table")
    return tool.get("celerylint")


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with [tool.celerylint] or celerylint.toml."""
    for directory in (start, *start.parents):
        candidate = directory / "celerylint.toml"
        if candidate.is_file():
            return candidate
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                if _tool_table(_load_toml(candidate), candidate) is not None:
                    return candidate
            except ConfigError:
                return candidate  # report the broken file rather than skip it
    return None


def _codes(value: Any, where: str, known: frozenset[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of rule codes or prefixes")
    return tuple(check_codes(value, where, known))


def check_codes(values: list[str], where: str, known: frozenset[str]) -> list[str]:
    out = []
    for raw in values:
        code = raw.strip().upper()
        if not code:
            continue
        if code == "ALL":
            code = "CL"
        if not any(k.startswith(code) for k in known):
            from .config_extend import suggest_rule

            raise ConfigError(f"{where}: unknown rule code or prefix {raw!r}{suggest_rule(raw)}")
        out.append(code)
    return out


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings")
    return tuple(value)


def _globs(value: Any, where: str) -> tuple[str, ...]:
    globs = _strings(value, where)
    _check_globs(globs, where)
    return globs


def _check_globs(globs, where: str) -> None:
    for pattern in globs:
        problem = glob_problem(pattern)
        if problem:
            raise ConfigError(f"{where}: {problem}")


def path_problem(value: str) -> str | None:
    """Why ``value`` cannot name a file or directory at all, or None."""
    if "\0" in value:
        return "a path cannot contain a NUL character"
    return None


def file_problem(path: Path) -> str | None:
    """Why the configuration file ``path`` cannot be read, or None when it
    is a file: no such file, not a file, or what the system says (a name
    longer than it allows)."""
    problem = path_problem(str(path))
    if problem:
        return problem
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "no such file"
        return f"cannot read: {exc.strerror or exc}"
    return None if stat.S_ISREG(st.st_mode) else "not a file"


def shown_path(path: Path | str) -> str:
    """``path`` for a message: a very long one is shortened in the middle."""
    text = str(path)
    return text if len(text) <= 160 else f"{text[:80]}...{text[-40:]} ({len(text):,} characters)"


def table_values(table: dict[str, Any], source: str, known: frozenset[str], lines: list[str] | None = None,
                 base: Path | None = None) -> dict[str, Any]:
    """The keys of one file's table, checked and converted (Settings field
    names; ``extend_*`` keys kept apart for ``config_extend.merge``).
    ``lines`` (the file's text) lets an error name the key's line."""
    from .config_extend import KEYS, where_of

    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.celerylint] must be a table")
    values: dict[str, Any] = {}
    options: dict[str, Any] = {}
    declared = declared_options()
    for key, value in table.items():
        where = where_of(source, lines, key)
        if key in ("select", "extend-select", "ignore", "extend-ignore"):
            values[key.replace("-", "_")] = _codes(value, where, known)
        elif key in ("exclude", "extend-exclude"):
            values[key.replace("-", "_")] = _globs(value, where)
        elif key in ("force-exclude", "respect-gitignore"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected true or false")
            values[key.replace("-", "_")] = value
        elif key in ("per-file-ignores", "extend-per-file-ignores"):
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a table of glob = [codes]")
            _check_globs(value, where)
            values[key.replace("-", "_")] = tuple(
                (pattern, _codes(codes, f"{where}.{pattern!r}", known)) for pattern, codes in value.items()
            )
        elif key in ("cache-dir", "extend"):
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: expected a path (a string)")
            if path_problem(value):
                raise ConfigError(f"{where}: {path_problem(value)}")
            values[key.replace("-", "_")] = Path(os.path.normpath(base / value)) if base is not None else Path(value)
        elif key in declared:
            try:
                options[key] = declared[key].parse(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        else:
            from .config_extend import suggestion

            raise ConfigError(f"{where_of(source, lines, key, False)}: unknown key {key!r}{suggestion(key, (*KEYS, *declared))}")
    values["options"] = options
    return values


def read_table(path: Path, known: frozenset[str]) -> dict[str, Any]:
    """The checked values of the configuration file ``path`` alone."""
    data = _load_toml(path)
    if not isinstance(data, dict):  # pragma: no cover - tomllib always gives a dict
        raise ConfigError(f"{path}: not a TOML table")
    if path.name == "pyproject.toml":
        table = _tool_table(data, path)
        if table is None:
            table = {}
    else:
        table = data
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = None
    if lines is not None and path.name == "pyproject.toml":
        lines = _section(lines)
    return table_values(table, str(path), known, lines, path.resolve().parent)


def _section(lines: list[str]) -> list[str]:
    """The lines of ``[tool.celerylint]`` (the others blanked, so numbers stay)."""
    out, inside = [], False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("["):
            inside = stripped.replace(" ", "").startswith(("[tool.celerylint]", "[tool.celerylint."))
        out.append(line if inside else "")
    return out


def load_settings(config: Path | None, cwd: Path, known: frozenset[str]) -> Settings:
    """Read the explicit ``config`` file, or discover one upwards from ``cwd``,
    with the files it ``extend``s (config_extend.py)."""
    from .config_extend import load_chain

    cwd = cwd.resolve()
    root = project_root(cwd)
    path = config if config is not None else find_config(cwd)
    if path is None:
        return Settings(root=root, config_dir=root)
    settings, chain = load_chain(path, root, known)
    return replace(settings, config_file=path, config_dir=path.resolve().parent, config_chain=chain)


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
