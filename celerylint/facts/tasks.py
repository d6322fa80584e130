"""Fact collectors for the configuration rules: what the tasks declare
(``acks_late``, ``reject_on_worker_lost``, time limits, ``expires``, ``base``) and the
literal countdowns/etas in the code (CL104 compares them with the broker's
visibility timeout)."""

from __future__ import annotations

import libcst as cst

from ..domain.celeryconf.values import encode, setting_value
from ..domain.delays import scheduled_delays, scheduled_setting_delays, setting_delay
from ..domain.values import evaluate, seconds
from ..domain.tasks import (
    CLASS_WITH_RUN, TASK_DEFINITION, TaskTracker, broad_exception, class_name, class_options, function_task_options,
    is_task_class, maybe_project_class, module_classes, never_retries, reaches_project_class, registered_classes,
)
from ..api.rule import All, Checker, Regex
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.task_syntax import TASK_COLLECTOR_REQUIRES
from .task_class_index import TIME_LIMITS


RETRY_DELAY_FACT = "retry-delay"  # a task's default_retry_delay: seconds, or a setting_delay
SETTING_DELAY_FACT = "setting-delay"  # a countdown read from a Django setting (domain.delays.setting_delay)
TASK_OPTIONS = ("acks_late", "reject_on_worker_lost", "time_limit", "soft_time_limit", "expires", "queue", "ignore_result",
                "serializer")


class TaskCollector(Checker):
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = TASK_COLLECTOR_REQUIRES
    # the files its ``ast`` twin (facts/task_defs.py) does not read
    GATE = "celerylint.domain.task_twin:tasks_need_libcst"

    def _options(self, options: dict[str, cst.BaseExpression]) -> dict:
        return {k: encode(setting_value(options[k], self.ctx)) for k in TASK_OPTIONS if k in options}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        options = function_task_options(node, self.ctx)
        if options is None:
            return
        base = options.get("base")
        self.ctx.definition_fact("task", node, name=node.name.value, options=self._options(options),
                      base=self._class_name(base) if base is not None else None, app=self._app(node))
        acks_late = options.get("acks_late")
        if acks_late is not None and "reject_on_worker_lost" not in options and _keyword_of(node, acks_late, self.ctx):
            # where CL102 reports such a task and adds ``, reject_on_worker_lost=True``
            self.ctx.fact("task_acks_late", options["acks_late"], name=node.name.value)

    def _app(self, node: cst.FunctionDef) -> str | None:
        """``pkg.mod.app`` for ``@app.task``: the app the task is registered on."""
        for decorator in node.decorators:
            deco = decorator.decorator
            func = deco.func if isinstance(deco, cst.Call) else deco
            if isinstance(func, cst.Attribute) and func.attr.value == "task":
                name = self.ctx.qualify(func.value)
                if name and "." not in name and name not in self.ctx.imports:
                    name = f"{self.ctx.module_name or self.ctx.path}.{name}"
                return name
        return None

    def _class_name(self, node: cst.BaseExpression) -> str:
        return class_name(node, self.ctx)

    def _followed(self, base: cst.BaseExpression) -> bool:
        """A base the project phase may find to be a task class: imported
        from the project, or a class of this file."""
        if isinstance(base, cst.Name) and base.value not in self.ctx.imports:
            return base.value in module_classes(self.ctx)
        return maybe_project_class(base, self.ctx)

    def leave_Module(self, original_node: cst.Module) -> None:
        for name in sorted(registered_classes(self.ctx)):
            if "." in name:  # an imported class registered here: a task class wherever it is defined
                self.ctx.fact("registered_task_class", None, cls=name)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self.ctx.classes[:-1] or self.ctx.functions:
            return  # module-level classes only
        task = is_task_class(node, self.ctx)
        # a class whose base is imported from the project may be a task class
        # through it: recorded with its bases, the project phase follows them
        bases = [self._class_name(b.value) for b in node.bases if b.keyword is None]
        if not task and not any(self._followed(b.value) for b in node.bases if b.keyword is None):
            return
        module = self.ctx.module_name or self.ctx.path
        own = class_options(node)
        extra = {}
        if "autoretry_for" in own:  # CL207 follows it across files
            extra["autoretry_broad"] = broad_exception(own["autoretry_for"], self.ctx) is not None
        # time limits read from Django settings, for CL205 through the task class index
        limits = {w: spec for w in TIME_LIMITS if w in own and (spec := setting_delay(own[w], self.ctx)) is not None}
        if limits:
            extra["limit_settings"] = limits
        self.ctx.definition_fact("task_class", node, cls=f"{module}.{node.name.value}",
                      options=self._options(own), bases=bases, task=task, **extra)


class DelayCollector(Checker):
    PATHS = TEST_PATHS_EXCLUDED
    # ``eta`` at a word start, written so that the regex engine scans for
    # the literal (``\beta`` would be tried at every position)
    REQUIRES = (b"countdown", Regex(rb"eta(?<!\weta)\s*="))

    def visit_Call(self, node: cst.Call) -> None:
        for a, kind, delay in scheduled_delays(node, self.ctx):
            self.ctx.fact("delay", a, delay_kind=kind, seconds=delay)
        for a, spec in scheduled_setting_delays(node, self.ctx):
            self.ctx.fact(SETTING_DELAY_FACT, a, delay_kind=a.keyword.value, **spec)


