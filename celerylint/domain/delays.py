"""Delays of scheduling calls: the countdown or eta a Celery call asks for."""

from __future__ import annotations

import libcst as cst

from ..context import FileContext
from .values import FromNow, evaluate, seconds


SCHEDULING_METHODS = frozenset({"apply_async", "retry", "signature", "subtask", "set", "send_task"})
SIGNATURE_FUNCTIONS = frozenset({"celery.signature", "celery.canvas.signature", "celery.Signature", "celery.canvas.Signature"})


def scheduled_delays(node: cst.Call, ctx: FileContext) -> list[tuple[cst.Arg, str, float]]:
    """``(argument, "countdown"|"eta", seconds from now)`` for each countdown
    or eta of a Celery scheduling call whose value can be evaluated.

    Shared with the configuration rules (CL104 compares these delays with the
    broker's visibility timeout)."""
    func = node.func
    if isinstance(func, cst.Attribute):
        if func.attr.value not in SCHEDULING_METHODS:
            return []
    elif ctx.imported_name(func) not in SIGNATURE_FUNCTIONS:
        return []
    out = []
    for a in node.args:
        if a.keyword is None or a.keyword.value not in ("countdown", "eta"):
            continue
        value = evaluate(a.value, ctx)
        if a.keyword.value == "countdown":
            delay = seconds(value)
        else:
            delay = value.seconds if isinstance(value, FromNow) else None
        if delay is not None:
            out.append((a, a.keyword.value, delay))
    return out


def human(delay: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if delay >= size and delay % size == 0:
            return f"{int(delay // size)} {unit}"
    return f"{delay:g} s"
