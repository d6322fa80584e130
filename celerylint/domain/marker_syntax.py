"""What CPython's ``ast`` can tell about "done" markers before libcst parses
a file: the gate of CL202.  No libcst here.

CL202 reads the events of a task's body (``dataflow.flow``): a marker is a
key checked (``get``/``exists``) and then written (``set``/``setex``), or a
model flag tested by a guard that leaves and then assigned and saved.  The
gate asks for those ingredients in some function of the file, in any order
and on any receiver (a superset), so that a task module that never writes
a marker is not parsed for CL202.
"""

from __future__ import annotations

import ast

CHECKS = frozenset({"get", "exists", "has_key"})
MARKS = frozenset({"set", "setex", "psetex"})
_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_OWN = ("self", "cls")


def _flag(node: ast.AST) -> tuple[str, str] | None:
    """``obj.attr`` as ``(obj, attr)``, for a plain name that is not ``self``/``cls``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id not in _OWN:
        return node.value.id, node.attr
    return None


def _may_mark(function: ast.AST) -> bool:
    checks = marks = False
    guarded: set[tuple[str, str]] = set()
    assigned: set[tuple[str, str]] = set()
    saved: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            if not isinstance(func, ast.Attribute):
                continue
            if node.args:  # the key is the first argument, given by position
                checks = checks or func.attr in CHECKS
                marks = marks or func.attr in MARKS
            if func.attr in ("save", "asave") and isinstance(func.value, ast.Name):
                saved.add(func.value.id)
        elif isinstance(node, ast.If):
            if node.body and isinstance(node.body[-1], _LEAVES):
                guarded.update(f for f in map(_flag, ast.walk(node.test)) if f is not None)
        elif isinstance(node, ast.Assign):
            assigned.update(f for f in map(_flag, node.targets) if f is not None)
        if checks and marks:
            return True
    return any(obj in saved for obj, _ in guarded & assigned)


def may_mark_before_effect(tree: ast.Module, text: str) -> bool:
    """A superset of the files in which CL202 can report: some function
    checks and writes a key (``CHECKS`` and ``MARKS`` calls with a
    positional first argument), or tests ``obj.flag`` in an ``if`` that
    leaves, assigns ``obj.flag`` and calls ``obj.save()``."""
    return any(_may_mark(node) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
