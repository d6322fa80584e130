from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..domain.clients import BACKEND_CLIENT_NEEDLE, REDIS_NEEDLES
from ..domain.delays import django_sources
from ..domain.lock_ttls import TaskLocks
from ..domain.locks import LockTake
from ..domain.tasks import CLASS_WITH_RUN, TimeLimit
from ..domain.values import numeric_literal
from ..rule import All, Finding, Fix, Invalid, Replace, Rule, Valid, django_project
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

MARGIN = 60  # seconds the fix adds to the task's time limit
FACT = "lock-ttl-setting"  # a lock in a task whose time limit is read from a Django setting


class LockTtlShorterThanTask(TaskLocks, Rule):
    """
    ## What it does
    Finds a lock taken inside a Celery task whose TTL is shorter than the
    task's own time limit: the larger of `time_limit` and `soft_time_limit`
    given to `@shared_task(...)`/`@app.task(...)` or set on a `Task`
    subclass (for the lock taken in its `run` method), also when inherited
    from a `base=` class or the task classes the class derives from, in
    the same file or another linted one.

    A limit read from a Django setting (`soft_time_limit=settings.X`, also
    on a base class, `getattr(settings, "X", 600)`, `settings.X * 60`) is
    read from every settings module the project's apps load (each profile,
    as `--show-apps` lists them), and the lock is reported only when its
    TTL is shorter than the limit in every one of them; a setting unknown
    in any of them (read from the environment, set under a condition,
    missing) gives no finding. The message names the shortest.

    The TTL is the `ex=`/`px=` of `set(..., nx=True)`, the `timeout` of
    redis-py and django-redis `lock(...)` and of `Lock(client, name,
    timeout)`, and the timeout of Django `cache.add(key, value, timeout)`,
    sync or `redis.asyncio`. Only values that evaluate to a number are
    compared (literals, constant arithmetic, module constants,
    `timedelta(...)`). A `set(..., nx=True)` or `cache.add(...)` counts as a
    lock when its result is used and its key is named like a lock or is
    deleted again in the same task; otherwise it is a marker or throttle,
    whose TTL has nothing to do with the task's duration.

    A lock helper of the same module is followed one level: for
    `def acquire_lock(key, ttl=30)` that takes the lock with `ex=ttl`, the
    call `acquire_lock(key, ttl=15)` in a task (or the default, when the
    argument is left out) is the TTL compared.

    A task that renews a TTL as it goes (`lock.extend(...)`,
    `lock.reacquire()`, `expire`/`pexpire`, `cache.touch`) manages the
    expiry itself and is not reported. Time limits set globally
    (`task_time_limit`) are not considered.

    ## Why is this bad?
    The lock is there so that no second worker runs the same work while the
    first is still running. The task is allowed to run until its time limit;
    a lock that expires before lets a second worker in while the first is
    still working, exactly the concurrent run the lock was meant to stop.

    ## Example
    ```python
    import redis
    from celery import shared_task

    r = redis.Redis()

    @shared_task(time_limit=600)
    def rebuild_index(shard):
        with r.lock(f"lock:index:{shard}", timeout=60):
            rebuild(shard)
    ```

    Use instead:
    ```python
    import redis
    from celery import shared_task

    r = redis.Redis()

    @shared_task(time_limit=600)
    def rebuild_index(shard):
        with r.lock(f"lock:index:{shard}", timeout=660):
            rebuild(shard)
    ```

    ## Fix safety
    The fix raises a TTL written as a number (or arithmetic on numbers) to
    the task's time limit plus 60 seconds (`px=` in milliseconds). It is
    unsafe: a longer TTL also means that a worker killed while holding the
    lock blocks the work for longer. A TTL given by a name or a call is
    reported without a fix; raise the constant or lower the time limit.
    With a limit read from settings, the TTL is raised to the longest
    limit of the settings modules plus 60 seconds.

    ## References
    - [Celery: task time limits](https://docs.celeryq.dev/en/stable/userguide/workers.html#time-limits)
    - [Redis: distributed locks, the validity time](https://redis.io/docs/latest/develop/clients/patterns/distributed-locks/)
    - [redis-py `Lock`](https://redis.readthedocs.io/en/stable/lock.html)
    """

    CODE = "CL205"
    NAME = "lock-ttl-shorter-than-task"
    SEVERITY = "warning"
    SUMMARY = "A lock TTL shorter than the task's time limit: the lock can expire while the task still runs"
    FIX = "sometimes"
    HINT = "make the lock TTL longer than the task's time_limit (or shorten the time limit)"
    TAGS = ("locks", "redis")
    PATHS = TEST_PATHS_EXCLUDED
    # A time limit in the file, or a task that may inherit one (``base=``, a
    # class with ``run`` and a base), and a client made or imported (see CL203).
    REQUIRES = (All(((b"time_limit", b"base=", CLASS_WITH_RUN), (*REDIS_NEEDLES, b"core.cache", BACKEND_CLIENT_NEEDLE))),)

    VALID = (
        Valid("""
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task(time_limit=600)
            def rebuild(shard):
                with r.lock(f"lock:index:{shard}", timeout=900):
                    work()
            @shared_task(soft_time_limit=600)
            def fetch(url):
                # a throttle, not a lock: its TTL is not about the task
                if not r.set(f"throttle:{url}", 1, nx=True, ex=10):
                    return
                get(url)
            def helper(shard):  # not a task
                with r.lock("lock:x", timeout=5):
                    work()
            @shared_task(time_limit=300)
            def sync(account, ttl):
                with r.lock(f"lock:{account}", timeout=ttl):
                    work()
        """),
        Valid("""
            from django.core.cache import cache
            from celery import shared_task
            @shared_task(time_limit=120)
            def stats():
                cache.add("stats", compute(), 60)  # a memo
        """),
        Valid("""
            import redis.asyncio as aredis
            from celery import shared_task
            r = aredis.Redis()
            @shared_task(time_limit=3600)
            async def crawl(site):
                lock = r.lock(f"crawl:{site}", timeout=60)
                async with lock:
                    for page in pages(site):
                        await fetch(page)
                        await lock.extend(60)
        """),
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://redis:6379/0"
            SYNC_LIMIT = 30
            if DEBUG:
                EXPORT_LIMIT = 3600
            IMPORT_LIMIT = int(os.environ.get("IMPORT_LIMIT", "3600"))
        """, extra="""
            # file: proj/tasks.py
            import redis
            from django.conf import settings
            from celery import shared_task
            r = redis.Redis()
            @shared_task(soft_time_limit=settings.SYNC_LIMIT)
            def sync(account):
                with r.lock(f"lock:sync:{account}", timeout=60):
                    work()
            @shared_task(soft_time_limit=settings.EXPORT_LIMIT)
            def export(account):
                with r.lock(f"lock:export:{account}", timeout=60):
                    work()
            @shared_task(time_limit=settings.IMPORT_LIMIT, soft_time_limit=settings.MISSING)
            def load(account):
                with r.lock(f"lock:import:{account}", timeout=60):
                    work()
        """)),
    )
    INVALID = (
        # a task defined where the app is passed in (``register_tasks(celery: Celery)``)
        Invalid("""
            import redis
            from redis.lock import Lock
            from celery import Celery
            rd = redis.Redis()
            def register_tasks(celery: Celery):
                @celery.task(name="sync", time_limit=15)
                def sync():
                    with Lock(rd, name="sync", timeout=10.0):
                        work()
        """, message="shorter than the task's `time_limit` of 15 s"),
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://redis:6379/0"
            EXPORT_MINUTES = 60
        """, extra="""
            # file: proj/tasks.py
            import redis
            from django.conf import settings
            from celery import Task
            r = redis.Redis()
            class Export(Task):
                time_limit = settings.EXPORT_MINUTES * 60
                def run(self, account):
                    with r.lock(f"lock:export:{account}", timeout=600):
                        work()
                    if r.set(f"lock:mail:{account}", 1, nx=True, px=5000):
                        mail()
        """), fixed="""
            # file: proj/tasks.py
            import redis
            from django.conf import settings
            from celery import Task
            r = redis.Redis()
            class Export(Task):
                time_limit = settings.EXPORT_MINUTES * 60
                def run(self, account):
                    with r.lock(f"lock:export:{account}", timeout=3660):
                        work()
                    if r.set(f"lock:mail:{account}", 1, nx=True, px=3660000):
                        mail()
        """, count=2, message="`time_limit` (`settings.EXPORT_MINUTES` in proj/settings.py) of 3600 s"),
        Invalid(
            """
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task(time_limit=600)
            def rebuild(shard):
                with r.lock(f"lock:index:{shard}", timeout=60):
                    work()
            """,
            fixed="""
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task(time_limit=600)
            def rebuild(shard):
                with r.lock(f"lock:index:{shard}", timeout=660):
                    work()
            """,
        ),
        Invalid(
            """
            import redis.asyncio as r
            from celery import Celery
            app = Celery()
            client = r.Redis()
            @app.task(bind=True, soft_time_limit=5 * 60, time_limit=6 * 60)
            def sync(self, account):
                token = self.request.id
                if client.set(f"sync:{account}", token, nx=True, px=30_000):
                    work()
                    client.delete(f"sync:{account}")
            """,
            fixed="""
            import redis.asyncio as r
            from celery import Celery
            app = Celery()
            client = r.Redis()
            @app.task(bind=True, soft_time_limit=5 * 60, time_limit=6 * 60)
            def sync(self, account):
                token = self.request.id
                if client.set(f"sync:{account}", token, nx=True, px=420000):
                    work()
                    client.delete(f"sync:{account}")
            """,
        ),
        Invalid(
            """
            from celery import shared_task as task
            from django.core.cache import cache
            @task(bind=True, soft_time_limit=3600)
            def create_runs(self, contract_id):
                lock_key = f"create_runs_lock:{contract_id}"
                if not cache.add(lock_key, self.request.id, timeout=600):
                    return
                create(contract_id)
            """,
            fixed="""
            from celery import shared_task as task
            from django.core.cache import cache
            @task(bind=True, soft_time_limit=3600)
            def create_runs(self, contract_id):
                lock_key = f"create_runs_lock:{contract_id}"
                if not cache.add(lock_key, self.request.id, timeout=3660):
                    return
                create(contract_id)
            """,
        ),
        Invalid(
            """
            from celery import Task
            from redis import Redis
            from redis.lock import Lock
            LOCK_TTL = 30
            class Import(Task):
                time_limit = 120
                def run(self, feed):
                    with Lock(Redis(), f"import:{feed}", LOCK_TTL):
                        fetch(feed)
            """,
            fixed=None,
        ),
        Invalid(
            """
            import uuid
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            def acquire_lock(lock_key, ttl_seconds=30):
                token = str(uuid.uuid4())
                acquired = redis_client.set(lock_key, token, nx=True, ex=ttl_seconds)
                return token if acquired else None
            @shared_task(bind=True, time_limit=60)
            def send_confirmation(self, key):
                token = acquire_lock(f"lock:email:{key}", ttl_seconds=15)
            @shared_task(bind=True, soft_time_limit=45)
            def charge(self, key):
                token = acquire_lock(f"lock:charge:{key}")
            @shared_task(bind=True, soft_time_limit=45)
            def refund(self, key):
                token = acquire_lock(f"lock:refund:{key}", 600)
            """,
            fixed="""
            import uuid
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            def acquire_lock(lock_key, ttl_seconds=30):
                token = str(uuid.uuid4())
                acquired = redis_client.set(lock_key, token, nx=True, ex=ttl_seconds)
                return token if acquired else None
            @shared_task(bind=True, time_limit=60)
            def send_confirmation(self, key):
                token = acquire_lock(f"lock:email:{key}", ttl_seconds=120)
            @shared_task(bind=True, soft_time_limit=45)
            def charge(self, key):
                token = acquire_lock(f"lock:charge:{key}")
            @shared_task(bind=True, soft_time_limit=45)
            def refund(self, key):
                token = acquire_lock(f"lock:refund:{key}", 600)
            """,
            count=2,
        ),
        Invalid(
            """
            from datetime import timedelta
            from celery import shared_task
            from django_redis import get_redis_connection
            @shared_task(time_limit=timedelta(minutes=10).total_seconds())
            def nightly():
                con = get_redis_connection("default")
                with con.lock("nightly-lock", timeout=timedelta(minutes=5).total_seconds()):
                    report()
            """,
            fixed=None,
        ),
    )

    def lock_in_task(self, node: cst.CSTNode, take: LockTake, ttl: float, task: TimeLimit, via: str | None) -> None:
        what = (f"`{take.method}(...)`" if take.method != "set" else "`set(..., nx=True)`") + (f" in `{via}()`" if via else "")
        when = self.ctx.condition_of(take.call)  # a lock on the result backend's client
        if task.limit is not None and ttl < task.limit:
            self._report(node, what, take.ttl_unit, ttl, task.limit, task.which, when)
        elif task.settings:  # judged in the project phase, once the settings are known
            self.ctx.fact(FACT, node, ttl=ttl, unit=take.ttl_unit, what=what, literal=numeric_literal(node),
                          limit=task.limit, which=task.which, settings=[list(s) for s in task.settings],
                          **({"when": when} if when else {}))

    def _report(self, node: cst.CSTNode, what: str, unit: float, ttl: float, limit: float, which: str,
                when: dict | None) -> None:
        fix = None
        if isinstance(node, cst.BaseExpression) and numeric_literal(node):
            text = _raised(limit, unit)
            fix = Fix(f"raise the TTL to {text} ({which} + {MARGIN} s)",
                      (Replace(node, cst.Integer(text) if text.isdigit() else cst.Float(text)),))
        self.report(node, _message(ttl, what, limit, f"`{which}`"), fix, when)

    @classmethod
    def check_project(cls, project) -> Iterable[Finding]:
        """The locks of tasks whose time limit is read from a Django setting:
        reported when the TTL is shorter than the limit in every settings
        module the project's apps read; and the locks on the result backend's
        client, when it is Redis (``celeryconf/conditions.py``)."""
        from ..domain.celeryconf.conditions import deferred_findings, holds

        yield from deferred_findings(project, cls.CODE)  # locks on the result backend's client
        facts = list(project.of_kind(FACT))
        if not facts:
            return
        from ..domain.celeryconf import fixes, model  # the settings model: only for these facts

        m = model.model(project)
        sources = django_sources(m)
        for fact in facts:
            if "when" in fact and not holds(m, fact["when"]):
                continue
            task = TimeLimit(fact["limit"], fact["which"], tuple(fact["settings"]))
            limits = [task.in_settings(source) for source in sources]
            if not limits or None in limits or min(limits)[0] <= fact["ttl"]:
                continue
            limit, which = min(limits)
            text = _raised(max(limits)[0], fact["unit"])
            pos = (fact["line"], fact["col"], fact["end_line"], fact["end_col"])
            fix = fixes.replace_at(fact["path"], pos, text, f"raise the TTL to {text} (the longest limit + {MARGIN} s)") \
                if fact["literal"] else None
            yield cls.finding(_message(fact["ttl"], fact["what"], limit, which), fact["path"], fact["line"],
                              fact["col"], fact["end_line"], fact["end_col"], fix)


def _raised(limit: float, unit: float) -> str:
    new = (limit + MARGIN) / unit
    return str(int(new)) if float(new).is_integer() else f"{new:g}"


def _message(ttl: float, what: str, limit: float, which: str) -> str:
    return (f"the lock TTL of {ttl:g} s ({what}) is shorter than the task's {which} of {limit:g} s: "
            "the lock can expire while the task still runs, and a second worker gets in")
