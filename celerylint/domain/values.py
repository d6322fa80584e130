"""Static evaluation of the expressions that matter: durations and settings.

``evaluate`` folds literals, constant arithmetic, names bound to constants
(in the function, then the module), ``timedelta(...)``, ``.total_seconds()``,
``int()/float()``, ``now() + timedelta(...)`` (a ``FromNow``), dict, list
and tuple literals, and environment lookups with a default (an ``Env``).
Anything else is unknown: ``None`` (use ``UNKNOWN`` checks, since a literal
``None`` evaluates to ``NONE``).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import libcst as cst

from ..api.context import FileContext
from .fresh_syntax import NOW_CALLS


class _NoneValue:
    def __repr__(self) -> str:
        return "NONE"


NONE = _NoneValue()  # the literal None, as opposed to "unknown" (None)


@dataclass(frozen=True)
class FromNow:
    """A datetime ``seconds`` after the moment of the call."""

    seconds: float


@dataclass(frozen=True)
class Env:
    """A value read from the environment: ``default`` is what it is without it."""

    name: str
    default: Any


ENV_CALLS = frozenset({"os.environ.get", "os.getenv", "os.environ.setdefault"})
ENV_LIB_HEADS = ("environ.Env", "decouple.config", "environs.Env")
_OPS = {
    cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
    cst.Divide: operator.truediv, cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod,
    cst.Power: operator.pow,
}
_MAX_DEPTH = 12


def evaluate(node: cst.BaseExpression | None, ctx: FileContext, _depth: int = 0) -> Any:
    if node is None or _depth > _MAX_DEPTH:
        return None
    try:
        return _eval(node, ctx, _depth + 1)
    except (ArithmeticError, TypeError, ValueError, OverflowError):
        return None


def seconds(value: Any) -> float | None:
    """A countdown-like value in seconds (numbers and timedeltas); a
    non-finite one (``float("inf")``, ``nan``, ``1e308 * 10``) is unknown."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            value = float(value)
        except OverflowError:  # an int beyond any float: 10 ** 400
            return None
        return value if math.isfinite(value) else None
    if isinstance(value, timedelta):
        return value.total_seconds()
    return None


def _eval(node: cst.BaseExpression, ctx: FileContext, depth: int) -> Any:
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.Name):
        if node.value in ("True", "False"):
            return node.value == "True"
        if node.value == "None":
            return NONE
        bound = ctx.lookup(node.value)
        return evaluate(bound, ctx, depth) if bound is not None else None
    if isinstance(node, cst.UnaryOperation):
        value = evaluate(node.expression, ctx, depth)
        if isinstance(node.operator, cst.Minus) and isinstance(value, (int, float, timedelta)) and not isinstance(value, bool):
            return -value
        if isinstance(node.operator, cst.Plus):
            return value
        if isinstance(node.operator, cst.Not) and isinstance(value, bool):
            return not value
        return None
    if isinstance(node, cst.BinaryOperation):
        return _binary(node, ctx, depth)
    if isinstance(node, cst.Call):
        return _call(node, ctx, depth)
    if isinstance(node, cst.IfExp):
        return agreed(evaluate(node.body, ctx, depth), evaluate(node.orelse, ctx, depth))
    if isinstance(node, cst.Dict):
        out = {}
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):  # ``{**BASE, ...}``: a known dict, in order
                inner = evaluate(element.value, ctx, depth)
                if not isinstance(inner, dict):
                    return None
                out.update(inner)
                continue
            key = evaluate(element.key, ctx, depth)
            if not isinstance(key, (str, int)):
                return None
            out[key] = evaluate(element.value, ctx, depth)
        return out
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):  # a set display: its items, as written
        return [evaluate(e.value, ctx, depth) for e in node.elements if isinstance(e, cst.Element)]
    return None


def agreed(a: Any, b: Any) -> Any:
    """The value of ``x if test else y`` when both branches give the same
    known value (of the same type: ``1`` and ``True`` differ), else unknown."""
    return a if a is not None and type(a) is type(b) and a == b else None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _binary(node: cst.BinaryOperation, ctx: FileContext, depth: int) -> Any:
    op = _OPS.get(type(node.operator))
    if op is None:
        return None
    left = evaluate(node.left, ctx, depth)
    right = evaluate(node.right, ctx, depth)
    if left is None or right is None:
        return None
    if isinstance(left, FromNow) or isinstance(right, FromNow):
        return _from_now(op, left, right)
    if _number(left) and _number(right):
        if op is operator.pow and abs(right) > 64:
            return None
        return op(left, right)
    if isinstance(left, str) and isinstance(right, str) and op is operator.add:
        return left + right
    if isinstance(left, timedelta) or isinstance(right, timedelta):
        if op in (operator.add, operator.sub) and isinstance(left, timedelta) and isinstance(right, timedelta):
            return op(left, right)
        if op is operator.mul and (_number(left) or _number(right)):
            return op(left, right)
        if op is operator.truediv and isinstance(left, timedelta) and _number(right):
            return left / right
    return None


def _from_now(op, left: Any, right: Any) -> Any:
    if isinstance(left, FromNow) and isinstance(right, timedelta) and op in (operator.add, operator.sub):
        return FromNow(op(left.seconds, right.total_seconds()))
    if isinstance(right, FromNow) and isinstance(left, timedelta) and op is operator.add:
        return FromNow(right.seconds + left.total_seconds())
    if isinstance(left, FromNow) and isinstance(right, FromNow) and op is operator.sub:
        return timedelta(seconds=left.seconds - right.seconds)
    return None


_TIMEDELTA_KW = ("days", "seconds", "microseconds", "milliseconds", "minutes", "hours", "weeks")


