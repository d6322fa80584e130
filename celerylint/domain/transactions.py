"""Whether a module may dispatch a task inside a Django ``atomic`` block,
answered on CPython's ``ast`` before the file is parsed by libcst (CL210's
``GATE``).  A superset of what CL210 reports: any name ``atomic`` (or an
alias of one imported as ``atomic``) counts, from anywhere."""

from __future__ import annotations

import ast

from ..api.syntax import statements

DISPATCH = frozenset({"delay", "apply_async", "send_task"})


def _atomic(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
    while isinstance(node, ast.Attribute):
        if node.attr == "atomic":
            return True
        node = node.value
    return isinstance(node, ast.Name) and node.id in names


def _dispatches(nodes) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in DISPATCH
               for node in nodes for n in ast.walk(node))


def may_dispatch_in_atomic(tree: ast.Module, text: str) -> bool:
    nodes = list(statements(tree.body))  # with-blocks, functions and imports are statements
    names = {"atomic"} | {a.asname for n in nodes if isinstance(n, ast.ImportFrom)
                          for a in n.names if a.name == "atomic" and a.asname}
    for node in nodes:
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_atomic(i.context_expr, names) for i in node.items):
            if _dispatches(node.body):
                return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _atomic(d, names) for d in node.decorator_list):
            if _dispatches(node.body):
                return True
    return False
