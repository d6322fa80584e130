from __future__ import annotations

import re

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule
from ..domain.deploy.model import processes_for
from ..domain.celeryconf.settings import is_test_path
from ..domain.celeryconf.texts import read
from ..domain.deploy.routes import called_queues, default_queue, routed_queues, task_queues, worker_queues
from ..rule import Invalid, Valid


def _consumed(workers) -> set[str] | None:
    """The queues the workers consume, when every one names them with
    ``-Q`` (less its ``-X``: Celery selects the ``-Q`` queues, then removes
    the excluded ones); None when one does not, or no worker is found."""
    if not workers:
        return None
    out: set[str] = set()
    for p in workers:
        queues = worker_queues(p)
        if queues is None:
            return None
        out |= queues
    return out


def _named_outside_tests(m: Model, names: set[str]) -> set[str]:
    """The ``names`` the project's code outside tests names other than in a
    ``def``: a call, a signature, a beat entry or ``send_task`` may send them."""
    pattern = re.compile(r"(?<!def )\b(" + "|".join(sorted(map(re.escape, names))) + r")\b")
    found: set[str] = set()
    for path in m.project.python_files:
        text = None if is_test_path(path) else read(m, path)
        if text:
            found.update(pattern.findall(text))
    return found


class RoutedQueueNotConsumed(ConfigRule):
    """
    ## What it does
    Reports a queue that the app's tasks are routed to (a `task_routes`
    entry, `queue=` on a task's decorator, a literal `queue=` on
    `.apply_async()` or `.signature()` called on one of the project's tasks)
    while every worker process of
    the app that the deployment model found names the queues it consumes
    with `-Q`, and none names this one. So is a task of the project's one
    app that goes to the default queue (`task_default_queue`, `celery`
    unless set: no `queue=`, no route names it, no call sends it
    elsewhere) when no worker consumes that queue, and the code outside
    tests names it somewhere (a call, a signature, a beat entry: a task
    nothing sends, as Celery's `debug_task`, waits nowhere).

    A worker's `-X` queues are taken out of its `-Q` list, as Celery does.
    Nothing is reported when a worker has no `-Q` (or one from a variable,
    or an `-X` from a variable), or when no worker is found; routers written
    as functions are not read.

    ## Why is this bad?
    Messages sent to a queue no worker consumes wait there forever: the
    task never runs, and from the caller's side it has vanished.

    ## Example
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj", task_routes={"proj.report": {"queue": "reports"}})
    # file: Procfile
    worker: celery -A proj worker -Q celery,mail
    ```

    Use instead:
    ```python
    # file: proj.py
    from celery import Celery
    app = Celery("proj", task_routes={"proj.report": {"queue": "reports"}})
    # file: Procfile
    worker: celery -A proj worker -Q celery,mail,reports
    ```

    ## Fix safety
    No fix: which worker should consume the queue is a deployment decision.

    ## References
    - [Celery: routing tasks](https://docs.celeryq.dev/en/stable/userguide/routing.html)
    - [Deployment model](https://github.com/celerylint/celerylint/blob/main/docs/deployment.md)
    """

    CODE = "CL123"
    NAME = "routed-queue-not-consumed"
    FIX = "none"
    SUMMARY = "Tasks are routed to a queue that no worker of the app consumes (every worker names its queues with -Q)"
    HINT = "add the queue to a worker's `-Q`, or route the task to a queue a worker consumes"
    TAGS = ("configuration", "deployment", "routing")

    VALID = (
        # one container starts three workers from an inline script, two in the background
        # (veops/cmdb): each consumes its queue
        Valid("""
            # file: api/app.py
            from celery import Celery
            celery = Celery("api", broker="redis://redis:6379/0")
            celery.conf.task_routes = {"api.tasks.a": {"queue": "one_async"}, "api.tasks.b": {"queue": "acl_async"},
                                       "api.tasks.c": {"queue": "beat_tasks"}}
            # file: docker-compose.yml
            services:
              worker:
                build: .
                command:
                  - /bin/sh
                  - -c
                  - |
                    sleep 2
                    celery -A api.app:celery worker -E -Q one_async &
                    celery -A api.app:celery worker -E -Q acl_async & celery -A api.app:celery worker --beat -Q beat_tasks
        """),
        # a worker consumes the default queue beside its own
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            @app.task
            def notify(x):
                return x
            # file: Procfile
            worker: celery -A proj worker -Q io,celery
            """),
        # routes celerylint cannot read: where the task goes is unknown
        Valid("""
            # file: proj.py
            from celery import Celery
            from proj.routing import route_task
            app = Celery("proj", task_routes=(route_task,))
            @app.task
            def notify(x):
                return x
            # file: Procfile
            worker: celery -A proj worker -Q io
            """),
        # a call's queue that some worker consumes; a queue from a variable
        # (unknown); a call on something that is not one of the project's
        # tasks; `.delay()` has no queue
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            # file: proj/tasks.py
            from proj.celery import app
            @app.task
            def crunch(): ...
            # file: proj/views.py
            from proj.tasks import crunch
            from other import job
            def view(q):
                crunch.apply_async(queue="fast")
                crunch.apply_async(queue=q)
                job.apply_async(queue="reports")
                crunch.delay(queue="reports")
            # file: Procfile
            worker: celery -A proj worker -Q default,fast
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_routes={"proj.report": "reports"})
            # file: Procfile
            worker: celery -A proj worker -Q celery
            reports: celery -A proj worker -Q reports
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_routes={"proj.report": "reports"})
            # file: Procfile
            worker: celery -A proj worker -Q celery
            other: celery -A proj worker
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_routes={"proj.report": "reports"})
            # file: Procfile
            worker: celery -A proj worker -Q ${QUEUES}
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_routes={"proj.report": "reports"})
            # file: Procfile
            worker: celery -A proj worker -Q celery,reports -X celery
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_routes={"proj.report": "reports"})
            """),
        # routes read from the Django settings (`settings.CELERY_ROUTES`):
        # consumed; a name the settings module does not bind stays unknown
        Valid("""
            # file: proj/__init__.py
            # file: proj/settings.py
            CELERY_ROUTES = {"proj.tasks.report": {"queue": "reports"}}
            # file: proj/celery.py
            from celery import Celery
            from django.conf import settings
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            app.conf.task_routes = settings.CELERY_ROUTES
            # file: Procfile
            worker: celery -A proj worker -Q celery,reports
            """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/settings.py
            CELERY_ROUTES = {"proj.tasks.report": {"queue": "reports"}}
            # file: proj/celery.py
            from celery import Celery
            from django.conf import settings
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            app.conf.task_routes = settings.TASK_ROUTES
            # file: Procfile
            worker: celery -A proj worker -Q celery
            """),
    )
    INVALID = (
        # no queue, no route: the default queue, which no worker consumes
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            @app.task(queue="io")
            def upload(path):
                return path
            @app.task
            def notify(x):
                return x
            @app.task(bind=True)
            def debug_task(self):
                return self.request
            def done(x):
                notify.delay(x)
            # file: Procfile
            worker: celery -A proj worker -Q io
            """, message="task `notify` goes to the default queue `celery`", at="7:5", count=1),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/settings.py
            CELERY_ROUTES = {"proj.tasks.report": {"queue": "reports"}}
            # file: proj/celery.py
            from celery import Celery
            from django.conf import settings
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            app.conf.task_routes = settings.CELERY_ROUTES
            # file: Procfile
            worker: celery -A proj worker -Q celery
            """, message="`reports`", at="1:1"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_routes={"proj.report": "reports"})
            # file: Procfile
            worker: celery -A proj worker -Q celery,reports -X reports
            """, message="`reports`", at="2:1"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            @app.task(queue="slow")
            def crunch(): ...
            # file: docker-compose.yml
            services:
              worker:
                command: ["celery", "-A", "proj", "worker", "-Q", "fast,default"]
            """, message="`slow`", at="4:1"),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            # file: proj/tasks.py
            from proj.celery import app
            @app.task
            def crunch(): ...
            # file: proj/views.py
            from proj.tasks import crunch
            def view():
                crunch.apply_async(args=(1,), queue="reports")
                crunch.apply_async(queue="default")
            # file: Procfile
            worker: celery -A proj worker -Q default,fast
            """, message="this call sends the task to queue `reports`", at="3:5"),
    )

    def check_model(self, m: Model):
        for app in m.configured_apps():
            routed, called = routed_queues(m, app), called_queues(m, app)
            if not routed and not called and not m.tasks:
                continue
            workers = [p for p in processes_for(m, app) if p.role != "beat"]
            consumed = _consumed(workers)
            if consumed is None:
                continue
            names = ", ".join(f"{p.kind} `{p.name}` ({p.path}:{p.line})" for p in workers[:3])
            for queue, at in sorted(routed.items()):
                if queue in consumed or not at:
                    continue
                path, _, line = at.rpartition(":")
                yield self.finding(f"tasks are routed to queue `{queue}`, but no worker of `{app.var}` consumes it "
                                   f"(every worker names its queues with -Q: {names}): its messages wait forever",
                                   path, int(line), 0, int(line), 0)
            for call in called:
                if call["queue"] not in consumed:
                    yield self.finding(f"this call sends the task to queue `{call['queue']}`, but no worker of "
                                       f"`{app.var}` consumes it (every worker names its queues with -Q: {names}): "
                                       "the message waits forever", call["path"], call["line"], call["col"],
                                       call["end_line"], call["end_col"])
            yield from self._default_queue(m, app, consumed, called, names)

    def _default_queue(self, m: Model, app, consumed: set[str], called: list[dict], names: str):
        """The tasks that go to the default queue (no ``queue=``, no route
        names them, no call sends them elsewhere) when no worker consumes it;
        only for the project's one app, whose tasks these are."""
        default = default_queue(app)
        if default is None or default in consumed or not m.one_app():
            return
        tasks = [t for t in m.tasks if not is_test_path(t["path"]) and task_queues(app, t, called) == {default}]
        sent = _named_outside_tests(m, {t["name"] for t in tasks}) if tasks else set()
        for task in tasks:
            if task["name"] not in sent:  # a task nothing sends (Celery's ``debug_task``): its queue matters not
                continue
            yield self.finding(f"task `{task['name']}` goes to the default queue `{default}` (no `queue=`, and no "
                               f"route names it), but no worker of `{app.var}` consumes it (every worker names its "
                               f"queues with -Q: {names}): its messages wait forever",
                               task["path"], task["line"], task["col"], task["line"], task["col"])
