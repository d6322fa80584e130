from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..domain.backend_client import task_app
from ..domain.tasks import TaskRule, task_and, task_time_limit
from ..domain.values import evaluate, seconds
from ..facts.lock_library_config import CLEAR_LOCKS_FACT, ONCE_FACT, SINGLETON_FACT
from ..rule import Finding, Invalid, Valid
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

FACT = "lock-library-task"
ONCE_BASES = frozenset({"celery_once.QueueOnce", "celery_once.tasks.QueueOnce"})
SINGLETON_BASES = frozenset({"celery_singleton.Singleton", "celery_singleton.singleton.Singleton"})
_NOT_READ = object()  # an option celerylint cannot read


def _dict_value(node: cst.BaseExpression | None, key: str):
    """The value of ``key`` in a dict literal; None when absent, ``_NOT_READ``
    when ``node`` is not a dict literal celerylint can read."""
    if not isinstance(node, cst.Dict):
        return _NOT_READ
    for element in node.elements:
        if not isinstance(element, cst.DictElement):
            return _NOT_READ
        if isinstance(element.key, cst.SimpleString) and element.key.evaluated_value == key:
            return element.value
    return None


def _message(library: str, what: str, expiry: float, limit: str) -> str:
    return (f"the {library} lock expires after {expiry:g} s ({what}), before {limit}: "
            "a duplicate can be queued and run while this one still runs (the lock is taken when the task is "
            "sent, so queue time counts too)")


def _never(library: str) -> str:
    return (f"the {library} lock never expires (no `lock_expiry` on the task, no `singleton_lock_expiry` in the "
            "configuration): a worker that dies without releasing it blocks this task until the key is deleted "
            "by hand")


