from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, where
from ..domain.deploy.model import processes_for, worker_apps
from ..rule import Invalid, Valid, django_project

LIMITS = ("time_limit", "soft_time_limit")


def _limited_workers(m: Model, app) -> tuple[int, int]:
    """``(given, workers)``: of the app's worker processes in the deployment
    files, how many pass ``--time-limit`` or ``--soft-time-limit`` (a value
    celerylint cannot read counts as given)."""
    workers = [p for p in processes_for(m, app) if p.role != "beat"]
    given = [p for p in workers if any(o in p.command.options for o in LIMITS)]
    return len(given), len(workers)


class MissingTimeLimit(ConfigRule):
    """
    ## What it does
    Checks that a Celery app bounds how long its tasks run: it sets
    `task_time_limit` or `task_soft_time_limit` (old names
    `CELERYD_TASK_TIME_LIMIT`, `CELERYD_TASK_SOFT_TIME_LIMIT`), or every task
    of the project sets `time_limit=` or `soft_time_limit=` itself (or
    through its `base=` class or the app's `task_cls`). It reports the app,
    naming a task that has no limit.

    This rule is off by default: enable it with
    `extend-select = ["CL114"]`.

    A task's limit may come from its `base=` class and the classes that
    class derives from, in any linted file (the first that sets it wins); a
    base class that is not among the linted files may set one (no finding).

    ## Why is this bad?
    Celery's default is no limit. A task that hangs (a socket without a
    timeout, a lock that never comes, an endless loop) holds its worker
    process, and its unacknowledged message, until someone restarts the
    worker; a few of them and the worker takes nothing else. A hard
    `task_time_limit` kills the process and frees the slot; a soft limit lets
    the task clean up first (`SoftTimeLimitExceeded`).

    A worker started with `--time-limit` or `--soft-time-limit` (in a compose
    file, Procfile, Dockerfile, Kubernetes manifest, systemd unit, supervisor
    program or shell script: the deployment model) bounds the tasks it runs:
    an app whose every worker process is started so is not reported (a value
    celerylint cannot read counts as a limit). When only some are, the
    finding says how many.

    It does not report an app whose limits, `task_annotations` or task class
    celerylint cannot read, an app that sets a limit to `None` on purpose, a
    project in which every task sets a limit (or sets `time_limit=None`
    deliberately), a project with no task celerylint sees, nor an app that
    only sends tasks.

    ## Example
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    # file: proj/tasks.py
    from celery import shared_task

    @shared_task
    def export(report_id): ...
    ```

    Use instead:
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    task_soft_time_limit = 600
    task_time_limit = 660
    # file: proj/tasks.py
    from celery import shared_task

    @shared_task
    def export(report_id): ...
    ```

    ## Fix safety
    No fix: the limit is the longest a task may legitimately run.

    ## References
    - [Celery: time limits](https://docs.celeryq.dev/en/stable/userguide/workers.html#time-limits)
    - [Celery: task_time_limit](https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-time-limit)
    """

    CODE = "CL114"
    NAME = "missing-time-limit"
    SEVERITY = "warning"
    SUMMARY = "No `task_time_limit` and tasks without their own limit: a hung task holds its worker forever"
    HINT = "set `task_time_limit` (and `task_soft_time_limit`) to the longest a task may run"
    TAGS = ("configuration", "time-limits")
    DEFAULT_ENABLED = False

    VALID = (
        # every worker of the app is started with a limit (one through a shell
        # script, one whose value celerylint cannot read); beat runs no task
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            @app.task
            def a(): ...
            # file: Procfile
            worker: celery -A proj worker --time-limit=600
            slow: celery -A proj worker -Q slow --soft-time-limit=${SOFT}
            beat: celery -A proj beat
            # file: docker-compose.yml
            services:
              worker:
                command: ./start.sh
            # file: start.sh
            exec celery -A proj worker --soft-time-limit 300
        """),
        Valid(django_project("""
            CELERY_TASK_TIME_LIMIT = 30 * 60
        """, extra="""
            # file: proj/tasks.py
            from celery import shared_task
            @shared_task
            def a(): ...
        """)),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            @app.task(time_limit=60)
            def a(): ...
            @app.task(soft_time_limit=30)
            def b(): ...
            @app.task(time_limit=None)
            def c(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            from proj.base import LimitedTask
            app = Celery("proj", broker="redis://localhost")
            @app.task(base=LimitedTask)
            def a(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.task_soft_time_limit = None
            @app.task
            def a(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.task_time_limit = LIMIT
            app.conf.task_annotations = {"*": {"time_limit": 60}}
            @app.task
            def a(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.task_annotations = {"*": {"time_limit": 60}}
            @app.task
            def a(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class LimitedTask(Task):
                time_limit = 600
            # file: proj/mid.py
            from proj.base import LimitedTask
            class RetryingTask(LimitedTask):
                max_retries = 3
            # file: proj/celery.py
            from celery import Celery
            from proj.mid import RetryingTask
            from proj.unlinted import Unknown
            app = Celery("proj", broker="redis://localhost")
            @app.task(base=RetryingTask)
            def a(): ...
            @app.task(base=Unknown)
            def b(): ...
        """),
    )
    INVALID = (
        Invalid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class BaseTaskWithRetry(Task):
                autoretry_for = (ConnectionError,)
            # file: proj/mid.py
            from proj.base import BaseTaskWithRetry
            class Logged(BaseTaskWithRetry):
                track_started = True
            # file: proj/celery.py
            from celery import Celery
            from proj.mid import Logged
            app = Celery("proj", broker="redis://localhost")
            @app.task(base=Logged)
            def a(): ...
        """, message="task `a`"),
        Invalid("""
            # file: proj.py
            from celery import Celery as C
            app = C("proj", broker="redis://localhost")
            @app.task(time_limit=60)
            def a(): ...
            @app.task(acks_late=True)
            def b(): ...
        """, at="2:7", message="`b`"),
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://redis:6379/0"
            CELERY_TASK_TIME_LIMT = 60
        """, extra="""
            # file: proj/tasks.py
            from celery import shared_task
            @shared_task(bind=True)
            def a(self): ...
        """), message="Django settings `proj.settings`"),
        # one of two workers started with a limit: the other runs tasks unbounded
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            @app.task
            def a(): ...
            # file: Procfile
            worker: celery -A proj worker --time-limit=600
            slow: celery -A proj worker -Q slow
        """, message="given to 1 of its 2 worker processes"),
    )

    def check_model(self, m: Model):
        unlimited = [t for t in m.tasks if all(m.task_option(t, o)[1] == "unset" for o in LIMITS)]
        if not unlimited:
            return
        # the task named: one of the project's own files first, not of a hidden
        # directory (``.semgrep/``, ``.github/``) whose examples nobody runs
        first = min(unlimited, key=lambda t: ("/." in "/" + t.get("path", ""), t.get("path", ""), t.get("line", 0)))
        for app in worker_apps(m):
            if any(not app.get(f"task_{o}").is_default for o in LIMITS):
                continue  # set (a number, or None on purpose) or unknown
            if not app.get("task_annotations").is_default:
                continue
            if any(m.task_cls_option(app, o)[1] != "unset" for o in LIMITS):
                continue
            given, workers = _limited_workers(m, app)
            if workers and given == workers:
                continue  # every worker that runs the app is started with a limit
            place = f" ({first['path']}:{first['line']})" if "path" in first and "line" in first else ""
            tasks = (f"task `{first['name']}`{place} sets none" if len(unlimited) == 1
                     else f"{len(unlimited)} tasks set none, `{first['name']}`{place} among them")
            started = (f" (`--time-limit`/`--soft-time-limit` is given to {given} of its {workers} worker "
                       f"processes)" if given else "")
            yield self.at_app(app, f"no time limit in {where(app)} (`task_time_limit`, `task_soft_time_limit`){started}, "
                                   f"and {tasks}: a task that hangs holds its worker process and its message until the "
                                   "worker is restarted")
