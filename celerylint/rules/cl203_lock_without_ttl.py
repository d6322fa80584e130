from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..domain.calls import arg, code_of, given, has_star
from ..domain.clients import (
    BACKEND_CLIENT_NEEDLE, CACHE_ALIAS, CACHE_HELPER, REDIS, REDIS_NEEDLES, cache_call, client_kind, receiver,
)
from ..domain.lock_syntax import LOCK_CLASSES
from ..domain.lock_expiry import TEST_PATHS_EXCLUDED, PendingTakes, add_keyword_fix, redis_lock_take, unexpiring_take
from ..rule import All, Finding, Invalid, Option, Rule, Valid


# methods only a Redis client has (no Django cache backend does): the
# receiver is one (``self.conn.eval(RELEASE, 1, key, token)``)
_REDIS_ONLY = frozenset({"eval", "evalsha", "pexpire"})


def _two_positional(node: cst.Call) -> bool:
    return len(node.args) == 2 and all(a.keyword is None and not a.star for a in node.args)


# a client's counter commands: a key they change is a counter (or a semaphore)
_COUNTS = frozenset({"incr", "decr", "incrby", "decrby"})
# the methods CL203 looks at (``get`` only where a function may be named for taking)
_WATCHED = frozenset({"set", "setnx", "lock", "add", "delete", "unlink", *_REDIS_ONLY, *_COUNTS})
_WATCHED_READS = _WATCHED | {"get"}
# what a lock object made only to let go of a lock is used for (redis-py's
# ``Lock``; python-redis-lock's ``get_owner_id`` and ``reset``)
_LETTING_GO = frozenset({"release", "do_release", "locked", "owned", "get_owner_id", "reset"})


