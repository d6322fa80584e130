from __future__ import annotations

from collections.abc import Iterable

from ..domain.task_classes import class_facts, confirmed
from ..facts.tasks import BROAD_AUTORETRY_FACT
from ..rule import Finding, Invalid, ProjectRule, Valid


class AutoretryOnAnyException(ProjectRule):
    """
    ## What it does
    Finds tasks whose `autoretry_for` includes `Exception` or
    `BaseException`: a task decorator's option (`@shared_task`,
    `@app.task`, `app.task(fn, ...)`), or the class attribute of a `Task`
    subclass (a task class, or a base class given with `base=`), whatever
    the task body does. A name imported as `Exception` from another module
    is not the builtin and is not reported. A class is a task class when a
    base is `celery.Task`/`app.Task` or a task class of the same file, or
    when the file registers it (`app.register_task(Cls())`), or when a base
    imported from another linted module is one (any depth); the option is
    reported where it is written. A task that never retries
    (`max_retries=0`, or `retry_kwargs={"max_retries": 0}`: Celery gives
    up on the first retry) is not reported.

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
            # never retried: Celery's ``Task.retry`` gives up when retries + 1 > 0
            from celery import Task, shared_task
            @shared_task(autoretry_for=(Exception,), max_retries=0)
            def start_sync():
                ...
            @shared_task(autoretry_for=(Exception,), retry_kwargs={"max_retries": 0})
            def start_other():
                ...
            class Starter(Task):
                autoretry_for = (Exception,)
                max_retries = 0
                def run(self):
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
        Valid("""
            # file: proj/__init__.py
            # file: proj/mixins.py
            class Mixin:
                pass
            # file: proj/tasks.py
            from proj.mixins import Mixin
            from proj.unlinted import Unknown
            class NotATask(Mixin):
                autoretry_for = (Exception,)
            class MaybeATask(Unknown):
                autoretry_for = (Exception,)
        """),
    )
    INVALID = (
        Invalid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery, Task
            app = Celery("proj")
            class CustomTask(Task):
                acks_late = True
            # file: proj/tasks.py
            from celery import shared_task
            from proj.celery import CustomTask
            class BaseTaskWithRetry(CustomTask):
                autoretry_for = (Exception,)
                retry_backoff = True
            @shared_task(base=BaseTaskWithRetry)
            def send_email_task(email):
                send_email(email)
        """, count=1, at="4:22", message="task class `BaseTaskWithRetry`"),
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

    def check(self, project) -> Iterable[Finding]:
        classes = class_facts(project)
        for fact in project.of_kind(BROAD_AUTORETRY_FACT):
            if confirmed(fact, classes):
                yield self.finding(
                    f"`autoretry_for` of {fact['what']} includes `{fact['exception']}`: every failure, programming "
                    "errors included, retries the whole task; list only transient exceptions",
                    fact["path"], fact["line"], fact["col"], fact["end_line"], fact["end_col"])
