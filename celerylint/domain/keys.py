"""One spelling for a key however it is built: ``f"job:{id}"``,
``"job:%s" % id``, ``"job:{}".format(id)``, ``"job:" + str(id)``,
``":".join(["job", id])`` all read ``job:{id}``.  The check, the marker and
the delete of one key are then recognised as one even when they are written
differently (CL202, CL204).  A key with no literal part (a bare variable, a
call) has no such spelling: its code stands for it, as before."""

from __future__ import annotations

import re

import libcst as cst

from ..api.context import FileContext

_EMPTY = cst.Module([])
# the width starts after the flags (a 0 is a flag), so no run of digits can be split two ways
_PERCENT = re.compile(r"%(?:\([^()]*\))?[-#0 +]*(?:[1-9]\d*)?(?:\.\d+)?[sdirfxXeEgGc%]")
_BRACES = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_MAX_DEPTH = 6

Parts = list[tuple[bool, str]]  # (literal?, text)


def _string_value(node: cst.BaseExpression) -> str | None:
    try:
        value = node.evaluated_value
    except Exception:  # an escape libcst cannot evaluate
        return None
    return value if isinstance(value, str) else None


def _code(node: cst.CSTNode) -> str:
    return re.sub(r"\s+", "", _EMPTY.code_for_node(node))


def spelled(expr: cst.BaseExpression, ctx: FileContext, params: set[str] | frozenset[str] = frozenset()) -> str | None:
    """``job:{id}``: literal text and ``{code}`` for each value, or None
    when the key has no literal part or is not built in a known way."""
    parts = _parts(expr, ctx, params, 0)
    if parts is None or not any(literal and text for literal, text in parts):
        return None
    return "".join(text.replace("{", "{{").replace("}", "}}") if literal else "{" + text + "}"
                   for literal, text in parts)


def _parts(expr: cst.BaseExpression, ctx: FileContext, params, depth: int) -> Parts | None:
    if depth > _MAX_DEPTH:
        return None
    again = lambda e: _parts(e, ctx, params, depth + 1)  # noqa: E731
    text = _string_value(expr) if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)) else None
    if isinstance(text, str):
        return [(True, text)]
    if isinstance(expr, cst.Name):
        bound = None if expr.value in params else ctx.lookup(expr.value)
        if isinstance(bound, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString, cst.BinaryOperation, cst.Call)):
            found = again(bound)
            if found is not None:
                return found
        return [(False, expr.value)]
    if isinstance(expr, cst.FormattedString):
        out: Parts = []
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringText):
                out.append((True, part.value.replace("{{", "{").replace("}}", "}")))
            elif part.format_spec is None and part.conversion in (None, "s"):
                out.extend(_value(part.expression, ctx, params, depth))
            else:
                return None
        return out
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Add):
            left, right = _value(expr.left, ctx, params, depth), _value(expr.right, ctx, params, depth)
            return left + right if _has_literal(left) or _has_literal(right) else None
        if isinstance(expr.operator, cst.Modulo) and isinstance(expr.left, cst.SimpleString):
            template = _string_value(expr.left)
            values = [e.value for e in expr.right.elements] if isinstance(expr.right, cst.Tuple) else [expr.right]
            return _percent(template, values, ctx, params, depth) if isinstance(template, str) else None
        return None
    if isinstance(expr, cst.Call) and (helper := _helper(expr, ctx)) is not None:
        return _returned(expr, helper, ctx, depth)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method, receiver = expr.func.attr.value, expr.func.value
        if isinstance(receiver, cst.Name) and receiver.value not in params:  # LOCK_KEY = "lock:{}"; LOCK_KEY.format(x)
            bound = ctx.lookup(receiver.value)
            receiver = bound if isinstance(bound, (cst.SimpleString, cst.ConcatenatedString)) else receiver
        template = _string_value(receiver) if isinstance(receiver, (cst.SimpleString, cst.ConcatenatedString)) else None
        if not isinstance(template, str) or any(a.star for a in expr.args):
            return None
        if method == "format":
            return _format(template, expr.args, ctx, params, depth)
        if method == "join" and len(expr.args) == 1 and isinstance(expr.args[0].value, (cst.List, cst.Tuple)):
            out = []
            for i, element in enumerate(expr.args[0].value.elements):
                if isinstance(element, cst.StarredElement):
                    return None
                if i:
                    out.append((True, template))
                out.extend(_value(element.value, ctx, params, depth))
            return out
    return None


def _has_literal(parts: Parts) -> bool:
    return any(literal for literal, _ in parts)


