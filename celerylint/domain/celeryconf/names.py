"""A setting whose value is a name of another settings module, read as that
module's value.

``from .base import *`` then ``"LOCATION": REDIS_URL``: the file phase cannot
read ``base``, and records the value as unknown with the origin
``name:config.settings.base.REDIS_URL`` (``values_origin.py``: the module
binds the name once, or the name is imported from it).  When the project
records that module's one unconditional assignment of the name (a settings
module records every module-level name), the value is that assignment's:
``env("REDIS_URL", default=...)`` gives the same environment value as the
broker that reads ``REDIS_URL`` in ``base``.  A name bound more than once,
in a branch, or in a module that is not read stays the unknown origin.
"""

from __future__ import annotations

from typing import Any

_MAX_DEPTH = 4


def resolve_names(assignments: dict[str, list], depth: int = 0) -> None:
    """Replace, in place, each ``same`` value of a module-level name by what
    that module assigns to it (dict items too)."""
    for assigned in assignments.values():
        for a in assigned:
            a.value = _resolved(a.value, assignments, 0)


def _resolved(encoded: Any, assignments: dict[str, list], depth: int) -> Any:
    if depth > _MAX_DEPTH or not isinstance(encoded, dict):
        return encoded
    if "dict" in encoded:
        return {**encoded, "dict": {k: _resolved(v, assignments, depth + 1) for k, v in encoded["dict"].items()}}
    origin = encoded.get("same")
    if not isinstance(origin, str) or not origin.startswith("name:") or "#" in origin:
        return encoded
    module, _, name = origin[5:].rpartition(".")
    found = [a for a in assignments.get(f"module:{module}", ()) if a.name == name]
    if len(found) != 1 or found[0].cond or found[0].value is None:
        return encoded
    value = _resolved(found[0].value, assignments, depth + 1)
    return _appended(value, encoded.get("suffix") or "", encoded)


def _appended(value: dict[str, Any], suffix: str, original: dict[str, Any]) -> Any:
    """``value`` with the literal ``suffix`` the reading added (``REDIS_URL + "/1"``)."""
    if not suffix:
        return value
    if "same" in value:
        return {**value, "suffix": (value.get("suffix") or "") + suffix}
    if isinstance(value.get("const"), str):
        return {"const": value["const"] + suffix}
    if "env" in value and isinstance(value.get("default"), dict) and isinstance(value["default"].get("const"), str):
        return {**value, "default": {"const": value["default"]["const"] + suffix}}
    return original
