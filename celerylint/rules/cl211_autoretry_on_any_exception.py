from __future__ import annotations

import libcst as cst

from ..domain.tasks import TaskRule, broad_exception, class_options, is_task_class, task_and
from ..rule import Invalid, Valid


class AutoretryOnAnyException(TaskRule):
    """
    ## What it does
    Finds tasks whose `autoretry_for` includes `Exception` or
    `BaseException`: a task decorator's option (`@shared_task`,
    `@app.task`, `app.task(fn, ...)`), or the class attribute of a `Task`
    subclass (a task class, or a base class given with `base=`), whatever
    the task body does. A name imported as `Exception` from another module
    is not the builtin and is not reported. A class is a task class when a
    base is `celery.Task`/`app.Task` or a task class of the same file, or
    when the file registers it (`app.register_task(Cls())`); the option is
    reported where it is written, so a base class in another module is
    reported in its own file.

    Off by default (select `CL211`): CL207 reports the dangerous cases
    only, catch-all retries on tasks with several side effects.

    ## Why is this bad?
    `autoretry_for` re-runs the whole task from the top. With a catch-all
    list every failure is retried: programming errors (`TypeError`,
    `KeyError`) that will fail again each time, validation errors, and
    failures after a side effect already happened, which is then repeated.
    Retrying only the exceptions known to be transient (timeouts,
    connection errors) keeps bugs visible and retries safe.

    ## Example
    ```python
    from celery import shared_task

    @shared_task(autoretry_for=(Exception,), retry_backoff=True)
    def refresh_feed(feed_id):
        ...
    ```

    Use instead:
    ```python
    from celery import shared_task
    from requests import ConnectionError, Timeout

    @shared_task(autoretry_for=(ConnectionError, Timeout), retry_backoff=True)
    def refresh_feed(feed_id):
        ...
    ```

    ## Fix safety
    There is no automatic fix: which exceptions are transient is for the
    task's author to say.

    ## References
    - [Celery: automatic retry for known exceptions](https://docs.celeryq.dev/en/stable/userguide/tasks.html#automatic-retry-for-known-exceptions)
    - [Celery: tasks should be idempotent](https://docs.celeryq.dev/en/stable/userguide/tasks.html#idempotence)
    """

    CODE = "CL211"
    NAME = "autoretry-on-any-exception"
    SEVERITY = "warning"
    SUMMARY = "`autoretry_for` includes `Exception`: every failure, bugs included, is retried"
    HINT = "list only the exceptions that are transient and safe to retry"
    TAGS = ("retries",)
    DEFAULT_ENABLED = False
    REQUIRES = (task_and((b"autoretry_for",)),)

    VALID = (
        Valid("""
            import requests
            from celery import shared_task
            @shared_task(autoretry_for=(requests.Timeout, requests.ConnectionError))
            def sync(order_id):
                ...
        """),
        Valid("""
            from proj.errors import Exception
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def sync(order_id):
                ...
        """),
        Valid("""
            # not a task: a plain function and a plain class
            def helper(autoretry_for=(Exception,)):
                ...
            class Settings:
                autoretry_for = (Exception,)
            def task(fn, **kw): ...
            @task(autoretry_for=(Exception,))
            def job(): ...
        """),
        Valid("""
            from celery import Task
            class Export(Task):
                autoretry_for = (IOError, TimeoutError)
                def run(self, export_id):
                    ...
        """),
        Valid("""
            from celery import shared_task
            @shared_task(dont_autoretry_for=(Exception,), retry_backoff=True)
            def sync(order_id):
                ...
        """),
    )
    INVALID = (
        Invalid("""
            from celery import shared_task as task
            @task(bind=True, autoretry_for=[BaseException])
            def sync(self, order_id):
                ...
        """, count=1, at="2:32", message="`BaseException`"),
        Invalid("""
            from proj.celery import app
            @app.task(autoretry_for=(KeyError, Exception), max_retries=3)
            async def fan_out(event):
                ...
        """, count=1, message="`fan_out`"),
        Invalid("""
            from celery import Task
            class BaseTask(Task):
                autoretry_for = (Exception,)
                retry_backoff = True
            class Notify(Task):
                autoretry_for: tuple = (Exception,)
                def run(self, user_id):
                    ...
        """, count=2, at="3:22"),
        Invalid("""
            from celery import Celery
            app = Celery("proj")
            def bill(account_id):
                ...
            bill_task = app.task(bill, autoretry_for=(Exception,))
        """, count=1, message="task `bill`"),
        Invalid("""
            from celery import shared_task
            retrying_task = shared_task(autoretry_for=(Exception,), retry_backoff=True)
            @retrying_task
            def one(): ...
            @retrying_task
            def two(): ...
        """, count=1, at="2:44", message="the task decorator used by `one`"),
        Invalid("""
            from celery import Celery
            app = Celery("proj")
            class Sync(app.Task):
                autoretry_for = Exception,
        """, count=1),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.seen: set[int] = set()  # options reported: a decorator made once serves many tasks

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        if task.cls is None:  # task classes are judged in visit_ClassDef
            option = task.options.get("autoretry_for")
            if option is not None and id(option) not in self.seen:
                self.seen.add(id(option))
                alias = any(  # task_with_retry = shared_task(autoretry_for=...); @task_with_retry
                    isinstance(d.decorator, cst.Name) and d.decorator.value not in self.ctx.imports
                    and isinstance(self.ctx.lookup(d.decorator.value), cst.Call) for d in node.decorators
                )
                self._check(option, f"task `{task.name}`" if not alias else
                            f"the task decorator used by `{task.name}` (and any other task made with it)")

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        if is_task_class(node, self.ctx):
            option = class_options(node).get("autoretry_for")
            if option is not None:
                self._check(option, f"task class `{node.name.value}`")

    def _check(self, option: cst.BaseExpression, what: str) -> None:
        broad = broad_exception(option, self.ctx)
        if broad is not None:
            self.report(option, f"`autoretry_for` of {what} includes `{broad.value}`: every failure, programming "
                                "errors included, retries the whole task; list only transient exceptions")
