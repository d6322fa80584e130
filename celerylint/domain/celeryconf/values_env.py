"""Environment readers whose default ``domain.values`` does not see:
django-environ's and environs' typed methods (``env.str("X", "d")``,
``env.bool("X", default=False)``: their second positional argument is the
default), and django-environ's schema (``env = environ.Env(X=(bool, False))``
then ``env("X")``: the schema's default).  A value
read from the environment stays an ``Env``: the default is what it is when
the variable is not set."""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..values import Env, evaluate
from ...api.context import FileContext

_ENV_LIBS = ("environ.Env", "environs.Env", "environ.FileAwareEnv")
_TYPED = frozenset({"str", "bool", "int", "float", "list", "tuple", "dict", "json", "url", "db_url",
                    "cache_url", "path", "decimal", "email_url", "search_url", "timedelta"})
_NOTHING = object()


def _env_lib_call(bound: Any, ctx: FileContext) -> cst.Call | None:
    """The ``environ.Env(...)`` call ``bound`` is, if it is one."""
    if isinstance(bound, cst.Call) and (ctx.imported_name(bound.func) or "").startswith(_ENV_LIBS):
        return bound
    return None


def _schema_default(env_call: cst.Call, key: str, ctx: FileContext, depth: int) -> Any:
    """``environ.Env(KEY=(cast, default))``: the default; ``_NOTHING`` when
    the schema does not give one."""
    for arg in env_call.args:
        if arg.keyword is not None and arg.keyword.value == key:
            value = arg.value
            if isinstance(value, cst.Tuple) and len(value.elements) == 2:
                return evaluate(value.elements[1].value, ctx, depth)
            return _NOTHING
    return _NOTHING


def env_value(node: cst.Call, ctx: FileContext, depth: int = 0) -> Env | None:
    """``env.str("X", "d")`` / ``env("X")`` with a schema default, as an
    ``Env``; None for any other call (``evaluate`` then has its say)."""
    func = node.func
    args = [a for a in node.args if not a.star]
    if not args or args[0].keyword is not None or len(args) != len(node.args):
        return None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value in _TYPED:
        env_call = _env_lib_call(ctx.lookup(func.value.value), ctx)
        method = True
    elif isinstance(func, cst.Name):
        env_call = _env_lib_call(ctx.lookup(func.value), ctx)
        method = False
    else:
        return None
    if env_call is None:
        return None
    key = evaluate(args[0].value, ctx, depth)
    if not isinstance(key, str):
        return None
    default: Any = _NOTHING
    for i, arg in enumerate(args[1:], start=1):
        if arg.keyword is not None and arg.keyword.value == "default":
            default = evaluate(arg.value, ctx, depth)
        elif arg.keyword is None and i == 1 and method:
            default = evaluate(arg.value, ctx, depth)
    if default is _NOTHING:
        default = _schema_default(env_call, key, ctx, depth)
    if default is _NOTHING:
        return Env(key, None)  # required: no default, the value is the environment's
    return Env(key, default)


def remember_function(node: cst.FunctionDef, ctx: FileContext) -> None:
    """Note a module-level ``def f(): return <literal>`` for ``helper_value``
    (called by a collector when it enters the function)."""
    params = node.params
    if (node.decorators or params.params or params.kwonly_params or params.posonly_params
            or isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None):
        return
    if not isinstance(node.body, cst.IndentedBlock):
        return
    body = [s for s in node.body.body if not _docstring(s)]
    if len(body) == 1 and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        ret = body[0].body[0]
        if isinstance(ret, cst.Return) and ret.value is not None:
            ctx.__dict__.setdefault("literal_functions", {})[node.name.value] = ret.value


def helper_return(node: cst.Call, ctx: FileContext) -> cst.BaseExpression | None:
    """For ``f()`` where ``f`` is a module-level function of this file that only
    returns a literal or an f-string over literals (``remember_function``):
    the expression it returns, else None."""
    if node.args or not isinstance(node.func, cst.Name) or ctx.lookup(node.func.value) is not None:
        return None
    return ctx.__dict__.get("literal_functions", {}).get(node.func.value)


def _docstring(statement: cst.BaseStatement) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))
