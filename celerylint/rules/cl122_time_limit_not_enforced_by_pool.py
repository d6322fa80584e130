from __future__ import annotations

from ..domain.celeryconf.model import App, Model
from ..domain.celeryconf.rulebase import ConfigRule
from ..domain.celeryconf.values import number, plain
from ..domain.deploy.configmod import setting as config_module_setting
from ..domain.deploy.model import processes_for, worker_apps
from ..domain.deploy.pools import ENFORCED, configured_pool, worker_pool
from ..domain.deploy.routes import called_queues, default_queue, task_queues, worker_queues
from ..domain.unacked import seconds_option
from ..rule import Invalid, Valid


def _limits(m: Model, app: App, p=None) -> dict[str, list[str]]:
    """``hard``/``soft`` -> where each time limit of the app is declared:
    its configuration, its tasks (when it is the project's only app) and
    the worker's own ``--time-limit``/``--soft-time-limit``."""
    out: dict[str, list[str]] = {"hard": [], "soft": []}
    for kind, option in (("hard", "task_time_limit"), ("soft", "task_soft_time_limit")):
        r = app.get(option)
        if number(r.value) and r.at is not None:
            out[kind].append(f"`{option}` at {r.at.path}:{r.at.line}")
    consumed = worker_queues(p) if p is not None else None
    if m.one_app():
        calls = called_queues(m, app) if consumed is not None else []
        for task in m.tasks:
            if consumed is not None:  # a worker naming its queues runs the task only from them
                queues = task_queues(app, task, calls)
                if queues is None:  # routed as celerylint cannot read: the default queue, unless a route says otherwise
                    queues = {default_queue(app)} - {None}
                if not queues & consumed:
                    continue
            for kind, option in (("hard", "time_limit"), ("soft", "soft_time_limit")):
                if number(plain(task["options"].get(option))[0]):
                    out[kind].append(f"task `{task['name']}`'s `{option}`")
    if p is not None:
        for kind, option in (("hard", "time_limit"), ("soft", "soft_time_limit")):
            if seconds_option(p.option(option)):
                out[kind].append(f"`--{option.replace('_', '-')}`")
            r = config_module_setting(m, app, p, f"task_{option}")  # the worker's ``--config`` module
            if r is not None and number(r.value) and r.at is not None:
                out[kind].append(f"`task_{option}` at {r.at.path}:{r.at.line} (its `--config` module)")
    return out


def _message(pool: str, limits: dict[str, list[str]], where: str) -> str | None:
    hard, soft = ENFORCED[pool]
    ignored = [n for kind, enforced in (("hard", hard), ("soft", soft)) if not enforced for n in limits[kind]]
    if not ignored:
        return None
    shown = ", ".join(ignored[:3]) + (f" and {len(ignored) - 3} more" if len(ignored) > 3 else "")
    if pool == "gevent":
        return (f"{where} runs the gevent pool, which ignores soft time limits (and enforces a hard one only when "
                f"the task yields to gevent): {shown} never raises `SoftTimeLimitExceeded`")
    return (f"{where} runs the {pool} pool, which enforces no time limit: {shown} never stops a hung task, "
            "which holds its worker slot forever")