class RetryDelayCollector(Checker):
    """``default_retry_delay`` of task decorators and task classes (CL206):
    at the value, ``seconds`` when it evaluates, else a ``setting_delay``
    spec; ``via`` for a class that is a task only if a base of the
    project is (``domain.task_classes.confirmed``)."""

    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (All((b"default_retry_delay", (TASK_DEFINITION, CLASS_WITH_RUN, Regex(rb"class\s+\w+\s*\(\s*\w")))),)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        options = function_task_options(node, self.ctx)
        if options and "default_retry_delay" in options:
            self._record(options["default_retry_delay"], None, retries=_retries_after_delay(node, options, self.ctx))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        value = class_options(node).get("default_retry_delay")
        if value is None:
            return
        if is_task_class(node, self.ctx):
            self._record(value, None)
        elif not self.ctx.functions and any(reaches_project_class(b.value, self.ctx) for b in node.bases if b.keyword is None):
            self._record(value, [class_name(b.value, self.ctx) for b in node.bases if b.keyword is None],
                         f"{self.ctx.module_name or self.ctx.path}.{node.name.value}")

    def _record(self, value: cst.BaseExpression, via: list[str] | None, cls: str | None = None,
                retries: bool = False) -> None:
        delay = seconds(evaluate(value, self.ctx))
        spec = setting_delay(value, self.ctx) if delay is None else None
        if delay is None and spec is None:
            return
        extra = {"via": via, "cls": cls} if via else {}
        self.ctx.fact(RETRY_DELAY_FACT, value, seconds=delay, **(spec or {}), **extra, **({"retries": True} if retries else {}))


def _retries_after_delay(node: cst.FunctionDef, options: dict, ctx) -> bool:
    """The task is sent again after its ``default_retry_delay``: its body
    calls ``.retry(...)`` without a ``countdown``/``eta``, or it retries on
    ``autoretry_for`` without ``retry_backoff`` (whose delays replace it)."""
    if "autoretry_for" in options:
        backoff = options.get("retry_backoff")
        if backoff is None or evaluate(backoff, ctx) is False:
            return True
    todo: list[cst.CSTNode] = [node.body]
    while todo:
        current = todo.pop()
        if (isinstance(current, cst.Call) and isinstance(current.func, cst.Attribute) and current.func.attr.value == "retry"
                and not any(a.star or (a.keyword is not None and a.keyword.value in ("countdown", "eta"))
                            for a in current.args)):
            return True
        if not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            todo.extend(current.children)
    return False


BROAD_AUTORETRY_FACT = "broad-autoretry"  # an autoretry_for that includes Exception/BaseException (CL211)


class BroadAutoretryCollector(Checker):
    """Every ``autoretry_for`` that includes the builtin ``Exception`` or
    ``BaseException``: of a task decorator (once per decorator object,
    ``what`` naming the task or the decorator alias) or of a class that is
    a task class here, or may be one through a base of the project
    (``via``: its bases, confirmed in the project phase), at the option."""

    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (All((b"autoretry_for", (TASK_DEFINITION, Regex(rb"class\s+\w+\s*\(\s*\w")))),)

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.tasks = TaskTracker(ctx)
        self.seen: set[int] = set()  # a decorator made once serves many tasks

    def visit_Module(self, node: cst.Module) -> None:
        self.tasks.visit_Module(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.tasks.visit_ClassDef(node)
        options = class_options(node)
        option = options.get("autoretry_for")
        if option is None or never_retries(options.get):
            return
        if is_task_class(node, self.ctx):
            self._record(option, f"task class `{node.name.value}`", None)
        elif not self.ctx.functions and any(reaches_project_class(b.value, self.ctx) for b in node.bases if b.keyword is None):
            self._record(option, f"task class `{node.name.value}`",
                         [class_name(b.value, self.ctx) for b in node.bases if b.keyword is None],
                         f"{self.ctx.module_name or self.ctx.path}.{node.name.value}")

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.tasks.leave_ClassDef(original_node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.tasks.visit_FunctionDef(node)
        task = self.tasks.current
        if task is None or task.cls is not None:  # task classes: in visit_ClassDef
            return
        option = task.options.get("autoretry_for")
        if option is None or id(option) in self.seen or never_retries(task.options.get):
            return
        self.seen.add(id(option))
        alias = any(  # task_with_retry = shared_task(autoretry_for=...); @task_with_retry
            isinstance(d.decorator, cst.Name) and d.decorator.value not in self.ctx.imports
            and isinstance(self.ctx.lookup(d.decorator.value), cst.Call) for d in node.decorators
        )
        self._record(option, f"task `{task.name}`" if not alias else
                     f"the task decorator used by `{task.name}` (and any other task made with it)", None)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.tasks.leave_FunctionDef(original_node)

    def _record(self, option: cst.BaseExpression, what: str, via: list[str] | None, cls: str | None = None) -> None:
        broad = broad_exception(option, self.ctx)
        if broad is not None:
            extra = {"via": via, "cls": cls} if via else {}
            self.ctx.fact(BROAD_AUTORETRY_FACT, option, what=what, exception=broad.value, **extra)


def _keyword_of(func: cst.FunctionDef, value: cst.BaseExpression, ctx) -> bool:
    """Whether ``value`` is written as a keyword of the function's decorator
    call, or of the call a decorator name is bound to (not as an item of a
    dict unpacked into it, after which no keyword can be added)."""
    for decorator in func.decorators:
        call = decorator.decorator
        if isinstance(call, cst.Name):
            call = ctx.lookup(call.value)
        if isinstance(call, cst.Call) and any(a.value is value and a.keyword is not None for a in call.args):
            return True
    return False