def _call(node: cst.Call, ctx: FileContext, depth: int) -> Any:
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "total_seconds" and not node.args:
        value = evaluate(func.value, ctx, depth)
        return value.total_seconds() if isinstance(value, timedelta) else None
    if isinstance(func, cst.Attribute) and func.attr.value == "format":
        return _format(func.value, node.args, ctx, depth)
    name = ctx.imported_name(func) or (func.value if isinstance(func, cst.Name) else None)
    if name is None and _called_on(func) == "env":
        name = f"env.{func.attr.value}"  # ``env`` bound by a star import (``_env_of_a_sibling``)
    if name is None:
        return None
    if name == "datetime.timedelta":
        kwargs: dict[str, float] = {}
        for i, arg in enumerate(node.args):
            if arg.star:
                return None
            key = arg.keyword.value if arg.keyword else (_TIMEDELTA_KW[i] if i < 3 else None)
            value = evaluate(arg.value, ctx, depth)
            if key not in _TIMEDELTA_KW or not _number(value):
                return None
            kwargs[key] = value
        return timedelta(**kwargs)
    if name in NOW_CALLS:
        return FromNow(0.0)
    if name in ("int", "float", "round", "abs") and len(node.args) == 1 and not node.args[0].keyword:
        value = evaluate(node.args[0].value, ctx, depth)
        if name == "int" and isinstance(value, str):
            value = int(value.strip())
        elif name == "float" and isinstance(value, str):
            value = float(value.strip())
        if isinstance(value, Env):
            return value
        return {"int": int, "float": float, "round": round, "abs": abs}[name](value) if _number(value) else None
    if name in ("str", "bool") and len(node.args) == 1:
        value = evaluate(node.args[0].value, ctx, depth)
        return value if isinstance(value, Env) else None
    return _env(node, name, ctx, depth)


def _format(template: cst.BaseExpression, args, ctx: FileContext, depth: int) -> str | None:
    """``"redis://{}:{}/0".format(HOST, PORT)`` with every part known: plain
    fields only (``{}``, ``{0}``, ``{host}``; no conversion or format spec,
    no attribute or index), string or number values."""
    import string

    text = evaluate(template, ctx, depth)
    if not isinstance(text, str):
        return None
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return None
    if any(name is not None and (spec or conversion or not (name == "" or name.isdigit() or name.isidentifier()))
           for _, name, spec, conversion in fields):
        return None
    positional, named = [], {}
    for arg in args:
        value = evaluate(arg.value, ctx, depth)
        if arg.star or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return None
        if arg.keyword is None:
            positional.append(value)
        else:
            named[arg.keyword.value] = value
    try:
        return text.format(*positional, **named)
    except (IndexError, KeyError, ValueError):
        return None


def _env(node: cst.Call, name: str, ctx: FileContext, depth: int) -> Env | None:
    """``os.environ.get("X", d)``, ``os.getenv``, django-environ ``env("X", default=d)``
    and ``env.int(...)``, python-decouple ``config("X", default=d)``."""
    args = [a for a in node.args if not a.star]
    if not args or args[0].keyword is not None:
        return None
    key = evaluate(args[0].value, ctx, depth)
    if not isinstance(key, str):
        return None
    default = None
    for i, arg in enumerate(args[1:], start=1):
        if (arg.keyword is None and i == 1) or (arg.keyword is not None and arg.keyword.value == "default"):
            default = evaluate(arg.value, ctx, depth)
    if name in ENV_CALLS:
        return Env(key, default)
    head = name.rsplit(".", 1)[0] if "." in name else name
    sibling = _called_on(node.func) == "env" and _env_of_a_sibling(ctx.imports.get("env", ""), ctx)
    if name.startswith(ENV_LIB_HEADS) or _bound_to_env_lib(head, ctx) or _bound_to_env_lib(name, ctx) or sibling:
        if any(a.keyword is None for a in args[1:]) and not name.startswith("decouple"):
            return None  # django-environ's second positional is the cast, not a default
        return Env(key, default)
    return None


def _bound_to_env_lib(name: str, ctx: FileContext) -> bool:
    """``env = environ.Env()`` / ``env = Env()``: calls on it read the environment."""
    if "." in name:
        return False
    bound = ctx.lookup(name)
    if isinstance(bound, cst.Call):
        target = ctx.imported_name(bound.func) or ""
        return target.startswith(ENV_LIB_HEADS)
    target = ctx.imports.get(name, "")
    return target == "decouple.config"


def _called_on(func: cst.BaseExpression) -> str | None:
    """``env`` for ``env(...)`` and ``env.bool(...)``: the plain name called or called on."""
    if isinstance(func, cst.Attribute):
        func = func.value
    return func.value if isinstance(func, cst.Name) else None


def _env_of_a_sibling(target: str, ctx: FileContext) -> bool:
    """``env`` made in another module of the project and taken from it:
    ``from .base import env`` (cookiecutter-django's production settings),
    or bound by a star import of one (``from .base import *``).  Only its
    calls with keyword defaults are read (``env.bool("X", default=False)``):
    a positional second argument is a cast in django-environ, a default in
    environs."""
    own = (ctx.module_name or "").partition(".")[0]
    if target:
        return bool(own) and target.endswith(".env") and target.partition(".")[0] == own
    return ctx.lookup("env") is None and any(m.partition(".")[0] == own for m, _ in ctx.star_imports if own)


def numeric_literal(node: cst.BaseExpression) -> bool:
    """A number, or arithmetic on numbers only: safe to replace by its value."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.BinaryOperation):
        return numeric_literal(node.left) and numeric_literal(node.right)
    if isinstance(node, cst.UnaryOperation):
        return numeric_literal(node.expression)
    return False

