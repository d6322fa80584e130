"""What CPython's ``ast`` can tell about tasks before libcst parses a file:
the gate of the task-signature collector (``facts/calls.py``).  No libcst here."""

from __future__ import annotations

import ast

from ..api.needles import All, Regex
from ..api.syntax import statements as _statements

# Every file that defines a task (as this module recognises one) says "task"
# or "Task", in one of these ways: a decorator whose name ends in "task"
# (@shared_task, @app.task, @app.periodic_task), a call that makes a
# decorator or registers a function (app.task(fn), task_with_retry =
# shared_task(...); a bare task( without a space, unlike prose), an import
# alias (shared_task as job, Task as BaseTask; the alias ends the line or is
# followed by a comma, parenthesis or comment, unlike "a task as well"), or
# a class with a ...Task base, or a class registered with
# ``app.register_task(...)``/``app.tasks.register(...)``.
TASK_DEFINITION = All((b"ask", (b"task", b"Task"), (  # "ask": one search refutes both spellings
    Regex(rb"\.(?:register_task|tasks\s*\.\s*register)\s*\("),
    Regex(rb"@\s*[\w.]*task\b"),
    # one expression per prefix, each starting with its literal (which the
    # regex engine scans for; an alternation first is tried at every byte)
    Regex(rb"\.task\s*\("), Regex(rb"shared_task\s*\("), Regex(rb"periodic_task\s*\("),
    Regex(rb"\btask\("),
    Regex(rb"[tT]ask\s+as\s+\w+[ \t]*(?:[,)#;\r\n]|\Z)"),
    # the bases up to a colon or to the next ``class`` (a keyword cannot be a
    # base): a header left open is not scanned again from every class after it
    Regex(rb"class\s+\w+\s*\((?:[^:c]|\Bc|c(?!lass\b))*Task\b"),
)))


# plain substrings before the expressions, "class" before "run": most files
# of a tree define no class, and "run" is a short, slow needle
CLASS_WITH_RUN = All((b"class", b"run", Regex(rb"def\s+run\s*\("), Regex(rb"class\s+\w+\s*\(\s*\w")))

# what ``facts.tasks.TaskCollector`` and its ``ast`` twin need: a task, or a
# class that may be a task class through a base of the project: one whose
# name or a base's name says Task, or a class with a base in a file that
# defines ``run`` (the name checked by a lookahead, which is not backtracked
# into; the bases scanned up to the next ``class``, as in ``TASK_DEFINITION``)
TASK_COLLECTOR_REQUIRES = (TASK_DEFINITION,
                           All((b"ask", b"Task", (Regex(rb"class\s+(?=\w*Task)\w+\s*\("),
                                                  Regex(rb"class\s+\w+\s*\((?:[^:)c]|\Bc|c(?!lass\b))*Task")))),
                           CLASS_WITH_RUN)

# modules whose names are never a project's class or task decorator
LIBRARIES = ("celery.", "kombu.", "django.", "rest_framework.", "typing.", "enum.", "abc.", "collections.",
             "pydantic.", "builtins.", "dataclasses.", "luigi.", "dramatiq.", "rq.", "huey.", "unittest.",
             # other task runners, whose ``task`` decorators are not Celery's
             "airflow.", "prefect.", "dagster.", "invoke.", "fabric.", "procrastinate.", "taskiq.", "django_q.",
             "background_task.", "arq.")


def may_be_project_decorator(qualified: str) -> bool:
    """A decorator name the project's task decorators may give
    (``facts/task_decorators.py``): not a library's, and ending in ``task``."""
    return qualified.endswith("task") and not qualified.startswith(LIBRARIES)


TASK_DECORATORS = frozenset({
    "celery.shared_task", "celery.task", "celery.app.shared_task", "celery.decorators.task",
    "celery.task.periodic_task", "celery.decorators.periodic_task",
})
# Execution options of ``Task.apply_async`` (celery 5.7, task.py:587-761).
EXECUTION_OPTIONS = frozenset({
    "countdown", "eta", "expires", "shadow", "connection", "retry", "retry_policy", "time_limit",
    "soft_time_limit", "queue", "exchange", "routing_key", "priority", "serializer", "compression",
    "link", "link_error", "producer", "add_to_parent", "ignore_result", "publisher", "headers", "task_id",
})
CALL_METHODS = frozenset({"delay", "s", "si"})
# the last names of every way ``domain.tasks.task_options`` accepts a decorator
_DECORATOR_ATTRS = frozenset({"task", "periodic_task", "shared_task"})


def _imports(statements: list[ast.stmt]) -> dict[str, str]:
    """Local name -> qualified name of the absolute ``from`` imports and
    aliased imports (what a decorator's name is checked against)."""
    names = {}
    for node in statements:
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.partition(".")[0]
                names[alias.asname or head] = alias.name if alias.asname else head
    return names


def _may_decorate_task(decorator: ast.expr, imports: dict[str, str]) -> bool:
    """False only for a decorator ``task_options`` certainly rejects: an
    attribute not named like a task decorator, or an imported name that is
    not Celery's (a name not imported may be bound to ``shared_task(...)``)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr in _DECORATOR_ATTRS
    if isinstance(target, ast.Name):
        return target.id not in imports or imports[target.id] in TASK_DECORATORS or may_be_project_decorator(imports[target.id])
    return True


def may_record_signatures(tree: ast.Module, text: str) -> bool:
    """A superset of the files ``TaskSignatures`` records a fact in: a
    ``.delay``/``.s``/``.si`` call with an execution option, a module-level
    function with a decorator that may be a task's, or a module-level class
    that defines ``run``.  A test module whose ``.delay(`` and ``queue=``
    are in different calls passes the prefilter, not this."""
    statements = list(_statements(tree.body, definitions=False))  # what runs at import time
    imports = _imports(statements)
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_may_decorate_task(d, imports) for d in node.decorator_list):
                return True
        elif isinstance(node, ast.ClassDef):
            if any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "run" for s in node.body):
                return True
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CALL_METHODS
                and any(k.arg in EXECUTION_OPTIONS for k in node.keywords)):
            return True
    return False
