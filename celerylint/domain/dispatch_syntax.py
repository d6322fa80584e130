"""The gates of CL215 and CL216 over CPython's ``ast`` (no libcst here):
whether a file may pass a model to a task, or dispatch in a transaction
opened elsewhere.  Each is a superset of what its rule reports; the names
the rules share with them are defined here."""

from __future__ import annotations

import ast
import re
from bisect import bisect_left

from ..api.syntax import statements

DISPATCH = frozenset({"delay", "apply_async", "send_task"})
SENDING = frozenset({"delay", "apply_async", "s", "si"})
MANAGERS = frozenset({"objects", "_default_manager", "_base_manager"})
SHORTCUTS = frozenset({"get_object_or_404", "get_list_or_404"})
MODEL_SIGNAL_NAMES = ("pre_save", "post_save", "pre_delete", "post_delete", "m2m_changed")
# hooks that Django's admin ``changeform_view``/``delete_view`` call inside ``transaction.atomic``
ADMIN_HOOKS = frozenset({"save_model", "save_related", "save_formset", "delete_model", "response_add",
                         "response_change", "response_delete"})
VIEW_HOOKS = frozenset({"form_valid", "perform_create", "perform_update", "perform_destroy"})
# the decorators of a django-ninja-extra operation, by their last name (``route.post``, ``http_post``)
ROUTE_DECORATORS = frozenset({*(f"http_{v}" for v in ("get", "post", "put", "patch", "delete", "generic")),
                              "get", "post", "put", "patch", "delete", "generic"})

_Function = (ast.FunctionDef, ast.AsyncFunctionDef)
_DISPATCH_WORD = re.compile(r"delay|apply_async|send_task")
_ATOMIC_WORD = re.compile(r"atomic")
# The name of a sending attribute follows its ``.`` on the same line, or
# starts a line (after a comment, a line continuation or a newline inside
# brackets ends the line of the ``.``).
_GLOBAL = re.compile(r"global\b")  # a ``global`` statement, where not preceded by a word character
_SENDING_WORDS = (re.compile(r"\.[ \t\f]*(?:delay|apply_async|si?)\b"),
                  re.compile(r"\n[ \t\f]*(?:delay|apply_async|si?)\b"))


class _WordLines:
    """The lines of a file on which a word occurs (the line of the end of a
    match of any of the patterns), to pass over functions that cannot hold
    it without walking them (every line, when the file has a lone carriage
    return: CPython counts those as line ends too)."""

    def __init__(self, text: str, *words: re.Pattern) -> None:
        self.lines: list[int] | None = None
        if "\r" in text:
            return
        ends = sorted(m.end() - 1 for word in words for m in word.finditer(text))
        lines, line, pos = [], 1, 0
        for end in ends:
            line += text.count("\n", pos, end)
            pos = end
            if not lines or lines[-1] != line:
                lines.append(line)
        self.lines = lines

    def within(self, func) -> bool:
        """The word occurs in ``func`` (a definition, its decorators included, or a statement)."""
        if self.lines is None:
            return True
        first = min((d.lineno for d in getattr(func, "decorator_list", ())), default=func.lineno)
        i = bisect_left(self.lines, first)
        return i < len(self.lines) and self.lines[i] <= func.end_lineno


def _name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _params(func) -> list[str]:
    a = func.args
    return [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


def _functions(tree: ast.Module):
    """Module-level functions and the methods of module-level classes, each
    with whether it is a method."""
    for node in tree.body:
        if isinstance(node, _Function):
            yield node, False
        elif isinstance(node, ast.ClassDef):
            yield from ((n, True) for n in node.body if isinstance(n, _Function))


def _aliases(tree: ast.Module, text: str, names) -> set[str]:
    """``names`` and what the file imports them as (imports are statements,
    walked only when the text has a name followed by ``as``)."""
    found = set(names)
    if not any(re.search(re.escape(name) + r"(?:\s|\\|#[^\n]*\n)+as\b", text) for name in names if name in text):
        return found
    for node in statements(tree.body):
        if isinstance(node, ast.ImportFrom):
            found.update(a.asname for a in node.names if a.name in names and a.asname)
    return found


def _atomic(node: ast.AST) -> bool:
    return any(_name(n) == "atomic" for n in ast.walk(node))


def _scan(func, atomic: bool) -> tuple[bool, set[str], set[str]]:
    """Whether ``func`` dispatches, the names it calls, and those it calls
    inside an ``atomic`` block (all of them when it is decorated with one)."""
    dispatches, called, in_atomic = False, set(), set()
    decorated = atomic and any(_atomic(d) for d in func.decorator_list)
    stack: list[tuple[ast.AST, bool]] = [(child, decorated) for child in func.body]
    while stack:
        node, inside = stack.pop()
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in DISPATCH:
                dispatches = True
            elif isinstance(node.func, ast.Name):
                called.add(node.func.id)
                if inside:
                    in_atomic.add(node.func.id)
        if atomic and isinstance(node, (ast.With, ast.AsyncWith)) and any(_atomic(i.context_expr) for i in node.items):
            stack.extend((child, True) for child in node.body)
            stack.extend((i, inside) for i in node.items)
            continue
        stack.extend((child, inside) for child in ast.iter_child_nodes(node))
    return dispatches, called, in_atomic


def _dispatches(func) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in DISPATCH
               for child in func.body for n in ast.walk(child))


