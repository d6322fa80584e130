"""Which functions and classes are Celery tasks, and with which options."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..context import FileContext
from ..rule import All, Regex, Rule
from .values import evaluate, seconds

TASK_DECORATORS = frozenset({
    "celery.shared_task", "celery.task", "celery.app.shared_task", "celery.decorators.task",
    "celery.task.periodic_task", "celery.decorators.periodic_task",
})
# Every file that defines a task (as this module recognises one) says "task"
# or "Task", in one of these ways: a decorator whose name ends in "task"
# (@shared_task, @app.task, @app.periodic_task), a call that makes a
# decorator or registers a function (app.task(fn), task_with_retry =
# shared_task(...); a bare task( without a space, unlike prose), an import
# alias (shared_task as job, Task as BaseTask; the alias ends the line or is
# followed by a comma, parenthesis or comment, unlike "a task as well"), or
# a class with a ...Task base, or a class registered with
# ``app.register_task(...)``/``app.tasks.register(...)``.
TASK_DEFINITION = All(((b"task", b"Task"), (
    Regex(rb"\.(?:register_task|tasks\s*\.\s*register)\s*\("),
    Regex(rb"@\s*[\w.]*task\b"),
    Regex(rb"(?:\.|shared_|periodic_)task\s*\("),
    Regex(rb"\btask\("),
    Regex(rb"[tT]ask\s+as\s+\w+[ \t]*(?:[,)#;\r\n]|\Z)"),
    Regex(rb"class\s+\w+\s*\([^:]*Task\b"),
)))


def task_and(*groups: tuple[bytes, ...]) -> All:
    """A needle for a file that defines a task and mentions one word of each
    of ``groups``."""
    return All((*groups, TASK_DEFINITION))


APP_TASK_METHODS = frozenset({"task", "periodic_task"})  # periodic_task: Celery 3 and app subclasses
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
    if not is_task and isinstance(target, cst.Attribute) and target.attr.value in APP_TASK_METHODS:
        is_task = is_celery_app(target.value, ctx)
    if not is_task:
        if call is None and isinstance(target, cst.Name) and target.value not in ctx.imports:
            # task_with_retry = shared_task(autoretry_for=...); @task_with_retry
            bound = ctx.lookup(target.value)
            if isinstance(bound, cst.Call) and not isinstance(bound.func, cst.Call):
                return task_options(cst.Decorator(decorator=bound), ctx)
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
    """Module-level classes of this file registered as tasks:
    ``app.register_task(ChargeTask())``, ``app.tasks.register(ChargeTask())``
    (also with the class itself), ``app`` a Celery app as ``is_celery_app``
    knows one."""
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
            if isinstance(registered, cst.Name):
                names.add(registered.value)
    ctx._registered_classes = found = frozenset(names)
    return found


def _local_base(value: cst.BaseExpression, ctx: FileContext) -> cst.ClassDef | None:
    """The module-level class of this file that a base expression names."""
    if isinstance(value, cst.Name) and value.value not in ctx.imports:
        return module_classes(ctx).get(value.value)
    return None


def is_task_class(cls: cst.ClassDef, ctx: FileContext, _seen: frozenset[int] = frozenset()) -> bool:
    """A ``Task`` subclass: a base is ``celery.Task``/``app.Task``, or a class
    of this file that is one (any depth), or the class is registered with
    ``app.register_task``/``app.tasks.register`` in this file.  A base
    imported from another module is not followed here (the project phase
    follows it through the ``task_class`` facts)."""
    for base in cls.bases:
        if _celery_task_base(base.value, ctx):
            return True
        local = _local_base(base.value, ctx)
        if local is not None and id(local) not in _seen and local is not cls:
            if is_task_class(local, ctx, _seen | {id(cls)}):
                return True
    return cls.name.value in registered_classes(ctx) and module_classes(ctx).get(cls.name.value) is cls


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


def effective_options(options: dict[str, cst.BaseExpression], ctx: FileContext) -> dict[str, cst.BaseExpression]:
    """A task decorator's options over those of its ``base=`` class when
    that class is defined in this file (and its own bases there); a base
    imported from elsewhere adds nothing here (unknown: no finding)."""
    base = options.get("base")
    local = _local_base(base, ctx) if base is not None else None
    if local is None:
        return options
    return {**class_options(local, ctx), **options}


# -- the task model used by the task-code rules ------------------------------

@dataclass(frozen=True)
class TaskInfo:
    """One task body: ``node`` is the decorated function, or the ``run``
    method of a ``Task`` subclass (``cls``).  ``options`` are the keyword
    options of the decorator or the class attributes, by name."""

    name: str
    node: cst.FunctionDef
    options: dict[str, cst.BaseExpression] = field(default_factory=dict)
    cls: cst.ClassDef | None = None
    # the options with those inherited from base classes of this file
    # (``base=``, the class's own bases); None: the same as ``options``
    inherited: dict[str, cst.BaseExpression] | None = None

    def option(self, name: str) -> cst.BaseExpression | None:
        """An option as the task has it: its own, else inherited."""
        return (self.inherited if self.inherited is not None else self.options).get(name)

    @property
    def bound(self) -> bool:
        """``self`` is the task (``bind=True`` or a class-based task)."""
        if self.cls is not None:
            return True
        bind = self.options.get("bind")
        return isinstance(bind, cst.Name) and bind.value == "True"


def registration_calls(module: cst.Module) -> dict[str, list[cst.Call]]:
    """Module-level calls that may register a function as a task, by the
    function's name: ``app.task(fn, ...)``, ``shared_task(fn)``,
    ``app.task(**opts)(fn)``; the call that carries the options.  Purely
    syntactic: ``registered_options`` checks that it is a task decorator."""
    found: dict[str, list[cst.Call]] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else None
            if not isinstance(value, cst.Call):
                continue
            if isinstance(value.func, cst.Call):  # app.task(bind=True)(fn)
                registrar, args = value.func, value.args
            else:
                registrar, args = value, [a for a in value.args if a.keyword is None]
            if args and isinstance(args[0].value, cst.Name):
                found.setdefault(args[0].value.value, []).append(registrar)
    return found


def registered_options(calls: list[cst.Call], ctx: FileContext) -> dict[str, cst.BaseExpression] | None:
    """The options of the first of ``calls`` that is a task decorator."""
    for registrar in calls:
        if task_options(cst.Decorator(decorator=registrar.func), ctx) is not None:
            return {a.keyword.value: a.value for a in registrar.args if a.keyword is not None}
    return None


class TaskTracker:
    """Tells a rule, cheaply, whether it is inside a task body, which one,
    with which options.  A rule calls ``visit_Module``, ``visit_ClassDef``,
    ``leave_ClassDef``, ``visit_FunctionDef`` and ``leave_FunctionDef`` from
    its own hooks; ``current`` is the task whose body is the innermost
    function (a nested helper function is not the task body)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.registrations: dict[str, list[cst.Call]] = {}
        self.classes: list[cst.ClassDef | None] = []  # task classes (None: other class)
        self.stack: list[TaskInfo | None] = []

    @property
    def current(self) -> TaskInfo | None:
        return self.stack[-1] if self.stack else None

    def visit_Module(self, node: cst.Module) -> None:
        self.registrations = registration_calls(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node if is_task_class(node, self.ctx) else None)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(self._task(node))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()

    def _task(self, node: cst.FunctionDef) -> TaskInfo | None:
        name = node.name.value
        scopes = self.ctx.scopes  # the context pushed this function's scope already
        if len(scopes) >= 2 and isinstance(scopes[-2].node, cst.ClassDef) and self.classes:
            cls = self.classes[-1]
            if cls is not None and name == "run":
                return TaskInfo(cls.name.value, node, class_options(cls), cls, class_options(cls, self.ctx))
            return None
        options = function_task_options(node, self.ctx)
        if options is None and not self.stack and not self.classes and name in self.registrations:
            options = registered_options(self.registrations[name], self.ctx)
        return TaskInfo(name, node, options, None, effective_options(options, self.ctx)) if options is not None else None


