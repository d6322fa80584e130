from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..analysis.clients import receiver
from ..analysis.locks import RELEASE_METHODS, LockTake, key_says_lock, key_texts, lock_take
from ..analysis.tasks import class_options, function_task_options, is_task_class
from ..analysis.values import evaluate, seconds
from ..rule import Invalid, PendingFix, Rule, Valid

MARGIN = 60  # seconds the fix adds to the task's time limit


def _literal(node: cst.BaseExpression) -> bool:
    """A number, or arithmetic on numbers only: safe to replace by its value."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.BinaryOperation):
        return _literal(node.left) and _literal(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _literal(node.expression)
    return False


def _human(value: float) -> str:
    return f"{value:g} s"


@dataclass
class _Task:
    limit: float
    which: str  # time_limit | soft_time_limit
    takes: list[LockTake] = field(default_factory=list)
    released: set[str] = field(default_factory=set)


class LockTtlShorterThanTask(Rule):
    """
    ## What it does
    Finds a lock taken inside a Celery task whose TTL is shorter than the
    task's own time limit: the larger of `time_limit` and `soft_time_limit`
    given to `@shared_task(...)`/`@app.task(...)` or set on a `Task`
    subclass (for the lock taken in its `run` method).

    The TTL is the `ex=`/`px=` of `set(..., nx=True)`, the `timeout` of
    redis-py and django-redis `lock(...)` and of `Lock(client, name,
    timeout)`, and the timeout of Django `cache.add(key, value, timeout)`,
    sync or `redis.asyncio`. Only values that evaluate to a number are
    compared (literals, constant arithmetic, module constants,
    `timedelta(...)`). A `set(..., nx=True)` or `cache.add(...)` counts as a
    lock when its result is used and its key is named like a lock or is
    deleted again in the same task; otherwise it is a marker or throttle,
    whose TTL has nothing to do with the task's duration.

    Time limits set globally (`task_time_limit`) are not considered.

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

    ## Options
    None.

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
    # A finding needs a time limit in the file and a client made or
    # imported in it (see CL203).
    NEEDLES = (b"time_limit",)

    VALID = (
        Valid("""
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task(time_limit=600)
            def rebuild(shard):
                with r.lock(f"lock:index:{shard}", timeout=900):
                    work()
        """),
        Valid("""
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task(soft_time_limit=600)
            def fetch(url):
                # a throttle, not a lock: its TTL is not about the task
                if not r.set(f"throttle:{url}", 1, nx=True, ex=10):
                    return
                get(url)
        """),
        Valid("""
            import redis
            r = redis.Redis()
            def helper(shard):  # not a task
                with r.lock("lock:x", timeout=5):
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
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task(time_limit=300)
            def sync(account, ttl):
                with r.lock(f"lock:{account}", timeout=ttl):
                    work()
        """),
    )
    INVALID = (
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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.tasks: list[_Task | None] = []
        self.statements: set[int] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.tasks.append(self._task(node))

    def _task(self, node: cst.FunctionDef) -> _Task | None:
        options = function_task_options(node, self.ctx)
        if options is None and node.name.value == "run" and self.ctx.classes and len(self.ctx.functions) == 1:
            cls = self.ctx.classes[-1]
            options = class_options(cls) if is_task_class(cls, self.ctx) else None
        if not options:
            return None
        limits = []
        for which in ("time_limit", "soft_time_limit"):
            value = seconds(evaluate(options[which], self.ctx)) if which in options else None
            if value is not None and value > 0:
                limits.append((value, which))
        if not limits:
            return None
        limit, which = max(limits)
        return _Task(limit, which)

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value.expression if isinstance(node.value, cst.Await) else node.value
        self.statements.add(id(value))

    def visit_Call(self, node: cst.Call) -> None:
        task = self.tasks[-1] if self.tasks else None
        if task is None:
            return
        take = lock_take(node, self.ctx)
        if take is not None:
            if take.ttl is not None and (take.always or id(node) not in self.statements):
                task.takes.append(take)
            return
        found = receiver(node, RELEASE_METHODS)
        if found is not None:
            for a in node.args:
                task.released.update(key_texts(a.value, self.ctx))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        task = self.tasks.pop()
        if task is None:
            return
        for take in task.takes:
            if not take.always and not (take.key is not None and (
                    key_says_lock(take.key, self.ctx) or task.released & set(key_texts(take.key, self.ctx)))):
                continue
            ttl = seconds(evaluate(take.ttl.value, self.ctx))
            if ttl is None or ttl <= 0 or ttl * take.ttl_unit >= task.limit:
                continue
            self._report(take, ttl * take.ttl_unit, task)

    def _report(self, take: LockTake, ttl: float, task: _Task) -> None:
        what = f"`{take.method}(...)`" if take.method != "set" else "`set(..., nx=True)`"
        message = (f"the lock TTL of {_human(ttl)} ({what}) is shorter than the task's `{task.which}` of "
                   f"{_human(task.limit)}: the lock can expire while the task still runs, and a second worker gets in")
        fix = None
        value = take.ttl.value
        if _literal(value):
            new = (task.limit + MARGIN) / take.ttl_unit
            text = str(int(new)) if float(new).is_integer() else f"{new:g}"
            fix = PendingFix(f"Raise the TTL to {text} ({task.which} + {MARGIN} s)", False,
                             lambda b: [b.replace(value, cst.Integer(text) if text.isdigit() else cst.Float(text))])
        self.report(take.ttl.value, message, fix)
