from __future__ import annotations

from ..domain.celeryconf.launch_files import prefetch_set_elsewhere
from ..domain.celeryconf.model import App, Model
from ..domain.celeryconf.rulebase import ConfigRule, where
from ..domain.celeryconf.values import number, plain
from ..domain.deploy.model import worker_apps
from ..rule import Invalid, Valid, django_project

LONG_TASK = 300  # seconds: a time limit longer than this declares a long task


def longest_time_limit(m: Model, app: App) -> float | None:
    """The longest time limit declared globally or by a task, in seconds."""
    limits = []
    for option in ("task_time_limit", "task_soft_time_limit"):
        value = number(app.get(option).value)
        if value:
            limits.append(value)
    for task in m.tasks:
        for option in ("time_limit", "soft_time_limit"):
            value = number(plain(task["options"].get(option))[0])
            if value:
                limits.append(value)
    return max(limits, default=None)


def _all_tasks_short(m: Model, app: App) -> bool:
    """No task can run long or wait unacknowledged: a global hard time limit
    of at most ``LONG_TASK``, no task declaring a longer one, acks_late off."""
    hard = number(app.get("task_time_limit").value)
    longest = longest_time_limit(m, app)
    return (bool(hard) and hard <= LONG_TASK and longest is not None and longest <= LONG_TASK
            and not app.get("task_acks_late").truthy)


