"""Which functions and classes are Celery tasks, and with which options."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import libcst as cst

from ..api.context import FileContext
from ..api.rule import All, Rule
from .task_classes import (  # noqa: F401 - re-exported: the task model's public names
    APP_FACTORIES, APP_OBJECTS, APP_TASK_METHODS, LIBRARIES, TASK_BASES, class_name, class_options,
    effective_options, indexed_class, is_celery_app, is_task_class, maybe_project_class, module_classes,
    reaches_project_class, registered_classes,
)
from .delays import resolve_setting_delay, setting_delay
from .task_decorators import decorator_options, decorator_spec
from .task_syntax import CLASS_WITH_RUN, TASK_DECORATORS, TASK_DEFINITION  # noqa: F401 - re-exported
from .values import evaluate, seconds

def task_and(*groups: tuple[bytes, ...]) -> All:
    """A needle for a file that defines a task, or a class with ``run`` that
    may be one through a base of another file, and mentions one word of each
    of ``groups``."""
    return All((*groups, (TASK_DEFINITION, CLASS_WITH_RUN)))


def task_options(decorator: cst.Decorator, ctx: FileContext) -> dict[str, cst.BaseExpression] | None:
    """The keyword options of a task decorator, or None if it is not one."""
    expr = decorator.decorator
    call = expr if isinstance(expr, cst.Call) else None
    target = call.func if call is not None else expr
    is_task = ctx.imported_name(target) in TASK_DECORATORS
    if not is_task and isinstance(target, cst.Attribute) and target.attr.value in APP_TASK_METHODS:
        is_task = is_celery_app(target.value, ctx)
    spec = None
    if not is_task:
        if call is None and isinstance(target, cst.Name) and target.value not in ctx.imports:
            # task_with_retry = shared_task(autoretry_for=...); @task_with_retry
            bound = ctx.lookup(target.value)
            if isinstance(bound, cst.Call) and not isinstance(bound.func, cst.Call):
                return task_options(cst.Decorator(decorator=bound), ctx)
        spec = decorator_spec(target, ctx)  # one of the project's own task decorators
        if spec is None or (call is None and not spec["bare"]):
            return None
    if call is None:
        return {} if spec is None else decorator_options(spec, {}, decorator, ctx)
    options: dict[str, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.keyword is not None:
            options[arg.keyword.value] = arg.value
        elif arg.star == "**":
            options.update(_unpacked_options(arg.value, ctx, 0))
    return options if spec is None else decorator_options(spec, options, decorator, ctx)


def _unpacked_options(node: cst.BaseExpression, ctx: FileContext, depth: int) -> dict[str, cst.BaseExpression]:
    """``@shared_task(**TASK_DEFAULTS)``: the items of a dict display the
    name is bound to in the file and never changed (``{**BASE, "k": v}``
    too), by their literal keys; anything else gives nothing, as an
    unpacked dict celerylint cannot read always did."""
    if isinstance(node, cst.Name):
        if depth > 4 or ctx.mutation_sites(node.value):
            return {}
        node = ctx.lookup(node.value)
    if not isinstance(node, cst.Dict):
        return {}
    out: dict[str, cst.BaseExpression] = {}
    for element in node.elements:
        if isinstance(element, cst.StarredDictElement):
            out.update(_unpacked_options(element.value, ctx, depth + 1))
        elif isinstance(element.key, cst.SimpleString) and element.key.evaluated_value.isidentifier():
            out[element.key.evaluated_value] = element.value
    return out


def function_task_options(func: cst.FunctionDef, ctx: FileContext) -> dict[str, cst.BaseExpression] | None:
    for decorator in func.decorators:
        options = task_options(decorator, ctx)
        if options is not None:
            return options
    return None


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
    # a class that is a task only if a base imported from the project is
    # one (``TaskTracker(candidates=True)``; the project phase decides)
    candidate: bool = False

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

    def __init__(self, ctx: FileContext, candidates: bool = False, indexed: bool = False) -> None:
        self.ctx = ctx
        self.indexed = indexed  # bases imported from the project count through the index (``is_task_class``)
        self.registrations: dict[str, list[cst.Call]] = {}
        self.classes: list[cst.ClassDef | None] = []  # task classes (None: other class)
        self.stack: list[TaskInfo | None] = []
        # with ``candidates``, module-level classes deriving from a class
        # imported from the project count too, marked ``candidate``
        self.candidates = candidates
        self.candidate_ids: set[int] = set()

    @property
    def current(self) -> TaskInfo | None:
        return self.stack[-1] if self.stack else None

    def visit_Module(self, node: cst.Module) -> None:
        self.registrations = registration_calls(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if is_task_class(node, self.ctx, indexed=self.indexed):
            self.classes.append(node)
        elif (self.candidates and not self.stack and len(self.ctx.classes) == 1
              and any(reaches_project_class(b.value, self.ctx) for b in node.bases if b.keyword is None)):
            self.classes.append(node)
            self.candidate_ids.add(id(node))
        else:
            self.classes.append(None)

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
                return TaskInfo(cls.name.value, node, class_options(cls), cls, class_options(cls, self.ctx),
                                id(cls) in self.candidate_ids)
            return None
        options = function_task_options(node, self.ctx)
        if options is None and not self.stack and not self.classes and name in self.registrations:
            options = registered_options(self.registrations[name], self.ctx)
        return TaskInfo(name, node, options, None, effective_options(options, self.ctx)) if options is not None else None


class TaskBodies:
    """A checker that sees each task body once it has been read: subclasses
    implement ``leave_task(node, task)``, called on leaving the function
    that is a task's body.  ``CANDIDATES``: also the ``run`` of a class that
    is a task only if a base in another file is, for the project phase to
    decide; ``INDEXED``: the ``run`` of a class that the project's index
    says is a task class through such a base (see ``TaskTracker``)."""

    CANDIDATES = False
    INDEXED = False

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.tasks = TaskTracker(ctx, candidates=self.CANDIDATES, indexed=self.INDEXED)

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


class TaskRule(TaskBodies, Rule):
    """A rule that judges each task body once it has been read (``TaskBodies``),
    a class task also through bases in other files."""

    INDEXED = True


@dataclass
class TimeLimit:
    limit: float | None  # seconds; None when only limits read from settings are known
    which: str  # time_limit | soft_time_limit ("" without ``limit``)
    # the limits read from a Django setting, ``(which, domain.delays.setting_delay)``
    settings: tuple[tuple[str, dict], ...] = ()

    def in_settings(self, source) -> tuple[float, str] | None:
        """The longest limit with the settings module ``source``
        (``delays.django_sources``), and what it is; None when a setting
        read is unknown there."""
        limits = [(self.limit, f"`{self.which}`")] if self.limit is not None else []
        for which, spec in self.settings:
            value = resolve_setting_delay(spec, source)
            if value is None:
                return None
            limits.append((value, f"`{which}` (`settings.{spec['setting']}` in {source.path})"))
        return max(limits, default=None)


def task_time_limit(node: cst.FunctionDef, ctx: FileContext) -> TimeLimit | None:
    """The longer of the time limits the task whose body is ``node`` sets
    (decorator options, or the attributes of a Task subclass for its ``run``),
    and the limits it reads from Django settings, for the project phase."""
    options = function_task_options(node, ctx)
    bases: list[cst.BaseExpression] = []  # imported from the project: their limits come from the index
    if options is not None:
        options = effective_options(options, ctx)
        if "base" in options:
            bases = [options["base"]]
    elif node.name.value == "run" and ctx.classes and len(ctx.functions) == 1:
        cls = ctx.classes[-1]
        options = class_options(cls, ctx) if is_task_class(cls, ctx, indexed=True) else None
        bases = [b.value for b in cls.bases if b.keyword is None]
    if options is None:
        return None
    limits, settings = [], []
    for which in ("time_limit", "soft_time_limit"):
        if which in options:
            value = seconds(evaluate(options[which], ctx))
            spec = setting_delay(options[which], ctx) if value is None else None
            if spec is not None:
                settings.append((which, spec))
        else:  # the first base that has it, as Python's MRO for single inheritance
            answers = (indexed_class(b, ctx, which) for b in bases)
            answer = next((a for a in answers if a is not None), None)
            value = None
            if answer is not None and answer.startswith("{"):  # read from a Django setting in the base's file
                settings.append((which, json.loads(answer)))
            elif answer is not None:
                value = seconds(float(answer))
        if value is not None and value > 0:
            limits.append((value, which))
    if not limits and not settings:
        return None
    limit, which = max(limits, default=(None, ""))
    return TimeLimit(limit, which, tuple(settings))


BROAD_EXCEPTIONS = frozenset({"Exception", "BaseException"})


def _zero(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Integer) and value.evaluated_value == 0


def never_retries(get) -> bool:
    """Whether a task's options (``get(name)``) make ``autoretry_for`` never
    retry: ``max_retries=0`` or ``retry_kwargs={"max_retries": 0}`` (the
    autoretry wrapper passes ``retry_kwargs`` to ``Task.retry``, which
    raises once ``request.retries + 1`` exceeds ``max_retries``)."""
    kwargs = get("retry_kwargs")
    if isinstance(kwargs, cst.Dict):
        for element in kwargs.elements:
            if (isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
                    and element.key.evaluated_value == "max_retries"):
                return _zero(element.value)
    return _zero(get("max_retries"))


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
