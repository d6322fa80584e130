"""Module names, without libcst."""

from __future__ import annotations

from functools import cache
from pathlib import Path


def absolute_module(module_name: str | None, path: str, level: int, module: str) -> str:
    """The absolute module of ``from <level dots><module> import`` in the file
    ``path`` whose module is ``module_name``; left relative (leading dots)
    when the file's package is unknown."""
    if not level:
        return module
    parts = module_name.split(".") if module_name else []
    if parts and not path.endswith("__init__.py"):
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    if not parts:
        return "." * level + module
    base = ".".join(parts)
    return f"{base}.{module}" if module else base


@cache
def module_name_for(path: Path) -> str | None:
    """The dotted module name of a file, from the ``__init__.py`` chain above it."""
    path = Path(path)
    parts = [] if path.name == "__init__.py" else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").exists():
        parts.append(directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    if not parts:
        return None
    if path.name == "__init__.py" and not parts:
        return None
    return ".".join(reversed(parts)) or None
