"""Does a value derive from a fresh random or time value (CL201)?  Through
local names, f-strings, ``%``, ``+``, ``.format``, ``join``, ``str()``,
``.hex``, slicing, and the key helpers of the module that return one."""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from .fresh_syntax import RANDOM_CALLS, TIME_CALLS  # noqa: F401 - dataflow takes TIME_CALLS from here

_MAX_DEPTH = 8

# conversions and methods that keep a value fresh (others, like strftime or
# date(), may bucket a time value and make a deliberate key)
KEEP_FRESH_FUNCS = frozenset({"str", "repr", "int", "float", "bytes"})
KEEP_FRESH_METHODS = frozenset({
    "hex", "isoformat", "timestamp", "encode", "decode", "lower", "upper", "replace", "strip", "format", "join",
})
KEEP_FRESH_ATTRS = frozenset({"hex", "int", "urn", "bytes"})


def params_of(func: cst.FunctionDef) -> set[str]:
    p = func.params
    names = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def _bound(name: cst.Name, ctx: FileContext, params: set[str]) -> cst.BaseExpression | None:
    if name.value in params:
        return None
    return ctx.lookup(name.value)


def fresh_origin(expr: cst.BaseExpression, ctx: FileContext, params: frozenset[str] | set[str] = frozenset(),
                 _depth: int = 0) -> cst.Call | None:
    """The call that makes a fresh random/time value ``expr`` derives from
    (directly, through local names, f-strings, ``%``, ``+``, ``.format``,
    ``str()``, ``.hex``, slicing), or None."""
    if _depth > _MAX_DEPTH:
        return None
    again = lambda e: fresh_origin(e, ctx, params, _depth + 1)  # noqa: E731
    if isinstance(expr, cst.Name):
        bound = _bound(expr, ctx, params)
        return again(bound) if bound is not None else None
    if isinstance(expr, cst.Await):
        return again(expr.expression)
    if isinstance(expr, cst.FormattedString):
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringExpression):
                origin = again(part.expression)
                if origin is not None:
                    return origin
        return None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, (cst.Add, cst.Modulo)):
            return again(expr.left) or again(expr.right)
        return None
    if isinstance(expr, (cst.Tuple, cst.List)):
        for element in expr.elements:
            origin = again(element.value)
            if origin is not None:
                return origin
        return None
    if isinstance(expr, cst.Subscript):
        return again(expr.value)
    if isinstance(expr, cst.Attribute):
        return again(expr.value) if expr.attr.value in KEEP_FRESH_ATTRS else None
    if isinstance(expr, cst.Call):
        name = ctx.imported_name(expr.func)
        if name in RANDOM_CALLS or name in TIME_CALLS:
            return expr
        func = expr.func
        helper = ctx.module_functions.get(func.value) if isinstance(func, cst.Name) else None
        if helper is not None and func.value not in ctx.imports and _returns_fresh(helper, ctx, _depth):
            return expr  # a key helper of this module: def job_key(): return f"job:{uuid4()}"
        if isinstance(func, cst.Name) and func.value in KEEP_FRESH_FUNCS and func.value not in ctx.imports:
            return again(expr.args[0].value) if expr.args else None
        if isinstance(func, cst.Attribute) and func.attr.value in KEEP_FRESH_METHODS:
            origin = again(func.value)
            if origin is None and func.attr.value in ("format", "join"):
                for a in expr.args:
                    origin = again(a.value)
                    if origin is not None:
                        break
            return origin
    return None


def _returns_fresh(helper: cst.FunctionDef, ctx: FileContext, depth: int) -> bool:
    """Every value the helper returns derives from a fresh value made in
    the return itself (its local names are not followed)."""
    returns = [r for r in _own_returns(helper.body) if r.value is not None]
    names = {n.value for r in returns for n in _names(r.value)} | params_of(helper)
    return bool(returns) and all(fresh_origin(r.value, ctx, names, depth + 1) is not None for r in returns)


def _own_returns(node: cst.CSTNode):
    for child in node.children:
        if isinstance(child, cst.Return):
            yield child
        elif not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            yield from _own_returns(child)


def _names(node: cst.CSTNode):
    if isinstance(node, cst.Name):
        yield node
    for child in node.children:
        yield from _names(child)
