"""The queues an app's tasks are sent to by name: ``task_routes`` (a dict of
task name or glob to a queue name or ``{"queue": ...}``) and ``queue=`` on a
task's decorator.  Routers written as functions or classes are not read
(``complete`` is False then)."""

from __future__ import annotations

from typing import Any

from ..celeryconf.values import plain


def _queue(route: Any) -> str | None:
    """The queue of one route, an encoded value (``celeryconf.values``)."""
    value, _ = plain(route)
    if isinstance(value, dict):
        value, _ = plain(value.get("queue"))
    return value if isinstance(value, str) and value else None


def routed_queues(m, app) -> dict[str, str]:
    """``queue -> where it is named`` (``path:line``) for the app."""
    out: dict[str, str] = {}
    routes = app.get("task_routes")
    if routes.is_set and isinstance(routes.value, dict):
        where = f"{routes.at.path}:{routes.at.line}" if routes.at is not None else ""
        for route in routes.value.values():
            queue = _queue(route)
            if queue:
                out.setdefault(queue, where)
    if len([a for a in m.relevant_apps() if not a.send_only]) == 1:  # the tasks are this app's
        for task in m.tasks:
            queue, _ = plain(task["options"].get("queue"))
            if isinstance(queue, str) and queue:
                out.setdefault(queue, f"{task['path']}:{task['line']}")
    return out
