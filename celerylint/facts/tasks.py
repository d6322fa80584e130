"""Fact collectors for the configuration rules: what the tasks declare
(``acks_late``, ``reject_on_worker_lost``, time limits, ``expires``, ``base``) and the
literal countdowns/etas in the code (CL104 compares them with the broker's
visibility timeout)."""

from __future__ import annotations

import libcst as cst

from ..domain.celeryconf.values import encode, setting_value
from ..domain.delays import scheduled_delays
from ..domain.tasks import TASK_DEFINITION, class_options, function_task_options, is_task_class, module_classes
from ..rule import Checker, Regex

LIBRARIES = ("celery.", "kombu.", "django.", "rest_framework.", "typing.", "enum.", "abc.", "collections.",
             "pydantic.", "builtins.", "dataclasses.", "luigi.", "dramatiq.", "rq.", "huey.")
TASK_OPTIONS = ("acks_late", "reject_on_worker_lost", "time_limit", "soft_time_limit", "expires")


class TaskCollector(Checker):
    REQUIRES = (TASK_DEFINITION,)

    def _options(self, options: dict[str, cst.BaseExpression]) -> dict:
        return {k: encode(setting_value(options[k], self.ctx)) for k in TASK_OPTIONS if k in options}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        options = function_task_options(node, self.ctx)
        if options is None:
            return
        base = options.get("base")
        self.ctx.definition_fact("task", node, name=node.name.value, options=self._options(options),
                      base=self._class_name(base) if base is not None else None)

    def _class_name(self, node: cst.BaseExpression) -> str:
        """The qualified name of a class: through imports, or as defined in
        this module; ``?`` when it cannot be named."""
        if isinstance(node, cst.Name) and node.value not in self.ctx.imports and node.value in module_classes(self.ctx):
            return f"{self.ctx.module_name or self.ctx.path}.{node.value}"
        return self.ctx.qualify(node) or "?"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self.ctx.classes[:-1] or self.ctx.functions:
            return  # module-level classes only
        task = is_task_class(node, self.ctx)
        # a class whose base is imported from the project may be a task class
        # through it: recorded with its bases, the project phase follows them
        bases = [self._class_name(b.value) for b in node.bases if b.keyword is None]
        if not task and not any(self._maybe_project(b.value) for b in node.bases if b.keyword is None):
            return
        module = self.ctx.module_name or self.ctx.path
        self.ctx.definition_fact("task_class", node, cls=f"{module}.{node.name.value}",
                      options=self._options(class_options(node)), bases=bases, task=task)

    def _maybe_project(self, node: cst.BaseExpression) -> bool:
        """A base imported from a module that is not a known library."""
        target = self.ctx.imported_name(node)
        return target is not None and not target.startswith(LIBRARIES)


class DelayCollector(Checker):
    REQUIRES = (b"countdown", Regex(rb"\beta\s*="))

    def visit_Call(self, node: cst.Call) -> None:
        for a, kind, delay in scheduled_delays(node, self.ctx):
            self.ctx.fact("delay", a, delay_kind=kind, seconds=delay)
