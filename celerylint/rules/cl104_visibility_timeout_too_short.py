from __future__ import annotations

from ..domain.celeryconf.fixes import replace_at
from ..domain.celeryconf.texts import read
from ..domain.celeryconf.model import Model
from ..domain.celeryconf.redis_conf import url_transport
from ..domain.celeryconf.rulebase import ConfigRule
from ..domain.delays import human
from ..domain.unacked import above, longest_duration
from ..domain.celeryconf.values import number, plain
from ..domain.deploy.model import worker_apps
from ..rule import Invalid, LineIndex, TextEdit, TextFix, Valid, django_project


DEFAULT_VISIBILITY = {"redis": 3600, "sqs": 1800}


class VisibilityTimeoutTooShort(ConfigRule):
    """
    ## What it does
    For a Redis or SQS broker, compares the effective `visibility_timeout`
    (from `broker_transport_options`, or the transport's default: one hour
    on Redis, 30 minutes on SQS) with the longest time a message can stay
    unacknowledged: literal `countdown`/`eta` values found in the code (and
    countdowns and etas read from a Django setting, `countdown=settings.X`,
    `eta=now() + timedelta(seconds=settings.X)`, with the value the app's
    Django settings give), a task's `default_retry_delay` when it retries
    after it (`self.retry(...)` without a `countdown`/`eta`, or
    `autoretry_for` without `retry_backoff`), and,
    when late acknowledgement is on, the tasks' `time_limit` and
    `soft_time_limit` (global or per task).

    ## Why is this bad?
    Redis has no real acknowledgements: a delivered message waits in an
    "unacked" set, and after `visibility_timeout` seconds Celery assumes the
    worker died and delivers it again, whether the worker is dead or just
    slow. A countdown or eta longer than the timeout, or a late-acknowledged
    task running longer than it, is therefore executed twice (and again
    every timeout).

    ## Example
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    task_acks_late = True
    task_time_limit = 2 * 60 * 60
    ```

    Use instead:
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    task_acks_late = True
    task_time_limit = 2 * 60 * 60
    broker_transport_options = {"visibility_timeout": 3 * 60 * 60}
    ```

    ## Fix safety
    The fix raises the timeout to the next whole hour above the longest
    duration seen (replacing the value, adding the key to a literal
    `broker_transport_options` dict, or adding the setting). A misspelt
    `broker_transport_options` (see CL107) is renamed first, keeping its
    keys, and the key is added in the next round. It is unsafe: a
    longer timeout also delays the redelivery of tasks whose worker really
    died.

    ## References
    - [Celery: Redis visibility timeout](https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html#visibility-timeout)
    - [Celery: ETA and countdown](https://docs.celeryq.dev/en/stable/userguide/calling.html#eta-and-countdown)
    """

    CODE = "CL104"
    NAME = "visibility-timeout-too-short"
    SEVERITY = "error"
    SUMMARY = "Redis/SQS visibility timeout shorter than a task's time limit or a countdown: the message is redelivered while it runs"
    FIX = "unsafe"
    TAGS = ("configuration", "redis", "delivery")

    VALID = (
        # a default_retry_delay no retry waits for: a retry with its own countdown, backoff delays
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_transport_options = {"visibility_timeout": 310}
            @app.task(bind=True, default_retry_delay=600)
            def deliver(self, notification_id):
                try:
                    send(notification_id)
                except TimeoutError as exc:
                    raise self.retry(exc=exc, countdown=60)
            @app.task(default_retry_delay=600, autoretry_for=(TimeoutError,), retry_backoff=True)
            def notify(notification_id):
                send(notification_id)
            @app.task(default_retry_delay=600)
            def plain(notification_id):
                send(notification_id)
            """),
        # transport options changed in place after they are set, or through
        # another name: unknown, never the first literal
        Valid("""
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0", task_acks_late=True, task_time_limit=7200)
            app.conf.broker_transport_options = {}
            app.conf.broker_transport_options.update(visibility_timeout=9000)
            """),
        Valid("""
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0", task_acks_late=True, task_time_limit=7200)
            app.conf.update(broker_transport_options={})
            opts = app.conf.broker_transport_options
            opts["visibility_timeout"] = 9000
            """),
        Valid("""
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            task_acks_late = True
            task_time_limit = 7200
            broker_transport_options = {}
            opts = broker_transport_options
            opts["visibility_timeout"] = 9000
            # file: app.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="amqp://guest@localhost//", task_acks_late=True, task_time_limit=7200)
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost", task_time_limit=7200)
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker=BROKER, task_acks_late=True, task_time_limit=7200)
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_transport_options = TRANSPORT_OPTIONS
            def later(task):
                task.apply_async(countdown=86400)
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            def soon(task):
                task.apply_async(countdown=600)
        """),
        Valid("""
            # file: proj.py
            import math
            from celery import Celery
            app = Celery("proj", broker="redis://localhost", task_acks_late=True, task_time_limit=float("inf"))
            def never(task):  # a delay that is not a finite number is unknown
                task.apply_async((1,), countdown=float("inf"))
                task.apply_async((1,), countdown=math.inf)
                task.apply_async((1,), countdown=float("nan"))
                task.apply_async((1,), countdown=1e308 * 10)
                task.apply_async((1,), countdown=-1e308 * 10)
        """),
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://redis:6379/0"
            EXPORTS_TTL = float("inf")
            BIG = 1e308
        """, extra="""
            # file: proj/api.py
            from django.conf import settings
            from proj.tasks import delete_dump
            def export(project):
                delete_dump.apply_async((project.pk,), countdown=settings.EXPORTS_TTL)
                delete_dump.apply_async((project.pk,), countdown=settings.BIG * 10)
        """)),
    )
    INVALID = (
        # a retry's countdown is the task's default_retry_delay (GSA/notifications-api)
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_transport_options = {"visibility_timeout": 310}
            @app.task(bind=True, default_retry_delay=600, max_retries=5)
            def deliver(self, notification_id):
                try:
                    send(notification_id)
                except TimeoutError as exc:
                    raise self.retry(exc=exc)
            """, message="a retry after a `default_retry_delay` of 10 min at proj.py:4"),
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://redis:6379/0"
            EXPORTS_TTL = 60 * 60 * 24
        """, extra="""
            # file: proj/api.py
            from django.conf import settings
            from proj.tasks import delete_dump
            def export(project):
                delete_dump.apply_async((project.pk,), countdown=settings.EXPORTS_TTL)
        """), message="(`settings.EXPORTS_TTL` in proj/settings.py) at proj/api.py:4"),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_transport_options = {"visibility_timeout": 3600, "max_connections": 20}
            def later(task):
                task.apply_async(countdown=4 * 3600)
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_transport_options = {"visibility_timeout": 18000, "max_connections": 20}
            def later(task):
                task.apply_async(countdown=4 * 3600)
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_transport_options = {"max_connections": 20}
            @app.task(acks_late=True, time_limit=5400)
            def export(): ...
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.broker_transport_options = {"visibility_timeout": 7200, "max_connections": 20}
            @app.task(acks_late=True, time_limit=5400)
            def export(): ...
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            import os
            from celery import Celery
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            import os
            CELERY_BROKER_URL = os.environ.get("REDIS_URL", "redis://redis:6379/0")
            CELERY_TASK_ACKS_LATE = True
            CELERY_TASK_SOFT_TIME_LIMIT = 3 * 3600
            # file: proj/tasks.py
            from datetime import timedelta
            from django.utils import timezone
            def later(task):
                task.apply_async(eta=timezone.now() + timedelta(hours=2))
            """,
            fixed="""
            # file: proj/settings.py
            import os
            CELERY_BROKER_URL = os.environ.get("REDIS_URL", "redis://redis:6379/0")
            CELERY_TASK_ACKS_LATE = True
            CELERY_TASK_SOFT_TIME_LIMIT = 3 * 3600
            CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 14400}
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery as C
            app = C("proj", broker="sqs://")
            app.conf.task_acks_late = True
            app.conf.task_time_limit = 3000
            """,
            fixed="""
            # file: proj.py
            from celery import Celery as C
            app = C("proj", broker="sqs://")
            app.conf.task_acks_late = True
            app.conf.task_time_limit = 3000
            app.conf.broker_transport_options = {"visibility_timeout": 3600}
            """,
        ),
        Invalid(
            """
            # file: a.py
            from celery import Celery
            app = Celery("a", broker="redis://localhost:6379/0")
            app.conf.task_acks_late = True
            app.conf.broker_transport_options = {}
            app.conf.broker_transport_options["visibility_timeout"] = 3600
            # file: b.py
            from celery import Celery
            app = Celery("b", broker="redis://localhost:6379/0")
            app.conf.task_acks_late = True
            app.conf.broker_transport_options = {}
            app.conf.broker_transport_options["visibility_timeout"] = 3600
            @app.task(time_limit=7200)
            def export(): ...
            """,
            fixed="""
            # file: a.py
            from celery import Celery
            app = Celery("a", broker="redis://localhost:6379/0")
            app.conf.task_acks_late = True
            app.conf.broker_transport_options = {}
            app.conf.broker_transport_options["visibility_timeout"] = 10800
            # file: b.py
            from celery import Celery
            app = Celery("b", broker="redis://localhost:6379/0")
            app.conf.task_acks_late = True
            app.conf.broker_transport_options = {}
            app.conf.broker_transport_options["visibility_timeout"] = 10800
            @app.task(time_limit=7200)
            def export(): ...
            """,
            count=2,
        ),
    )

    def check_model(self, m: Model):
        for app in worker_apps(m):
            broker = app.get("broker_url")
            kind = url_transport(broker)
            if kind not in DEFAULT_VISIBILITY:
                continue
            options = app.get("broker_transport_options")
            if options.is_unknown or not isinstance(options.value, dict):
                continue
            raw = options.value.get("visibility_timeout", DEFAULT_VISIBILITY[kind])
            timeout = number(plain(raw)[0] if isinstance(raw, dict) else raw)  # a dict bound to a name keeps encoded values
            if timeout is None:
                continue
            longest = longest_duration(m, app)
            if longest is None or longest[0] <= timeout:
                continue
            seconds, what = longest
            new = above(seconds)
            explicit = "visibility_timeout" in options.value
            message = (f"the {kind} broker's visibility timeout is {human(timeout)}"
                       f"{'' if explicit else ' (the default)'} but {what}: the message is delivered again "
                       "while the first run is still pending or running")
            item = options.at.items.get("visibility_timeout") if options.at is not None else None
            if item is not None and item[1] is not None:
                path = _item_path(m, options.at, item)
                fix = None if plain(item[0])[1] else replace_at(path, item[1], str(new), f"raise `visibility_timeout` to {new}")
                yield self.at(message, path, item[1], fix)
            elif options.at is not None:
                yield self.at_assignment(options.at, message, _insert_key(m, options.at, new))
            else:
                yield self.at_app(app, message, m.fix_adding(app, "broker_transport_options", f'{{"visibility_timeout": {new}}}'))


def _item_path(m: Model, assignment, item) -> str:
    """Items set with ``X["visibility_timeout"] = v`` may live in another file."""
    return item[3] if len(item) > 3 else assignment.path


def _insert_key(m: Model, assignment, new: int) -> TextFix | None:
    if assignment.value_pos is None:
        return None
    text = read(m, assignment.path)
    if text is None:
        return None
    line, col = assignment.value_pos[:2]
    index = LineIndex(text)
    if index.line_text(line)[col:col + 1] != "{":
        return None
    if len(assignment.value_pos) >= 4 and "**" in text[index.offset(line, col):index.offset(*assignment.value_pos[2:4])]:
        return None  # ``{**BASE, ...}``: a key written first would be overridden by the unpacked dict
    return TextFix(f"add `visibility_timeout: {new}` to `broker_transport_options`",
               (TextEdit(line, col + 1, line, col + 1, f'"visibility_timeout": {new}, '),), False, assignment.path)
