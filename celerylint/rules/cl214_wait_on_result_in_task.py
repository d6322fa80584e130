from __future__ import annotations

import libcst as cst

from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.results import ALLOW_JOIN, RESULT_SOURCES, WAITS, is_result, sync_subtasks_disabled
from ..domain.tasks import TaskRule, task_and
from ..rule import Invalid, Valid

_EMPTY = cst.Module([])


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
    `while not result.ready():` loop, in a task body. A value counts as a
    result only when celerylint sees where it comes from: `.delay(...)`,
    `.apply_async(...)`, `app.send_task(...)`, calling a canvas
    (`group(...)()`, `chord(...)(callback)`, `chain(...)()`),
    `AsyncResult(id)`, `GroupResult(...)`, `GroupResult.restore(id)`,
    `ResultSet(...)`, `app.AsyncResult(id)`, `self.AsyncResult(id)`, or a
    local name last assigned one of these. `.get()` on anything else (a
    dict, a queryset, a cache) is not reported.

    Not reported: code outside task bodies (a view that waits is slow, not
    deadlocked), test files, a wait inside `with allow_join_result():`, and
    a wait written with `disable_sync_subtasks=False`: both are Celery's
    documented, explicit opt-outs of its guard, written by someone who
    knows the risk, so reporting them would only ask for a `noqa`.

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
            # the documented opt-outs
            from celery import shared_task
            from celery.result import allow_join_result
            @shared_task
            def f():
                r = add.delay(1, 2)
                with allow_join_result():
                    r.get()
                return r.get(disable_sync_subtasks=False)
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

    def visit_For(self, node: cst.For) -> None:
        self.loop_names.append({n.value for n in _names(node.target)})

    def leave_For(self, original_node: cst.For) -> None:
        self.loop_names.pop()

    def _result(self, expr: cst.BaseExpression) -> bool:
        """A result (``domain/results.py``); a loop variable is unknown (the
        context does not follow ``for`` targets, so its last assignment may
        be another value)."""
        if isinstance(expr, cst.Name) and any(expr.value in names for names in self.loop_names):
            return False
        return is_result(expr, self.ctx)

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        pass  # judged per call

    def visit_With(self, node: cst.With) -> None:
        self.allowed += self._allows(node)

    def leave_With(self, original_node: cst.With) -> None:
        self.allowed -= self._allows(original_node)

    def _allows(self, node: cst.With) -> bool:
        return any(isinstance(i.item, cst.Call) and self.ctx.imported_name(i.item.func) == ALLOW_JOIN for i in node.items)

    def visit_Call(self, node: cst.Call) -> None:
        task = self.tasks.current
        func = node.func
        if task is None or self.allowed or not isinstance(func, cst.Attribute) or func.attr.value not in WAITS:
            return
        if sync_subtasks_disabled(node) or not self._result(func.value):
            return
        self.report(node, f"`{_shown(node)}` in task `{task.name}` waits for another task: when every worker "
                          "process waits so, none is left to run the awaited tasks (Celery raises "
                          "`RuntimeError: Never call result.get() within a task!`)")

    def visit_While(self, node: cst.While) -> None:
        task = self.tasks.current
        if task is None or self.allowed:
            return
        test = node.test
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test = test.expression
        if (isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "ready"
                and self._result(test.func.value)):
            self.report(test, f"task `{task.name}` busy-waits on `{_shown(test)}`: the task it waits for may be "
                              "queued behind this one, and the worker process is held until it runs")