class LockLibraryExpiry(TaskRule):
    """
    ## What it does
    Checks the lock expiry of tasks made unique with a lock library
    against the task's time limit (the `time_limit` or `soft_time_limit`
    of the task, its class or a base class, as CL205 reads them; for a
    task that sets neither, the longer of its app's `task_time_limit` and
    `task_soft_time_limit`, however the configuration sets them: the
    constructor, `app.conf`, a configuration module, Django settings with
    the `CELERY_` namespace):

    - celery-once (`base=QueueOnce`): the `once={"timeout": N}` of the
      task, else `default_timeout` of the `ONCE` configuration (`ONCE`,
      `CELERY_ONCE`, `app.conf.ONCE`; one hour when its `settings` leave it
      out) is shorter than the time limit;
    - celery-singleton (`base=Singleton`): `lock_expiry=N` of the task,
      else `singleton_lock_expiry` of the configuration, is shorter than
      the time limit; or neither is set, and the lock never expires (what
      CL203 reports for a Redis lock written by hand), unless the project
      handles the locks a dead worker leaves as the library documents:
      `clear_locks(app)` called anywhere outside tests (from a
      `worker_ready` receiver, say), or `challenge_lock_on_startup=True` on
      the task.

    The app's limit counts only when it is known in every settings profile
    of the task's app (the app of `@app.task`; for `@shared_task` and a
    class-based task, the project's one app that runs tasks), and the
    finding names the shortest. It is unknown, and nothing is reported,
    when a profile reads it from the environment or sets it in an `if`
    branch, when a profile sets no limit, when `task_annotations` may set
    the task's limit, or when a worker of the app is started with
    `--time-limit`/`--soft-time-limit` (the command line wins).

    Unknown stays silent: a value that is not a literal number, a task
    without a time limit (for the comparison), a limit read from a Django
    setting by the task itself (`time_limit=settings.X`), an `ONCE`
    configuration celerylint does not find, `once={"unlock_before_run":
    True}` (the lock is released before the task runs), a base class of
    the project that derives from these bases.

    ## Why is this bad?
    Both libraries take the lock when the task is sent and release it when
    it ends. When the expiry comes first, Redis drops the lock while the
    task is queued or running, and the next `delay()` queues a duplicate
    that runs alongside: what the lock was there to prevent. A lock that
    never expires is left behind by a worker killed in the middle (OOM,
    deploy, `SIGKILL`), and then refuses every later run of the task.

    ## Example
    ```python
    from celery import shared_task
    from celery_once import QueueOnce

    @shared_task(base=QueueOnce, once={"timeout": 60}, time_limit=600)
    def rebuild_index():
        ...
    ```

    Use instead:
    ```python
    from celery import shared_task
    from celery_once import QueueOnce

    @shared_task(base=QueueOnce, once={"timeout": 660}, time_limit=600)
    def rebuild_index():
        ...
    ```

    ## Fix safety
    No fix: the expiry is also how long duplicates are refused, and the
    right value includes the time the task may wait in the queue.

    ## References
    - [celery-once: configuration and `timeout`](https://github.com/cameronmaske/celery-once#configuration)
    - [celery-singleton: `lock_expiry`](https://github.com/steinitzu/celery-singleton#lock_expiry)
    - [celery-once#36](https://github.com/cameronmaske/celery-once/issues/36), [celery-singleton#40](https://github.com/steinitzu/celery-singleton/issues/40)
    """

    CODE = "CL218"
    NAME = "lock-library-expiry"
    SEVERITY = "warning"
    SUMMARY = "A celery-once or celery-singleton lock that expires before the task's time limit, or never"
    HINT = "make the lock expiry longer than the task's time limit (and its time in the queue)"
    TAGS = ("locks",)
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (task_and((b"QueueOnce", b"Singleton")),)

    VALID = (
        # an options dict changed after it is bound: unknown, read as nothing
        Valid("""
            from celery import shared_task
            from celery_once import QueueOnce
            OPTIONS = {"base": QueueOnce, "time_limit": 7200, "once": {"timeout": 600}}
            OPTIONS["once"] = {"timeout": 9000}
            @shared_task(**OPTIONS)
            def update_all(): ...
        """),
        Valid("""
            from celery import shared_task
            from celery_once import QueueOnce
            from celery_singleton import Singleton
            @shared_task(base=QueueOnce, once={"timeout": 900}, time_limit=600)
            def a(): ...
            @shared_task(base=QueueOnce, once={"timeout": 60, "unlock_before_run": True}, time_limit=600)
            def b(): ...
            @shared_task(base=QueueOnce, once={"graceful": True})  # no time limit, no configuration found
            def c(): ...
            @shared_task(base=Singleton, lock_expiry=700, time_limit=600)
            def d(): ...
            @shared_task(base=QueueOnce, once=ONCE_OPTIONS, time_limit=600)  # not read
            def e(): ...
        """),
        Valid("""
            # the configuration's default is long enough; the expiry comes from the environment
            # file: proj/celery.py
            import os
            from celery import Celery
            app = Celery("proj")
            app.conf.ONCE = {"backend": "celery_once.backends.Redis", "settings": {"default_timeout": 2 * 3600}}
            app.conf.singleton_lock_expiry = int(os.environ["LOCK_EXPIRY"])
            # file: proj/tasks.py
            from celery_once import QueueOnce
            from celery_singleton import Singleton
            from proj.celery import app
            @app.task(base=QueueOnce, time_limit=3600)
            def a(): ...
            @app.task(base=Singleton, time_limit=3600)
            def b(): ...
        """),
        Valid("""
            # no expiry, but the locks a dead worker leaves are dropped at worker start, or challenged
            # file: proj/celery.py
            from celery import Celery
            from celery.signals import worker_ready
            from celery_singleton import clear_locks as drop_all
            app = Celery("proj")
            @worker_ready.connect
            def unlock_all(**kwargs):
                drop_all(app)
            # file: proj/tasks.py
            from celery_singleton import Singleton
            from proj.celery import app
            @app.task(base=Singleton, time_limit=300)
            def nightly(): ...
        """),
        Valid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            # file: proj/tasks.py
            from celery_singleton import Singleton
            from proj.celery import app
            @app.task(base=Singleton, challenge_lock_on_startup=True)
            def nightly(): ...
        """),
        Valid("""
            # look-alike: a Singleton of another library
            from celery import shared_task
            from proj.patterns import Singleton
            @shared_task(base=Singleton, time_limit=600)
            def a(): ...
        """),
    )
    INVALID = (
        # options unpacked from dicts of the module (`**TASK_DEFAULTS_ONCE`)
        Invalid("""
            from celery import shared_task
            from celery_once import QueueOnce
            TASK_DEFAULTS = {"time_limit": 7200}
            TASK_DEFAULTS_ONCE = {**TASK_DEFAULTS, "base": QueueOnce, "once": {"timeout": 600}}
            @shared_task(**TASK_DEFAULTS_ONCE)
            def update_all(): ...
        """, message="600 s (`once` `timeout`), before the task's `time_limit` of 7200 s", at="4:79"),
        Invalid("""
            from celery import Task, shared_task
            from celery_singleton import Singleton as Unique
            @shared_task(base=Unique, lock_expiry=30, soft_time_limit=120)
            def a(): ...
            class Sync(Unique):
                lock_expiry = 10
                time_limit = 60
                def run(self): ...
        """, count=2, message="before the task's"),
        Invalid("""
            # file: proj/settings.py
            CELERY_ONCE = {"backend": "celery_once.backends.Redis", "settings": {"url": "redis://"}}
            # file: proj/tasks.py
            from celery import shared_task
            from celery_once import QueueOnce
            @shared_task(base=QueueOnce, time_limit=2 * 3600)
            def export(): ...
            @shared_task(base=QueueOnce, once={"keys": ["x"]}, time_limit=1800)
            def fine(x): ...
        """, count=1, message="3600 s (`default_timeout` of the celery-once configuration)", at="3:19"),
        Invalid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            # file: proj/tasks.py
            from celery_singleton import Singleton
            from proj.celery import app
            @app.task(base=Singleton, time_limit=300, challenge_lock_on_startup=False)
            def nightly(): ...
            # file: tests/test_locks.py
            from celery_singleton import clear_locks
            from proj.celery import app
            def test_clear():
                clear_locks(app)  # a test's call clears nothing in production
        """, count=1, message="never expires"),
        Invalid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(singleton_lock_expiry=60)
            # file: proj/tasks.py
            from celery_singleton import Singleton
            from proj.celery import app
            @app.task(base=Singleton, time_limit=300)
            def nightly(): ...
        """, count=1, message="`singleton_lock_expiry` of the configuration"),
    )

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        base, library = self._library(task)
        if base is None:
            return
        limit = task_time_limit(node, self.ctx)
        limit_data = (limit.limit, limit.which) if limit is not None and limit.limit is not None else (None, "")
        # a task that sets no limit runs under its app's: the project phase reads it
        app = task_app(node, task.cls is not None, self.ctx) if limit is None else None
        if library == "celery-once":
            once = task.option("once")
            timeout = _dict_value(once, "timeout") if once is not None else None
            unlock = _dict_value(once, "unlock_before_run") if once is not None else None
            if timeout is _NOT_READ or (isinstance(unlock, cst.Name) and unlock.value == "True"):
                return
            expiry = timeout
            what = "`once` `timeout`"
        else:
            expiry = task.option("lock_expiry")
            what = "`lock_expiry`"
        if expiry is None:  # from the configuration: the project phase
            challenge = task.option("challenge_lock_on_startup")
            challenged = not (challenge is None or (isinstance(challenge, cst.Name) and challenge.value == "False"))
            self.ctx.fact(FACT, base, library=library, limit=limit_data[0], which=limit_data[1],
                          challenged=challenged, **({"app": app} if app else {}))
            return
        value = seconds(evaluate(expiry, self.ctx))
        if value is None or value <= 0:
            return
        if limit_data[0] is not None:
            if value < limit_data[0]:
                self.report(expiry, _message(library, what, value, _own(*limit_data)))
        elif app:
            self.ctx.fact(FACT, expiry, library=library, expiry=value, what=what, limit=None, which="", app=app)

    def _library(self, task) -> tuple[cst.CSTNode | None, str]:
        bases = [task.option("base")] if task.cls is None else [b.value for b in task.cls.bases if b.keyword is None]
        for base in bases:
            name = self.ctx.imported_name(base) if base is not None else None
            if name in ONCE_BASES:
                return base, "celery-once"
            if name in SINGLETON_BASES:
                return base, "celery-singleton"
        return None, ""

    @classmethod
    def check_project(cls, project) -> Iterable[Finding]:
        """Tasks whose lock expiry is the configuration's, or whose time
        limit is their app's."""
        configured = {ONCE_FACT: [f["timeout"] for f in project.of_kind(ONCE_FACT)],
                      SINGLETON_FACT: [f["expiry"] for f in project.of_kind(SINGLETON_FACT)]}
        cleared = any(True for _ in project.of_kind(CLEAR_LOCKS_FACT))
        m = None  # the configuration model: only for tasks that set no limit
        for f in project.of_kind(FACT):
            at = (f["path"], f["line"], f["col"], f["end_line"], f["end_col"])
            if "expiry" in f:
                expiry, setting = f["expiry"], f["what"]
            else:
                found = configured[ONCE_FACT if f["library"] == "celery-once" else SINGLETON_FACT]
                if None in found:
                    continue  # a configuration celerylint cannot read
                if not found:
                    # a lock left by a dead worker is dropped by ``clear_locks`` or challenged: not forever
                    if f["library"] == "celery-singleton" and not cleared and not f.get("challenged"):
                        yield cls.finding(_never(f["library"]), *at)
                    continue  # celery-once without a configuration found: unknown
                expiry = max(found)
                setting = "`default_timeout` of the celery-once configuration" if f["library"] == "celery-once" \
                    else "`singleton_lock_expiry` of the configuration"
            if f["limit"] is not None:
                limit = (f["limit"], _own(f["limit"], f["which"]))
            elif f.get("app"):
                if m is None:
                    from ..domain.celeryconf.model import model

                    m = model(project)
                limit = _app_limit(m, f["app"])
            else:
                limit = None
            if limit is not None and 0 < expiry < limit[0]:
                yield cls.finding(_message(f["library"], setting, expiry, limit[1]), *at)


def _own(limit: float, which: str) -> str:
    return f"the task's `{which}` of {limit:g} s"


def _app_limit(m, key: str) -> tuple[float, str] | None:
    """The time limit of the app ``key`` (every settings profile of it,
    the shortest named): None when it is unknown or unlimited in any."""
    from ..domain.app_limits import app_time_limit  # the configuration model: only for these tasks
    from ..domain.celeryconf.conditions import app_profiles

    limits = []
    for app in app_profiles(m, key):
        found = app_time_limit(m, app)
        if found is None or found[0] is None:
            return None
        profile = f", settings profile `{app.profile}`" if app.profile else ""
        limits.append((found[0], f"its app's {found[1]} of {found[0]:g} s (the task sets no limit of its own{profile})"))
    return min(limits, default=None)
