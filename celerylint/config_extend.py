"""Configuration inheritance (``extend = "../base.toml"``), the ``extend-*``
keys, and error messages that name the line and suggest the closest key.

Each file of a chain is read on its own (``config.read_table``); then, from
the base to the file celerylint found, a key a file sets replaces the
value so far, and its ``extend-*`` twin adds to it (``extend-select``,
``extend-ignore``, ``extend-exclude``, ``extend-per-file-ignores``).  A
``select`` also drops the ``extend-select`` of the files before it, as
``--select`` does on the command line.  The path in ``extend`` is relative
to the file that names it; a chain that comes back to a file already read is
an error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .config import ConfigError, Settings, file_problem, read_table, shown_path

# The keys of [tool.celerylint] besides the options (config.declared_options).
KEYS = (
    "select", "extend-select", "ignore", "extend-ignore", "exclude", "extend-exclude",
    "force-exclude", "respect-gitignore", "per-file-ignores", "extend-per-file-ignores",
    "cache-dir", "extend",
)
# (key, its extend- twin): the twin adds to the value the chain has so far
_LISTS = (("ignore", "extend_ignore"), ("exclude", "extend_exclude"), ("per_file_ignores", "extend_per_file_ignores"))
MAX_DEPTH = 32


def suggestion(word: str, candidates) -> str:
    """`` (did you mean 'lock-ttl'?)`` for the closest candidate, or ''."""
    import difflib

    wanted = word.strip().lower().replace("_", "-")
    pool = {c.lower(): c for c in candidates}
    if wanted in pool and wanted != word:
        return f" (did you mean {pool[wanted]!r}?)"
    close = difflib.get_close_matches(wanted, list(pool), n=1, cutoff=0.6)
    return f" (did you mean {pool[close[0]]!r}?)" if close else ""


def suggest_rule(word: str) -> str:
    """`` (did you mean 'CL203' (lock-without-ttl)?)`` for the rule whose code
    or name is closest to ``word``, or ''."""
    import difflib

    from .registry import rules

    by = {e.code.lower(): e for e in rules()} | {e.name: e for e in rules()}
    wanted = word.strip().lower().replace("_", "-")
    if re.fullmatch(r"cl[\doil]+", wanted):  # CL2O3, CLI03: letters typed for digits
        wanted = "cl" + wanted[2:].translate(str.maketrans("oil", "011"))
    close = difflib.get_close_matches(wanted, list(by), n=1, cutoff=0.6)
    if not close:
        return ""
    entry = by[close[0]]
    return f" (did you mean {entry.code!r} ({entry.name})?)"


def where_of(source: str, lines: list[str] | None, key: str, with_key: bool = True) -> str:
    """``file:line: key`` when the key's line is found, else ``file: key``."""
    if not with_key:
        return where_of(source, lines, key).rpartition(": ")[0]
    if lines:
        pattern = re.compile(r"^\s*(?:" + re.escape(key) + r'|"' + re.escape(key) + r'"' + r"|'" + re.escape(key) + r"')\s*=")
        for number, line in enumerate(lines, 1):
            if pattern.match(line):
                return f"{source}:{number}: {key}"
    return f"{source}: {key}"


def merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """The values of ``child`` over those of ``base`` (both already merged
    with their own ``extend-*`` keys)."""
    out = dict(base)
    for key, value in child.items():
        if key == "options":
            out["options"] = {**base.get("options", {}), **value}
        elif key == "select":
            out["select"], out["extend_select"] = value, child.get("extend_select", ())
        elif key == "extend_select":
            if "select" not in child:
                out["extend_select"] = base.get("extend_select", ()) + value
        elif not key.startswith("extend_") and key != "extend":
            out[key] = value
    for key, twin in _LISTS:
        if twin in child:
            out[key] = out.get(key, ()) + child[twin]
    return out


def _own(values: dict[str, Any]) -> dict[str, Any]:
    """One file's values with its own ``extend-*`` keys folded in."""
    return merge({}, values)


def settings_from_values(values: dict[str, Any], root: Path) -> Settings:
    merged = {k: v for k, v in _own(values).items() if k != "extend" and not k.startswith("extend_") or k == "extend_select"}
    options = merged.pop("options", {})
    return Settings(root=root, options=tuple(sorted(options.items())), **merged)


def load_chain(path: Path, root: Path, known: frozenset[str]) -> tuple[Settings, tuple[Path, ...]]:
    """The settings of ``path`` and the files it extends, and those files
    (``path`` first, the base last)."""
    chain: list[Path] = []
    layers: list[dict[str, Any]] = []
    seen: set[Path] = set()
    current: Path | None = path
    while current is not None:
        problem = file_problem(current) if chain else None
        if problem:  # before resolve(): a name too long for the system is an OSError there
            raise ConfigError(f"{chain[-1]}: extend: {shown_path(current)}: {problem}")
        real = current.resolve()
        if real in seen:
            names = " -> ".join(str(p) for p in (*chain, current))
            raise ConfigError(f"{chain[-1]}: extend: a cycle: {names}")
        if len(chain) >= MAX_DEPTH:
            raise ConfigError(f"{chain[-1]}: extend: more than {MAX_DEPTH} files deep")
        seen.add(real)
        chain.append(current)
        values = read_table(current, known)
        layers.append(values)
        current = values.get("extend")
    merged: dict[str, Any] = {}
    for values in reversed(layers):
        merged = merge(merged, values)
    return settings_from_values(merged, root), tuple(chain)