class TaskRule(Rule):
    """A rule that judges each task body once it has been read: subclasses
    implement ``leave_task(node, task)``, called on leaving the function
    that is a task's body."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.tasks = TaskTracker(ctx)

    def visit_Module(self, node: cst.Module) -> None:
        self.tasks.visit_Module(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.tasks.visit_ClassDef(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.tasks.leave_ClassDef(original_node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.tasks.visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        task = self.tasks.current
        if task is not None:
            self.leave_task(original_node, task)
        self.tasks.leave_FunctionDef(original_node)

    def leave_task(self, node: cst.FunctionDef, task: TaskInfo) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass
class TimeLimit:
    limit: float  # seconds
    which: str  # time_limit | soft_time_limit


def task_time_limit(node: cst.FunctionDef, ctx: FileContext) -> TimeLimit | None:
    """The longer of the time limits the task whose body is ``node`` sets
    (decorator options, or the attributes of a Task subclass for its ``run``)."""
    options = function_task_options(node, ctx)
    if options is not None:
        options = effective_options(options, ctx)
    elif node.name.value == "run" and ctx.classes and len(ctx.functions) == 1:
        cls = ctx.classes[-1]
        options = class_options(cls, ctx) if is_task_class(cls, ctx) else None
    if not options:
        return None
    limits = []
    for which in ("time_limit", "soft_time_limit"):
        value = seconds(evaluate(options[which], ctx)) if which in options else None
        if value is not None and value > 0:
            limits.append((value, which))
    if not limits:
        return None
    limit, which = max(limits)
    return TimeLimit(limit, which)


BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})


def broad_exception(option: cst.BaseExpression, ctx: FileContext) -> cst.BaseExpression | None:
    """The element of an ``autoretry_for`` value (a tuple, a list, or one
    class) that is the builtin ``Exception`` or ``BaseException`` (not a
    name imported from elsewhere), or None."""
    elements = [e.value for e in option.elements] if isinstance(option, (cst.Tuple, cst.List)) else [option]
    for element in elements:
        if isinstance(element, cst.Name) and element.value in BROAD_EXCEPTIONS:
            target = ctx.imports.get(element.value)
            if target is None or target == f"builtins.{element.value}":
                return element
    return None
