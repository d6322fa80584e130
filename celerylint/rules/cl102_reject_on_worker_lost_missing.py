from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, app_task_class_decides, tasks_opt_in, where
from ..domain.deploy.model import worker_apps
from ..domain.deploy.pools import runs_in_process
from ..rule import Invalid, TextEdit, TextFix, Valid, django_project


class RejectOnWorkerLostMissing(ConfigRule):
    """
    ## What it does
    Checks that an app with `task_acks_late` enabled also enables
    `task_reject_on_worker_lost`. When no app enables `task_acks_late` but
    tasks opt in one by one with `acks_late=True`, each such task that does
    not also set `reject_on_worker_lost` (itself, through its `base=`
    class, or the app's task class) is reported at its `acks_late` option:
    one finding per task, since the decision is the task's.

    In a Django project with settings profiles (`settings/production.py`,
    `settings/local.py`, ...), each profile the rules check is read (the
    deployed ones by default; see "Settings profiles" in docs/show-apps.md), and the
    message names the profile.

    ## Why is this bad?
    With late acknowledgement alone, a task whose worker *process* dies (OOM
    killer, segfault, `SIGKILL`) fails with `WorkerLostError` and the
    message is still acknowledged (`task_acks_on_failure_or_timeout`
    defaults to True): the task is lost exactly in the case acks_late was
    meant to cover. `task_reject_on_worker_lost = True` rejects and requeues
    the message instead, so another worker runs it again.

    Not reported for an app whose workers all run a pool without child
    processes (threads, solo, eventlet, gevent: each worker the deployment
    starts, or the app's `worker_pool` when none is found): only prefork's
    children die alone with `WorkerLostError`; under the others a task dies
    with its worker, and the broker redelivers it.

    ## Example
    ```python
    # celeryconfig.py
    task_acks_late = True
    ```

    Use instead:
    ```python
    # celeryconfig.py
    task_acks_late = True
    task_reject_on_worker_lost = True
    ```

    ## Fix safety
    The fix adds `task_reject_on_worker_lost = True` where the app's
    configuration lives (or turns an explicit `False` into `True`, unless a
    comment on its line or the line above gives a reason, and adds nothing
    when the app's module or configuration files hold a commented-out line
    that sets it to `True`); a
    misspelling of the setting (see CL107) is renamed and set to `True`
    instead of adding the setting a second time. For a task, the fix adds
    `reject_on_worker_lost=True` after its `acks_late=True`. It is unsafe: a task that reliably kills its worker is then redelivered again
    and again, so it must be made safe first.

    ## References
    - [Celery: task_reject_on_worker_lost](https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-reject-on-worker-lost)
    - [Celery: acks_late](https://docs.celeryq.dev/en/stable/userguide/tasks.html#Task.acks_late)
    """

    CODE = "CL102"
    NAME = "reject-on-worker-lost-missing"
    SEVERITY = "warning"
    SUMMARY = "`acks_late` without `task_reject_on_worker_lost`: a task whose worker process dies is acknowledged anyway"
    FIX = "unsafe"
    TAGS = ("configuration", "delivery")

    VALID = (
        # two factories each make an app named ``celery_app`` (ibutsu-server): one key
        # for two apps, so neither is judged by the other's settings
        Valid("""
            # file: factory.py
            from celery import Celery
            def make_monitor_app():
                celery_app = Celery("monitor")
                celery_app.conf.update(broker_url="redis://r:6379/0", task_acks_late=True)
                return celery_app
            def make_worker_app():
                celery_app = Celery("worker", broker="redis://r:6379/0")
                celery_app.conf.worker_prefetch_multiplier = 1
                return celery_app
        """),
        # every worker runs a pool without child processes: no WorkerLostError;
        # a task dies with its worker, and the broker redelivers it
        Valid("""
            # file: proj/worker.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            @app.task(acks_late=True)
            def parse(file_id): ...
            # file: Procfile
            worker: celery -A proj.worker worker -P threads -c 50
            io: celery -A proj.worker worker --pool=gevent -Q io
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(task_acks_late=True, worker_pool="solo")
            """),
        # acks_late from an unpacked dict: no keyword can be added after it,
        # so the task is not reported with the fix that adds one
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            LATE = {"acks_late": True}
            @app.task(**LATE)
            def crunch(): ...
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_reject_on_worker_lost=True)
            @app.task(acks_late=True)
            def a(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            @app.task(acks_late=True, reject_on_worker_lost=False)  # decided: not ours to change
            def a(): ...
            @app.task(acks_late=False)
            def b(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery as App
            app = App("proj", task_acks_late=True, task_reject_on_worker_lost=True)
        """),
        Valid(django_project("""
            CELERY_TASK_ACKS_LATE = True
            CELERY_TASK_REJECT_ON_WORKER_LOST = True
        """)),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.task_acks_late = True
            app.conf.update(REJECT_SETTINGS)
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.task_acks_late = True
            @app.task(reject_on_worker_lost=True)
            def a(): ...
        """),
    )
    INVALID = (
        # an explicit False with its reason in a comment (CenterForOpenScience/SHARE): reported,
        # not flipped under a comment that would then say the opposite
        Invalid(django_project("""
            CELERY_TASK_ACKS_LATE = True
            # Don't reject tasks that were present on a worker when it was killed
            CELERY_TASK_REJECT_ON_WORKER_LOST = False
        """), fixed=None, message="`task_reject_on_worker_lost` is False"),
        # one of the workers runs prefork
        Invalid("""
            # file: proj/worker.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            @app.task(acks_late=True)
            def parse(file_id): ...
            # file: Procfile
            worker: celery -A proj.worker worker -P threads -c 50
            cpu: celery -A proj.worker worker -Q cpu
            """),
        Invalid(
            """
            # file: proj/tasks.py
            from proj import tasks
            @tasks.task(ignore_result=True, acks_late=True)
            def a(): ...
            @tasks.task(
                acks_late=True,
            )
            def b(): ...
            # file: proj/__init__.py
            import celery
            def includeme(config):
                config.registry["celery.app"] = celery.Celery("proj")
            """,
            at="2:43",
            message="sets `acks_late=True` without `reject_on_worker_lost=True`",
            fixed="""
            # file: proj/tasks.py
            from proj import tasks
            @tasks.task(ignore_result=True, acks_late=True, reject_on_worker_lost=True)
            def a(): ...
            @tasks.task(
                acks_late=True, reject_on_worker_lost=True,
            )
            def b(): ...
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery as C
            app = C("proj", task_acks_late=True)
            """,
            fixed="""
            # file: proj.py
            from celery import Celery as C
            app = C("proj", task_acks_late=True)
            app.conf.task_reject_on_worker_lost = True
            """,
        ),
        Invalid(
            django_project("""
            CELERY_TASK_ACKS_LATE = True
        """),
            fixed="""
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            CELERY_TASK_REJECT_ON_WORKER_LOST = True
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(task_acks_late=True, task_reject_on_worker_lost=False)
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(task_acks_late=True, task_reject_on_worker_lost=True)
            """,
        ),
        Invalid(
            """
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj")
            app.conf.task_acks_late = os.environ.get("ACKS_LATE", True)
            """,
            fixed="""
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj")
            app.conf.task_acks_late = os.environ.get("ACKS_LATE", True)
            app.conf.task_reject_on_worker_lost = True
            """,
        ),
    )

    def check_model(self, m: Model):
        apps = [app for app in worker_apps(m) if not runs_in_process(m, app)]
        yield from self._tasks(m, apps)
        for app in apps:
            if not app.get("task_acks_late").truthy:
                continue
            reject = app.get("task_reject_on_worker_lost")
            if reject.is_unknown or reject.truthy:
                continue
            if app_task_class_decides(m, app, "reject_on_worker_lost") or tasks_opt_in(m, "reject_on_worker_lost"):
                continue
            if not app.get("task_annotations").is_default:
                continue
            why = ("with acks_late, a task whose worker process dies (OOM, SIGKILL) is still acknowledged "
                   "and lost; `task_reject_on_worker_lost = True` requeues it")
            yield self.not_enabled(m, app, "task_reject_on_worker_lost", why,
                                   f"`task_reject_on_worker_lost` is not set in {where(app)}")

    def _tasks(self, m: Model, apps):
        """Tasks that opt in with ``acks_late=True`` (the apps do not enable
        it) and do not set ``reject_on_worker_lost``: at the option, fixed by
        adding ``reject_on_worker_lost=True`` after it."""
        if not apps or any(app.get("task_acks_late").truthy for app in apps):
            return
        for app in apps:
            reject = app.get("task_reject_on_worker_lost")
            if not reject.is_default or app_task_class_decides(m, app, "reject_on_worker_lost"):
                return
            if not app.get("task_annotations").is_default:
                return
        by_name = {}
        for task in m.tasks:
            by_name.setdefault((task["path"], task["name"]), []).append(task)
        places: dict[tuple, list[str]] = {}  # one option may serve several tasks (``retrying = shared_task(acks_late=True)``)
        for f in m.by_kind["task_acks_late"]:
            tasks = by_name.get((f["path"], f["name"]), ())
            if not tasks or not all(m.task_option(t, "acks_late") == (True, "set")
                                    and m.task_option(t, "reject_on_worker_lost")[1] == "unset" for t in tasks):
                continue
            names = places.setdefault((f["path"], f["line"], f["col"], f["end_line"], f["end_col"]), [])
            if f["name"] not in names:
                names.append(f["name"])
        for (path, line, col, end_line, end_col), names in places.items():
            fix = TextFix("add `reject_on_worker_lost=True` to the task", (TextEdit(end_line, end_col, end_line, end_col,
                                                                                ", reject_on_worker_lost=True"),), False, path)
            names.sort()
            which = f"task `{names[0]}` sets" if len(names) == 1 else f"tasks {', '.join(f'`{n}`' for n in names)} set"
            yield self.finding(f"{which} `acks_late=True` without `reject_on_worker_lost=True`: if the worker "
                               "process dies (OOM, SIGKILL) the message is still acknowledged and the task is lost",
                               path, line, col, end_line, end_col, fix)
