"""A setting whose value is a name of another settings module, read as the
binding Python would give it.

``from .base import *`` then ``"LOCATION": REDIS_URL``: the file phase cannot
read ``base``, and records the value as unknown with the origin
``name:config.settings.base.REDIS_URL`` (``values_origin.py``: the module
binds the name once, or the name is imported from it), or, after several
star imports, ``star:<m1>,<m2>:REDIS_URL``.  Here the name is looked up as
Python binds it: in the last star-imported module whose namespace binds it
(a module's namespace holds what it binds and what its own star imports
give, the later winning), through the module's text and the assignments the
project records.  A module that binds the name once, at module level, with
no star import after it that binds it too, gives the value that assignment
records (a settings module records every module-level name):
``env("REDIS_URL", default=...)`` gives the same environment value as the
broker that reads ``REDIS_URL`` in ``base``.  Whatever cannot be decided (a
name bound twice, in a branch, by an import or a ``def``; a star import of
a module that is not linted, or inside a ``try``/``if`` when that module
binds the name; a module with ``__all__``) keeps the origin: the value stays
unknown, and two reads of one origin are still one value.
"""

from __future__ import annotations

import posixpath
from typing import Any

from .texts import read
from .values_origin import STAR_IMPORT, assignment_pattern, other_binding_pattern

_MAX_DEPTH = 8
_ABSENT = object()  # the module's namespace does not bind the name


def resolve_names(model: Any) -> None:
    """Replace, in place, each value read from a name of a settings module
    by what Python binds that name to (dict items too)."""
    names = _Namespaces(model)
    for assigned in model.assignments.values():
        for a in assigned:
            a.value = names.resolved(a.value, 0)


class _Namespaces:
    def __init__(self, model: Any) -> None:
        self.m = model
        self.memo: dict[tuple[str, str, bool], Any] = {}

    def resolved(self, encoded: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH or not isinstance(encoded, dict):
            return encoded
        if "dict" in encoded:
            return {**encoded, "dict": {k: self.resolved(v, depth + 1) for k, v in encoded["dict"].items()}}
        origin = encoded.get("same")
        if not isinstance(origin, str) or "#" in origin:
            return encoded
        if origin.startswith("name:"):
            module, _, name = origin[5:].rpartition(".")
            path = self.m.path_of(module)
            found = self.of_path(path, name, False, 0) if path is not None else None
        elif origin.startswith("star:"):
            listed, _, name = origin[5:].rpartition(":")
            found = self.of_stars([(m.lstrip("?"), m.startswith("?")) for m in listed.split(",")], name)
        else:
            return encoded
        if not isinstance(found, dict):
            return encoded
        return _appended(self.resolved(found, depth + 1), encoded.get("suffix") or "", encoded)

    def of_stars(self, stars: list[tuple[str, bool]], name: str) -> Any:
        """The name as ``from m1 import *``, ``from m2 import *``... bind it,
        in that order: the last module that binds it wins."""
        for module, guarded in reversed(stars):
            path = self.m.path_of(module)
            if path is None:
                if guarded:
                    continue  # an optional import that fails (the settings chain reads it so too)
                return None
            found = self.of_path(path, name, True, 0)
            if found is not _ABSENT:
                return None if guarded else found
        return None  # bound by no module of the list: unknown

    def of_path(self, path: str, name: str, starred: bool, depth: int) -> Any:
        """What the module of ``path`` binds ``name`` to at its end: the
        encoded value, None when it cannot be decided, or ``_ABSENT``.
        ``starred``: as a star import gives it (``_names`` and ``__all__``)."""
        key = (path, name, starred)
        if key not in self.memo:
            self.memo[key] = None  # a cycle of star imports: undecided
            self.memo[key] = self._of_path(path, name, starred, depth)
        return self.memo[key]

    def _of_path(self, path: str, name: str, starred: bool, depth: int) -> Any:
        if depth > _MAX_DEPTH or path in self.m.unparsable:
            return None
        text = read(self.m, path)
        if text is None:
            return None
        if starred and name.startswith("_"):
            return _ABSENT
        if starred and "__all__" in text:
            return None
        if other_binding_pattern(name).search(text):
            return None
        own = list(assignment_pattern(name).finditer(text))
        after = own[-1].end() if own else 0
        for star in reversed([s for s in STAR_IMPORT.finditer(text) if s.start() >= after]):
            target = self._target(path, star)
            if target is None:
                if star.group(1):
                    continue  # optional (``try:``) or not run: as the settings chain reads it
                return None
            found = self.of_path(target, name, True, depth + 1)
            if found is not _ABSENT:
                return None if star.group(1) else found
        if not own:
            return _ABSENT
        if len(own) != 1 or own[0].group(1):
            return None
        recorded = [a for a in self.m.by_path_assignments.get(path, ()) if a.name == name]
        if len(recorded) != 1 or recorded[0].cond or recorded[0].value is None:
            return None
        return recorded[0].value

    def _target(self, path: str, star) -> str | None:
        """The linted file a star import of ``path`` runs."""
        dots, relative, absolute = star.group(2), star.group(3), star.group(4)
        if not dots:
            return self.m.path_of(absolute)
        base = posixpath.dirname(path)
        for _ in range(len(dots) - 1):
            base = posixpath.dirname(base)
        stem = posixpath.join(base, *relative.split(".")) if relative else base
        files = self.m.python_file_set()
        for candidate in (stem + ".py", posixpath.join(stem, "__init__.py")):
            if candidate in files:
                return candidate
        return None


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
