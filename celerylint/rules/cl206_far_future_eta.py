from __future__ import annotations

from collections.abc import Iterable

from ..domain.celeryconf.model import model
from ..domain.delays import django_sources, human, resolve_setting_delay
from ..domain.task_classes import class_facts, confirmed
from ..facts.tasks import RETRY_DELAY_FACT, SETTING_DELAY_FACT
from ..rule import Finding, Invalid, Option, ProjectRule, Valid, django_project


class FarFutureEta(ProjectRule):
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
    through a local variable. A countdown or `default_retry_delay` read from a
    Django setting (`settings.X`, `getattr(settings, "X", default)`, times or
    plus a constant, inside `timedelta(seconds=...)`), or an eta `now() +
    timedelta(hours=settings.X)`, takes the setting's
    value in the project's Django settings as the configuration model finds
    them (`--show-apps`; the longest value when apps use different settings
    modules, the `getattr` default when the setting is not assigned). Anything
    that cannot be evaluated (a date from the database, a setting assigned
    under a condition or read from the environment) is not reported. A task
    class is one through its bases in any linted file.

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

    VALID = (
        # a test may send a far-future eta on purpose: tests are not linted by the task-code rules
        Valid("""
            from proj.tasks import ping
            ping.apply_async(countdown=90000)
        """, path="tests/test_delivery.py"),
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
        Valid("""
            import math
            from datetime import timedelta
            from django.utils import timezone
            from proj.tasks import report
            def f():  # a delay that is not a finite number is unknown
                report.apply_async((1,), countdown=float("inf"))
                report.apply_async((1,), countdown=float("-inf"))
                report.apply_async((1,), countdown=float("nan"))
                report.apply_async((1,), countdown=1e308 * 10)
                report.apply_async((1,), countdown=10 ** 400)
                report.apply_async((1,), eta=timezone.now() + timedelta(seconds=1e308))
        """),
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://redis:6379/0"
            EXPORTS_TTL = 600
            if DEBUG:
                RETRY_DELAY = 86400
            SLOW = int(os.environ.get("SLOW", "86400"))
        """, extra="""
            # file: proj/tasks.py
            from datetime import timedelta
            from django.conf import settings
            from django.utils.timezone import now
            from proj import config
            from celery import shared_task
            @shared_task(default_retry_delay=settings.RETRY_DELAY)
            def export(project_id): ...
            def later(project_id):
                export.apply_async((project_id,), countdown=settings.EXPORTS_TTL)
                export.apply_async((project_id,), countdown=settings.UNDEFINED_TTL)
                export.apply_async((project_id,), countdown=config.EXPORTS_TTL * 1000)
                export.apply_async((project_id,), countdown=settings.SLOW)
                export.apply_async((project_id,), countdown=getattr(settings, "LOCKOUT", 120) + 60)
                export.apply_async((project_id,), eta=now() + timedelta(seconds=settings.EXPORTS_TTL))
                export.apply_async((project_id,), eta=settings.START + timedelta(days=2))
        """)),
        Valid("""
            # file: proj/__init__.py
            # file: proj/jobs.py
            class Job:
                pass
            # file: proj/tasks.py
            from proj.jobs import Job
            class Poll(Job):
                default_retry_delay = 86400
                def run(self): ...
        """),
    )
    INVALID = (
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://redis:6379/0"
            EXPORTS_TTL = 60 * 60 * 24
            RETRY_HOURS = 3
        """, extra="""
            # file: proj/tasks.py
            from datetime import timedelta
            from django.conf import settings as conf
            from django.utils.timezone import now
            from celery import shared_task
            @shared_task(default_retry_delay=conf.RETRY_HOURS * 3600)
            def export(project_id): ...
            def later(project_id):
                export.apply_async((project_id,), countdown=conf.EXPORTS_TTL)
                export.apply_async((project_id,), countdown=getattr(conf, "LOCKOUT_TIME", 7200) + 60)
                export.apply_async((project_id,), eta=now() + timedelta(hours=conf.RETRY_HOURS))
        """), count=4, message="(`settings."),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class ProjectTask(Task):
                acks_late = True
            # file: proj/tasks.py
            from proj.base import ProjectTask
            class Poll(ProjectTask):
                default_retry_delay = 86400
                def run(self): ...
        """, count=1, message="`default_retry_delay` of 1 d"),
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

    def check(self, project) -> Iterable[Finding]:
        threshold = project.settings.option("countdown-threshold")
        sources = None
        for fact in project.of_kind("delay"):
            if fact["seconds"] > threshold:
                yield self._at(fact, self._message(fact["delay_kind"], fact["seconds"], threshold, ""))
        for kind in (SETTING_DELAY_FACT, RETRY_DELAY_FACT):
            classes = class_facts(project) if kind == RETRY_DELAY_FACT else {}
            for fact in project.of_kind(kind):
                if not confirmed(fact, classes):
                    continue
                delay, where = fact.get("seconds"), ""
                if delay is None:
                    if sources is None:
                        sources = django_sources(model(project))
                    delay, where = self._from_settings(fact, sources)
                if delay is not None and delay > threshold:
                    which = "default_retry_delay" if kind == RETRY_DELAY_FACT else fact["delay_kind"]
                    yield self._at(fact, self._message(which, delay, threshold, where))

    @staticmethod
    def _from_settings(fact: dict, sources: list) -> tuple[float | None, str]:
        """The longest value the setting has in the project's Django settings
        modules, with where it was read; None when no module gives a value."""
        found = [(v, s.path) for s in sources if (v := resolve_setting_delay(fact, s)) is not None]
        if not found:
            return None, ""
        delay, path = max(found)
        return delay, f" (`settings.{fact['setting']}` in {path})"

    def _at(self, fact: dict, message: str) -> Finding:
        return self.finding(message, fact["path"], fact["line"], fact["col"], fact["end_line"], fact["end_col"])

    @staticmethod
    def _message(which: str, delay: float, threshold: float, where: str) -> str:
        if which == "default_retry_delay":
            return (f"`default_retry_delay` of {human(delay)}{where} is beyond the {human(threshold)} threshold: "
                    "every retry becomes a far-future eta held unacknowledged in worker memory, which a Redis/SQS "
                    "broker redelivers after the visibility timeout and RabbitMQ takes back at its consumer timeout")
        return (f"`{which}` of {human(delay)}{where} is beyond the {human(threshold)} threshold: "
                "the worker holds the message in memory until it is due, a restart can lose it, "
                "a Redis/SQS broker redelivers it after the visibility timeout, "
                "and RabbitMQ takes it back at its consumer timeout")
