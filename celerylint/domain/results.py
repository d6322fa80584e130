"""Which expressions are Celery results (``AsyncResult``, ``GroupResult``,
``ResultSet``), read from the call that made them.

Known to be a result: the value of ``.delay(...)``, ``.apply_async(...)``,
``.send_task(...)``, of calling a canvas (``group(...)()``, ``chord(...)(cb)``,
``chain(...)()``), and of the constructors ``AsyncResult(id)``,
``GroupResult(...)``, ``ResultSet(...)``, ``GroupResult.restore(id)`` and
``<app or task>.AsyncResult(id)``; a local name last assigned one of them.
Everything else is unknown (``.get()`` on a dict, a queryset, a cache).
``.apply(...)`` is left out: its ``EagerResult`` ran already and never waits.
"""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from .wait_syntax import DISPATCH, RESULT_FACTORIES, WAITS  # noqa: F401 - WAITS: CL214 takes it from here

CANVAS = frozenset({"celery.group", "celery.chord", "celery.chain", "celery.canvas.group", "celery.canvas.chord",
                    "celery.canvas.chain", "celery.canvas._chain"})
RESULT_CLASSES = frozenset({"celery.result.AsyncResult", "celery.result.GroupResult", "celery.result.ResultSet"})
ALLOW_JOIN = "celery.result.allow_join_result"
# what a file that makes a result says (the prefilter of the rules built on this module)
RESULT_SOURCES = (b"delay", b"apply_async", b"send_task", b"Result", b"group", b"chord", b"chain")


def makes_result(expr: cst.BaseExpression, ctx: FileContext) -> bool:
    """``expr`` is a call whose value is a Celery result."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Call):  # group(...)(), chord(header)(callback)
        return ctx.imported_name(func.func) in CANVAS
    if isinstance(func, cst.Attribute):
        if func.attr.value in DISPATCH or func.attr.value in RESULT_FACTORIES:
            return True
        if func.attr.value == "restore":
            return ctx.imported_name(func.value) == "celery.result.GroupResult"
    return ctx.imported_name(func) in RESULT_CLASSES


def sends(expr: cst.BaseExpression, ctx: FileContext) -> bool:
    """``expr`` is the result of work it has just sent to the broker
    (``.delay()``, ``.apply_async()``, ``.send_task()``, a called canvas), or a
    local name last bound to one: a task that cannot have run yet."""
    if isinstance(expr, cst.Name):
        bound = ctx.lookup(expr.value)
        return isinstance(bound, cst.Call) and sends(bound, ctx)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Call):
        return ctx.imported_name(func.func) in CANVAS
    return isinstance(func, cst.Attribute) and func.attr.value in DISPATCH


def is_result(expr: cst.BaseExpression, ctx: FileContext) -> bool:
    """``expr`` makes a result, or is a local name last bound to one."""
    if isinstance(expr, cst.Name):
        bound = ctx.lookup(expr.value)
        return bound is not None and makes_result(bound, ctx)
    return makes_result(expr, ctx)


def sync_subtasks_disabled(call: cst.Call) -> bool:
    """``.get(disable_sync_subtasks=False)``: the caller turned Celery's guard off on purpose."""
    return any(a.keyword is not None and a.keyword.value == "disable_sync_subtasks"
               and isinstance(a.value, cst.Name) and a.value.value == "False" for a in call.args)