class PrefetchMultiplierUnsafe(ConfigRule):
    """
    ## What it does
    Checks `worker_prefetch_multiplier`: it is reported when it is not set
    (Celery's default is 4), or when it is above 1 (or 0, unlimited) while
    `task_acks_late` is on or tasks declare long time limits (more than 5
    minutes, globally or per task). Not set, it is not reported when every
    task is short: a global `task_time_limit` of at most 5 minutes (the
    default of cookiecutter-django's settings), no task
    declaring a longer limit, and `task_acks_late` off. A worker started with
    `--prefetch-multiplier` (in a compose file, Procfile, shell script,
    Dockerfile or service unit of the project) is not reported.

    In a Django project with settings profiles (`settings/production.py`,
    `settings/local.py`, ...), each profile the rules check is read (the
    deployed ones by default; see "Settings profiles" in docs/show-apps.md), and the
    message names the profile. A value set differently in the branches of an
    `if`/`else` is reported at each branch's assignment only when every
    branch is reported ("Conditional settings" in docs/decisions.md).

    ## Why is this bad?
    Each worker process reserves `concurrency x multiplier` messages ahead.
    With tasks of mixed duration, long tasks wait in the buffer of one busy
    worker while other workers idle, which looks like tasks vanishing. With
    late acknowledgement the reserved messages are also unacknowledged all
    that time, so on Redis they count against the visibility timeout.

    ## Example
    ```python
    # celeryconfig.py
    task_acks_late = True
    worker_prefetch_multiplier = 4
    ```

    Use instead:
    ```python
    # celeryconfig.py
    task_acks_late = True
    worker_prefetch_multiplier = 1
    ```

    ## Fix safety
    The fix sets `worker_prefetch_multiplier = 1` where the app's
    configuration lives; a misspelling of the setting (see CL107) is
    renamed and set to 1 instead of adding the setting a second time. It is
    unsafe: throughput of many tiny tasks can
    drop, because workers ask the broker more often.

    ## References
    - [Celery: worker_prefetch_multiplier](https://docs.celeryq.dev/en/stable/userguide/configuration.html#worker-prefetch-multiplier)
    - [Celery: prefetch limits](https://docs.celeryq.dev/en/stable/userguide/optimizing.html#prefetch-limits)
    """

    CODE = "CL103"
    NAME = "prefetch-multiplier-unsafe"
    SEVERITY = "warning"
    SUMMARY = "`worker_prefetch_multiplier` unset (4) or above 1 with acks_late or long tasks: workers hoard long tasks"
    FIX = "unsafe"
    TAGS = ("configuration", "prefetch")

    VALID = (
        # cookiecutter-django's limits: killed after 5 minutes, asked to stop after one
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_TASK_TIME_LIMIT = 5 * 60
            CELERY_TASK_SOFT_TIME_LIMIT = 60
        """)),
        Valid("""
            # file: proj.py
            from celery import Celery as C
            app = C("proj", worker_prefetch_multiplier=8)
        """),
        Valid("""
            # every task is short: killed after 30 s, none declares longer
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.task_time_limit = 30
            @app.task(soft_time_limit=20)
            def ping(): ...
        """),
        Valid("""
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj")
            app.conf.worker_prefetch_multiplier = int(os.environ["PREFETCH"])
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.worker_prefetch_multiplier = 16
            @app.task(time_limit=30)
            def quick(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object(CONFIG)
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_WORKER_PREFETCH_MULTIPLIER = 1
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            # file: docker/worker.sh
            exec celery -A proj worker --prefetch-multiplier=1 --concurrency=4
        """),
        Valid("""
            # file: celeryconfig.py
            import os
            task_acks_late = True
            if os.environ.get("BATCH"):
                worker_prefetch_multiplier = 8
            else:
                worker_prefetch_multiplier = 1  # this branch is safe: not in every branch, no finding
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
        Valid("""
            # file: proj/queue.py
            from celery import Celery
            def publish(url, payload):
                client = Celery("other")
                client.conf.broker_url = url
                client.send_task("other.handle", kwargs=payload)
        """),
    )
    INVALID = (
        Invalid("""
            # a task declares a longer limit than the global one
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.task_time_limit = 30
            @app.task(time_limit=3600)
            def export(): ...
        """, message="is not set"),
        Invalid(
            """
            # file: proj/tasks.py
            import celery
            def includeme(config):
                config.registry["celery.app"] = celery.Celery("proj")
                config.registry["celery.app"].conf.update(
                    task_acks_late=True,
                    task_serializer="json",
                )
            """,
            at="3:37",
            fixed="""
            # file: proj/tasks.py
            import celery
            def includeme(config):
                config.registry["celery.app"] = celery.Celery("proj")
                config.registry["celery.app"].conf.update(
                    task_acks_late=True,
                    task_serializer="json",
                    worker_prefetch_multiplier=1,
                )
            """,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """,
            fixed="""
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            worker_prefetch_multiplier = 1
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_acks_late=True, worker_prefetch_multiplier=4)
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_acks_late=True, worker_prefetch_multiplier=1)
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery as Make
            from datetime import timedelta
            app = Make("proj")
            app.conf.worker_prefetch_multiplier = 0
            @app.task(soft_time_limit=timedelta(hours=1))
            def export(): ...
            """,
            fixed="""
            # file: proj.py
            from celery import Celery as Make
            from datetime import timedelta
            app = Make("proj")
            app.conf.worker_prefetch_multiplier = 1
            @app.task(soft_time_limit=timedelta(hours=1))
            def export(): ...
            """,
        ),
        Invalid(
            django_project("""
            CELERY_TASK_ACKS_LATE = True
            CELERYD_PREFETCH_MULTIPLIER = 4
        """),
            fixed="""
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            CELERYD_PREFETCH_MULTIPLIER = 1
            """,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            import os
            task_acks_late = True
            if os.environ.get("BATCH"):
                worker_prefetch_multiplier = 16
            else:
                worker_prefetch_multiplier = 8
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """,
            count=2, at="4:34",
        ),
        Invalid(
            """
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj")
            app.conf.task_acks_late = True
            app.conf.worker_prefetch_multiplier = int(os.environ.get("PREFETCH", 4))
            """,
            fixed=None,
        ),
    )

    def check_model(self, m: Model):
        for app in worker_apps(m):
            prefetch = app.get("worker_prefetch_multiplier")
            if prefetch.is_unknown or app.get("worker_disable_prefetch").truthy:
                continue
            if prefetch.is_default:
                if prefetch_set_elsewhere(m) or _all_tasks_short(m, app):
                    continue
                yield self.at_app(app, f"`worker_prefetch_multiplier` is not set in {where(app)}, so each worker process "
                                       "reserves 4 messages ahead: long tasks wait behind busy workers while others idle; "
                                       "set it to 1 for long or variable tasks",
                                  m.fix_adding(app, "worker_prefetch_multiplier", "1"))
                continue
            value = number(prefetch.value)
            if value is None or value == 1 or prefetch_set_elsewhere(m):
                continue
            reasons = []
            if app.get("task_acks_late").truthy:
                reasons.append("`task_acks_late` is on")
            longest = longest_time_limit(m, app)
            if longest is not None and longest > LONG_TASK:
                reasons.append(f"tasks declare time limits up to {longest:g} s")
            if not reasons:
                continue
            shown = "0 (unlimited)" if value == 0 else prefetch.shown()
            fix = None if prefetch.env else prefetch.at.fix_replacing("1", "set `worker_prefetch_multiplier` to 1")
            yield self.at_assignment(prefetch.at, f"`worker_prefetch_multiplier` is {shown} while {' and '.join(reasons)}: "
                                                  "workers reserve long tasks ahead and hold them unacknowledged", fix)
