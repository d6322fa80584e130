from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..domain.calls import has_star
from ..domain.clients import REDIS_IMPORT_NEEDLE, client_kind, receiver
from ..domain.locks import (
    RELEASE_METHODS, RENEW_METHODS, LockHelper, LockTake, key_says_lock, key_texts, lock_helper, lock_take,
)
from ..domain.tasks import CLASS_WITH_RUN, TimeLimit, task_time_limit
from ..domain.values import evaluate, numeric_literal, seconds
from ..rule import All, Fix, Invalid, Replace, Rule, Valid

MARGIN = 60  # seconds the fix adds to the task's time limit


def _human(value: float) -> str:
    return f"{value:g} s"


@dataclass
class _Frame:
    node: cst.FunctionDef
    task: TimeLimit | None
    takes: list[LockTake] = field(default_factory=list)
    released: set[str] = field(default_factory=set)
    renewed: bool = False  # the function extends a TTL: it manages the expiry itself


class LockTtlShorterThanTask(Rule):
    """
    ## What it does
    Finds a lock taken inside a Celery task whose TTL is shorter than the
    task's own time limit: the larger of `time_limit` and `soft_time_limit`
    given to `@shared_task(...)`/`@app.task(...)` or set on a `Task`
    subclass (for the lock taken in its `run` method), also when inherited
    from a `base=` class or the task classes the class derives from, in
    the same file or another linted one (a number there). A limit read from
    a setting (`soft_time_limit=settings.X`) is unknown: no finding.

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
    # A time limit in the file, or a task that may inherit one (``base=``, a
    # class with ``run`` and a base), and a client made or imported (see CL203).
    REQUIRES = (All(((b"time_limit", b"base=", CLASS_WITH_RUN), (REDIS_IMPORT_NEEDLE, b"core.cache"))),)

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

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.frames: list[_Frame] = []
        self.statements: set[int] = set()
        self.helpers: dict[str, LockHelper] = {}
        self.helper_calls: list[tuple[cst.Call, TimeLimit, list, dict]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.frames.append(_Frame(node, task_time_limit(node, self.ctx)))

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value.expression if isinstance(node.value, cst.Await) else node.value
        self.statements.add(id(value))

    def visit_Call(self, node: cst.Call) -> None:
        if not self.frames:
            return
        frame = self.frames[-1]
        take = lock_take(node, self.ctx)
        if take is not None:
            if take.ttl is not None and (take.always or id(node) not in self.statements):
                frame.takes.append(take)
            return
        if receiver(node, RENEW_METHODS) is not None:
            frame.renewed = True
            return
        found = receiver(node, RELEASE_METHODS)
        if found is not None:
            if client_kind(found[1], self.ctx) is None:
                return
            for a in node.args:
                frame.released.update(key_texts(a.value, self.ctx))
        elif frame.task is not None and isinstance(node.func, cst.Name) and not has_star(node):
            # a call of a lock helper of this module, perhaps: remember the
            # values of its arguments, evaluated here, in the task's scope
            positional = [seconds(evaluate(a.value, self.ctx)) for a in node.args if a.keyword is None]
            keywords = {a.keyword.value: (a.value, seconds(evaluate(a.value, self.ctx))) for a in node.args if a.keyword is not None}
            self.helper_calls.append((node, frame.task, positional, keywords))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        frame = self.frames.pop()
        if frame.renewed:
            return
        for take in frame.takes:
            if not take.always and not (take.key is not None and (
                    key_says_lock(take.key, self.ctx) or frame.released & set(key_texts(take.key, self.ctx)))):
                continue
            if frame.task is not None:
                ttl = seconds(evaluate(take.ttl.value, self.ctx))
                if ttl is not None and 0 < ttl * take.ttl_unit < frame.task.limit:
                    self._report(take.ttl.value, take, ttl * take.ttl_unit, frame.task)
            elif not self.frames and not self.ctx.classes and isinstance(take.ttl.value, cst.Name):
                helper = lock_helper(frame.node, take, self.ctx)
                if helper is not None:
                    self.helpers[frame.node.name.value] = helper

    def leave_Module(self, original_node: cst.Module) -> None:
        for call, task, positional, keywords in self.helper_calls:
            helper = self.helpers.get(call.func.value)
            if helper is None:
                continue
            if helper.param in keywords:
                node, ttl = keywords[helper.param]
            elif helper.position is not None and helper.position < len(positional):
                node, ttl = call.args[helper.position].value, positional[helper.position]
            else:
                node, ttl = call, helper.default
            if ttl is not None and 0 < ttl * helper.take.ttl_unit < task.limit:
                self._report(node, helper.take, ttl * helper.take.ttl_unit, task, via=call.func.value)

    def _report(self, node: cst.CSTNode, take: LockTake, ttl: float, task: TimeLimit, via: str | None = None) -> None:
        what = f"`{take.method}(...)`" if take.method != "set" else "`set(..., nx=True)`"
        if via:
            what += f" in `{via}()`"
        message = (f"the lock TTL of {_human(ttl)} ({what}) is shorter than the task's `{task.which}` of "
                   f"{_human(task.limit)}: the lock can expire while the task still runs, and a second worker gets in")
        fix = None
        value = node
        if isinstance(value, cst.BaseExpression) and numeric_literal(value):
            new = (task.limit + MARGIN) / take.ttl_unit
            text = str(int(new)) if float(new).is_integer() else f"{new:g}"
            fix = Fix(f"raise the TTL to {text} ({task.which} + {MARGIN} s)",
                      (Replace(value, cst.Integer(text) if text.isdigit() else cst.Float(text)),))
        self.report(node, message, fix)
