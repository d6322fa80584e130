"""What the server reads as configuration: the project's own (the nearest
``celerylint.toml`` or ``pyproject.toml`` with ``[tool.celerylint]``, as
the command line reads it), and the editor's overrides on top.

The overrides come from ``initializationOptions`` and from
``workspace/configuration`` (section ``celerylint``), with ruff's server
names: ``select``, ``extendSelect``, ``ignore`` (lists of codes or
prefixes, as ``--select``, ``--extend-select`` and ``--ignore``),
``unsafeFixes`` (offer unsafe fixes as code actions; default true, each
labelled "(unsafe)") and ``debounce`` (milliseconds of quiet after a
change before the buffer is analysed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..config.settings import ConfigError, Settings, project_root

DEBOUNCE_MS = 150


@dataclass(frozen=True)
class Overrides:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool = True
    debounce_ms: int = DEBOUNCE_MS

    @classmethod
    def parse(cls, raw: Any) -> tuple[Overrides, list[str]]:
        """The overrides an editor sent, and what was wrong with them (a
        value of the wrong type is ignored with a message, never fatal)."""
        problems: list[str] = []
        if isinstance(raw, dict) and isinstance(raw.get("celerylint"), dict):
            raw = raw["celerylint"]  # {"celerylint": {...}}, as some clients nest it
        if not isinstance(raw, dict):
            return cls(), ([] if raw is None else [f"settings: expected an object, got {type(raw).__name__}"])

        def codes(key: str) -> tuple[str, ...] | None:
            value = raw.get(key)
            if value is None:
                return None
            if isinstance(value, str):
                value = value.split(",")
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                problems.append(f"settings: {key}: expected a list of codes")
                return None
            return tuple(v.strip().upper() for v in value if v.strip())

        unsafe = raw.get("unsafeFixes", True)
        if not isinstance(unsafe, bool):
            problems.append("settings: unsafeFixes: expected true or false")
            unsafe = True
        debounce = raw.get("debounce", DEBOUNCE_MS)
        if isinstance(debounce, bool) or not isinstance(debounce, int) or not 0 <= debounce <= 10_000:
            problems.append("settings: debounce: expected milliseconds between 0 and 10000")
            debounce = DEBOUNCE_MS
        return cls(select=codes("select"), extend_select=codes("extendSelect") or (),
                   ignore=codes("ignore") or (), unsafe_fixes=unsafe, debounce_ms=debounce), problems

    def apply(self, settings: Settings) -> Settings:
        """``settings`` with the overrides on top, as the command line's
        selection options go on top of the configuration."""
        from ..config.table import check_codes
        from ..registry import known_codes

        known = known_codes()
        if self.select is not None:
            settings = replace(settings, select=tuple(check_codes(list(self.select), "select", known)),
                               extend_select=())
        if self.extend_select:
            settings = replace(settings, extend_select=settings.extend_select
                               + tuple(check_codes(list(self.extend_select), "extendSelect", known)))
        if self.ignore:
            settings = replace(settings, ignore=settings.ignore + tuple(check_codes(list(self.ignore), "ignore", known)))
        return settings


def settings_for(path: Path, folders: list[Path], overrides: Overrides) -> Settings:
    """The settings the command line would use for ``path``: its nearest
    configuration file and the files that file extends; paths relative to
    the git work tree, else to the configuration's directory, else to the
    workspace folder holding the file.  ConfigError when the configuration
    cannot be read."""
    from ..config.extend import load_settings
    from ..config.table import file_problem, find_config, shown_path
    from ..registry import known_codes

    directory = path.parent
    config = find_config(directory)
    if config is not None and file_problem(config):
        raise ConfigError(f"{shown_path(config)}: {file_problem(config)}")
    top = project_root(directory)
    if not (top / ".git").exists():
        folder = next((f for f in folders if directory == f or f in directory.parents), None)
        top = config.parent if config is not None else (folder or directory)
    return overrides.apply(load_settings(config, top, known_codes()))


def scope_of(settings: Settings, path: Path, folders: list[Path]) -> Path:
    """The directory read as the project for ``path``: the configuration's
    directory, else the git work tree, else the workspace folder holding
    it, else the file's own directory."""
    from ..run.focus import project_directory

    found = project_directory(settings)
    if found is not None:
        return found
    return next((f for f in folders if f == path.parent or f in path.parents), path.parent)
