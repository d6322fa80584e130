"""The gates of CL215 and CL216 over CPython's ``ast`` (no libcst here):
whether a file may pass a model to a task, or dispatch in a transaction
opened elsewhere.  Each is a superset of what its rule reports; the names
the rules share with them are defined here."""

from __future__ import annotations

import ast

DISPATCH = frozenset({"delay", "apply_async", "send_task"})
SENDING = frozenset({"delay", "apply_async", "s", "si"})
MANAGERS = frozenset({"objects", "_default_manager", "_base_manager"})
SHORTCUTS = frozenset({"get_object_or_404", "get_list_or_404"})
MODEL_SIGNAL_NAMES = ("pre_save", "post_save", "pre_delete", "post_delete", "m2m_changed")
# hooks that Django's admin ``changeform_view``/``delete_view`` call inside ``transaction.atomic``
ADMIN_HOOKS = frozenset({"save_model", "save_related", "save_formset", "delete_model", "response_add",
                         "response_change", "response_delete"})
VIEW_HOOKS = frozenset({"form_valid", "perform_create", "perform_update", "perform_destroy"})

_Function = (ast.FunctionDef, ast.AsyncFunctionDef)


def _name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _calls(node: ast.AST, methods: frozenset[str]):
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in methods:
            yield n


def _params(func) -> list[str]:
    a = func.args
    return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


def _functions(tree: ast.Module):
    """Module-level functions and the methods of module-level classes."""
    for node in tree.body:
        if isinstance(node, _Function):
            yield node
        elif isinstance(node, ast.ClassDef):
            yield from (n for n in node.body if isinstance(n, _Function))


def _aliases(tree: ast.Module, names) -> set[str]:
    """``names`` and what the file imports them as."""
    found = set(names)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found.update(a.asname for a in node.names if a.name in names and a.asname)
    return found


def may_dispatch_in_outer_transaction(tree: ast.Module, text: str) -> bool:
    """CL216's gate: a signal connection, or a dispatch in a function that may
    be a receiver, an admin or view hook, a view, or a callee of ``atomic``."""
    atomic = "atomic" in text
    signals = _aliases(tree, MODEL_SIGNAL_NAMES)
    for call in _calls(tree, frozenset({"connect"})):
        if _name(call.func.value) in signals:
            return True
    receivers = _aliases(tree, ("receiver",))
    for func in _functions(tree):
        if not any(True for _ in _calls(func, DISPATCH)):
            continue
        params = _params(func)
        if (atomic or "sender" in params or "request" in params[:2] or func.name in VIEW_HOOKS | ADMIN_HOOKS
                or any(isinstance(d, ast.Call) and _name(d.func) in receivers for d in func.decorator_list)):
            return True
    return False


def may_pass_model(tree: ast.Module, text: str) -> bool:
    """CL215's gate: an argument of a dispatch or signature that may be a
    model instance or queryset (``domain/model_values.py``)."""
    shortcuts = _aliases(tree, SHORTCUTS)
    sources = any(
        (isinstance(n, ast.Attribute) and n.attr in MANAGERS | {"user"}) or _name(n) in shortcuts
        or (isinstance(n, ast.arg) and n.arg == "instance")
        for n in ast.walk(tree)
    )
    for call in _calls(tree, SENDING):
        for value in _arguments(call):
            if isinstance(value, ast.Attribute) and value.attr == "user":
                return True
            if sources and isinstance(value, (ast.Name, ast.Call)):
                return True
    return False


def _arguments(call: ast.Call) -> list[ast.AST]:
    """What CL215 reads of a call: every argument, and for ``apply_async`` the
    elements of its literal ``args`` and ``kwargs``."""
    values = [*call.args, *(k.value for k in call.keywords)]
    if call.func.attr != "apply_async":
        return values
    out: list[ast.AST] = []
    for v in values:
        if isinstance(v, (ast.Tuple, ast.List)):
            out.extend(v.elts)
        elif isinstance(v, ast.Dict):
            out.extend(v.values)
    return out
