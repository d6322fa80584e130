"""One configuration file's ``[tool.celerylint]`` table: found, read and checked.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import Any

from ..api.options import glob_problem
from .settings import ConfigError, declared_options


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


CONFIG_FILES = (".celerylint.toml", "celerylint.toml", "pyproject.toml")  # ruff's order in one directory


def config_in(directory: Path, strict: bool = True) -> Path | None:
    """The configuration file of ``directory`` itself: ``.celerylint.toml``,
    else ``celerylint.toml``, else a pyproject.toml with [tool.celerylint].
    A pyproject.toml that is not TOML is reported (returned) when
    ``strict``; otherwise (a directory met in a walk, where a template's
    pyproject.toml need not be TOML) one that never names celerylint is
    passed over."""
    for name in CONFIG_FILES:
        candidate = directory / name
        if not candidate.is_file():
            continue
        if name != "pyproject.toml":
            return candidate
        if not strict:
            try:
                if b"celerylint" not in candidate.read_bytes():
                    continue
            except OSError:
                continue
        try:
            if _tool_table(_load_toml(candidate), candidate) is not None:
                return candidate
        except ConfigError:
            return candidate  # report the broken file rather than skip it
    return None


def find_config(start: Path) -> Path | None:
    """The configuration file of the nearest directory at or above ``start`` that has one."""
    for directory in (start, *start.parents):
        found = config_in(directory)
        if found is not None:
            return found
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
            from .messages import suggest_rule

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
    names; ``extend_*`` keys kept apart for ``config.extend.merge``).
    ``lines`` (the file's text) lets an error name the key's line."""
    from .messages import KEYS, where_of

    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [tool.celerylint] must be a table")
    values: dict[str, Any] = {}
    options: dict[str, Any] = {}
    declared = declared_options()
    for key, value in table.items():
        where = where_of(source, lines, key)
        if key in ("select", "extend-select", "ignore", "extend-ignore", "fixable", "extend-fixable", "unfixable"):
            values[key.replace("-", "_")] = _codes(value, where, known)
        elif key in ("exclude", "extend-exclude"):
            values[key.replace("-", "_")] = _globs(value, where)
        elif key in ("force-exclude", "respect-gitignore", "fix", "unsafe-fixes"):
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
        elif key == "output-format":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: expected a report format (a string)")
            values["output_format"] = value  # the command line checks the name (it knows the reporters)
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
            from .messages import suggestion

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
