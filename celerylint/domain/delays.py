"""Delays of scheduling calls: the countdown or eta a Celery call asks for."""

from __future__ import annotations

import math

import libcst as cst

from ..api.context import FileContext
from .values import FromNow, evaluate, seconds


SCHEDULING_METHODS = frozenset({"apply_async", "retry", "signature", "subtask", "set", "send_task"})
SIGNATURE_FUNCTIONS = frozenset({"celery.signature", "celery.canvas.signature", "celery.Signature", "celery.canvas.Signature"})


def _scheduling_call(node: cst.Call, ctx: FileContext) -> bool:
    """``x.apply_async(...)``, ``.retry``, ``.set``, ``send_task``, ... or ``signature(...)``."""
    func = node.func
    if isinstance(func, cst.Attribute):
        return func.attr.value in SCHEDULING_METHODS
    return ctx.imported_name(func) in SIGNATURE_FUNCTIONS


def scheduled_delays(node: cst.Call, ctx: FileContext) -> list[tuple[cst.Arg, str, float]]:
    """``(argument, "countdown"|"eta", seconds from now)`` for each countdown
    or eta of a Celery scheduling call whose value can be evaluated.

    Shared with the configuration rules (CL104 compares these delays with the
    broker's visibility timeout)."""
    if not _scheduling_call(node, ctx):
        return []
    out = []
    for a in node.args:
        if a.keyword is None or a.keyword.value not in ("countdown", "eta"):
            continue
        value = evaluate(a.value, ctx)
        if a.keyword.value == "countdown":
            delay = seconds(value)
        else:
            delay = seconds(value.seconds) if isinstance(value, FromNow) else None
        if delay is not None:
            out.append((a, a.keyword.value, delay))
    return out


