"""The result backend's client: ``self.app.backend.client`` in a bound task,
``app.backend.client``, ``current_app.backend.client``.

For a ``redis://``, ``rediss://`` or ``sentinel://`` result backend, Celery's
``RedisBackend.client`` is a ``redis.StrictRedis`` made from the backend's
URL (``celery/backends/redis.py``); for any other backend it is something
else, or nothing.  Which backend the app has is known only to the project
phase, so a finding about such a client is reported there, when the app's
result backend is read as Redis (``celeryconf/conditions.py``): the file
phase records the condition with the receiver (``FileContext.client_conditions``).
"""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from .client_holders import function_binding, is_method
from .task_classes import APP_FACTORIES, APP_OBJECTS, is_celery_app, is_task_class
from .tasks import task_options

CURRENT_APP = "*"


def backend_client_app(node: cst.Attribute, ctx: FileContext) -> str | None:
    """The app whose result backend ``node`` (``<app>.backend.client``) is
    the client of: ``module:var``, or ``*`` for the app the worker runs
    (``current_app``, ``self.app`` of a ``@shared_task``); None for another
    shape."""
    if node.attr.value != "client" or not isinstance(node.value, cst.Attribute) or node.value.attr.value != "backend":
        return None
    app = node.value.value
    if isinstance(app, cst.Attribute) and app.attr.value == "app" and isinstance(app.value, cst.Name):
        return _task_app(app.value.value, ctx)
    return app_key(app, ctx)


def app_key(node: cst.BaseExpression, ctx: FileContext) -> str | None:
    """The app an expression names, as the configuration model keys it."""
    if isinstance(node, cst.Name):
        if node.value in ctx.imports:
            target = ctx.imports[node.value]
            if target in APP_OBJECTS:
                return CURRENT_APP
            module, _, var = target.rpartition(".")
            return f"{module}:{var}" if module and not target.startswith(("celery.", "django.", "redis")) else None
        bound = ctx.lookup(node.value)
        if isinstance(bound, cst.Call) and ctx.imported_name(bound.func) in APP_FACTORIES and ctx.module_name:
            return f"{ctx.module_name}:{node.value}"
        return None
    return CURRENT_APP if ctx.imported_name(node) in APP_OBJECTS else None


def _task_app(name: str, ctx: FileContext) -> str | None:
    """``self`` of a bound task function (the app of its decorator), or of a
    method of a ``Task`` subclass (the worker's app)."""
    function = function_binding(name, ctx)
    if function is None or not function.params.params or function.params.params[0].name.value != name:
        return None
    if is_method(function, ctx):
        return CURRENT_APP if is_task_class(ctx.classes[-1], ctx) else None
    for decorator in function.decorators:
        options = task_options(decorator, ctx)
        if options is None:
            continue
        bind = options.get("bind")
        if not (isinstance(bind, cst.Name) and bind.value == "True"):
            return None
        return decorator_app(decorator, ctx)
    return None


def decorator_app(decorator: cst.Decorator, ctx: FileContext) -> str | None:
    """The app a task decorator registers its task on: ``module:var`` for
    ``@app.task``, ``*`` for ``@shared_task`` (the app the worker runs)."""
    target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
    if isinstance(target, cst.Name) and target.value not in ctx.imports:
        bound = ctx.lookup(target.value)  # task_with_retry = app.task(...); @task_with_retry
        if isinstance(bound, cst.Call):
            target = bound.func
    if isinstance(target, cst.Attribute) and is_celery_app(target.value, ctx):
        return app_key(target.value, ctx)  # @app.task
    return CURRENT_APP  # @shared_task


def task_app(function: cst.FunctionDef, in_class: bool, ctx: FileContext) -> str | None:
    """The app of the task whose body is ``function``: that of its task
    decorator, ``*`` for the ``run`` of a ``Task`` subclass (``in_class``);
    None when no decorator says."""
    if in_class:
        return CURRENT_APP
    for decorator in function.decorators:
        if task_options(decorator, ctx) is not None:
            return decorator_app(decorator, ctx)
    return None
