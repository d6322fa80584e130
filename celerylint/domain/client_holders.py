"""Which project class an object is an instance of, where a client may hang
off it: ``self`` in a method, ``self`` of a bound task (its ``base=``), a
parameter annotated with a class, or a parameter of a module function whose
every call in the module passes one of those (``def release(task, key):
task.redis.delete(key)`` called as ``release(self, key)`` from a bound
task).  The client index then says what ``<class>.<attribute>`` holds
(``facts/client_index.py``: class attributes, properties, what the
methods assign to ``self.x``, inherited from the first project base)."""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext, dotted_name
from .tasks import function_task_options

_MAX_CALLERS = 50


def instance_class(name: cst.Name, ctx: FileContext, depth: int = 0) -> str | None:
    """The project-wide name of the class ``name`` is an instance of, where
    the current node is; None when unknown."""
    function = function_binding(name.value, ctx)
    if function is None:
        return None
    return _parameter_class(function, name.value, ctx.classes[-1] if is_method(function, ctx) else None, ctx, depth)


def function_binding(name: str, ctx: FileContext) -> cst.FunctionDef | None:
    """The innermost function around the node whose parameter ``name`` is
    (not bound again in its body)."""
    for scope in reversed(ctx.scopes):
        if isinstance(scope.node, cst.FunctionDef):
            if name in scope.bindings or name in scope.reassigned:
                return None
            if name in _params(scope.node):
                return scope.node
        elif isinstance(scope.node, cst.Lambda):
            return None
    return None


def _params(function: cst.FunctionDef) -> list[str]:
    p = function.params
    return [x.name.value for x in (*p.posonly_params, *p.params)]


def is_method(function: cst.FunctionDef, ctx: FileContext) -> bool:
    return bool(ctx.classes) and any(s is function for s in ctx.classes[-1].body.body)


def _parameter_class(function: cst.FunctionDef, name: str, cls: cst.ClassDef | None, ctx: FileContext,
                     depth: int) -> str | None:
    params = _params(function)
    index = params.index(name)
    if cls is not None and index == 0 and not _static(function, ctx):
        return _own(cls.name.value, ctx)  # self / cls
    annotation = _annotation(function, name)
    if annotation is not None:
        return _class_name(annotation, ctx)
    if cls is None and index == 0:
        options = function_task_options(function, ctx)
        bind = options.get("bind") if options is not None else None
        if isinstance(bind, cst.Name) and bind.value == "True":
            base = options.get("base")
            return _class_name(base, ctx) if base is not None else None
    if cls is None and depth < 2 and ctx.module is not None and any(s is function for s in ctx.module.body):
        return _callers_class(function, index, ctx, depth)
    return None


def _static(function: cst.FunctionDef, ctx: FileContext) -> bool:
    return any(ctx.qualify(d.decorator) == "staticmethod" for d in function.decorators)


def _annotation(function: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
    p = function.params
    for x in (*p.posonly_params, *p.params):
        if x.name.value == name and x.annotation is not None:
            return x.annotation.annotation
    return None


def _own(cls: str, ctx: FileContext) -> str | None:
    return f"{ctx.module_name}.{cls}" if ctx.module_name else None


def _class_name(node: cst.BaseExpression, ctx: FileContext) -> str | None:
    """A class of the project named by ``node`` (imported, or of this module)."""
    if isinstance(node, cst.SimpleString):
        return None
    name = dotted_name(node)
    if name is None:
        return None
    head = name.partition(".")[0]
    if head in ctx.imports:
        return ctx.qualify(node)
    if ctx.module is not None and any(isinstance(s, cst.ClassDef) and s.name.value == name for s in ctx.module.body):
        return _own(name, ctx)
    return None


def _callers_class(function: cst.FunctionDef, index: int, ctx: FileContext, depth: int) -> str | None:
    """The one class every call of ``function`` in this module passes an
    instance of at position ``index`` (by position, or by keyword)."""
    cache = ctx.__dict__.setdefault("_callers_class", {})
    key = (function.name.value, index)
    if key in cache:
        return cache[key]
    cache[key] = None  # recursion through callers: unknown
    name = _params(function)[index]
    found: set[str | None] = set()
    calls = list(_calls_of(function.name.value, ctx.module))
    if not calls or len(calls) > _MAX_CALLERS:
        return None
    for call, caller, cls in calls:
        args = [a for a in call.args if a.keyword is None and not a.star]
        if any(a.star for a in call.args):
            return None
        given = args[index].value if index < len(args) else next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
        if not isinstance(given, cst.Name) or caller is None or given.value not in _params(caller):
            return None
        found.add(_parameter_class(caller, given.value, cls, ctx, depth + 1))
    result = found.pop() if len(found) == 1 else None
    cache[key] = result
    return result


def _calls_of(name: str, module: cst.Module):
    """``(call, enclosing function, its class)`` for each ``name(...)`` call of the module."""
    todo: list[tuple[cst.CSTNode, cst.FunctionDef | None, cst.ClassDef | None]] = [(module, None, None)]
    while todo:
        node, function, cls = todo.pop()
        for child in node.children:
            if isinstance(child, cst.Call) and isinstance(child.func, cst.Name) and child.func.value == name:
                yield child, function, cls
            if isinstance(child, cst.FunctionDef):
                todo.append((child, child, cls if function is None and isinstance(node, cst.IndentedBlock)
                             and cls is not None and node is cls.body else None))
            elif isinstance(child, cst.ClassDef):
                todo.append((child, None, child))
            else:
                todo.append((child, function, cls))
