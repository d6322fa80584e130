"""``--config KEY=VALUE``: one key of ``[tool.celerylint]`` given on the
command line as inline TOML, as ruff takes it, laid over the settings the
configuration files gave (after them, before the other options)."""

from __future__ import annotations

import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from .extend import merge
from .settings import ConfigError, Settings
from .table import table_values


def parse_override(text: str, known: frozenset[str], cwd: Path) -> dict[str, Any]:
    """The checked values of ``KEY = VALUE`` (a path in it is relative to ``cwd``)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    where = f"--config {text!r}"
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: neither a file nor a valid `KEY = VALUE` TOML pair ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{where}: values nested too deeply") from None
    if "extend" in table:
        raise ConfigError(f"{where}: `extend` can only be set in a configuration file")
    return table_values(table, where, known, None, cwd)


def apply_overrides(settings: Settings, overrides: list[dict[str, Any]]) -> Settings:
    """``settings`` with each override's keys set over it, in order, as a
    file that ``extend``s the configuration would set them."""
    if not overrides:
        return settings
    names = {f.name for f in fields(Settings)}
    values: dict[str, Any] = {n: getattr(settings, n) for n in names if n != "options"}
    values["options"] = dict(settings.options)
    for override in overrides:
        values = merge(values, override)
    options = values.pop("options")
    return replace(settings, options=tuple(sorted(options.items())), **{k: v for k, v in values.items() if k in names})
