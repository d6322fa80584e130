"""The time limit an app gives the tasks that set none themselves, read
from the configuration model (``app.get``: constructor, ``app.conf``, the
configuration source with its namespace, Celery's default)."""

from __future__ import annotations

from .celeryconf.model import App, Model
from .celeryconf.values import NULL, number
from .deploy.model import processes_for

APP_LIMITS = ("task_time_limit", "task_soft_time_limit")
_TASK_LIMITS = frozenset({"time_limit", "soft_time_limit"})


def app_time_limit(m: Model, app: App) -> tuple[float | None, str] | None:
    """``(seconds, what)``: the longer of the app's `task_time_limit` and
    `task_soft_time_limit`, ``what`` naming the setting and its file
    ("`task_time_limit` (proj/settings.py)");
    ``(None, "")`` when the app sets no limit.  None when celerylint cannot
    tell: a setting it cannot read (the environment's, set in an ``if``
    branch, not a number), `task_annotations` that may set a task's limit,
    or a worker of the app started with ``--time-limit``/``--soft-time-limit``
    (the command line wins over the configuration).  The app's ``task_cls``
    is the caller's concern: a task with its own ``base=`` does not use it."""
    annotations = app.get("task_annotations")
    if not annotations.is_default and not (annotations.is_set and _no_limits(annotations.value)):
        return None
    found: list[tuple[float, str]] = []
    for name in APP_LIMITS:
        r = app.get(name)
        if r.is_unknown or r.env:
            return None
        if r.is_default or r.value is NULL or r.value is None:
            continue
        value = number(r.value)
        if value is None:
            return None
        if value > 0:  # 0 is no limit, as for Celery
            where = f" ({r.at.path})" if r.at is not None else ""
            found.append((value, f"`{name}`{where}"))
    for p in processes_for(m, app):
        if p.role != "beat" and any(o in p.command.options for o in _TASK_LIMITS):
            return None
    return max(found) if found else (None, "")


def _no_limits(value) -> bool:
    """`task_annotations` that set no time limit: a dict of dicts (task name
    or ``*`` -> options) none of which names one, or None."""
    if value is NULL:
        return True
    if not isinstance(value, dict):
        return False
    for options in value.values():
        if isinstance(options, dict) and set(options) == {"dict"}:  # a dict literal as the facts encode it
            options = options["dict"]
        if not isinstance(options, dict) or _TASK_LIMITS & set(options):
            return False
    return True
