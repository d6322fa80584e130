"""Module names, without libcst."""

from __future__ import annotations


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