def _shaped(func, receivers: set[str]) -> bool:
    """May be a receiver, an admin or view hook, or a view (a ninja-extra operation too)."""
    params = _params(func)
    return ("sender" in params or "request" in params[:2] or func.name in VIEW_HOOKS | ADMIN_HOOKS
            or any(isinstance(d, ast.Call) and _name(d.func) in receivers | ROUTE_DECORATORS
                   for d in func.decorator_list))


def may_dispatch_in_outer_transaction(tree: ast.Module, text: str) -> bool:
    """CL216's gate: a dispatch in a function that may be a receiver, an
    admin or view hook, a view, or a callee of ``atomic`` (directly or
    through one more function of the module); the signal connections are
    facts/signal_connects.py's.  Only the
    functions whose lines hold a dispatch word are walked for a dispatch,
    and only those whose lines say ``atomic`` for the calls in its blocks."""
    functions = list(_functions(tree))
    words = _WordLines(text, _DISPATCH_WORD)
    receivers = _aliases(tree, text, ("receiver",))
    dispatching: set[str] = set()
    for func, method in functions:
        if not words.within(func) or not _dispatches(func):
            continue
        if _shaped(func, receivers):
            return True
        if not method:  # CL216 follows calls from module functions to module functions
            dispatching.add(func.name)
    if not dispatching or "atomic" not in text:
        return False
    module_functions = [func for func, method in functions if not method]
    atomic = _WordLines(text, _ATOMIC_WORD)
    atomic_callees: set[str] = set()
    for func in module_functions:
        if atomic.within(func):
            atomic_callees |= _scan(func, True)[2]
    if dispatching & atomic_callees:
        return True
    reached: set[str] = set()
    for func in module_functions:
        if func.name in atomic_callees:
            reached |= _scan(func, True)[1]
    return bool(dispatching & reached)


def _mentions_model(node: ast.AST, shortcuts: set[str]) -> bool:
    return any((isinstance(n, ast.Attribute) and n.attr in MANAGERS | {"user"}) or _name(n) in shortcuts
               for n in ast.walk(node))


def may_pass_model(tree: ast.Module, text: str) -> bool:
    """CL215's gate: an argument of a dispatch or signature that may be a
    model instance or queryset (``domain/model_values.py``): ``x.user``, a
    call that mentions a manager or a shortcut, a name assigned such a value
    (or a name assigned such a name), a loop variable over one, or a name
    ``instance``.  CL215 reads a name only in the scope of its call, so
    only the module's own statements and the functions and classes whose
    lines hold a sending word are walked (everything, when a ``global``
    statement may bind a module name elsewhere)."""
    shortcuts = _aliases(tree, text, SHORTCUTS)
    arguments: list[ast.AST] = []
    bound: dict[str, list[ast.AST]] = {}
    for part in _sending_parts(tree, text):
        for n in ast.walk(part):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in SENDING:
                arguments.extend(_arguments(n))
            elif isinstance(n, ast.Assign):
                for target in n.targets:
                    if isinstance(target, ast.Name):
                        bound.setdefault(target.id, []).append(n.value)
            elif isinstance(n, (ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor, ast.comprehension)):
                target = n.target
                value = n.iter if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) else n.value
                if isinstance(target, ast.Name) and value is not None:
                    bound.setdefault(target.id, []).append(value)
    if not arguments:
        return False
    mentions: dict[str, bool] = {}

    def model(name: str) -> bool:
        """``name``, or a name it was assigned from (transitively), is
        ``instance`` or was assigned a value that mentions a model."""
        todo, seen = [name], {name}
        while todo:
            current = todo.pop()
            if current not in mentions:
                mentions[current] = current == "instance" or any(
                    not isinstance(v, ast.Name) and _mentions_model(v, shortcuts) for v in bound.get(current, ()))
            if mentions[current]:
                return True
            for v in bound.get(current, ()):
                if isinstance(v, ast.Name) and v.id not in seen:
                    seen.add(v.id)
                    todo.append(v.id)
        return False

    for value in arguments:
        if isinstance(value, ast.Attribute) and value.attr == "user":
            return True
        if isinstance(value, ast.Call) and _mentions_model(value, shortcuts):
            return True
    return any(isinstance(value, ast.Name) and model(value.id) for value in arguments)


def _sending_parts(tree: ast.Module, text: str) -> list[ast.AST]:
    """The parts of the module CL215's gate walks: the functions, and the
    methods and other statements of the classes, whose lines hold a sending
    word; the module's own statements (the module scope) when one of them
    holds one; the whole module when a ``global`` statement may occur."""
    if any(m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_")
           for m in _GLOBAL.finditer(text)):
        return [tree]
    words = _WordLines(text, *_SENDING_WORDS)
    parts: list[ast.AST] = []
    module_code: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, _Function):
            if words.within(node):
                parts.append(node)
        elif isinstance(node, ast.ClassDef):
            if words.within(node):
                parts.extend(n for n in (*node.decorator_list, *node.bases, *node.keywords, *node.body)
                             if not isinstance(n, _Function) or words.within(n))
        else:
            module_code.append(node)
    if any(words.within(node) for node in module_code):  # module-level names are read only there
        parts.extend(module_code)
    return parts


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
