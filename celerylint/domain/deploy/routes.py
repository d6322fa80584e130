"""The queues an app's tasks are sent to by name: ``task_routes`` (a dict of
task name or glob to a queue name or ``{"queue": ...}``), ``queue=`` on a
task's decorator, and a literal ``queue=`` on ``.apply_async()`` or
``.signature()`` called on one of the project's tasks (``called_queues``).  Routers written as functions or classes are not
read (``complete`` is False then)."""

from __future__ import annotations

from fnmatch import fnmatchcase
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
    if m.one_app():  # the tasks are this app's
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
    if not m.one_app():
        return []
    out = []
    for call in m.project.of_kind(QUEUE_FACT):
        module, _, name = call["target"].rpartition(".")
        tail = "/" + module.replace(".", "/")
        found = [t for t in m.tasks if t["name"] == name and ("/" + _module_path(t.get("path", ""))).endswith(tail)]
        if module and len(found) == 1:
            out.append(call)
    return sorted(out, key=lambda c: (c["path"], c["line"], c["col"]))


def worker_queues(p) -> set[str] | None:
    """The queues a worker process names with ``-Q`` (less its ``-X``), or
    None: no ``-Q`` (the app's queues), or one celerylint cannot read."""
    queues = p.command.queues()
    if queues is None:
        return None
    excluded = p.command.queues("exclude_queues") if "exclude_queues" in p.command.options else ()
    return None if excluded is None else set(queues) - set(excluded)


def task_queues(app, task: dict, calls: list[dict]) -> set[str] | None:
    """The queues ``task`` (a ``task`` fact of ``app``) is sent to: its
    decorator's ``queue=``, else the ``task_routes`` entry naming it, else
    the app's default queue; with the queues literal ``queue=`` calls on it
    name (``calls``: ``called_queues``).  None when any of that cannot be
    read (a router function, a glob over a name not known, a queue from a
    variable)."""
    options = task["options"]
    if "queue" in options:
        queue = _queue(options["queue"])
        return {queue} if queue else None
    explicit, _ = plain(options.get("name")) if "name" in options else (None, None)
    if "name" in options and not isinstance(explicit, str):
        return None
    routes = app.get("task_routes")
    if routes.is_unknown or routes.is_set and not isinstance(routes.value, dict):
        return None
    keys = list(routes.value) if routes.is_set else []
    if not all(isinstance(key, str) for key in keys):
        return None
    # as Celery's MapRoute: the task's name first, then the globs in order
    exact = [k for k in keys if not any(c in k for c in "*?[")]
    globs = [k for k in keys if k not in exact]
    matched = next((routes.value[k] for k in exact if (k == explicit if explicit is not None else _names(k, task))),
                   None)
    if matched is None and globs:
        if explicit is None:
            return None  # the task's full name is its module's, which a glob may match
        matched = next((routes.value[k] for k in globs if fnmatchcase(explicit, k)), None)
    queues: set[str] = set()
    if matched is not None:
        queue = _queue(matched)
        if not queue:
            return None
        queues.add(queue)
    else:
        default = default_queue(app)
        if default is None:
            return None
        queues.add(default)
    queues.update(c["queue"] for c in calls if _names(c["target"], task))
    return queues


def default_queue(app) -> str | None:
    """The queue a task goes to when no route names it (``task_default_queue``), or None: unknown."""
    default = app.get("task_default_queue")
    if default.is_unknown:
        return None
    return default.value if default.is_set and isinstance(default.value, str) else "celery"


def _names(name: str, task: dict) -> bool:
    """Whether the dotted ``name`` (``proj.tasks.send``) is ``task``'s module and function."""
    module, _, function = name.rpartition(".")
    return bool(module) and function == task["name"] and (
        "/" + _module_path(task.get("path", ""))).endswith("/" + module.replace(".", "/"))
