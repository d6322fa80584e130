"""The queues an app's tasks are sent to by name: ``task_routes`` (a dict of
task name or glob to a queue name or ``{"queue": ...}``), ``queue=`` on a
task's decorator, and a literal ``queue=`` on ``.apply_async()`` or
``.signature()`` called on one of the project's tasks (``called_queues``).  Routers written as functions or classes are not
read (``complete`` is False then)."""

from __future__ import annotations

from typing import Any

from ...facts.task_calls import QUEUE_FACT
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


def _module_path(path: str) -> str:
    """``proj/tasks.py`` -> ``proj/tasks``; ``proj/__init__.py`` -> ``proj``."""
    stem = path[:-3] if path.endswith(".py") else path
    return stem[: -len("/__init__")] if stem.endswith("/__init__") else stem


def called_queues(m, app) -> list[dict]:
    """The facts (``queue``, position) of each ``.apply_async(queue=...)`` or
    ``.signature(..., queue=...)`` call on a task of the project: the task
    named by its module and name, defined once there (what the calling file
    imports is in every run's view, so a run on that file alone judges the
    call as the whole project's run does)."""
    if len([a for a in m.relevant_apps() if not a.send_only]) != 1:
        return []
    out = []
    for call in m.project.of_kind(QUEUE_FACT):
        module, _, name = call["target"].rpartition(".")
        tail = "/" + module.replace(".", "/")
        found = [t for t in m.tasks if t["name"] == name and ("/" + _module_path(t.get("path", ""))).endswith(tail)]
        if module and len(found) == 1:
            out.append(call)
    return sorted(out, key=lambda c: (c["path"], c["line"], c["col"]))
