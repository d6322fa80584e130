"""A task's options as the project gives them: its own, else its ``base=``
class's, else those of that class's bases (in order, across files).  A base
``app.Task`` stands for the app's task class: ``task_cls=`` when the app
sets one, else Celery's ``Task``, which sets nothing.  A class on the way
that is not among the linted files makes the option unknown."""

from __future__ import annotations

from typing import Any

from .values import plain

_MAX_DEPTH = 20


def task_option(m, task: dict[str, Any], option: str) -> tuple[Any, str]:
    """``(value, state)`` of a task's option; state is set | unset | unknown."""
    if option in task["options"]:
        return _option(task["options"], option)
    base = task.get("base")
    if base:
        return _class_option(m, base, option)
    return None, "unset"


def task_cls_option(m, app, option: str) -> tuple[Any, str]:
    """The option as the app's custom task class (``task_cls=``) sets it."""
    if not app.task_cls:
        return None, "unset"
    name = app.task_cls.replace(":", ".")
    if name not in m.task_classes and "." not in name:  # a class of the app's own module
        name = f"{app.key.rsplit(':', 1)[0]}.{name}"
    return _class_option(m, name, option)


def _class_option(m, name: str, option: str, depth: int = 0) -> tuple[Any, str]:
    cls = m.task_classes.get(name)
    if cls is None or depth > _MAX_DEPTH:
        return None, "unknown"
    if option in cls["options"]:
        return _option(cls["options"], option)
    for base in cls.get("bases", ()) if depth < _MAX_DEPTH else ("?",):
        if base.startswith(("celery.", "builtins.")) or base == "object":
            continue
        app = _app_of_task_base(m, base, name)
        if app is not None:  # ``class BaseTask(app.Task)``: the app's task class
            found = task_cls_option(m, app, option)
        else:
            found = _class_option(m, base, option, depth + 1)
        if found[1] != "unset":
            return found
    return None, "unset"


def _app_of_task_base(m, base: str, cls: str):
    """The app whose ``Task`` the base ``base`` of class ``cls`` is
    (``proj.celery.app.Task``, or ``app.Task`` in the app's own module)."""
    owner, _, attr = base.rpartition(".")
    if attr != "Task" or not owner:
        return None
    module, _, var = owner.rpartition(".")
    key = f"{module}:{var}" if module else f"{cls.rpartition('.')[0]}:{var}"
    return next((app for app in m.apps.values() if app.key == key), None)


def _option(options: dict[str, Any], option: str) -> tuple[Any, str]:
    value, _ = plain(options[option])
    return value, "set" if value is not None else "unknown"
