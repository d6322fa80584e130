from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..domain.calls import code_of, has_star
from ..domain.clients import CACHE, CACHE_ALIAS, REDIS, REDIS_IMPORT_NEEDLE, cache_call, client_kind, receiver
from ..domain.guards import IfGuards, compares_clock
from ..domain.locks import (
    RELEASE_METHODS, LockTake, compare_and_delete, handles_locks, key_says_lock, key_texts, lock_take, stable_texts,
)
from ..domain.values import evaluate
from ..rule import All, Fix, Invalid, Replace, Rule, Valid


@dataclass
class _Scope:
    takes: dict[str, LockTake] = field(default_factory=dict)  # key text -> take, in source order


@dataclass
class _Delete:
    call: cst.Call
    key: cst.BaseExpression
    texts: tuple[str, ...]
    stable: tuple[str, ...]
    named: bool
    handler: bool  # the deleting function's name says it handles locks
    take: LockTake | None  # the lock this function took on the same key before
    fix: Fix | None


class UnsafeLockRelease(IfGuards, Rule):
    """
    ## What it does
    Finds locks released with a plain `delete`/`unlink` (Redis `DEL`) on a
    Redis client (redis-py, `redis.asyncio`, django-redis
    `get_redis_connection()`) or a Django cache, instead of a
    compare-and-delete. A deleted key is a lock when

    - the same function took it before with `set(..., nx=True)`, `setnx`,
      `cache.add(...)` (whose result is used), `lock(...)` or `Lock(...)`;
    - another function of the module took the same key expression (not a
      bare variable, whose name means nothing outside its function), and
      one of the two functions is named for lock handling (`acquire`,
      `release`, `unlock`, `lock`): a "seen" marker taken in one function
      and reset in another is not a lock;
    - or its name says lock (`lock_key`, `"import-lock"`, `LOCK_ID`; not
      `block` or `clock`).

    redis-py `Lock.release()` and a Lua compare-and-delete
    (`eval`/`evalsha`/`register_script`) are correct and never reported. A
    delete inside `if monotonic() < deadline:` (the Celery task cookbook's
    pattern for the Django cache, which has no compare-and-delete) is not
    reported either.

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
    NAME = "unsafe-lock-release"
    SEVERITY = "warning"
    SUMMARY = "A lock released with a plain delete: a worker whose lock expired deletes the next holder's lock"
    FIX = "sometimes"
    HINT = "delete the key only if it still holds this worker's token (a Lua compare-and-delete, or redis-py Lock.release())"
    TAGS = ("locks", "redis")
    # Every finding needs a client imported in this file (see clients.py), a
    # delete, and a lock: a take (set(..., nx=True) or with nx positional,
    # setnx, add, lock(), Lock()) or a key named like one (lock, mutex,
    # semaphore, in any of their spellings).
    REQUIRES = (All((
        (REDIS_IMPORT_NEEDLE, All((b"core.cache", (cache_call(rb"delete"), *CACHE_ALIAS)))),
        tuple(m.encode() for m in sorted(RELEASE_METHODS)),
        (b"nx", b"set(", b".add(", b"lock", b"Lock", b"LOCK", b"utex", b"UTEX", b"emaphore", b"EMAPHORE"),
    )),)

    VALID = (
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
            class Store:
                def delete(self, key): ...
            store = Store()
            def f():
                store.delete("lock:x")
        """),
    )
    INVALID = (
        Invalid(
            """
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
            """,
            fixed=None,
        ),
        Invalid(
            """
            from django_redis import get_redis_connection
            def acquire(job):
                con = get_redis_connection("default")
                return con.setnx(f"job:{job}", 1)
            def release(job):
                con = get_redis_connection("default")
                con.delete(f"job:{job}")
            """,
            fixed=None,
        ),
        Invalid(
            """
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
            """,
            fixed=None,
        ),
        Invalid(
            """
            from django.core.cache import caches
            LOCK_ID = "nightly-report"
            def nightly():
                if caches["locks"].add(LOCK_ID, 1, 600):
                    try:
                        report()
                    finally:
                        caches["locks"].delete(LOCK_ID)
            """,
            fixed=None,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scopes: list[_Scope] = [_Scope()]
        self.module_keys: dict[str, bool] = {}  # stable key text -> taken in a lock-handling function
        self.deletes: list[_Delete] = []
        self.statements: set[int] = set()  # ids of calls whose result is discarded

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(_Scope())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value.expression if isinstance(node.value, cst.Await) else node.value
        self.statements.add(id(value))

    def visit_Call(self, node: cst.Call) -> None:
        take = lock_take(node, self.ctx)
        if take is not None:
            if take.key is not None and (take.always or id(node) not in self.statements):
                for text in key_texts(take.key, self.ctx):
                    self.scopes[-1].takes.setdefault(text, take)
                for text in stable_texts(take.key, self.ctx):
                    self.module_keys[text] = self.module_keys.get(text, False) or self._handler()
            return
        found = receiver(node, RELEASE_METHODS)
        if found is None or has_star(node) or not node.args:
            return
        kind = client_kind(found[1], self.ctx)
        if kind is None or any(compares_clock(test, self.ctx) for test in self.guards):
            return
        for a in node.args:
            if a.keyword is not None:
                continue
            texts = key_texts(a.value, self.ctx)
            take = next((self.scopes[-1].takes[t] for t in texts if t in self.scopes[-1].takes), None)
            fix = self._fix(node, a.value, take) if kind == REDIS and len(node.args) == 1 else None
            self.deletes.append(_Delete(node, a.value, texts, stable_texts(a.value, self.ctx),
                                        key_says_lock(a.value, self.ctx), self._handler(), take, fix))

    def leave_Module(self, original_node: cst.Module) -> None:
        reported: set[int] = set()
        for d in self.deletes:
            if id(d.call) in reported:
                continue
            if d.take is not None:
                how = f"was taken with `{d.take.method}` in this function"
            elif any(t in self.module_keys and (d.handler or self.module_keys[t]) for t in d.stable):
                how = "is taken as a lock elsewhere in this module"
            elif d.named:
                how = "is named as a lock"
            else:
                continue
            reported.add(id(d.call))
            cache = " (the Django cache has no compare-and-delete: use a Redis lock for this)" if self._on_cache(d) else ""
            self.report(d.call, f"plain `{d.call.func.attr.value}` of `{code_of(d.key)}`, which {how}: if the lock "
                                f"expired while this worker ran, this deletes the next holder's lock{cache}", d.fix)

    def _handler(self) -> bool:
        name = self.ctx.function.name.value if self.ctx.function else ""
        return handles_locks(name)

    def _on_cache(self, d: _Delete) -> bool:
        return client_kind(d.call.func.value, self.ctx) == CACHE

    def _fix(self, node: cst.Call, key: cst.BaseExpression, take: LockTake | None) -> Fix | None:
        if take is None or take.client != REDIS or not isinstance(take.token, cst.Name):
            return None
        if evaluate(take.token, self.ctx) is not None:
            return None  # a constant is not a token: every worker stores the same
        return Fix("Release with a compare-and-delete script", (Replace(node, compare_and_delete(node, key, take.token)),))
