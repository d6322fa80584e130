from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..domain.calls import arg, code_of, given, has_star, with_keyword
from ..domain.clients import CACHE, CACHE_ALIAS, LOCK_CLASSES, REDIS, REDIS_IMPORT_NEEDLE, cache_call, client_kind, receiver
from ..domain.guards import Blocks
from ..domain.locks import expire_statement, key_says_lock, setnx_as_set
from ..domain.values import NONE, evaluate
from ..rule import All, Fix, Invalid, Option, RemoveLines, Replace, Rule, Valid


@dataclass
class _Candidate:
    call: cst.Call
    key: str | None
    message: str
    lockish: bool
    fix: Fix | None


@dataclass
class _Scope:
    candidates: list[_Candidate] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)
    # key -> (statement, expire call, whether the statement can be deleted)
    expires: dict[str, list[tuple[cst.SimpleStatementLine, cst.Call, bool]]] = field(default_factory=dict)


class LockWithoutTtl(Blocks, Rule):
    """
    ## What it does
    Finds Redis and cache locks that never expire:

    - `SET key value NX` without `ex`/`px`/`exat`/`pxat` (keyword or
      positional), on a redis-py client, sync or `redis.asyncio`, or a
      django-redis cache with `timeout=None`;
    - `setnx(...)`, even when an `expire(...)` follows, because the two
      commands are not atomic;
    - `client.lock(name)` and `Lock(client, name)` (redis-py) and
      django-redis `cache.lock(name)` without `timeout`;
    - Django `cache.add(key, value, None)` or `timeout=None`.

    Clients are recognised by how they were made or imported
    (`redis.Redis(...)`, `Redis.from_url(...)`, `StrictRedis`,
    `redis.asyncio`, `get_redis_connection()`, `django.core.cache.cache`,
    `caches[...]`), also through aliases and `self.` attributes, never by a
    variable name alone.

    A `SET NX`, `setnx` or `cache.add` is treated as a lock when the key (or
    the variable that holds it) has lock, mutex or semaphore as a word
    (`lock_key`, `"import-lock"`, `LOCK_ID`; not `block`, `clock` or an
    account `lockout`), when the same function deletes the key again (a release), or,
    for `setnx`, when an `expire` follows. A `SET NX` that is never released
    is a permanent "done" marker, a legitimate idempotency pattern, and is
    not reported.

    ## Why is this bad?
    A worker that takes the lock and then dies (OOM kill, deploy, lost
    node) never releases it. Without a TTL the key stays forever and every
    later run of the task waits or skips: the work silently stops. `SETNX`
    followed by `EXPIRE` has the same hole, because a crash between the two
    commands leaves a key without TTL.

    ## Example
    ```python
    import redis

    r = redis.Redis()

    def sync_account(account_id):
        lock_key = f"lock:sync:{account_id}"
        if r.set(lock_key, "1", nx=True):
            try:
                do_sync(account_id)
            finally:
                r.delete(lock_key)
    ```

    Use instead:
    ```python
    import redis

    r = redis.Redis()

    def sync_account(account_id):
        lock = r.lock(f"lock:sync:{account_id}", timeout=600)
        if lock.acquire(blocking=False):  # skip quietly when another worker holds it
            try:
                do_sync(account_id)
            finally:
                lock.release()
    ```

    ## Fix safety
    The fix is unsafe: it inserts the configured `lock-ttl` (default 60
    seconds) as `ex=`/`timeout=`, and turns `setnx` + `expire` into one
    `set(..., nx=True, ex=...)` (keeping the `expire` TTL). A TTL shorter than
    the work lets a second worker in while the first still runs (CL205), so
    review the value.

    ## References
    - [Redis SET command (NX, EX)](https://redis.io/docs/latest/commands/set/)
    - [redis-py `Lock`](https://redis.readthedocs.io/en/stable/lock.html)
    - [Celery: ensuring a task is only executed one at a time](https://docs.celeryq.dev/en/stable/tutorials/task-cookbook.html)
    """

    CODE = "CL203"
    NAME = "lock-without-ttl"
    SEVERITY = "error"
    SUMMARY = "A Redis or cache lock without an expiry: a crashed worker holds it forever"
    FIX = "unsafe"
    TAGS = ("locks", "redis")
    OPTIONS = (Option("lock-ttl", "integer-seconds", 60, "the TTL in seconds the fix inserts"),)
    # Every finding needs a client imported in this file (see clients.py), and
    # a Django cache lock a take on the cache: add, lock, or set with nx.
    REQUIRES = (
        REDIS_IMPORT_NEEDLE,
        All((b"core.cache", (
            cache_call(rb"add|lock"),
            All((cache_call(rb"set"), b"nx")),
            All((CACHE_ALIAS, (b".lock(", b".add(", b"nx"))),
        ))),
    )

    VALID = (
        Valid("""
            import redis
            r = redis.Redis()
            def f(key):
                if r.set(f"lock:{key}", "1", nx=True, ex=60):
                    r.delete(f"lock:{key}")
        """),
        Valid("""
            from redis import Redis as R
            client = R.from_url("redis://")
            def f(name):
                with client.lock(name, timeout=30):
                    pass
        """),
        Valid("""
            from django.core.cache import cache
            def f(lock_id):
                if cache.add(lock_id, "x", 600):
                    cache.delete(lock_id)
        """),
        Valid("""
            import redis
            r = redis.Redis()
            def once(order_id):
                # a permanent "done" marker, never released: not a lock
                if r.set(f"sent:{order_id}", 1, nx=True):
                    send(order_id)
        """),
        Valid("""
            class Registry:
                def add(self, key, value, timeout=None): ...
            lock_registry = Registry()
            lock_registry.add("lock", 1, None)
            def f(thing):
                thing.set("lock", 1, nx=True)
        """),
        Valid("""
            import redis.asyncio as aioredis
            r = aioredis.Redis()
            async def f(lock_key):
                if await r.set(lock_key, "1", nx=True, px=5000):
                    await r.delete(lock_key)
        """),
        Valid("""
            from redis.lock import Lock
            import redis
            def f():
                Lock(redis.Redis(), "name", 30)
        """),
    )
    INVALID = (
        Invalid(
            """
            import redis
            r = redis.Redis()
            def f(key):
                lock_key = f"lock:{key}"
                if r.set(lock_key, "1", nx=True):
                    r.delete(lock_key)
            """,
            fixed="""
            import redis
            r = redis.Redis()
            def f(key):
                lock_key = f"lock:{key}"
                if r.set(lock_key, "1", nx=True, ex=60):
                    r.delete(lock_key)
            """,
        ),
        Invalid(
            """
            import redis as rds
            conn = rds.StrictRedis(host="localhost")
            def f(job):
                if conn.setnx(job, 1):
                    conn.expire(job, 300)
                    work()
            """,
            fixed="""
            import redis as rds
            conn = rds.StrictRedis(host="localhost")
            def f(job):
                if conn.set(job, 1, nx=True, ex=300):
                    work()
            """,
        ),
        Invalid(
            """
            from redis import Redis as R
            class Worker:
                def __init__(self):
                    self.redis = R.from_url("redis://")
                def run(self):
                    with self.redis.lock("report"):
                        pass
            """,
            fixed="""
            from redis import Redis as R
            class Worker:
                def __init__(self):
                    self.redis = R.from_url("redis://")
                def run(self):
                    with self.redis.lock("report", timeout=60):
                        pass
            """,
        ),
        Invalid(
            """
            from django.core.cache import cache
            def f(order_id):
                if cache.add(f"lock-{order_id}", "1", None):
                    cache.delete(f"lock-{order_id}")
            """,
            fixed="""
            from django.core.cache import cache
            def f(order_id):
                if cache.add(f"lock-{order_id}", "1", 60):
                    cache.delete(f"lock-{order_id}")
            """,
        ),
        Invalid(
            """
            import redis.asyncio
            from redis.asyncio.lock import Lock
            client = redis.asyncio.Redis()
            async def f():
                async with Lock(client, "nightly"):
                    pass
            """,
            fixed="""
            import redis.asyncio
            from redis.asyncio.lock import Lock
            client = redis.asyncio.Redis()
            async def f():
                async with Lock(client, "nightly", timeout=60):
                    pass
            """,
        ),
        Invalid(
            """
            from django_redis import get_redis_connection
            def f(key):
                con = get_redis_connection("default")
                con.set(key, 1, None, None, True)
                con.delete(key)
            """,
            fixed="""
            from django_redis import get_redis_connection
            def f(key):
                con = get_redis_connection("default")
                con.set(key, 1, 60, None, True)
                con.delete(key)
            """,
        ),
        Invalid(
            """
            from django.core.cache import caches
            def f():
                with caches["locks"].lock("import-lock"):
                    pass
            """,
            fixed="""
            from django.core.cache import caches
            def f():
                with caches["locks"].lock("import-lock", timeout=60):
                    pass
            """,
            config={"lock-ttl": 60},
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.scopes: list[_Scope] = [_Scope()]
        self.ttl = str(self.option("lock-ttl"))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(_Scope())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._flush(self.scopes.pop())

    def leave_Module(self, original_node: cst.Module) -> None:
        self._flush(self.scopes.pop())

    def _flush(self, scope: _Scope) -> None:
        for c in scope.candidates:
            expired = c.call.func.attr.value == "setnx" and c.key in scope.expires
            if c.lockish or c.key in scope.deleted or expired:
                fix = self._setnx_fix(c.call, scope.expires[c.key]) if expired else c.fix
                self.report(c.call, c.message, fix)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        call = expire_statement(node)
        if call is not None:
            removable = bool(self.blocks) and len(self.blocks[-1].body) > 1
            self.scopes[-1].expires.setdefault(code_of(call.args[0].value), []).append((node, call, removable))

    def visit_Call(self, node: cst.Call) -> None:
        if has_star(node):
            return
        if self.ctx.imported_name(node.func) in LOCK_CLASSES:
            if not given(arg(node, "timeout", 2), self.ctx):
                self.report(node, "redis-py `Lock` without `timeout`: a worker that dies holding it blocks the lock forever",
                            self._add_kw_fix(node, "timeout"))
            return
        found = receiver(node, {"set", "setnx", "lock", "add", "delete", "unlink"})
        if found is None:
            return
        method, target = found
        if method in ("delete", "unlink"):
            for a in node.args:
                self.scopes[-1].deleted.add(code_of(a.value))
            return
        kind = client_kind(target, self.ctx)
        if kind is None:
            return
        if method == "lock":
            if not given(arg(node, "timeout", 1 if kind == REDIS else None), self.ctx):
                what = "`lock()`" if kind == REDIS else "django-redis `cache.lock()`"
                self.report(node, f"{what} without `timeout`: a worker that dies holding it blocks the lock forever",
                            self._add_kw_fix(node, "timeout"))
        elif method == "setnx" and kind == REDIS:
            self._candidate(node, "`setnx` sets no expiry (and an `expire` after it is not atomic with it): a worker that dies holding the lock blocks it forever",
                            Fix(f"Use `set(..., nx=True, ex={self.ttl})`", (Replace(node, setnx_as_set(node, "ex", self.ttl)),)))
        elif method == "set":
            self._set(node, kind)
        elif method == "add" and kind == CACHE:
            timeout = arg(node, "timeout", 2)
            if timeout is not None and evaluate(timeout.value, self.ctx) is NONE:
                self._candidate(node, "`cache.add(..., timeout=None)` takes a lock that never expires: a worker that dies holding it blocks it forever",
                                self._replace_value_fix(node, timeout, "timeout"))

    def _set(self, node: cst.Call, kind: str) -> None:
        if kind == REDIS:
            nx = arg(node, "nx", 4)
            if nx is None or evaluate(nx.value, self.ctx) is not True:
                return
            ttls = [arg(node, "ex", 2), arg(node, "px", 3), arg(node, "exat", 9), arg(node, "pxat", 10)]
            if any(given(t, self.ctx) for t in ttls):
                return
            ex = ttls[0]
            fix = self._replace_value_fix(node, ex, "ex") if ex is not None else self._add_kw_fix(node, "ex")
            self._candidate(node, "`SET ... NX` without `ex`/`px`: a lock that never expires, so a worker that dies holding it blocks it forever", fix)
        else:  # django-redis cache.set(key, value, timeout=None, nx=True)
            nx = arg(node, "nx", None)
            timeout = arg(node, "timeout", 2)
            if nx is None or evaluate(nx.value, self.ctx) is not True or timeout is None:
                return
            if evaluate(timeout.value, self.ctx) is NONE:
                self._candidate(node, "`cache.set(..., timeout=None, nx=True)` takes a lock that never expires",
                                self._replace_value_fix(node, timeout, "timeout"))

    def _candidate(self, node: cst.Call, message: str, fix: Fix | None) -> None:
        key = node.args[0].value if node.args else None
        text, lockish = (code_of(key), key_says_lock(key, self.ctx)) if key is not None else (None, False)
        self.scopes[-1].candidates.append(_Candidate(node, text, message, lockish, fix))

    def _add_kw_fix(self, node: cst.Call, keyword: str) -> Fix:
        return Fix(f"Add `{keyword}={self.ttl}`", (Replace(node, with_keyword(node, keyword, self.ttl)),))

    def _replace_value_fix(self, node: cst.Call, a: cst.Arg, keyword: str) -> Fix:
        return Fix(f"Set `{keyword}` to {self.ttl} seconds", (Replace(a.value, cst.Integer(self.ttl)),))

    def _setnx_fix(self, node: cst.Call, expires: list[tuple[cst.SimpleStatementLine, cst.Call, bool]]) -> Fix:
        stmt, expire, removable = expires[0]
        ttl = code_of(expire.args[1].value) if len(expire.args) > 1 else self.ttl
        keyword = "px" if expire.func.attr.value == "pexpire" else "ex"
        edits = (Replace(node, setnx_as_set(node, keyword, ttl)), *((RemoveLines(stmt),) if removable else ()))
        return Fix(f"Replace `setnx` + `expire` with one `set(..., nx=True, {keyword}={ttl})`", edits)
