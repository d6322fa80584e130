"""Task classes across files, for the file rules: entries of the index a
file is given before it is analysed (with the client index, see
``linter._client_index`` and ``client_index.stale``), without libcst.

Each module-level class that is a task class in its own file, or derives
from a class imported from the project, is a ``task_class`` fact
(facts/tasks.py): its qualified name, its bases, whether its own file makes
it a task class, and its options; ``registered_task_class`` names a class
another file registers (``app.register_task(Imported())``).  ``entries``
gives, for every such class that is a task class through its bases in any
linted file, ``"pkg.mod.Base#task" -> "task"``, and for the time limits it
sets or inherits as numbers ``"pkg.mod.Base#time_limit" -> "600"`` (or,
read from a Django setting, the ``setting_delay`` as JSON).  A file
whose rules asked about a class records the answers (``client-lookups``),
so its cached result is dropped when another file changes them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

# Celery's Task, and the Task subclasses of the lock libraries (celery-once, celery-singleton)
TASK_BASES = frozenset({"celery.Task", "celery.app.task.Task", "celery.app.Task", "celery_once.QueueOnce",
                        "celery_once.tasks.QueueOnce", "celery_singleton.Singleton",
                        "celery_singleton.singleton.Singleton"})
# with the project's task decorators (facts/task_decorators.py)
TASK_CLASS_FACTS = frozenset({"task_class", "registered_task_class", "task-decorator", "task-decorator-export"})
DECORATOR = "task_decorator"
TIME_LIMITS = ("time_limit", "soft_time_limit")
TASK = "task"
_MAX_DEPTH = 20
_ABSENT = object()


def classes_by_name(facts: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The ``task_class`` facts by qualified class name; a class another
    file registers (a ``registered_task_class`` fact) is a task class."""
    classes = {f["cls"]: f for f in facts if f.get("kind") == "task_class"}
    for f in facts:
        if f.get("kind") == "registered_task_class":
            classes[f["cls"]] = {**classes.get(f["cls"], {"cls": f["cls"], "bases": []}), "task": True}
    return classes


def is_project_task_class(classes: dict[str, dict[str, Any]], name: str, depth: int = 0) -> bool:
    """The class ``name`` is a Celery task class: ``celery.Task``, or a
    linted class that is one in its file or derives from one (any depth).
    A class that is not among the linted files is not known to be one."""
    if name in TASK_BASES:
        return True
    fact = classes.get(name)
    if fact is None or depth > _MAX_DEPTH:
        return False
    return bool(fact.get("task")) or any(is_project_task_class(classes, b, depth + 1) for b in fact.get("bases", ()))


def decorators(facts: list[dict[str, Any]]) -> dict[str, str]:
    """``"pkg.mod.retry_task#task_decorator" -> JSON`` (``bare``, ``forced``,
    ``defaults``) for each task decorator of the project, under its own name
    and the names packages re-export it by.  A name two files define
    differently is not one."""
    found: dict[str, str | None] = {}
    for f in facts:
        if f.get("kind") == "task-decorator":
            value = json.dumps({k: f[k] for k in ("bare", "forced", "defaults")}, sort_keys=True)
            found[f["name"]] = value if found.get(f["name"], value) == value else None
    exports = {f["name"]: f["target"] for f in facts if f.get("kind") == "task-decorator-export"}
    for name in exports:
        target, seen = name, 0
        while target in exports and target not in found and seen < _MAX_DEPTH:
            target, seen = exports[target], seen + 1
        if name not in found and target in found:
            found[name] = found[target]
    return {f"{name}#{DECORATOR}": value for name, value in found.items() if value is not None}


def entries(facts: Iterable[dict[str, Any]]) -> dict[str, str]:
    facts = list(facts)
    classes = classes_by_name(facts)

    def option(name: str, which: str, depth: int = 0) -> Any:
        """The option as the class has it: its own, else the first base's
        that sets it (Python's MRO for single inheritance); ``_ABSENT`` when
        none does, None when one sets it to what cannot be read."""
        fact = classes.get(name)
        if fact is None or depth > _MAX_DEPTH:
            return _ABSENT
        options = fact.get("options") or {}
        if which in (fact.get("limit_settings") or {}):
            return fact["limit_settings"][which]
        if which in options:
            own = options[which]
            return own.get("const") if isinstance(own, dict) else None
        for base in fact.get("bases", ()):
            value = option(base, which, depth + 1)
            if value is not _ABSENT:
                return value
        return _ABSENT

    out: dict[str, str] = decorators(facts)
    for name in classes:
        if not is_project_task_class(classes, name):
            continue
        out[f"{name}#{TASK}"] = TASK
        for which in TIME_LIMITS:
            value = option(name, which)
            if type(value) in (int, float) and 0 < value <= sys.float_info.max:  # not inf, nan, 10 ** 400
                out[f"{name}#{which}"] = repr(float(value))
            elif type(value) is dict:  # read from a Django setting: domain.delays.setting_delay
                out[f"{name}#{which}"] = json.dumps(value, sort_keys=True)
    return out
