from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..domain.calls import has_star
from ..domain.clients import (
    BACKEND_CLIENT_NEEDLE, CACHE_ALIAS, CACHE_HELPER, REDIS_NEEDLES, cache_call, client_kind, receiver,
)
from ..domain.guards import compares_clock
from ..domain.locks import RELEASE_METHODS, lock_take
from ..domain.releases import TEST_PATHS_EXCLUDED, TakeTracker, release_message
from ..rule import All, Finding, Invalid, Rule, Valid


_STORE = frozenset({"set", "getset"})  # without NX (``lock_take`` has taken those): a plain write or a swap


# a lock held for an hour by a task that sets no limit: the app's ``task_time_limit`` decides
_APP_LIMITED = """
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost:6379/0")
            app.conf.update(task_time_limit=LIMIT)
            # file: proj/tasks.py
            import redis
            from proj.celery import app
            r = redis.Redis()
            @app.task
            def work(x):
                key = f"lock:work:{x}"
                if not r.set(key, "1", nx=True, ex=3600):
                    return
                try:
                    return x
                finally:
                    r.delete(key)
            """


class UnsafeLockRelease(TakeTracker, Rule):
    """
    ## What it does
    Finds locks released with a plain `delete`/`unlink` (Redis `DEL`) on a
    Redis client (redis-py, `redis.asyncio`, `get_redis_connection()`, their
    Valkey forks (`valkey.Valkey`, `get_valkey_connection()`), one
    from a project helper or an annotated parameter, the result backend's
    client of an app whose result backend is Redis, as in CL203) or a
    Django cache, instead of a compare-and-delete. A key is a lock when

    - the same function took it before with `set(..., nx=True)`, `setnx`,
      `cache.add(...)` (whose result is used), `lock(...)` or `Lock(...)`;
    - another function of the module took the same key expression (not a
      bare variable, whose name means nothing outside its function), and
      one of the two functions is named for lock handling (`acquire`,
      `release`, `unlock`, `lock`): a "seen" marker taken in one function
      and reset in another is not a lock;
    - a lock-handling function deletes its parameter and another takes
      its own (`acquire_lock(key)` / `release_lock(key)` helpers);
    - a method of a class deletes its parameter and another method of that
      class took the key and passed it there (`key = self._key(name)`,
      `self.r.set(key, ..., nx=True, ex=60)`, then `self._drop(key)`);
    - a context manager (a class with `__enter__` and `__exit__`) took
      it in any method, in its `__enter__` even without looking at the
      result (the `__exit__` that deletes it is the release; an
      `__exit__` without `__enter__` that deletes a key some other method
      takes may reset a marker, and is not judged so);
    - or its name says lock (`lock_key`, `"import-lock"`, `LOCK_ID`; not
      `block` or `clock`), unless it is the variable of a `for` loop around
      the delete (a loop deleting the keys a scan found clears stuck locks,
      an operator's cleanup, not a holder's release), or the module writes
      it with a plain `set` (no NX): a key overwritten whoever holds it is a
      record kept there (an editor's lock id, which the caller compares),
      not an exclusive take; but a key the module also swaps with `getset`
      is a timestamp lock (`getset` takes it, `set` keeps it alive).

    redis-py `Lock.release()` and a Lua compare-and-delete
    (`eval`/`evalsha`/`register_script`) are correct and never reported. A
    delete inside `if monotonic() < deadline:` (the Celery task cookbook's
    pattern for the Django cache, which has no compare-and-delete) is not
    reported either, nor one under `if r.get(key) == token:` (a
    compare-then-delete: not atomic, but not blind), nor one in a test file
    (tests clear their fixtures' locks), nor the release of a lock that a
    task took in its own body with a TTL at least its hard `time_limit`
    (its own, or, when it sets none, the `task_time_limit` of every settings
    profile of the project's app, with no worker's `--time-limit` above the
    TTL: the worker is killed before the lock can expire, and a killed
    process runs no `finally`), nor the deletes of a key its function takes and
    deletes only in branches the take does not decide (an `except`
    handler, an `else`, an `if` on something else than the take or a flag
    set to True only where it succeeded): that function leaves
    the key set when it succeeds, so the key is a marker that ends with its
    TTL (a debounce, a once-an-hour guard), and the delete undoes it after a
    failure; it is no lock release.

    ## Why is this bad?
    A lock has a TTL so that a crashed worker cannot hold it forever. But a
    worker that is merely slow outlives its TTL: the lock expires, a second
    worker takes it, and when the first one finishes, its plain `DEL`
    deletes the second worker's lock. A third worker gets in, and the lock
    no longer excludes anything. The release must delete the key only while
    it still holds the token this worker stored.

    ## Example
    ```python
    import uuid
    import redis

    r = redis.Redis()

    def charge(order_id):
        lock_key = f"lock:charge:{order_id}"
        token = str(uuid.uuid4())
        if not r.set(lock_key, token, nx=True, ex=30):
            return
        try:
            do_charge(order_id)
        finally:
            r.delete(lock_key)
    ```

    Use instead:
    ```python
    import uuid
    import redis

    r = redis.Redis()
    RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

    def charge(order_id):
        lock_key = f"lock:charge:{order_id}"
        token = str(uuid.uuid4())
        if not r.set(lock_key, token, nx=True, ex=30):
            return
        try:
            do_charge(order_id)
        finally:
            r.eval(RELEASE, 1, lock_key, token)
    ```

    or take the lock with `r.lock(lock_key, timeout=30)` and let
    `Lock.release()` do the compare-and-delete.

    ## Fix safety
    Offered when the lock was taken in the same function on a Redis client,
    and the value stored with it is a variable (the token): the `delete`
    becomes `client.eval(<compare-and-delete script>, 1, key, token)`, with
    the script inline so the fix is one self-contained edit (applying it
    again finds no `delete` left). It is unsafe: the key is now left alone
    when it holds another value, which is the point, but code that relied
    on the delete clearing someone else's key behaves differently. No fix
    is offered for the Django cache (its API has no compare-and-delete; use
    a Redis lock), when the lock was taken in another function, or when the
    value stored is not a variable (a constant is no token: every worker
    stores the same).

    ## References
    - [Redis: distributed locks, releasing safely](https://redis.io/docs/latest/develop/clients/patterns/distributed-locks/)
    - [redis-py `Lock.release`](https://redis.readthedocs.io/en/stable/lock.html)
    - [Celery: ensuring a task is only executed one at a time](https://docs.celeryq.dev/en/stable/tutorials/task-cookbook.html)
    """

    CODE = "CL204"
    PROJECT_FACTS = "own"  # its project part judges its deferred findings only
    NAME = "unsafe-lock-release"
    SEVERITY = "warning"
    SUMMARY = "A lock released with a plain delete: a worker whose lock expired deletes the next holder's lock"
    FIX = "sometimes"
    HINT = "delete the key only if it still holds this worker's token (a Lua compare-and-delete, or redis-py Lock.release())"
    TAGS = ("locks", "redis")
    # Not in a test file. Every finding needs a client (see clients.py), a delete, and a lock: a take
    # (set(..., nx=True) or with nx positional, setnx, add, lock(), Lock()) or a key named like one
    # (lock, mutex, semaphore, in any of their spellings); the gate asks the same of the ``ast``.
    PATHS, GATE = TEST_PATHS_EXCLUDED, "celerylint.domain.lock_syntax:may_release_lock"
    REQUIRES = (All((
        (*REDIS_NEEDLES, All((b"core.cache", (cache_call(rb"delete"), *CACHE_ALIAS))), CACHE_HELPER,
         BACKEND_CLIENT_NEEDLE),
        tuple(m.encode() for m in sorted(RELEASE_METHODS)),
        (b"nx", b"set(", b".add(", b"lock", b"Lock", b"LOCK", b"utex", b"UTEX", b"emaphore", b"EMAPHORE"),
    )),)

    VALID = (
        # the app kills every task after 30 minutes, before the lock's hour is up
        Valid(_APP_LIMITED.replace("LIMIT", "1800")),
        Valid("""
            # the task is killed (time_limit) before the lock can expire
            from celery import shared_task
            from django.core.cache import cache
            HARD = 600
            @shared_task(time_limit=HARD)
            def purge(pk):
                lock_key = f"purge:{pk}"
                if not cache.add(lock_key, True, timeout=HARD + 300):
                    return
                try:
                    work(pk)
                finally:
                    cache.delete(lock_key)
        """),
        Valid("""
            import uuid
            import redis
            r = redis.Redis()
            RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
            def f(key):
                token = str(uuid.uuid4())
                if r.set(f"lock:{key}", token, nx=True, ex=60):
                    r.eval(RELEASE, 1, f"lock:{key}", token)
        """),
        Valid("""
            import redis as rds
            client = rds.Redis.from_url("redis://")
            def f(name):
                lock = client.lock(name, timeout=30)
                if lock.acquire(blocking=False):
                    try:
                        work()
                    finally:
                        lock.release()
        """),
        Valid("""
            from time import monotonic
            from django.core.cache import cache
            def f(lock_id):
                timeout_at = monotonic() + 60 - 3
                status = cache.add(lock_id, "x", 60)
                try:
                    work()
                finally:
                    if monotonic() < timeout_at and status:
                        cache.delete(lock_id)
        """),
        Valid("""
            from django.core.cache import cache
            def cached(key):
                cache.add(key, compute(), 300)  # a memo, not a lock
                cache.delete(key)
            def block(user):
                cache.delete(f"block:{user}")
        """),
        Valid("""
            import redis.asyncio as aioredis
            r = aioredis.Redis()
            release = r.register_script("return 1")
            async def f(lock_key, token):
                if await r.set(lock_key, token, nx=True, px=5000):
                    await release(keys=[lock_key], args=[token])
        """),
        Valid("""
            import redis
            r = redis.Redis()
            def dedup(msg_id):
                if not r.set(f"seen:{msg_id}", 1, nx=True, ex=3600):
                    return
                handle(msg_id)
            def reset(msg_id):
                r.delete(f"seen:{msg_id}")
        """),
        Valid("""
            import redis
            r = redis.Redis()
            def unlock(doc_id, user):
                key = f"doc:{doc_id}:lock"
                if r.get(key) == user:
                    r.delete(key)
        """),
        Valid("""
            class Store:
                def delete(self, key): ...
            store = Store()
            def f():
                store.delete("lock:x")
        """),
        Valid("""
            # file: stores.py
            from django.core.cache import cache
            def lock_store():
                return {"default": cache}  # a dict of caches, not a cache
            # file: tasks.py
            from stores import lock_store
            def release(lock_id):
                lock_store().delete(lock_id)
        """),
        Valid("""
            # file: conn.py
            import redis
            def get_lock_client():
                return Wrapper(redis.Redis())  # a project class: unknown
            # file: tasks.py
            from conn import get_lock_client
            def release_lock(lock_id):
                get_lock_client().delete(lock_id)
        """),
        # a key another method takes, reset by ``__exit__`` (a marker, not a
        # lock); a helper given a key its caller did not take
        Valid("""
            import redis
            class Seen:
                def __init__(self):
                    self.r = redis.Redis()
                def __exit__(self, *exc):
                    self.r.delete("seen:batch")
                def mark(self):
                    return self.r.set("seen:batch", 1, nx=True, ex=60)
        """),
        Valid("""
            import redis
            class Cache:
                def __init__(self):
                    self.r = redis.Redis()
                def refresh(self, name):
                    key = f"page:{name}"
                    self._drop(key)
                def _drop(self, key):
                    self.r.delete(key)
        """),
    )
    INVALID = (
        # the app's limit is longer than the lock's TTL; or a worker raises it
        Invalid(_APP_LIMITED.replace("LIMIT", "7200"), message="plain `delete` of `key`"),
        Invalid(_APP_LIMITED.replace("LIMIT", "1800") + """
            # file: Procfile
            worker: celery -A proj worker --time-limit=7200
            """, message="plain `delete` of `key`"),
        Invalid("""
            # the lock expires before the task's hard limit: a slow run outlives it
            from celery import shared_task
            from django.core.cache import cache
            @shared_task(time_limit=3600, soft_time_limit=3000)
            def purge(pk):
                lock_key = f"purge:{pk}"
                if not cache.add(lock_key, True, timeout=600):
                    return
                try:
                    work(pk)
                finally:
                    cache.delete(lock_key)
        """, count=1),
        # a client made by a project subclass of redis.StrictRedis, through
        # its classmethod factory
        Invalid("""
            import redis
            class AppRedis(redis.StrictRedis):
                @classmethod
                def from_settings(cls):
                    return cls(host="localhost", port=6379, db=0)
            class AccountLock:
                def __init__(self, account_id):
                    self.client = AppRedis.from_settings()
                    self.key = f"lock:account:{account_id}"
                def acquire(self):
                    return self.client.set(self.key, 1, nx=True, ex=60)
                def release(self):
                    self.client.delete(self.key)
        """, message="plain `delete` of `self.key`", at="13:9"),
        # a context manager's __enter__ takes the key its __exit__ deletes
        Invalid("""
            import redis
            class Guard:
                def __init__(self, name):
                    self.r = redis.Redis()
                    self.name = name
                def __enter__(self):
                    if not self.r.set(self.name, 1, nx=True, ex=60):
                        raise RuntimeError("busy")
                    return self
                def __exit__(self, *exc):
                    self.r.delete(self.name)
        """, at="11:9"),
        # a key computed by a helper method, taken, and passed to another method that deletes it
        Invalid("""
            import uuid
            import redis
            class Job:
                def __init__(self):
                    self.r = redis.Redis()
                def _lock_key(self, name):
                    return f"job:{name}"
                def run(self, name):
                    key = self._lock_key(name)
                    if self.r.set(key, str(uuid.uuid4()), nx=True, ex=60):
                        try:
                            work(name)
                        finally:
                            self._drop(key)
                def _drop(self, key):
                    self.r.delete(key)
        """, message="`run()` takes as a lock and passes here"),
        Invalid("""
            # file: conn.py
            import redis
            redis_client = redis.StrictRedis()
            # file: locks.py
            from conn import redis_client
            def acquire_lock(key, expire=30):
                return redis_client.set(key, "1", nx=True, ex=expire)
            def release_lock(key):
                redis_client.delete(key)
        """, message="`acquire_lock()` of this module takes as a lock"),
        Invalid("""
            # file: settings/__init__.py
            # file: settings/redis.py
            import redis
            def redis_instance():
                if SSL:
                    ri = redis.Redis(host="h", ssl=True)
                else:
                    ri = redis.Redis.from_url("redis://")
                return ri
            # file: tasks.py
            from settings.redis import redis_instance
            def acquire_lock(lock_id, expire_time=300):
                redis_client = redis_instance()
                return redis_client.set(lock_id, "true", nx=True, ex=expire_time)
            def release_lock(lock_id):
                redis_client = redis_instance()
                redis_client.delete(lock_id)
        """, at="7:5", message="named as a lock"),
        Invalid("""
            # file: utils/__init__.py
            # file: utils/redis.py
            import redis
            _client = None
            def get_redis():
                global _client
                if _client is None:
                    _client = redis.StrictRedis()
                return _client
            redis_client = get_redis()
            # file: tasks.py
            from utils import redis as r
            from utils.redis import redis_client
            def sync(account):
                if r.get_redis().set(f"sync:{account}", 1, nx=True, ex=60):
                    work(account)
                    redis_client.delete(f"sync:{account}")
        """, message="was taken with `set`"),
        Invalid("""
            # file: locking.py
            from django.core.cache import caches
            class Locks:
                lock_cache = caches["locks"]
            # file: tasks.py
            from locking import Locks
            def nightly():
                if Locks.lock_cache.add("nightly-lock", 1, 600):
                    report()
                    Locks.lock_cache.delete("nightly-lock")
        """, message="Django cache"),
        Invalid("""
            import uuid
            import redis
            r = redis.Redis()
            def charge(order_id):
                lock_key = f"lock:charge:{order_id}"
                token = str(uuid.uuid4())
                if not r.set(lock_key, token, nx=True, ex=30):
                    return
                try:
                    do_charge(order_id)
                finally:
                    r.delete(lock_key)
            """,
            fixed="""
            import uuid
            import redis
            r = redis.Redis()
            def charge(order_id):
                lock_key = f"lock:charge:{order_id}"
                token = str(uuid.uuid4())
                if not r.set(lock_key, token, nx=True, ex=30):
                    return
                try:
                    do_charge(order_id)
                finally:
                    r.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end", 1, lock_key, token)
            """,
        ),
        Invalid(
            """
            import redis.asyncio as r
            from uuid import uuid4 as new_id
            client = r.Redis()
            async def sync(account):
                me = new_id().hex
                if await client.set(f"sync:{account}", me, nx=True, ex=60):
                    await sync_account(account)
                    await client.unlink(f"sync:{account}")
            """,
            fixed="""
            import redis.asyncio as r
            from uuid import uuid4 as new_id
            client = r.Redis()
            async def sync(account):
                me = new_id().hex
                if await client.set(f"sync:{account}", me, nx=True, ex=60):
                    await sync_account(account)
                    await client.eval("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end", 1, f"sync:{account}", me)
            """,
        ),
        Invalid(
            """
            from celery import shared_task
            from django.core.cache import cache
            @shared_task(bind=True)
            def create_runs(self, contract_id):
                lock_key = f"create_runs_lock:{contract_id}"
                if not cache.add(lock_key, self.request.id, timeout=3600):
                    return
                try:
                    create(contract_id)
                finally:
                    cache.delete(lock_key)
        """, fixed=None),
        Invalid("""
            from django_redis import get_redis_connection
            def acquire(job):
                con = get_redis_connection("default")
                return con.setnx(f"job:{job}", 1)
            def release(job):
                con = get_redis_connection("default")
                con.delete(f"job:{job}")
        """, fixed=None),
        Invalid("""
            from redis import StrictRedis as SR
            from celery import Task
            class Import(Task):
                def __init__(self):
                    self.redis = SR()
                def run(self, feed):
                    try:
                        fetch(feed)
                    finally:
                        self.redis.delete("import-lock")
        """, fixed=None),
        Invalid("""
            from django.core.cache import caches
            LOCK_ID = "nightly-report"
            def nightly():
                if caches["locks"].add(LOCK_ID, 1, 600):
                    try:
                        report()
                    finally:
                        caches["locks"].delete(LOCK_ID)
        """, fixed=None),
    )

    @classmethod
    def check_project(cls, project) -> Iterable[Finding]:
        """Its findings on the result backend's client, when that is Redis
        (``domain/celeryconf/conditions.py``)."""
        from ..domain.celeryconf.conditions import deferred_findings

        return deferred_findings(project, cls.CODE)

    def visit_Call(self, node: cst.Call) -> None:
        take = lock_take(node, self.ctx)
        if take is not None:
            self.note_take(node, take)
            return
        self.note_pass(node)
        stored = receiver(node, _STORE)
        if stored is not None and client_kind(stored[1], self.ctx, conditional=True) is not None:
            self.note_store(node, stored[0])
            return
        found = receiver(node, RELEASE_METHODS)
        if found is None or has_star(node) or not node.args:
            return
        kind = client_kind(found[1], self.ctx, conditional=True)
        if kind is not None and not any(compares_clock(test, self.ctx) for test in self.guards):
            self.note_delete(node, kind)

    def leave_Module(self, original_node: cst.Module) -> None:
        reported: set[int] = set()
        for d in self.deletes:
            how = self.why_lock(d)
            if id(d.call) in reported or how is None:
                continue
            reported.add(id(d.call))
            when = {"time_limit_over": d.app_limited, "app": "*"} if d.app_limited is not None else None
            self.report(d.call, release_message(d, how), d.fix, when)
