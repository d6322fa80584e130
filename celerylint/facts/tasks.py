"""Fact collectors for the configuration rules: what the tasks declare
(``acks_late``, ``reject_on_worker_lost``, time limits, ``expires``, ``base``) and the
literal countdowns/etas in the code (CL104 compares them with the broker's
visibility timeout)."""

from __future__ import annotations

import libcst as cst

from ..domain.celeryconf.values import encode, setting_value
from ..domain.delays import scheduled_delays
from ..domain.tasks import TASK_DEFINITION, class_options, function_task_options, is_task_class
from ..rule import Checker, Regex

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
                      base=(self.ctx.qualify(base) or "?") if base is not None else None)
        if "acks_late" in options and "reject_on_worker_lost" not in options:  # where CL102 reports such a task
            self.ctx.fact("task_acks_late", options["acks_late"], name=node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if is_task_class(node, self.ctx):
            module = self.ctx.module_name or self.ctx.path
            self.ctx.definition_fact("task_class", node, cls=f"{module}.{node.name.value}",
                          options=self._options(class_options(node)))


class DelayCollector(Checker):
    REQUIRES = (b"countdown", Regex(rb"\beta\s*="))

    def visit_Call(self, node: cst.Call) -> None:
        for a, kind, delay in scheduled_delays(node, self.ctx):
            self.ctx.fact("delay", a, delay_kind=kind, seconds=delay)