class _Uses(cst.CSTVisitor):
    """How often a name occurs in a function, and how often as the object
    of one of ``_LETTING_GO``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.uses = 0
        self.letting_go = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.uses += node.value == self.name

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value == self.name and node.attr.value in _LETTING_GO:
            self.letting_go += 1
        self.uses -= node.attr.value == self.name  # ``cache.lock``: an attribute of that name, not the name


def _only_lets_go(function: cst.FunctionDef, name: str) -> bool:
    """``name`` (bound once, to a new ``Lock``) is only released or asked
    about in ``function``: ``LuaLock(r, key).do_release(token)`` takes nothing."""
    uses = _Uses(name)
    function.body.visit(uses)
    return uses.letting_go > 0 and uses.uses == uses.letting_go + 1  # + the binding


class LockWithoutTtl(PendingTakes, Rule):
    """
    ## What it does
    Finds Redis and cache locks that never expire:

    - `SET key value NX` without `ex`/`px`/`exat`/`pxat` (keyword or
      positional), on a redis-py client, sync or `redis.asyncio`, or a
      django-redis cache with `timeout=None`;
    - `setnx(...)`, even when an `expire(...)` follows, because the two
      commands are not atomic (unless both are queued on one pipeline made
      with redis-py's default `transaction=True`, which runs them in one
      MULTI/EXEC);
    - `client.lock(name)` and `Lock(client, name)` (redis-py) and
      django-redis `cache.lock(name)` without `timeout` (python-redis-lock's
      `cache.lock(name)` without `expire` when a `CACHES` entry of the project
      names its backend, `redis_lock.django_cache.RedisCache`); not a lock
      object that the function only releases or asks about, bound to a name
      (`lock = Lock(r, key); lock.do_release(token)`, `lock = cache.lock(key,
      id=token)` then `lock.get_owner_id()`) or not (`Lock(r, key).locked()`):
      it takes nothing;
    - Django `cache.add(key, value, None)` or `timeout=None`.

    Clients are recognised by how they were made or imported
    (`redis.Redis(...)`, `Redis.from_url(...)`, `StrictRedis`,
    `redis.asyncio`, `get_redis_connection()`, Valkey's forks of these
    (`valkey.Valkey(...)`, `get_valkey_connection()`), `django.core.cache.cache`,
    `caches[...]`), also through aliases and `self.` attributes, or by a
    project helper in any module: a function (also `lru_cache`d, or a lazy
    `global` singleton) that returns one, a module or class attribute that
    holds one, a property of the class (`@property`, `cached_property`)
    annotated `-> redis.Redis` or whose every `return` gives a client
    (`self.redis.set(...)`), or by a parameter's annotation (`r: redis.Redis`,
    `Optional["Redis"]`, Django's `BaseCache`). The result backend's client
    (`self.app.backend.client` in a bound task, `app.backend.client`,
    `current_app.backend.client`) is a Redis client when the app's
    `result_backend` is a `redis://`, `rediss://` or `sentinel://` URL: such
    a finding is judged in the project phase, once that setting is read.
    A Redis helper counts in a
    file that mentions redis (its module, its name), a cache helper where
    it is called on directly (`get_cache().add(...)`). Never by a variable name alone, nor by an
    `nx=True` keyword alone (django-redis and project wrappers take it too).

    A `SET NX`, `setnx` or `cache.add` is treated as a lock when the key (or
    the variable that holds it) has lock, mutex or semaphore as a word
    (`lock_key`, `"import-lock"`, `LOCK_ID`; not `block`, `clock` or an
    account `lockout`), when the value is a fresh token (`uuid4()`,
    `secrets.token_hex()`), when the function is named for taking
    (`acquire`, `lock`, `claim`, `take`, `grab`; unless the module reads
    the key with `get` somewhere and never deletes it: then it is a marker,
    `claim_signup_bonus`), when a failed take retries
    the task, sleeps or spins (`while not r.set(...)`), when the same
    function deletes the key, or a client deletes the same key expression
    anywhere in the module (also through a module function that deletes its
    parameter: `release(f"job:{id}")`), or, for `setnx`, when an `expire`
    follows. `setnx(key, value)` on an object celerylint cannot trace to
    a client (`self.client` given to `__init__`, a parameter) is a Redis
    client's all the same: no other library has that method with that
    signature; a `delete` on the same receiver expression in the module
    then counts as its release. So do `eval`, `evalsha` and `pexpire`,
    which no Django cache has: a `set(..., nx=True)` without expiry on the
    same receiver expression anywhere in the module is then a Redis take,
    judged by the evidence above (`acquire` sets the key, `release` runs a
    compare-and-delete script). `set(..., nx=True)` on such an object is no
    evidence by itself (django-redis caches take `nx` too, and their default
    timeout expires). A
    `SET NX` that stores no token, is never deleted and is not retried is
    a permanent "done" marker, a legitimate idempotency pattern, and is not
    reported, even when a failure raises. `cache.add` needs exactly the same
    evidence as `SET NX` (its `timeout=None` alone proves nothing), and a
    take whose key the same function then `incr`s initialises a counter
    (`cache.add(key, 0, None)` then `cache.incr(key)`: a rate limit, a
    tally), which is no lock whatever else is said about it, unless the
    function tests what `incr` returns (`cache.incr(key) <= 3`) and the
    module also `decr`s that key: a counting semaphore, taken and released.
    A counter whose `incr` result is discarded is data, even when another
    function `decr`s it (a tally of pending changes). Test files are not
    checked.

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
    seconds, at most ten years) as `ex=`/`timeout=`, and turns `setnx` +
    `expire` into one `set(..., nx=True, ex=...)` (keeping the `expire`
    TTL). A TTL shorter than the work lets a second worker in while the
    first still runs (CL205), and redis-py's `release()` of a lock that
    expired raises `LockNotOwnedError`, so review the value.

    ## References
    - [Redis SET command (NX, EX)](https://redis.io/docs/latest/commands/set/)
    - [redis-py `Lock`](https://redis.readthedocs.io/en/stable/lock.html)
    - [Celery: ensuring a task is only executed one at a time](https://docs.celeryq.dev/en/stable/tutorials/task-cookbook.html)
    """

    CODE = "CL203"
    PROJECT_FACTS = "own"  # its project part judges its deferred findings only
    NAME = "lock-without-ttl"
    SEVERITY = "error"
    SUMMARY = "A Redis or cache lock without an expiry: a crashed worker holds it forever"
    FIX = "unsafe"
    TAGS = ("locks", "redis")
    OPTIONS = (Option("lock-ttl", "ttl", 60, "the TTL in seconds the fix inserts: a positive integer, at most "
                                             "315,360,000 (10 years), well inside what Redis accepts"),)
    # Every finding needs a client imported in this file (see clients.py), and
    # a Django cache lock a take on the cache: add, lock, or set with nx.
    PATHS = TEST_PATHS_EXCLUDED  # a test's lock is a fixture
    GATE = "celerylint.domain.lock_syntax:may_take_without_ttl"
    REQUIRES = (
        *REDIS_NEEDLES, b".setnx(", BACKEND_CLIENT_NEEDLE,
        All((b"core.cache", (
            cache_call(rb"add|lock"),
            All((cache_call(rb"set"), b"nx")),
            All((CACHE_ALIAS, (b".lock(", b".add(", b"nx"))),
        ))),
        All((CACHE_HELPER, (b".lock(", b".add(", b"nx"))),  # a cache from a project helper
    )

    VALID = (
        # setnx and expire queued on one transactional pipeline: a single MULTI/EXEC
        Valid("""
            import redis
            conn = redis.Redis()
            def acquire(key, expire=5):
                pipe = conn.pipeline()
                pipe.setnx(key, "")
                pipe.expire(key, expire)
                return pipe.execute()[0]
            """),
        Valid("""
            import redis
            r = redis.Redis()
            def f(key):
                if r.set(f"lock:{key}", "1", nx=True, ex=60):
                    r.delete(f"lock:{key}")
        """),
        Valid("""
            from redis import Redis as R
            from redis.lock import Lock
            client = R.from_url("redis://")
            def f(name):
                with client.lock(name, timeout=30):
                    pass
                Lock(R(), "name", 30)
        """),
        Valid("""
            from django.core.cache import cache
            def f(lock_id):
                if cache.add(lock_id, "x", 600):
                    cache.delete(lock_id)
        """),
        # a Lock object made only to release a lock taken elsewhere (with its timeout)
        Valid("""
            from redis import Redis
            from redis.exceptions import LockError
            from redis.lock import Lock as LuaLock
            r = Redis()
            def release_lock(lock_name, token):
                lock = LuaLock(r, lock_name)
                try:
                    lock.do_release(token)
                except LockError:
                    pass
        """),
        # a cache lock handle made only to release a lock another function took
        # (jumpserver, python-redis-lock): nothing taken here
        Valid("""
            from django.core.cache import cache
            def release(execution_id, account_id):
                lock = cache.lock(f"change-secret:{account_id}", id=str(execution_id))
                if lock.get_owner_id() == str(execution_id):
                    lock.release()
        """),
        # a Lock made only to ask whether it is held (documentcloud): a GET, nothing taken
        Valid("""
            from redis import Redis
            from redis.lock import Lock
            r = Redis()
            def may_retry(key):
                return not Lock(r, f"retry:{key}").locked()
        """),
        Valid("""
            import redis
            r = redis.Redis()
            def once(order_id):
                # a permanent "done" marker, never released: not a lock
                if r.set(f"sent:{order_id}", 1, nx=True):
                    send(order_id)
            def mark_sent(order_id):
                # a "done" marker: a constant value, never deleted, a raise on failure
                if not r.set(f"paid:{order_id}", 1, nx=True):
                    raise AlreadySent(order_id)
        """),
        Valid("""
            import redis
            class Registry:
                def add(self, key, value, timeout=None): ...
            lock_registry = Registry()
            thing = redis.Redis()
            lock_registry.add("lock", 1, None)
            def f(thing, registry: Registry):
                thing.set("lock", 1, nx=True)  # a parameter, not the module's client
                registry.add("lock", 1, None)
        """),
        Valid("""
            import redis.asyncio as aioredis
            r = aioredis.Redis()
            async def f(lock_key):
                if await r.set(lock_key, "1", nx=True, px=5000):
                    await r.delete(lock_key)
        """),
        Valid("""
            import uuid
            import redis
            r = redis.Redis()
            def upload(doc):
                name = uuid.uuid4().hex
                r.set(f"upload:{doc}", f"/tmp/{name}.pdf", nx=True)  # a file name, not a token
        """),
        Valid("""
            # file: helpers.py
            from django.core.cache import cache
            def get_cache():
                return {"default": cache}  # a dict, not a cache
            # file: tasks.py
            from helpers import get_cache
            def acquire(lock_id):
                get_cache().add(lock_id, 1, None)
        """),
        # a property the model cannot tell is a Redis client
        Valid("""
            import redis
            from typing import Any
            class Store:
                @property
                def conn(self) -> Any:
                    return self._conn
                @property
                def other(self):
                    conn = make_conn()
                    return conn
                def take(self, name):
                    self.conn.set("lock:" + name, "1", nx=True)
                    return self.other.set("lock:" + name, "1", nx=True)
        """),
    )
    INVALID = (
        # a receiver that runs a Lua script is a Redis client: its
        # set(nx=True) without expiry is a take
        Invalid("""
            RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
            class AccountLock:
                def __init__(self, conn, account_id):
                    self.conn = conn
                    self.key = f"lock:account:{account_id}"
                def acquire(self, token):
                    return self.conn.set(self.key, token, nx=True)
                def release(self, token):
                    return self.conn.eval(RELEASE, 1, self.key, token)
        """, message="never expires", at="7:16"),
        # a property annotated as a Redis client, or returning one
        Invalid("""
            import redis
            class Store:
                @property
                def redis(self) -> redis.Redis:
                    return self._conn
                def take(self, name):
                    return self.redis.set("lock:" + name, "1", nx=True)
        """, message="SET ... NX"),
        Invalid("""
            from functools import cached_property
            import redis
            class Store:
                @cached_property
                def conn(self):
                    return redis.Redis.from_url("redis://localhost")
                def take(self, name):
                    return self.conn.set("lock:" + name, "1", nx=True)
        """, message="SET ... NX"),
        Invalid("""
            import uuid
            import redis
            r = redis.Redis()
            def run(job):
                r.set(f"job:{job}", str(uuid.uuid4()), nx=True)
        """, message="SET ... NX"),
        Invalid("""
            import redis.asyncio as aioredis
            r = aioredis.from_url("redis://")
            async def claim_order(order):
                return await r.set(f"order:{order}", 1, None, None, True)
        """),
        Invalid("""
            from typing import Optional
            import redis
            def acquire(r: Optional["redis.Redis"], key):
                return r.set(key, 1, nx=True)
        """),
        Invalid("""
            import redis
            r = redis.Redis()
            def sync(self, account):
                if not r.set(f"sync:{account}", 1, nx=True):
                    raise self.retry(countdown=5)
        """),
        Invalid("""
            import redis
            r = redis.Redis()
            def start(job):
                return r.set(f"running:{job}", 1, nx=True)
            def finish(job):
                r.delete(f"running:{job}")
        """, at="4:12"),
        Invalid("""
            import redis
            r = redis.Redis()
            def release(key):
                r.delete(key)
            def start(job):
                if r.set(f"job:{job}", 1, nx=True):
                    work(job)
                    release(f"job:{job}")
        """, at="6:8"),
        Invalid("""
            # file: redis_conn.py
            import functools
            import redis
            @functools.lru_cache
            def get_redis():
                return redis.Redis.from_url("redis://")
            # file: tasks.py
            from redis_conn import get_redis
            def acquire_export(export_id):
                return get_redis().set(f"export:{export_id}", 1, nx=True)
        """, at="3:12"),
        Invalid("""
            # file: caching.py
            from django.core.cache import caches
            def locks_cache():
                return caches["locks"]
            # file: tasks.py
            from caching import locks_cache
            def f(lock_id):
                locks_cache().add(lock_id, 1, None)
        """, message="cache.add"),
        Invalid("""
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
            """),
        Invalid("""
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
            """),
        Invalid("""
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
            """),
        Invalid("""
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
            """),
        Invalid("""
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
            """),
        Invalid("""
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
            """),
        Invalid("""
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
        # python-redis-lock's Django cache (MuckRock): its keyword is ``expire``, and
        # django-redis's ``timeout=`` would be a TypeError
        Invalid("""
            # file: proj/__init__.py
            # file: proj/settings.py
            CACHES = {
                "default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://r:6379/1"},
                "lock": {"BACKEND": "redis_lock.django_cache.RedisCache", "LOCATION": "redis://r:6379/2"},
            }
            # file: proj/utils.py
            from django.core.cache import caches
            def refresh():
                with caches["lock"].lock("access_token"):
                    fetch()
            def renew():
                with caches["lock"].lock("renew", expire=30):
                    fetch()
            """,
            fixed="""
            from django.core.cache import caches
            def refresh():
                with caches["lock"].lock("access_token", expire=60):
                    fetch()
            def renew():
                with caches["lock"].lock("renew", expire=30):
                    fetch()
            """,
            config={"lock-ttl": 60}, count=1, message="python-redis-lock's `cache.lock()` without `expire`",
        ),
    )

    VALID += (
        # set(nx=True) on an object nothing shows to be Redis (a Django cache
        # takes nx too): not judged
        Valid("""
            # redis-backed through Django's cache framework
            class AccountLock:
                def __init__(self, conn, account_id):
                    self.conn = conn
                    self.key = f"lock:account:{account_id}"
                def acquire(self):
                    return self.conn.set(self.key, 1, nx=True)
                def release(self):
                    self.conn.delete(self.key)
        """),
        # a counter initialised without expiry, then incremented: no lock
        Valid("""
            from django.core.cache import cache
            def acquire_slot(user_id):
                key = f"lock-attempts:{user_id}"
                cache.add(key, 0, timeout=None)
                return cache.incr(key)
        """),
        Valid("""
            import redis
            r = redis.Redis()
            def take_ticket(queue):
                r.set(f"tickets:{queue}", 0, nx=True)
                return r.incr(f"tickets:{queue}")
        """),
        # a tally kept in the cache: incremented (the result unused) and
        # decremented elsewhere, and deleted when written out: no semaphore
        Valid("""
            from django.core.cache import cache
            def increment_counter(pk, delta=1):
                counter_key = f"counter:{pk}"
                created = cache.add(counter_key, 1, timeout=None)
                if not created:
                    cache.incr(counter_key, delta=delta)
            def decrement_counter(pk, delta=1):
                counter_key = f"counter:{pk}"
                if cache.get(counter_key) is not None:
                    cache.decr(counter_key, delta=delta)
            def commit_counters(pks):
                for pk in pks:
                    counter_key = f"counter:{pk}"
                    save(pk, cache.get(counter_key, 0))
                    cache.delete(counter_key)
        """),
        # a marker read later and never deleted, in a function named for
        # taking: the name is no evidence against what the file does
        Valid("""
            from celery import shared_task
            from django.core.cache import cache
            @shared_task
            def claim_signup_bonus(user_id):
                if cache.add(f"signup-bonus:{user_id}", 1, timeout=None):
                    grant_bonus(user_id)
            def bonus_claimed(user_id):
                return cache.get(f"signup-bonus:{user_id}") is not None
        """),
        # a marker read later and never deleted: no evidence of a lock
        Valid("""
            from django.core.cache import cache
            def mark_seen(event_id):
                cache.add(f"seen:{event_id}", True, None)
            def seen(event_id):
                return cache.get(f"seen:{event_id}") is not None
        """),
    )
    VALID += (
        # setnx with other arguments: not redis-py's
        Valid("""
            class Registry:
                def __init__(self, store):
                    self.store = store
                def acquire_slot(self, name):
                    return self.store.setnx(f"lock:{name}", 1, namespace="jobs")
                def release_slot(self, name):
                    self.store.delete(f"lock:{name}")
        """),
    )
    INVALID += (
        # ``timeout=None`` written: the message says so, the fix sets the value
        Invalid("""
            import redis
            r = redis.Redis()
            def exclusive(name):
                return r.lock(name, timeout=None)
        """, fixed="""
            import redis
            r = redis.Redis()
            def exclusive(name):
                return r.lock(name, timeout=60)
        """, message="`lock()` with `timeout=None`"),
        # a lock class around an injected client: setnx says it is Redis
        Invalid("""
            class RedisMutex:
                def __init__(self, client, name):
                    self.client = client
                    self.key = f"mutex:{name}"
                def acquire(self):
                    return bool(self.client.setnx(self.key, "1"))
                def release(self):
                    self.client.delete(self.key)
        """, message="`setnx` sets no expiry"),
        # setnx then expire as two commands in a lock class, the expire guarded
        # by a configured expiry that defaults to 0: no one-command fix fits
        Invalid("""
            import redis
            r = redis.Redis()
            class RedisLock:
                expire = 0
                def __init__(self, name):
                    self.key = f"lock:{name}"
                def acquire(self):
                    if r.setnx(self.key, 1):
                        if self.expire:
                            r.expire(self.key, self.expire)
                        return True
                    return False
                def release(self):
                    r.delete(self.key)
        """, fixed=None, message="`setnx` sets no expiry"),
        # a Lock object released in the function, but also acquired there
        Invalid("""
            from redis import Redis
            from redis.lock import Lock
            r = Redis()
            def run(name):
                lock = Lock(r, name)
                if lock.acquire(blocking=False):
                    try:
                        work()
                    finally:
                        lock.release()
        """, message="redis-py `Lock` without `timeout`"),
        # a counting semaphore: incremented to take, decremented to release
        Invalid("""
            from django.core.cache import cache
            def acquire_slot(name):
                cache.add(f"sem:{name}", 0, None)
                return cache.incr(f"sem:{name}") <= 3
            def release_slot(name):
                cache.decr(f"sem:{name}")
        """, message="cache.add"),
        # a lock key taken with cache.add and deleted
        Invalid("""
            from django.core.cache import cache
            def run_once(job_id):
                if cache.add(f"job:{job_id}", 1, timeout=None):
                    try:
                        work(job_id)
                    finally:
                        cache.delete(f"job:{job_id}")
        """, message="cache.add"),
    )

    @classmethod
    def check_project(cls, project) -> Iterable[Finding]:
        """Its findings on the result backend's client, when that is Redis
        (``domain/celeryconf/conditions.py``)."""
        from ..domain.celeryconf.conditions import deferred_findings

        return deferred_findings(project, cls.CODE)

    def _cache_lock(self, node: cst.Call, kind: str) -> None:
        """A Django cache's ``lock()``: django-redis's (``timeout``), unless
        the project's ``CACHES`` name python-redis-lock's backend, whose
        keyword is ``expire`` (both judged in the project phase)."""
        found = unexpiring_take(node, "lock", kind, self.ctx, self.ttl)
        if found is not None:
            self.report(node, found[0], found[1], when={"cache_lock": "django_redis"})
        found = redis_lock_take(node, self.ctx, self.ttl)
        if found is not None:
            self.report(node, found[0], found[1], when={"cache_lock": "redis_lock"})

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.ttl = str(self.option("lock-ttl"))
        self.letting_go: set[int] = set()  # ids of ``Lock(...)`` calls made only to release (``_only_lets_go``)

    def visit_Assign(self, node: cst.Assign) -> None:
        value, function = node.value, self.ctx.function
        if (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) and isinstance(value, cst.Call)
                and function is not None and (self.ctx.imported_name(value.func) in LOCK_CLASSES or (
                    isinstance(value.func, cst.Attribute) and value.func.attr.value == "lock"))
                and _only_lets_go(function, node.targets[0].target.value)):
            self.letting_go.add(id(value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _LETTING_GO and isinstance(func.value, cst.Call) \
                and self.ctx.imported_name(func.value.func) in LOCK_CLASSES:
            self.letting_go.add(id(func.value))  # ``Lock(r, key).locked()``: made only to be asked about (or released)
        if has_star(node):
            return
        self.note_call(node)
        if id(node) in self.letting_go:
            return
        if self.ctx.imported_name(node.func) in LOCK_CLASSES:
            if not given(arg(node, "timeout", 2), self.ctx):
                self.report(node, "redis-py `Lock` without `timeout`: a worker that dies holding it blocks the lock forever",
                            add_keyword_fix(node, "timeout", self.ttl))
            return
        found = receiver(node, _WATCHED_READS if self.reads_matter else _WATCHED)
        if found is None:
            return
        method, target = found
        kind = client_kind(target, self.ctx, conditional=True)
        if kind is None and method == "setnx" and _two_positional(node):
            kind = REDIS  # ``setnx(key, value)`` is redis-py's alone: the receiver is a Redis client
            self.note_setnx_receiver(target)
        if method in _REDIS_ONLY:
            if kind is None:
                self.note_setnx_receiver(target)  # no Django cache has these: a Redis client
            return
        if kind is None and method == "set" and not isinstance(target, cst.Call):
            kind = REDIS  # tentatively: reported only if the module shows the receiver is Redis
            self.tentative[id(node)] = code_of(target)
        if method in ("delete", "unlink"):
            self.note_delete(node, kind is not None or self.setnx_receiver(target))
            return
        if method in _COUNTS:
            if kind is not None:
                self.note_count(node, method)
            return
        if method == "get" and kind is not None:
            self.note_read(node)
            return
        if method == "lock" and kind is not None and kind != REDIS:
            self._cache_lock(node, kind)
            return
        found = unexpiring_take(node, method, kind, self.ctx, self.ttl) if kind is not None else None
        if found is not None:
            message, fix, always = found
            if always:
                self.take_found(node, message, fix)
            else:
                self.candidate(node, message, fix)
