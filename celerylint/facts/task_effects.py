"""Facts for CL207: the tasks that have several external side effects, with
what their ``autoretry_for`` is, or which base classes the project phase must
follow to learn it (a base imported from another module of the project)."""

from __future__ import annotations

import libcst as cst

from ..domain.dataflow import flow, within
from ..domain.tasks import (
    CLASS_WITH_RUN, TaskBodies, TaskInfo, broad_exception, class_name, never_retries, reaches_project_class,
    task_and,
)
from ..api.rule import Checker, Regex
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

EFFECTS_FACT = "task-effects"


CATCH_ALL = frozenset({"Exception", "BaseException"})


def _swallowed(event) -> bool:
    """The event is in the body of a ``try`` with a handler that catches
    every exception (bare, ``Exception``, ``BaseException``) and raises
    nothing: its failure cannot make the task fail, so cannot retry it."""
    for try_ in event.trys:
        for handler in try_.handlers:
            kind = handler.type
            names = [e.value for e in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
            if kind is None or any(isinstance(n, cst.Name) and n.value in CATCH_ALL for n in names):
                if not any(isinstance(n, cst.Raise) for n in _walk(handler.body)):
                    return True
    return False


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


def _repeat_score(effects: list) -> int:
    """How strongly a retry repeats side effects: each effect whose failure
    propagates counts one (two in a loop); effects whose failure is
    swallowed count only when a propagating one follows them (its failure
    repeats them)."""
    score = 0
    swallowed_before = False
    for event in effects:
        if _swallowed(event):
            swallowed_before = True
            continue
        score += (2 if event.in_loop else 1) + (1 if swallowed_before else 0)
        swallowed_before = False
    return score


def _leaves(block: tuple[cst.CSTNode, ...]) -> bool:
    """The block ends with ``return`` or ``raise``."""
    last = block[-1] if block else None
    return isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], (cst.Return, cst.Raise))


def _follows(first, then) -> bool:
    """Whether the effect ``then`` (later in the text) can run after
    ``first`` in one run of the task: not when a block around ``first`` ends
    with ``return``/``raise`` and ``then`` is outside that block (an early
    return that re-queues the task, then the normal path).  Inside a loop or
    the body of a ``try`` (whose handlers may run next), always."""
    if first.in_loop or first.trys:
        return True
    end = next((b for b in reversed(first.blocks) if _leaves(b)), None)
    return end is None or within(then, end)


_MAX_PATHS_EFFECTS = 12  # beyond this, every effect is taken as one path (the count of paths doubles with each)


def _paths(effects: list) -> list[list]:
    """The sequences of effects that can happen in one run (``_follows``):
    every maximal one."""
    if len(effects) > _MAX_PATHS_EFFECTS:
        return [effects]
    nexts = [[j for j in range(i + 1, len(effects)) if _follows(effects[i], effects[j])]
             for i in range(len(effects))]
    reached = {j for js in nexts for j in js}
    out: list[list] = []

    def extend(path: list[int]) -> None:
        if not nexts[path[-1]]:
            out.append([effects[i] for i in path])
        for j in nexts[path[-1]]:
            extend([*path, j])

    for start in range(len(effects)):
        if start not in reached:
            extend([start])
    return out


class TaskEffects(TaskBodies, Checker):
    """One fact per task whose body has at least two external side effects
    (one in a loop counts twice) and whose ``autoretry_for`` is broad, or is
    not set in this file while a base class of the task is followed
    elsewhere: ``own`` (True: the option is the task's own or inherited in
    this file), ``bases`` (qualified names the project phase follows),
    ``candidate`` (a class that is a task only if a base is), ``effects``
    (the first two, as shown), at the option or the task's name."""

    PATHS = TEST_PATHS_EXCLUDED
    # a task with its own option, a ``base=`` or a class with a base; or a
    # class with a base and a ``run`` method (a task through an imported base)
    REQUIRES = (task_and((b"autoretry_for", Regex(rb"\bbase\s*="), Regex(rb"class\s+\w+\s*\(\s*\w"))), CLASS_WITH_RUN)

    CANDIDATES = True

    def leave_task(self, node: cst.FunctionDef, task: TaskInfo) -> None:
        option = task.option("autoretry_for")
        if never_retries(task.option):
            return
        bases: list[str] = []
        if option is not None:
            if broad_exception(option, self.ctx) is None:
                return
        else:
            bases = self._followed_bases(task)
            if not bases:
                return
        if task.candidate and not bases:
            bases = self._followed_bases(task)
        effects = [e for e in flow(node, self.ctx).events if e.kind == "effect"]
        effects = max(_paths(effects), key=_repeat_score, default=[])
        if _repeat_score(effects) < 2:
            return
        shown = [effects[0].detail + (" (in a loop)" if len(effects) == 1 else "")]
        if len(effects) > 1:
            shown.append(effects[1].detail)
        own = option is not None and "autoretry_for" in task.options
        place = option if own else (task.cls.name if task.cls is not None else node.name)
        cls = f"{self.ctx.module_name or self.ctx.path}.{task.cls.name.value}" if task.cls is not None else None
        self.ctx.fact(EFFECTS_FACT, place, task=task.name, own=option is not None, local=own, bases=bases,
                      candidate=task.candidate, effects=shown, cls=cls)

    def _followed_bases(self, task: TaskInfo) -> list[str]:
        """The base classes of the task the project phase follows: the
        ``base=`` class of a function task, the bases of a task class; only
        when one of them, or a class of this file they derive from, is
        imported from the project."""
        if task.cls is not None:
            exprs = [b.value for b in task.cls.bases if b.keyword is None]
        else:
            base = task.options.get("base")
            exprs = [base] if base is not None else []
        if not any(reaches_project_class(e, self.ctx) for e in exprs):
            return []
        return [class_name(e, self.ctx) for e in exprs]
