"""The editor's overrides of the configuration.  The project and the
configuration of each file are found as the command line finds them
(``config.roots``, through ``engine.Session``); these go on top, as the
command line's selection options do.

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
from typing import Any

from ..config.settings import Settings

DEBOUNCE_MS = 50


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
