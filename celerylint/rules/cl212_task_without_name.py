from __future__ import annotations

import libcst as cst

from ..domain.tasks import TASK_DEFINITION, TaskRule
from ..rule import Invalid, Valid
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED


class TaskWithoutName(TaskRule):
    """
    ## What it does
    Finds function tasks (`@shared_task`, `@app.task`, `@app.periodic_task`,
    `app.task(fn)`, through any alias) that do not give an explicit
    `name=` (a `name=None` counts as none). Task classes are not reported:
    their name is a class attribute, often set by a base class.

    Off by default (select `CL212`): many projects rely on automatic names
    on purpose.

    ## Why is this bad?
    Without `name=`, Celery names the task after the module path and the
    function (`proj.billing.tasks.charge`). Messages carry that name: when
    the function or its module is renamed or moved, messages already in the
    queue, waiting with an ETA, or sent by beat or by another service with
    `send_task("proj.billing.tasks.charge")` name a task the new workers do
    not know, and are rejected as unregistered. A module imported under two
    names (relative imports, `src/` layouts) also registers the task twice,
    under names that do not match.

    ## Example
    ```python
    from celery import shared_task

    @shared_task(bind=True)
    def charge(self, order_id):
        ...
    ```

    Use instead:
    ```python
    from celery import shared_task

    @shared_task(bind=True, name="billing.charge")
    def charge(self, order_id):
        ...
    ```

    ## Fix safety
    There is no automatic fix: the name to keep is the one the messages in
    flight carry, which depends on how workers import the module.

    ## References
    - [Celery: task names](https://docs.celeryq.dev/en/stable/userguide/tasks.html#names)
    - [Celery: automatic naming and relative imports](https://docs.celeryq.dev/en/stable/userguide/tasks.html#automatic-naming-and-relative-imports)
    """

    CODE = "CL212"
    NAME = "task-without-name"
    SEVERITY = "note"
    SUMMARY = "A task without an explicit `name=`: renaming its module or function orphans queued messages"
    HINT = "give the task a stable `name=`"
    TAGS = ("naming",)
    DEFAULT_ENABLED = False
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (TASK_DEFINITION,)

    VALID = (
        Valid("""
            from celery import shared_task
            @shared_task(name="reports.daily")
            def daily_report(day):
                ...
        """),
        Valid("""
            from proj.celery import app as celery_app
            @celery_app.task(bind=True, name="mail.send")
            def send(self, message_id):
                ...
        """),
        Valid("""
            from celery import Task
            class Cleanup(Task):
                def run(self, days):
                    ...
        """),
        Valid("""
            # look-alikes: not Celery task decorators
            import functools
            @functools.cache
            def task(): ...
            class Worker:
                def task(self, fn): return fn
            worker = Worker()
            @worker.task
            def job(): ...
        """),
        Valid("""
            from celery import Celery
            app = Celery("proj")
            def bill(account_id):
                ...
            app.task(bill, name="billing.bill")
        """),
    )
    INVALID = (
        Invalid("""
            from celery import shared_task as job
            @job
            def reindex(index):
                ...
        """, count=1, at="3:5", message="`reindex`"),
        Invalid("""
            from celery import Celery
            app = Celery("proj")
            @app.task(bind=True, name=None)
            def send(self, message_id):
                ...
        """, count=1),
        Invalid("""
            from proj.celery import app
            @app.task(ignore_result=True)
            async def ping():
                ...
            def bill(account_id):
                ...
            app.task(bill)
        """, count=2),
        Invalid("""
            from celery import shared_task
            @shared_task(name="outer")
            def outer():
                @shared_task
                def inner():
                    ...
        """, count=1, message="`inner`"),
        Invalid("""
            from celery.task import periodic_task
            @periodic_task(run_every=3600)
            def hourly():
                ...
        """, count=1),
    )

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        if task.cls is not None:
            return
        name = task.options.get("name")
        if name is None or (isinstance(name, cst.Name) and name.value == "None"):
            self.report(node.name, f"task `{task.name}` has no explicit `name=`: Celery names it after its module "
                                   "and function, so renaming either orphans the messages already queued")
