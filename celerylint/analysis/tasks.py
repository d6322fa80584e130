"""Which functions and classes are Celery tasks, and with which options."""

from __future__ import annotations

import libcst as cst

from ..context import FileContext

TASK_DECORATORS = frozenset({"celery.shared_task", "celery.task", "celery.app.shared_task", "celery.decorators.task"})
APP_FACTORIES = frozenset({"celery.Celery", "celery.app.Celery", "celery.app.base.Celery"})
APP_OBJECTS = frozenset({"celery.current_app", "celery.app.current_app"})
TASK_BASES = frozenset({"celery.Task", "celery.app.task.Task", "celery.app.Task"})


def is_celery_app(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """``app`` made with ``Celery(...)`` here, ``current_app``, or an object
    imported from another module of the project (``from proj.celery import app``)."""
    if isinstance(node, cst.Name):
        if node.value in ctx.imports:
            target = ctx.imports[node.value]
            return target in APP_OBJECTS or not target.startswith(("celery.", "redis", "django."))
        bound = ctx.lookup(node.value)
        if isinstance(bound, cst.Call):
            return ctx.imported_name(bound.func) in APP_FACTORIES
        return False
    return ctx.imported_name(node) in APP_OBJECTS


def task_options(decorator: cst.Decorator, ctx: FileContext) -> dict[str, cst.BaseExpression] | None:
    """The keyword options of a task decorator, or None if it is not one."""
    expr = decorator.decorator
    call = expr if isinstance(expr, cst.Call) else None
    target = call.func if call is not None else expr
    is_task = ctx.imported_name(target) in TASK_DECORATORS
    if not is_task and isinstance(target, cst.Attribute) and target.attr.value == "task":
        is_task = is_celery_app(target.value, ctx)
    if not is_task:
        return None
    if call is None:
        return {}
    return {a.keyword.value: a.value for a in call.args if a.keyword is not None}


def function_task_options(func: cst.FunctionDef, ctx: FileContext) -> dict[str, cst.BaseExpression] | None:
    for decorator in func.decorators:
        options = task_options(decorator, ctx)
        if options is not None:
            return options
    return None


def is_task_class(cls: cst.ClassDef, ctx: FileContext) -> bool:
    for base in cls.bases:
        value = base.value
        if ctx.imported_name(value) in TASK_BASES:
            return True
        if isinstance(value, cst.Attribute) and value.attr.value == "Task" and is_celery_app(value.value, ctx):
            return True
    return False


def class_options(cls: cst.ClassDef) -> dict[str, cst.BaseExpression]:
    options: dict[str, cst.BaseExpression] = {}
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    options[small.targets[0].target.value] = small.value
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                    options[small.target.value] = small.value
    return options
