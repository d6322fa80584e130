"""Task classes: which classes are Celery ``Task`` subclasses as far as one
file tells (bases of the same file, ``app.register_task``) or, for the file
rules, the project's task class index (``indexed_class``), the options
they set or inherit there, and the names the project phase follows across
files (``task_class`` facts)."""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext
from ..facts.task_class_index import TASK, TASK_BASES, classes_by_name, is_project_task_class
from .task_syntax import LIBRARIES

APP_TASK_METHODS = frozenset({"task", "periodic_task"})  # periodic_task: Celery 3 and app subclasses
APP_FACTORIES = frozenset({"celery.Celery", "celery.app.Celery", "celery.app.base.Celery"})
APP_OBJECTS = frozenset({"celery.current_app", "celery.app.current_app"})


def is_celery_app(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """``app`` made with ``Celery(...)`` here, ``current_app``, an object
    imported from another module of the project (``from proj.celery import app``),
    or a parameter annotated ``Celery`` (``def register_tasks(celery: Celery)``)."""
    if isinstance(node, cst.Name):
        if node.value in ctx.imports:
            target = ctx.imports[node.value]
            return target in APP_OBJECTS or not target.startswith(("celery.", "redis", "django."))
        bound = ctx.lookup(node.value)
        if isinstance(bound, cst.Call):
            return ctx.imported_name(bound.func) in APP_FACTORIES
        return bound is None and _annotated_app(node.value, ctx)
    return ctx.imported_name(node) in APP_OBJECTS


def _annotated_app(name: str, ctx: FileContext) -> bool:
    """``name`` is a parameter of the innermost enclosing function that has
    one of that name, annotated with Celery's app class."""
    for function in reversed(ctx.functions):
        params = function.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name:
                annotation = param.annotation.annotation if param.annotation is not None else None
                return annotation is not None and ctx.imported_name(annotation) in APP_FACTORIES
    return False


def _celery_task_base(value: cst.BaseExpression, ctx: FileContext) -> bool:
    """``celery.Task`` (through any alias) or ``app.Task``."""
    if ctx.imported_name(value) in TASK_BASES:
        return True
    return isinstance(value, cst.Attribute) and value.attr.value == "Task" and is_celery_app(value.value, ctx)


def module_classes(ctx: FileContext) -> dict[str, cst.ClassDef]:
    """The module-level classes of the file, by name (the last definition
    of a name wins), read once per file."""
    found = getattr(ctx, "_module_classes", None)
    if found is None:
        found = {}
        module = getattr(ctx, "module", None)
        for stmt in module.body if module is not None else ():
            if isinstance(stmt, cst.ClassDef):
                found[stmt.name.value] = stmt
        ctx._module_classes = found
    return found


REGISTER_METHODS = frozenset({"register_task", "register"})


def registered_classes(ctx: FileContext) -> frozenset[str]:
    """Classes registered as tasks at module level of this file, by the name
    written (qualified through imports: ``proj.jobs.Charge`` for an imported
    class): ``app.register_task(ChargeTask())``,
    ``app.tasks.register(ChargeTask())`` (also with the class itself),
    ``app`` a Celery app as ``is_celery_app`` knows one."""
    found = getattr(ctx, "_registered_classes", None)
    if found is not None:
        return found
    names = set()
    module = getattr(ctx, "module", None)
    for stmt in module.body if module is not None else ():
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            call = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if not isinstance(call, cst.Call) or not call.args or not isinstance(call.func, cst.Attribute):
                continue
            method, receiver = call.func.attr.value, call.func.value
            if method not in REGISTER_METHODS:
                continue
            if method == "register":  # app.tasks.register(...)
                if not (isinstance(receiver, cst.Attribute) and receiver.attr.value == "tasks"):
                    continue
                receiver = receiver.value
            if not is_celery_app(receiver, ctx):
                continue
            registered = call.args[0].value
            if isinstance(registered, cst.Call) and not registered.args:
                registered = registered.func
            if isinstance(registered, (cst.Name, cst.Attribute)):
                names.add(ctx.qualify(registered) or "")
    ctx._registered_classes = found = frozenset(names - {""})
    return found


def _local_base(value: cst.BaseExpression, ctx: FileContext) -> cst.ClassDef | None:
    """The module-level class of this file that a base expression names."""
    if isinstance(value, cst.Name) and value.value not in ctx.imports:
        return module_classes(ctx).get(value.value)
    return None


def is_task_class(cls: cst.ClassDef, ctx: FileContext, _seen: frozenset[int] = frozenset(),
                  indexed: bool = False) -> bool:
    """A ``Task`` subclass: a base is ``celery.Task``/``app.Task``, or a class
    of this file that is one (any depth), or the class is registered with
    ``app.register_task``/``app.tasks.register`` in this file.  A base
    imported from another module is followed only when ``indexed`` (a rule
    asking; the facts stay those of the file alone): through the task
    classes of the project's index (facts/task_class_index.py)."""
    for base in cls.bases:
        if _celery_task_base(base.value, ctx):
            return True
        local = _local_base(base.value, ctx)
        if local is not None and id(local) not in _seen and local is not cls:
            if is_task_class(local, ctx, _seen | {id(cls)}, indexed):
                return True
        elif indexed and base.keyword is None and indexed_class(base.value, ctx, TASK) == TASK:
            return True
    return cls.name.value in registered_classes(ctx) and module_classes(ctx).get(cls.name.value) is cls


def indexed_class(base: cst.BaseExpression, ctx: FileContext, entry: str) -> str | None:
    """What the index says of a class imported from the project (``entry``:
    ``task``, ``time_limit``, ``soft_time_limit``), recorded as asked."""
    if not maybe_project_class(base, ctx):
        return None
    key = f"{ctx.imported_name(base)}#{entry}"
    answer = ctx.client_index.get(key)
    ctx.client_lookups[key] = answer
    return answer


def class_options(cls: cst.ClassDef, ctx: FileContext | None = None, _depth: int = 0) -> dict[str, cst.BaseExpression]:
    """The class attributes of ``cls``; with ``ctx``, also those it inherits
    from the classes of this file it derives from (the nearest wins, as
    Python's MRO for single inheritance; bases listed first win)."""
    options: dict[str, cst.BaseExpression] = {}
    if ctx is not None and _depth < 20:  # a cycle of bases is an error Python reports; stop anyway
        for base in reversed(cls.bases):
            local = _local_base(base.value, ctx)
            if local is not None and local is not cls:
                options.update(class_options(local, ctx, _depth + 1))
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    options[small.targets[0].target.value] = small.value
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                    options[small.target.value] = small.value
    return options


# Modules whose classes are not project task classes: a base imported from
# anywhere else may be one (the project phase follows it).


def maybe_project_class(node: cst.BaseExpression, ctx: FileContext) -> bool:
    """A base imported from a module that is not a known library."""
    target = ctx.imported_name(node)
    return target is not None and not target.startswith(LIBRARIES)


def reaches_project_class(expr: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> bool:
    """A base expression that is, or a class of this file that derives from,
    a class imported from the project (``maybe_project_class``)."""
    if maybe_project_class(expr, ctx):
        return True
    if isinstance(expr, cst.Name) and expr.value not in ctx.imports and depth < 20:
        local = module_classes(ctx).get(expr.value)
        if local is not None:
            return any(reaches_project_class(b.value, ctx, depth + 1) for b in local.bases if b.keyword is None)
    return False


def class_name(node: cst.BaseExpression, ctx: FileContext) -> str:
    """The qualified name of a class expression: through imports, or as
    defined in this module; ``?`` when it cannot be named."""
    if isinstance(node, cst.Name) and node.value not in ctx.imports and node.value in module_classes(ctx):
        return f"{ctx.module_name or ctx.path}.{node.value}"
    return ctx.qualify(node) or "?"


def effective_options(options: dict[str, cst.BaseExpression], ctx: FileContext) -> dict[str, cst.BaseExpression]:
    """A task decorator's options over those of its ``base=`` class when
    that class is defined in this file (and its own bases there); a base
    imported from elsewhere adds nothing here (unknown: no finding)."""
    base = options.get("base")
    local = _local_base(base, ctx) if base is not None else None
    if local is None:
        return options
    return {**class_options(local, ctx), **options}


# -- across files, in the project phase (over ``task_class`` facts) ---------------

def class_facts(project) -> dict[str, dict]:
    """The ``task_class`` facts of the run by qualified class name
    (``task_class_index.classes_by_name``), made once per project."""
    found = getattr(project, "_class_facts", None)
    if found is not None:
        return found
    found = classes_by_name(list(project.of_kind("task_class")) + list(project.of_kind("registered_task_class")))
    try:
        project._class_facts = found
    except AttributeError:
        pass
    return found


def confirmed(fact: dict, classes: dict[str, dict]) -> bool:
    """A fact about a class that was a task class only if one of its bases
    (``via``) is: true when one is, or when the class itself (``cls``, or
    ``name`` for task signatures) is registered as a task elsewhere."""
    via = fact.get("via")
    if not via:
        return True
    own = fact.get("cls") or fact.get("name")
    return (own is not None and is_project_task_class(classes, own)) or any(is_project_task_class(classes, b) for b in via)
