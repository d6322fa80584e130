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

from dataclasses import replace
from pathlib import Path
from typing import Any

from .settings import ConfigError, Settings, project_root
from .table import file_problem, find_config, read_table, shown_path

# (key, its extend- twin): the twin adds to the value the chain has so far
_LISTS = (("ignore", "extend_ignore"), ("exclude", "extend_exclude"), ("per_file_ignores", "extend_per_file_ignores"))
MAX_DEPTH = 32


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
        elif key == "extend_fixable":  # kept apart: an empty ``fixable`` means every code
            out["extend_fixable"] = base.get("extend_fixable", ()) + value
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
    merged = {k: v for k, v in _own(values).items() if k != "extend" and not k.startswith("extend_") or k in ("extend_select", "extend_fixable")}
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


def load_settings(config: Path | None, cwd: Path, known: frozenset[str]) -> Settings:
    """Read the explicit ``config`` file, or discover one upwards from ``cwd``,
    with the files it ``extend``s (this module)."""
    from .extend import load_chain

    cwd = cwd.resolve()
    root = project_root(cwd)
    path = config if config is not None else find_config(cwd)
    if path is None:
        return Settings(root=root, config_dir=root)
    settings, chain = load_chain(path, root, known)
    return replace(settings, config_file=path, config_dir=path.resolve().parent, config_chain=chain)