DJANGO_SETTINGS = "django.conf.settings"
TIMEDELTA = frozenset({"datetime.timedelta", "datetime.datetime.timedelta"})
_SECONDS = {"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400, "weeks": 604800}


def setting_delay(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> dict | None:
    """A duration in seconds read from a Django setting: ``settings.X``,
    ``getattr(settings, "X", default)``, either times or plus a constant
    (``settings.X * 60``, ``getattr(settings, "LOCKOUT_TIME", 1800) + 60``),
    or in ``timedelta(seconds=...)``; ``settings`` is ``django.conf.settings``.
    As data: ``{"setting", "default" (or None), "mul", "add"}``; the
    project phase reads the setting from the configuration model."""
    if depth > 6:
        return None
    if isinstance(node, cst.Attribute) and ctx.imported_name(node.value) == DJANGO_SETTINGS:
        return {"setting": node.attr.value, "default": None, "mul": 1.0, "add": 0.0}
    if isinstance(node, cst.Call):
        name = ctx.imported_name(node.func)
        if (isinstance(node.func, cst.Name) and node.func.value == "getattr" and name is None
                and 2 <= len(node.args) <= 3 and not any(a.keyword or a.star for a in node.args)
                and ctx.imported_name(node.args[0].value) == DJANGO_SETTINGS
                and isinstance(node.args[1].value, cst.SimpleString)):
            key = node.args[1].value.evaluated_value
            default = seconds(evaluate(node.args[2].value, ctx)) if len(node.args) == 3 else None
            if len(node.args) == 3 and default is None:
                return None
            return {"setting": key, "default": default, "mul": 1.0, "add": 0.0}
        if name in TIMEDELTA and len(node.args) == 1 and node.args[0].keyword is not None:
            unit = _SECONDS.get(node.args[0].keyword.value)
            inner = setting_delay(node.args[0].value, ctx, depth + 1) if unit else None
            if inner is not None:
                return _finite({**inner, "mul": inner["mul"] * unit, "add": inner["add"] * unit})
        if name in ("builtins.int", None) and isinstance(node.func, cst.Name) and node.func.value in ("int", "float") \
                and len(node.args) == 1 and not node.args[0].keyword:
            return setting_delay(node.args[0].value, ctx, depth + 1)
        return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
        left, right = setting_delay(node.left, ctx, depth + 1), setting_delay(node.right, ctx, depth + 1)
        if (left is None) == (right is None):
            return None
        spec = left or right
        other = seconds(evaluate(node.right if left is not None else node.left, ctx))
        if other is None:
            return None
        if isinstance(node.operator, cst.Multiply):
            return _finite({**spec, "mul": spec["mul"] * other, "add": spec["add"] * other})
        if isinstance(node.operator, cst.Subtract):
            if right is not None:
                return None  # c - settings.X: not a delay anyone writes
            other = -other
        return _finite({**spec, "add": spec["add"] + other})
    return None


def _finite(spec: dict) -> dict | None:
    """``spec`` when its factor and term are finite numbers (``settings.X * 1e308 * 10`` is unknown)."""
    return spec if math.isfinite(spec["mul"]) and math.isfinite(spec["add"]) else None


def scheduled_setting_delays(node: cst.Call, ctx: FileContext) -> list[tuple[cst.Arg, dict]]:
    """The countdowns of a Celery scheduling call (as ``scheduled_delays``)
    that come from a Django setting (``setting_delay``), and the etas
    ``now() + timedelta(seconds=settings.X)``."""
    if not _scheduling_call(node, ctx):
        return []
    out = []
    for a in node.args:
        if a.keyword is None or a.keyword.value not in ("countdown", "eta") or evaluate(a.value, ctx) is not None:
            continue
        spec = setting_delay(a.value, ctx) if a.keyword.value == "countdown" else _eta_setting(a.value, ctx)
        if spec is not None:
            out.append((a, spec))
    return out


def _eta_setting(node: cst.BaseExpression, ctx: FileContext) -> dict | None:
    """``now() + <setting_delay>`` (``timezone.now() + timedelta(seconds=settings.X)``)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        for now, delta in ((node.left, node.right), (node.right, node.left)):
            start = evaluate(now, ctx)
            if isinstance(start, FromNow) and start.seconds == 0:
                spec = setting_delay(delta, ctx)
                return spec if spec is not None and isinstance(delta, cst.Call) else None
    return None


def resolve_setting_delay(spec: dict, source) -> float | None:
    """The seconds of a ``setting_delay`` in a settings source of the
    configuration model (``model.Source``: the module with its star-import
    chain): the setting's last module-level assignment, a number; its
    ``getattr`` default when no assignment exists and the source is
    complete.  Unknown (None): set under a condition, from the environment,
    not a number, not found without a default, perhaps assigned in a file
    of the chain whose other settings celerylint did not record, or a
    result that is not finite."""
    from .celeryconf.values import number, plain

    if source is not None and source.hidden is not None and source.hidden(spec["setting"]):
        return None
    assigned = source.by_name.get(spec["setting"]) if source is not None else None
    if assigned:
        last = assigned[-1]
        value, env = plain(last.value)
        base = number(value) if not last.cond and env is None and not isinstance(value, bool) else None
    elif source is not None and not source.open and spec["default"] is not None:
        base = spec["default"]
    else:
        base = None
    return None if base is None else seconds(base * spec["mul"] + spec["add"])


def django_sources(m, app=None) -> list:
    """The Django settings (``model.Source``) that ``settings.X`` reads in
    the code of ``app`` (every configured app when None): the app's own
    source when it loads ``django.conf:settings``, else the project's
    ``DJANGO_SETTINGS_MODULE``.  One per settings module."""
    found: dict[str, object] = {}
    for a in [app] if app is not None else m.configured_apps():
        source = a.source if a.source is not None and a.source.django else None
        if source is None:
            module = m.django_settings(a.key.split(":", 1)[0])
            source = m.source(module, True, None) if module else None
        if source is not None:
            found.setdefault(source.module, source)
    return list(found.values())


def human(delay: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if delay >= size and delay % size == 0:
            return f"{int(delay // size)} {unit}"
    return f"{delay:g} s"