class TimeLimitNotEnforcedByPool(ConfigRule):
    """
    ## What it does
    Reports a worker that runs a pool which does not enforce the time limits
    the app declares (`task_time_limit`, `task_soft_time_limit`, a task's
    `time_limit`/`soft_time_limit`, the worker's `--time-limit`/
    `--soft-time-limit`). The pool is the worker's `-P`/`--pool`
    (deployment model), else the app's `worker_pool` setting.

    A worker started with `celery --config=mod ... worker` takes
    `worker_pool` and the time limits from `mod` as Celery does: only for
    an app that has no configuration source (`config_from_object`
    replaces what `--config` names) and does not set them itself.

    A task's own limit counts for a worker that names its queues with `-Q`
    only when the task is sent to one of them: its decorator's `queue=`,
    the `task_routes` entry naming it (else the app's default queue), and
    the literal `queue=` of calls on it. When that cannot be read (a router
    function, routes from a variable, a glob over a task whose full name is
    not written), the task counts for such a worker when it consumes the
    app's default queue, where a task goes unless a route sends it
    elsewhere.

    What each pool enforces, read in Celery 5.x's source:

    | pool | hard limit | soft limit | where |
    | --- | --- | --- | --- |
    | prefork | yes (kills the child) | yes (signal) | `celery/concurrency/prefork.py` (`enable_timeouts=True`) |
    | gevent | only when the task yields | no | `celery/concurrency/gevent.py` (`apply_timeout`, a `gevent.Timeout`) |
    | eventlet | no | no | `celery/concurrency/eventlet.py` (`on_apply` drops both) |
    | threads | no | no | `celery/concurrency/thread.py` (`on_apply` passes neither) |
    | solo | no | no | `celery/concurrency/solo.py` (`base.apply_target` swallows both) |

    The worker hands every pool the limits (`celery/worker/request.py`,
    `execute_using_pool`); the pool decides.

    ## Why is this bad?
    The configuration says a hung task is stopped after its limit, and it
    is not: it holds its thread or greenlet (and, with `acks_late`, its
    message) until the worker is restarted, while monitoring and reviews
    trust the limit.

    ## Example
    ```python
    # file: celeryconfig.py
    task_time_limit = 300
    worker_pool = "threads"
    # file: proj.py
    from celery import Celery
    app = Celery("proj")
    app.config_from_object("celeryconfig")
    ```

    Use instead:
    ```python
    # file: celeryconfig.py
    task_time_limit = 300
    worker_pool = "prefork"
    # file: proj.py
    from celery import Celery
    app = Celery("proj")
    app.config_from_object("celeryconfig")
    ```

    ## Fix safety
    No fix: the pool is chosen for what the tasks do; enforce the limit in
    the task (timeouts on its I/O) or move the tasks to a prefork worker.

    ## References
    - [Celery: time limits](https://docs.celeryq.dev/en/stable/userguide/workers.html#time-limits)
    - [celery#1958](https://github.com/celery/celery/issues/1958), [celery#3747](https://github.com/celery/celery/issues/3747)
    - [Deployment model](https://github.com/celerylint/celerylint/blob/main/docs/deployment.md)
    """

    CODE = "CL122"
    NAME = "time-limit-not-enforced-by-pool"
    FIX = "none"
    SUMMARY = "A time limit the worker's pool does not enforce (threads, solo, eventlet; gevent's soft limit)"
    HINT = "run tasks with time limits on a prefork worker, or enforce the limit inside the task"
    TAGS = ("configuration", "deployment", "time-limit")

    VALID = (
        # the threads worker consumes `knowledge` only; the task with a limit goes to `celery`
        Valid("""
            # file: proj/worker.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.task_routes = {"proj.worker.parse": {"queue": "knowledge"}}
            @app.task
            def parse(file_id): ...
            @app.task(time_limit=600)
            def cleanup(): ...
            @app.task(time_limit=600, queue="slow")
            def crunch(): ...
            # file: Procfile
            knowledge: celery -A proj.worker worker -P threads -c 50 -Q knowledge
            default: celery -A proj.worker worker -Q celery,slow
            """),
        # argv changed after it is bound, or from a variable: not read
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", task_soft_time_limit=60)
            # file: run_worker.py
            import sys
            from proj.celery import app
            argv = ["worker", "--pool=threads"]
            argv += sys.argv[1:]
            app.worker_main(argv)
            app.worker_main(sys.argv)
            """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", task_soft_time_limit=60)
            # file: proj/services.py
            import subprocess
            def start(pool):
                subprocess.Popen(["celery", "-A", "proj", "worker", "-P", pool])
            """),
        # `--config` is ignored by an app that has a configuration source;
        # after the subcommand (Celery 4's form) it is unknown
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            # file: celeryconfig.py
            broker_url = "redis://r//"
            # file: workerconf.py
            worker_pool = "threads"
            task_time_limit = 600
            # file: Procfile
            worker: celery --config=workerconf -A proj worker -c 8
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_time_limit=600)
            # file: workerconf.py
            worker_pool = "threads"
            # file: Procfile
            worker: celery -A proj worker --config=workerconf -c 8
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", worker_pool="threads")
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_time_limit=60)
            # file: Procfile
            worker: celery -A proj worker --pool=prefork -c 4
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_time_limit=60)
            # file: Procfile
            worker: celery -A proj worker -P gevent -c 100
            """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_time_limit=60)
            # file: Procfile
            worker: celery -A proj worker -P ${POOL} -c 100
            """),
    )
    INVALID = (
        # routes celerylint cannot read: the worker consuming the default queue may run the task
        Invalid("""
            # file: proj/worker.py
            from celery import Celery
            from proj.config import ROUTES
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.task_routes = {**ROUTES}
            @app.task(time_limit=600)
            def cleanup(): ...
            # file: Procfile
            knowledge: celery -A proj.worker worker -P threads -Q knowledge
            default: celery -A proj.worker worker -P threads -Q celery
            """, message="task `cleanup`'s `time_limit`", at="2:1"),
        # routed to the queue the threads worker consumes
        Invalid("""
            # file: proj/worker.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.task_routes = {"proj.worker.parse": {"queue": "knowledge"}}
            @app.task(time_limit=600)
            def parse(file_id): ...
            @app.task(time_limit=60)
            def cleanup(): ...
            # file: Procfile
            knowledge: celery -A proj.worker worker -P threads -c 50 -Q knowledge
            """, message="task `parse`'s `time_limit` never stops"),
        # `-A ops` run from inside the top package: Celery's find_app takes
        # the package's `celery` submodule
        Invalid("""
            # file: apps/__init__.py
            # file: apps/ops/__init__.py
            # file: apps/ops/celery.py
            from celery import Celery
            app = Celery("proj", task_time_limit=600)
            # file: Procfile
            worker: cd apps && celery -A ops worker -P threads
            """, message="runs the threads pool", at="1:1"),
        # workers started from Python: `app.worker_main(argv)`, and a
        # command line written as a list for subprocess
        Invalid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", task_soft_time_limit=60)
            # file: run_worker.py
            from proj.celery import app
            if __name__ == "__main__":
                argv = ["worker", "--pool=threads", "--concurrency=8"]
                app.worker_main(argv)
            """, message="this worker (python `<module>`) runs the threads pool", at="4:1"),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", task_time_limit=600)
            # file: proj/services.py
            import subprocess
            def start(num):
                subprocess.Popen(["celery", "-A", "proj", "worker", "-P", "solo", "-c", str(num)])
            """, message="this worker (python `start`) runs the solo pool", at="3:1"),
        # `-A` names a module in folders without `__init__.py` (a namespace
        # package), by its path
        Invalid("""
            # file: main.py
            # file: app/c/worker.py
            from celery import Celery
            celery_app = Celery("w", broker="redis://r")
            celery_app.conf.task_time_limit = 30
            # file: start.sh
            celery -A app.c.worker.celery_app worker --pool=threads
            """, message="threads pool", at="1:1"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: workerconf.py
            worker_pool = "threads"
            task_time_limit = 600
            # file: Procfile
            worker: celery --config=workerconf -A proj worker -c 8
            """, message="`task_time_limit` at workerconf.py:2 (its `--config` module)", at="1:1"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", task_soft_time_limit=60)
            # file: docker-compose.yml
            services:
              worker:
                command: celery -A proj worker --pool=threads --concurrency=8
            """, message="threads pool", at="3:1"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            @app.task(soft_time_limit=30)
            def slow(): ...
            # file: Procfile
            worker: celery -A proj worker -P gevent -c 100
            """, message="gevent pool"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            # file: start.sh
            exec celery -A proj worker --pool solo --time-limit=600
            """, message="`--time-limit`"),
    )

    def check_model(self, m: Model):
        for app in worker_apps(m):
            configured, resolved = configured_pool(app)
            overridden = True
            for p in processes_for(m, app):
                if p.role == "beat":
                    continue
                pool, written = worker_pool(m, app, p, configured)
                overridden = overridden and written
                if pool is None or not written and configured != "prefork" and resolved.is_set:
                    continue  # a pool from the configuration is reported where it is set
                if ENFORCED[pool] == (True, True):
                    continue  # prefork enforces every limit: nothing to list
                message = _message(pool, _limits(m, app, p), f"this worker ({p.kind} `{p.name}`)")
                if message:
                    yield self.finding(message, p.path, p.line, 0, p.line, 0)
            if configured not in (None, "prefork") and resolved.is_set and not (processes_for(m, app) and overridden):
                message = _message(configured, _limits(m, app), f"`worker_pool` of `{app.var}`")
                if message:
                    yield self.at_assignment(resolved.at, message)
