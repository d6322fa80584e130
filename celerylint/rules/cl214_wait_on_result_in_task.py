from __future__ import annotations

import libcst as cst

from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.results import ALLOW_JOIN, RESULT_SOURCES, WAITS, is_result, sends, sync_subtasks_disabled
from ..domain.tasks import TaskRule, task_and
from ..rule import Invalid, Valid

_EMPTY = cst.Module([])
_WAITS = ("waits for another task: when every worker process waits so, none is left to run the awaited tasks "
          "(Celery raises `RuntimeError: Never call result.get() within a task!`)")


def _names(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _names(e.value)]
    return []


def _shown(node: cst.CSTNode) -> str:
    code = _EMPTY.code_for_node(node)
    return code if len(code) <= 40 and "\n" not in code else "…"


class WaitOnResultInTask(TaskRule):
    """
    ## What it does
    Finds a task that waits for another task's result: `.get()`, `.wait()`,
    `.join()`, `.join_native()` or `.collect()` on a result, or a
    `while not result.ready():` loop, in a task body or in a function of the
    same module that a task body calls by name (directly, or through one
    more such function). A value counts as a
    result only when celerylint sees where it comes from: `.delay(...)`,
    `.apply_async(...)`, `app.send_task(...)`, calling a canvas
    (`group(...)()`, `chord(...)(callback)`, `chain(...)()`),
    `AsyncResult(id)`, `GroupResult(...)`, `GroupResult.restore(id)`,
    `ResultSet(...)`, `app.AsyncResult(id)`, `self.AsyncResult(id)`, or a
    local name last assigned one of these. `.get()` on anything else (a
    dict, a queryset, a cache) is not reported.

    Celery's explicit opt-outs of its guard, a wait inside `with
    allow_join_result():` or written with `disable_sync_subtasks=False`,
    are reported as a note, and only in a task body on the result of work
    the task has just sent (`.delay()`, `.apply_async()`, `.send_task()`, a
    called canvas): that task cannot have run yet, and the guard being off
    does not keep the pool from deadlocking. The same opt-outs on a result
    read back by id (`AsyncResult(id)`, `GroupResult.restore(id)`), which
    may well be finished (as Celery's own chord code does), are not
    reported.

    Not reported: code that no task calls (a view that waits is slow, not
    deadlocked), functions nested in a task, test files.

    ## Why is this bad?
    The waiting task holds its worker process while the task it waits for
    sits in the queue. When every process of the pool waits this way, no
    process is left to run the awaited tasks and the workers deadlock.
    Celery refuses at run time with `RuntimeError: Never call result.get()
    within a task!`, but only on the path that runs, so the error shows in
    production, not in tests with `task_always_eager`.

    ## Example
    ```python
    from celery import shared_task

    @shared_task
    def fetch(url):
        ...

    @shared_task
    def crawl(urls):
        pages = [fetch.delay(url) for url in urls]
        first = fetch.delay(urls[0])
        return first.get(timeout=60)
    ```

    Use instead:
    ```python
    from celery import chord, shared_task

    @shared_task
    def fetch(url):
        ...

    @shared_task
    def summarise(pages):
        ...

    @shared_task
    def crawl(urls):
        chord(fetch.s(url) for url in urls)(summarise.s())
    ```

    ## Fix safety
    No fix: waiting is replaced by a callback (a chain or a chord), which
    changes how the work is split into tasks.

    ## References
    - [Celery: avoid launching synchronous subtasks](https://docs.celeryq.dev/en/stable/userguide/tasks.html#avoid-launching-synchronous-subtasks)
    - [Celery: `AsyncResult.get(disable_sync_subtasks=...)`](https://docs.celeryq.dev/en/stable/reference/celery.result.html#celery.result.AsyncResult.get)
    - [Celery: canvas, chains and chords](https://docs.celeryq.dev/en/stable/userguide/canvas.html)
    """

    CODE = "CL214"
    NAME = "wait-on-result-in-task"
    SEVERITY = "error"
    SUMMARY = "A task waits for another task's result: the pool deadlocks when every worker waits"
    HINT = "chain the work (`a.s() | b.s()`) or use a chord callback instead of waiting"
    TAGS = ("calling",)
    REQUIRES = (task_and((b"get", b"wait", b"join", b"collect", b"ready"), RESULT_SOURCES),)
    PATHS = TEST_PATHS_EXCLUDED  # a test may wait on an eager result
    GATE = "celerylint.domain.wait_syntax:may_wait_on_result"

    VALID = (
        Valid("""
            # outside tasks: a view or a script may wait
            from proj.tasks import add
            def view(request):
                return add.delay(1, 2).get(timeout=5)
        """),
        Valid("""
            # look-alikes: .get() on a dict, a queryset, a cache; .apply() is eager
            from celery import shared_task
            from django.core.cache import cache
            @shared_task
            def f(payload, ids):
                data = {"a": 1}
                data.get("a")
                Order.objects.get(pk=ids[0])
                cache.get("k")
                payload.get("x")
                add.apply((1, 2)).get()
                result = add.apply_async((1, 2))  # not waited on
                return result.id
        """),
        Valid("""
            # the documented opt-outs on results read back by id, which may be finished
            from celery import shared_task
            from celery.result import AsyncResult, GroupResult, allow_join_result
            @shared_task
            def f(task_id, group_id):
                with allow_join_result():
                    AsyncResult(task_id).get()
                return GroupResult.restore(group_id).join(disable_sync_subtasks=False)
        """),
        Valid("""
            # module functions no task calls, or calls inside allow_join_result, or by another name;
            # a task calling another task's function (judged as that task)
            from celery import shared_task
            from celery.result import allow_join_result
            def collect(ids):
                return group(add.s(i) for i in ids).apply_async().get()
            def view(request):
                return collect([1, 2])
            @shared_task
            def waits(ids):
                return group(add.s(i) for i in ids)().get(disable_sync_subtasks=False)
            @shared_task
            def f(ids, collect_remote):
                with allow_join_result():
                    collect(ids)
                collect_remote(ids)
                waits(ids)
            @shared_task
            def g(ids, collect):
                return collect(ids)
        """),
        Valid("""
            # a nested helper is not the task body; a name rebound to something else
            from celery import shared_task
            @shared_task
            def f():
                def later(r):
                    return r.get()
                r = add.delay(1, 2)
                r = {"x": 1}
                r.get("x")
                job = add.delay(1, 2)
                for job in jobs:  # the loop rebinds it
                    job.get("name")
                    while not job.ready():
                        pass
        """),
        Valid("""
            from proj.tasks import add
            def test_add():
                assert add.delay(1, 2).get() == 3
        """, path="tests/test_tasks.py"),
        Valid("""
            # AsyncResult from another library
            from celery import shared_task
            from huey.api import Result as AsyncResult
            @shared_task
            def f(task_id):
                return AsyncResult(task_id).get()
        """),
    )
    INVALID = (
        Invalid("""
            from celery import group, shared_task
            @shared_task(bind=True)
            def f(self, ids):
                job = group(add.s(i) for i in ids)()
                return job.join()
        """, at="5:12", message="`job.join()`", count=1),
        Invalid("""
            from celery import Celery
            from celery.result import AsyncResult, GroupResult as GR
            app = Celery()
            @app.task(bind=True)
            def f(self, task_id, group_id):
                AsyncResult(task_id).get()
                app.AsyncResult(task_id).wait()
                self.AsyncResult(task_id).get(timeout=1)
                GR.restore(group_id).join_native()
                app.send_task("proj.add", args=(1, 2)).get()
        """, count=5, message="waits for another task"),
        Invalid("""
            import time
            from celery import shared_task
            @shared_task
            def f():
                r = add.apply_async((1, 2), countdown=1)
                while not r.ready():
                    time.sleep(1)
                return r.result
        """, at="6:15", message="busy-waits", count=1),
        Invalid("""
            # a module function the task calls, directly or through one more
            import time
            from celery import group, shared_task
            def _run_all(ids):
                return group(add.s(i) for i in ids).apply_async().get()
            def _poll(x):
                r = add.delay(x, 2)
                while not r.ready():
                    time.sleep(1)
            def _workflow(ids):
                _poll(ids[0])
                return _run_all(ids)
            @shared_task
            def nightly(ids):
                return _workflow(ids)
        """, count=2, message="which task `nightly` calls (nightly → _workflow → "),
        Invalid("""
            # the guard turned off, on a task just sent: a note
            from celery import shared_task
            from celery.result import allow_join_result
            @shared_task
            def f():
                r = add.delay(1, 2)
                with allow_join_result():
                    r.get()
                return add.apply_async((3, 4)).get(disable_sync_subtasks=False)
        """, count=2, message="with Celery's guard turned off"),
        Invalid("""
            from celery import Task, chord
            class Crawl(Task):
                def run(self, urls):
                    res = chord([fetch.s(u) for u in urls])(summarise.s())
                    return res.get(propagate=False)
        """, count=1),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.allowed = 0  # open ``with allow_join_result():`` blocks
        self.loop_names: list[set[str]] = []  # names bound by the ``for`` loops around the point
        self.task_names: set[str] = set()
        # module functions that are not tasks: their waits, reported once the module is read if a task calls them
        self.helper_waits: dict[str, list[tuple[cst.CSTNode, str]]] = {}
        self.task_calls: list[tuple[str, str]] = []  # (task, module function it calls by name)
        self.helper_calls: dict[str, set[str]] = {}  # module function -> module functions it calls by name

    def visit_For(self, node: cst.For) -> None:
        self.loop_names.append({n.value for n in _names(node.target)})

    def leave_For(self, original_node: cst.For) -> None:
        self.loop_names.pop()

    def _looped(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Name) and any(expr.value in names for names in self.loop_names)

    def _result(self, expr: cst.BaseExpression) -> bool:
        """A result (``domain/results.py``); a loop variable is unknown (the
        context does not follow ``for`` targets, so its last assignment may
        be another value)."""
        return not self._looped(expr) and is_result(expr, self.ctx)

    def _helper(self) -> str | None:
        """The module-level function, not a task, whose own body is the point."""
        scopes = self.ctx.scopes
        if self.tasks.current is None and len(scopes) == 2 and isinstance(scopes[1].node, cst.FunctionDef):
            return scopes[1].node.name.value
        return None

    def _callee(self, name: str) -> bool:
        """``name`` may be a function of this module: not bound otherwise here, not imported, not a parameter."""
        function = self.ctx.scopes[-1].node
        params = {p.name.value for p in function.params.params} if isinstance(function, cst.FunctionDef) else ()
        return self.ctx.lookup(name) is None and name not in self.ctx.imports and name not in params

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        self.task_names.add(node.name.value)  # judged per call

    def visit_With(self, node: cst.With) -> None:
        self.allowed += self._allows(node)

    def leave_With(self, original_node: cst.With) -> None:
        self.allowed -= self._allows(original_node)

    def _allows(self, node: cst.With) -> bool:
        return any(isinstance(i.item, cst.Call) and self.ctx.imported_name(i.item.func) == ALLOW_JOIN for i in node.items)

    def visit_Call(self, node: cst.Call) -> None:
        task = self.tasks.current
        helper = self._helper() if task is None else None
        func = node.func
        if task is None and helper is None:
            return
        if isinstance(func, cst.Name):
            if not self.allowed and self._callee(func.value):
                if task is not None:
                    self.task_calls.append((task.name, func.value))
                else:
                    self.helper_calls.setdefault(helper, set()).add(func.value)
            return
        if not isinstance(func, cst.Attribute) or func.attr.value not in WAITS or not self._result(func.value):
            return
        if self.allowed or sync_subtasks_disabled(node):
            # the guard is off on purpose: still a wait on a task just sent, which no setting makes safe
            if task is not None and sends(func.value, self.ctx):
                how = "`allow_join_result()`" if self.allowed else "`disable_sync_subtasks=False`"
                self.report(node, f"`{_shown(node)}` in task `{task.name}` waits for a task it has just sent, with "
                                  f"Celery's guard turned off ({how}): the worker process is held until that task "
                                  "runs, and when every process waits so, none is left to run them; this is safe "
                                  "only when the awaited task goes to workers that never wait", severity="note")
            return
        if task is None:
            self.helper_waits.setdefault(helper, []).append((node, f"`{_shown(node)}`"))
            return
        self.report(node, f"`{_shown(node)}` in task `{task.name}` {_WAITS}")

    def visit_While(self, node: cst.While) -> None:
        task = self.tasks.current
        helper = self._helper() if task is None else None
        if (task is None and helper is None) or self.allowed:
            return
        test = node.test
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "ready"
                and self._result(test.func.value)):
            return
        if task is None:
            self.helper_waits.setdefault(helper, []).append((test, f"a busy-wait on `{_shown(test)}`"))
            return
        self.report(test, f"task `{task.name}` busy-waits on `{_shown(test)}`: the task it waits for may be "
                          "queued behind this one, and the worker process is held until it runs")

    def leave_Module(self, original_node: cst.Module) -> None:
        """Waits in module functions a task calls, directly or through one more
        module function (tasks themselves are judged on their own)."""
        functions = self.ctx.module_functions
        reached: dict[str, tuple[str, ...]] = {}  # function -> the task and the functions on the way
        for task, callee in self.task_calls:
            if callee in functions and callee not in self.task_names:
                reached.setdefault(callee, (task,))
        for first, chain in list(reached.items()):
            for callee in sorted(self.helper_calls.get(first, ())):
                if callee in functions and callee not in self.task_names and callee != first:
                    reached.setdefault(callee, (*chain, first))
        for helper, waits in self.helper_waits.items():
            chain = reached.get(helper)
            if chain is None:
                continue
            path = " → ".join((*chain, helper))
            for node, what in waits:
                self.report(node, f"{what} in `{helper}`, which task `{chain[0]}` calls ({path}), {_WAITS}")
