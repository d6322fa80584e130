"""CPython's ``ast`` pass over one file: the parse, the checkers' gates, the syntax collectors.
"""

from __future__ import annotations

import ast
from typing import Any

from ..api.syntax import SyntaxFile


def parse(text: str) -> ast.Module | None:
    """The module's ``ast``, or None (the file is left to libcst, which words its error)."""
    import warnings

    from .guard import too_large

    if too_large(text) is not None:  # the guard's bounds: CPython's tree would take hundreds of MB
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text)
        except Exception:  # SyntaxError, ValueError, RecursionError, MemoryError
            return None


def gate(name: str, tree: ast.Module, text: str) -> bool:
    """Call the gate ``"module:function"`` (``rule.Checker.GATE``) on the file's ``tree`` and ``text``."""
    import importlib

    module, _, function = name.partition(":")
    return bool(getattr(importlib.import_module(module), function)(tree, text))


def collect(path: str, text: str, module_name: str | None, settings: Any, entries: list,
            tree: ast.Module | None) -> list[dict[str, Any]]:
    """The facts of every syntax collector in ``entries`` for one file (its
    ``tree``), as JSON data."""
    if tree is None:
        return []
    source = SyntaxFile(path, text, module_name, settings)
    try:
        source.record_imports(tree)
        for entry in entries:
            entry.load()(source).collect(tree)
    except RecursionError:  # nested too deeply: libcst, or the guard, words that
        return []
    if not source.facts:
        return []
    import json

    return json.loads(json.dumps(source.facts))
