from __future__ import annotations

import libcst as cst

from ..domain.delays import human, scheduled_delays
from ..domain.tasks import class_options, function_task_options, is_task_class
from ..domain.values import evaluate, seconds
from ..rule import FileContext, Invalid, Option, Regex, Rule, Valid


class FarFutureEta(Rule):
    """
    ## What it does
    Finds tasks scheduled further ahead than `countdown-threshold` (one hour
    by default): `countdown=` or `eta=` given to `apply_async`, `retry`,
    `signature`/`.s(...).set(...)`, `send_task`, and a task's
    `default_retry_delay`.

    The values are evaluated statically: numbers and constant arithmetic
    (`2 * 60 * 60`), module-level and local constants, `timedelta(...)`,
    `timedelta(...).total_seconds()`, and `now() + timedelta(...)`
    (`datetime.now`, `datetime.utcnow`, `django.utils.timezone.now`), also
    through a local variable. Anything that cannot be evaluated (a date from
    the database, a setting) is not reported.

    ## Why is this bad?
    An eta or countdown is not stored by the broker until it is due: a
    worker reserves the message at once and holds it in memory until the
    time comes. Thousands of such messages fill worker memory and prefetch
    slots, a restart or deploy in between can lose them, and on Redis and
    SQS a message held longer than the `visibility_timeout` (one hour by
    default) is delivered again to another worker, so the task runs twice.

    ## Example
    ```python
    from datetime import timedelta
    from celery import shared_task

    @shared_task
    def send_reminder(user_id): ...

    def on_signup(user):
        send_reminder.apply_async((user.id,), countdown=timedelta(days=3).total_seconds())
    ```

    Use instead:
    ```python
    from datetime import timedelta
    from celery import shared_task
    from django.utils.timezone import now
    from reminders.models import Reminder

    def on_signup(user):
        Reminder.objects.create(user=user, due_at=now() + timedelta(days=3))

    @shared_task
    def send_due_reminders():  # run every few minutes by celery beat
        due = Reminder.objects.filter(due_at__lte=now(), queued_at=None)
        for reminder_id in due.values_list("id", flat=True):
            # claim it first: a later tick, or a second beat, skips it
            if Reminder.objects.filter(id=reminder_id, queued_at=None).update(queued_at=now()):
                send_reminder.delay(reminder_id)

    @shared_task
    def send_reminder(reminder_id):
        reminder = Reminder.objects.get(id=reminder_id)
        if reminder.sent_at is None:  # a redelivered message sends nothing twice
            send_reminder_mail(reminder)
            Reminder.objects.filter(id=reminder_id).update(sent_at=now())
    ```

    ## Fix safety
    No automatic fix: moving a schedule into a table is a design change. The
    message shows the beat + table pattern.

    ## References
    - [Celery: ETA and countdown](https://docs.celeryq.dev/en/stable/userguide/calling.html#eta-and-countdown)
    - [Celery: Redis visibility timeout caveat](https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html#visibility-timeout)
    """

    CODE = "CL206"
    NAME = "far-future-eta"
    SEVERITY = "warning"
    SUMMARY = "A countdown or eta far in the future: held in worker memory, lost on restart, redelivered on Redis"
    HINT = ("store the due time in a database table and let a periodic celery beat task dispatch what is due")
    TAGS = ("scheduling",)
    OPTIONS = (Option("countdown-threshold", "seconds", 3600, "seconds beyond which a countdown or eta is reported"),)
    REQUIRES = (b"countdown", b"default_retry_delay", Regex(rb"\beta\s*="))

    VALID = (
        Valid("""
            from proj.tasks import ping
            ping.apply_async(countdown=60)
        """),
        Valid("""
            from datetime import timedelta
            from django.utils import timezone
            def f(task):
                task.apply_async(eta=timezone.now() + timedelta(minutes=30))
        """),
        Valid("""
            def f(task, order):
                task.apply_async(eta=order.due_at)
                task.apply_async(countdown=order.delay_seconds)
        """),
        Valid("""
            from celery import shared_task
            @shared_task(bind=True, default_retry_delay=300)
            def f(self):
                raise self.retry(countdown=2 ** 5)
        """),
        Valid("""
            from proj.tasks import report
            HOUR = 3600
            report.apply_async(countdown=HOUR)
            report.delay(7200)  # a task argument, not a countdown
        """),
        Valid("""
            import redis
            r = redis.Redis()
            r.set("eta", 99999)
        """, path="cache.py"),
    )
    INVALID = (
        Invalid(
            """
            from proj.tasks import report
            report.apply_async(args=(1,), countdown=2 * 60 * 60)
            """,
            fixed=None,
        ),
        Invalid(
            """
            import datetime as dt
            from proj.tasks import report
            def schedule():
                run_at = dt.datetime.now() + dt.timedelta(days=1)
                report.apply_async(eta=run_at)
            """,
            fixed=None,
        ),
        Invalid(
            """
            from datetime import timedelta
            from celery import shared_task
            DELAY = timedelta(hours=6).total_seconds()
            @shared_task(bind=True)
            def poll(self):
                raise self.retry(countdown=DELAY)
            """,
            fixed=None,
        ),
        Invalid(
            """
            from celery import shared_task as task_decorator
            @task_decorator(default_retry_delay=4 * 3600)
            def sync(): ...
            """,
            fixed=None,
        ),
        Invalid(
            """
            from celery import Celery, Task
            app = Celery("proj")
            class Sync(Task):
                default_retry_delay = 86400
                def run(self): ...
            @app.task(default_retry_delay=7200)
            def g(): ...
            """,
            fixed=None,
            count=2,
        ),
        Invalid(
            """
            from celery import signature
            from django.utils.timezone import now
            from datetime import timedelta
            sig = signature("proj.tasks.report", eta=now() + timedelta(hours=3))
            report.s(1).set(countdown=10800)
            """,
            fixed=None,
            count=2,
        ),
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.threshold = self.option("countdown-threshold")

    def visit_Call(self, node: cst.Call) -> None:
        for a, kind, delay in scheduled_delays(node, self.ctx):
            if delay > self.threshold:
                self.report(a, f"`{kind}` of {human(delay)} is beyond the {human(self.threshold)} threshold: "
                               "the worker holds the message in memory until it is due, a restart can lose it, "
                               "and a Redis/SQS broker redelivers it after the visibility timeout")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        options = function_task_options(node, self.ctx)
        if options and "default_retry_delay" in options:
            self._retry_delay(options["default_retry_delay"])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if is_task_class(node, self.ctx):
            value = class_options(node).get("default_retry_delay")
            if value is not None:
                self._retry_delay(value)

    def _retry_delay(self, value: cst.BaseExpression) -> None:
        delay = seconds(evaluate(value, self.ctx))
        if delay is not None and delay > self.threshold:
            self.report(value, f"`default_retry_delay` of {human(delay)} is beyond the {human(self.threshold)} threshold: "
                               "every retry becomes a far-future eta held in worker memory and redelivered by Redis/SQS")