def _value(expr: cst.BaseExpression, ctx: FileContext, params, depth: int) -> Parts:
    """A value placed in a key: ``str(x)`` reads as ``x``; a string built in a
    known way is spelled out; anything else stands for itself."""
    if (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "str"
            and len(expr.args) == 1 and "str" not in ctx.imports):
        expr = expr.args[0].value
    found = _parts(expr, ctx, params, depth + 1)
    return found if found is not None else [(False, _code(expr))]


def _percent(template: str, values: list[cst.BaseExpression], ctx, params, depth: int) -> Parts | None:
    out: Parts = []
    position, i = 0, 0
    for m in _PERCENT.finditer(template):
        out.append((True, template[position:m.start()]))
        position = m.end()
        if m.group() == "%%":
            out.append((True, "%"))
            continue
        if not m.group().endswith(("s", "d", "i")) or "(" in m.group() or i >= len(values):
            return None
        out.extend(_value(values[i], ctx, params, depth))
        i += 1
    if i != len(values):
        return None
    out.append((True, template[position:]))
    return out


def _format(template: str, args, ctx, params, depth: int) -> Parts | None:
    positional = [a.value for a in args if a.keyword is None]
    named = {a.keyword.value: a.value for a in args if a.keyword is not None}
    out: Parts = []
    position, auto = 0, 0
    for m in _BRACES.finditer(template):
        out.append((True, template[position:m.start()]))
        position = m.end()
        if m.group() in ("{{", "}}"):
            out.append((True, m.group()[0]))
            continue
        field = m.group(1)
        if field == "":
            if auto >= len(positional):
                return None
            value, auto = positional[auto], auto + 1
        elif field.isdigit() and int(field) < len(positional):
            value = positional[int(field)]
        elif field.isidentifier() and field in named:
            value = named[field]
        else:
            return None  # a format spec, an attribute or index: not a plain value
        out.extend(_value(value, ctx, params, depth))
    out.append((True, template[position:]))
    return out


def _helper(call: cst.Call, ctx: FileContext) -> tuple[cst.FunctionDef, int] | None:
    """``(function, first argument's parameter index)`` when ``call`` calls a
    function of this module (``lock_key(name)``) or a method of the current
    class (``self._key(name)``) whose body is one ``return`` of an expression."""
    func = call.func
    function, skip = None, 0
    if isinstance(func, cst.Name) and ctx.lookup(func.value) is None and func.value not in ctx.imports:
        function = ctx.module_functions.get(func.value)
    elif (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls")
          and ctx.classes):
        function = next((s for s in ctx.classes[-1].body.body
                         if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value), None)
        skip = 1
    if function is None or function.asynchronous is not None or not isinstance(function.body, cst.IndentedBlock):
        return None
    body = [s for s in function.body.body if not _docstring(s)]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    returned = body[0].body[0]
    if not isinstance(returned, cst.Return) or returned.value is None:
        return None
    return function, skip


def _docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _returned(call: cst.Call, helper: tuple[cst.FunctionDef, int], ctx: FileContext, depth: int) -> Parts | None:
    """The key a key helper returns, its parameters replaced by what ``call``
    passes (``lock_key(job.id)`` of ``return f"lock:{name}"`` reads
    ``lock:{job.id}``); None when a parameter is used in any other way."""
    function, skip = helper
    p = function.params
    if isinstance(p.star_arg, cst.Param) or p.star_kwarg is not None:
        return None
    names = [x.name.value for x in (*p.posonly_params, *p.params)][skip:]
    given: dict[str, cst.BaseExpression] = {}
    for i, a in enumerate(call.args):
        if a.star:
            return None
        if a.keyword is None and i < len(names):
            given[names[i]] = a.value
        elif a.keyword is not None:
            given[a.keyword.value] = a.value
        else:
            return None
    for x in (*p.params, *p.kwonly_params):
        if x.name.value not in given and x.default is not None:
            given[x.name.value] = x.default
    returned = function.body.body[-1].body[0].value
    parts = _parts(returned, ctx, frozenset(given) | frozenset(names), depth + 1)
    if parts is None:
        return None
    out: Parts = []
    for literal, text in parts:
        if literal:
            out.append((True, text))
        elif text in given:
            out.extend(_value(given[text], ctx, frozenset(), depth + 1))
        elif any(re.search(rf"(?<![\w.]){re.escape(n)}\b", text) for n in (*names, *given)):
            return None  # ``name.lower()``: not one value per argument
        else:
            out.append((False, text))
    return out
