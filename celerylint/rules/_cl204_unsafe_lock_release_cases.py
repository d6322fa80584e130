"""CL204 cases: lock classes released in ``__exit__`` and keys computed by
helpers (issue 28 item 11); a parameter's attribute on a bound task (item 10):
``def release(task, key): task.redis.delete(key)`` called with ``self`` from
a task whose ``base=`` class holds the client; a key passed to a module
function that deletes it."""

from ..rule import Invalid, Valid

_BASE = """
        # file: proj/__init__.py
        # file: proj/base.py
        import redis
        from celery import Task
        class RedisTask(Task):
            @property
            def redis(self):
                return redis.Redis()
        class OtherTask(Task):
            redis = None
"""

_APP = """
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        celery_app = Celery("proj", broker="redis://localhost:6379/0", backend={backend!r})
        # file: proj/jobs.py
        from proj.celery import celery_app
        def run_daily(task_name, day):
            key = f"daily-task:{{task_name}}:{{day}}"
            if not celery_app.backend.client.set(key, "1", ex=3600, nx=True):
                return
            try:
                work(task_name, day)
            finally:
                celery_app.backend.client.delete(key)
"""

VALID = (
    # a document-lock service: the lock id is the editor's, overwritten by
    # ``lock`` and compared by the caller before ``unlock``
    Valid("""
        from django.core.cache import cache
        class DocumentLock:
            def __init__(self, doc_id):
                self.doc_id = doc_id
            @property
            def _lock_key(self):
                return f"editlock:{self.doc_id}"
            def lock(self, value):
                cache.set(self._lock_key, value, timeout=1800)
            def unlock(self):
                cache.delete(self._lock_key)
    """),
    # an operator's cleanup: every stuck lock a scan finds, deleted in a loop
    Valid("""
        import redis
        client = redis.Redis()
        def clear_stuck_locks():
            for locked_task in client.scan_iter(match="TASK_LOCK*"):
                client.delete(locked_task)
    """),
    Valid("""
        # a debounce marker: kept on success until its TTL ends, deleted only to undo it when nothing was started
        from django.core.cache import caches
        def trigger_etl(source):
            cache = caches["redis"]
            key = f"etl_triggered_{source}"
            if not cache.add(key, True, timeout=300):
                return
            try:
                if source == "edx":
                    tasks.get_edx_data.apply_async()
                else:
                    log.warning("no pipeline for %s", source)
                    cache.delete(key)
            except Exception:
                cache.delete(key)
                raise
    """),
    Valid("""
        # a once-an-hour guard whose failure lets the next run try again
        import redis
        r = redis.Redis()
        def nightly(day):
            if not r.set(f"nightly:{day}", 1, nx=True, ex=3600):
                return
            try:
                build_report(day)
            except Exception:
                r.delete(f"nightly:{day}")
                raise
    """),
    # the callers' tasks have different base classes: what ``task`` is stays unknown
    Valid(_BASE + """
        # file: proj/tasks.py
        import uuid
        from celery import shared_task
        from proj.base import OtherTask, RedisTask
        def release(task, key):
            task.redis.delete(key)
        @shared_task(bind=True, base=RedisTask)
        def one(self, name):
            key = f"job:{name}"
            if self.redis.set(key, str(uuid.uuid4()), nx=True, ex=60):
                release(self, key)
        @shared_task(bind=True, base=OtherTask)
        def two(self, name):
            release(self, f"job:{name}")
    """),
    # the function is given a key its caller did not take
    Valid(_BASE + """
        # file: proj/tasks.py
        from celery import shared_task
        from proj.base import RedisTask
        def clear(task, key):
            task.redis.delete(key)
        @shared_task(bind=True, base=RedisTask)
        def refresh(self, name):
            clear(self, f"page:{name}")
    """),
    # a context manager that compares the holder before it deletes
    Valid("""
        import uuid
        import redis
        class SafeGuard:
            def __init__(self, name):
                self.redis = redis.Redis()
                self.key = f"guard:{name}"
                self.token = str(uuid.uuid4())
            def _take(self):
                return self.redis.set(self.key, self.token, nx=True, ex=60)
            def __enter__(self):
                return self._take()
            def __exit__(self, *exc):
                if self.redis.get(self.key) == self.token:
                    self.redis.delete(self.key)
    """),
    # a context manager whose __exit__ deletes a key the class never takes
    Valid("""
        import redis
        class Batch:
            def __init__(self, name):
                self.redis = redis.Redis()
                self.key = f"batch:{name}"
            def __enter__(self):
                self.redis.rpush(self.key, "start")
                return self
            def __exit__(self, *exc):
                self.redis.delete(self.key)
    """),
    # a key from a helper, set once as a marker and cleared elsewhere: no function handles locks
    Valid("""
        import redis
        r = redis.Redis()
        def page_key(page):
            return f"page:{page}"
        def mark(page):
            return r.set(page_key(page), 1, nx=True, ex=60)
        def clear(page):
            r.delete(f"page:{page}")
    """),
    # the helper transforms its parameter: the key is not one value per argument
    Valid("""
        import uuid
        import redis
        r = redis.Redis()
        def sync_key(name):
            return f"sync:{name.lower()}"
        def acquire(name):
            return r.set(sync_key(name), str(uuid.uuid4()), nx=True, ex=60)
        def release(name):
            r.delete(f"sync:{name}")
    """),
    # a lock on the result backend's client of an app whose result backend is a database
    Valid(_APP.format(backend="db+postgresql://localhost/results")),
    # a context manager's __enter__ that discards a SET NX, then compares before deleting
    Valid("""
        import uuid
        import redis
        class Guard:
            def __init__(self, name):
                self.r = redis.Redis()
                self.key = f"guard:{name}"
                self.token = str(uuid.uuid4())
            def __enter__(self):
                self.r.set(self.key, self.token, nx=True, ex=60)
                return self
            def __exit__(self, *exc):
                if self.r.get(self.key) == self.token:
                    self.r.delete(self.key)
    """),
    # a discarded SET NX in another method of a context manager sets a default, not a lock
    Valid("""
        import redis
        class Session:
            def __init__(self, sid):
                self.r = redis.Redis()
                self.key = f"session:{sid}"
            def __enter__(self):
                return self
            def touch(self):
                self.r.set(self.key, 0, nx=True, ex=600)
            def __exit__(self, *exc):
                self.r.delete(self.key)
    """),
    # __enter__ discards a SET NX of one key, __exit__ deletes another
    Valid("""
        import redis
        class Visit:
            def __init__(self, page):
                self.r = redis.Redis()
                self.first = f"first-visit:{page}"
                self.current = f"current-visit:{page}"
            def __enter__(self):
                self.r.set(self.first, 1, nx=True, ex=86400)
                return self
            def __exit__(self, *exc):
                self.r.delete(self.current)
    """),
    # the client given to __init__ is annotated with a project protocol: unknown
    Valid("""
        from proj.protocols import LockStore
        class Guard:
            def __init__(self, store: LockStore, name: str) -> None:
                self._store = store
                self._name = f"lock:{name}"
            def __enter__(self):
                if not self._store.set(self._name, 1, nx=True, ex=30):
                    raise RuntimeError("busy")
            def __exit__(self, *exc):
                self._store.delete(self._name)
    """),
)

INVALID = (
    # a Valkey client (django-valkey), as a Redis one
    Invalid("""
        from django_valkey import get_valkey_connection
        def sync_all():
            con = get_valkey_connection("default")
            if con.set("sync_lock", "1", nx=True, ex=300):
                try:
                    work()
                finally:
                    con.delete("sync_lock")
    """, message="plain `delete` of `\"sync_lock\"`"),
    # the delete tests a flag set only where the take succeeded: a release
    Invalid("""
        import redis
        r = redis.Redis()
        def sync_all():
            have_lock = False
            try:
                if r.set("sync_lock", "1", nx=True, ex=300):
                    have_lock = True
                    work()
            finally:
                if have_lock:
                    r.delete("sync_lock")
    """, message="plain `delete` of `\"sync_lock\"`"),
    # a timestamp lock: taken by ``getset``, kept alive by ``set``, deleted blindly
    Invalid("""
        import time
        import redis
        redis_client = redis.Redis()
        def process(task_id):
            lock_id = f"task_lock_{task_id}"
            last = redis_client.getset(lock_id, time.time())
            if last is not None and time.time() - float(last) <= 30:
                return
            try:
                redis_client.set(lock_id, time.time())
                work(task_id)
            finally:
                redis_client.delete(lock_id)
    """, message="which is named as a lock"),
    # a lock taken and released in a loop is still released blindly
    Invalid("""
        import redis
        client = redis.Redis()
        def sync_all(accounts):
            for lock_key in (f"lock:{a}" for a in accounts):
                if client.set(lock_key, 1, nx=True, ex=60):
                    sync(lock_key)
                    client.delete(lock_key)
    """, message="was taken with `set` in this function"),
    # a context manager that takes the key in __init__ and deletes it in __exit__
    Invalid("""
        import redis
        class Guard:
            def __init__(self, name):
                self.redis = redis.Redis()
                self.key = f"guard:{name}"
                self.held = self.redis.set(self.key, 1, nx=True, ex=60)
            def __enter__(self):
                return self.held
            def __exit__(self, *exc):
                self.redis.delete(self.key)
    """, at="10:9"),
    # a key built by a helper function of the module, deleted as the f-string it returns
    Invalid("""
        import uuid
        import redis
        r = redis.Redis()
        def sync_key(account_id):
            return f"sync-account:{account_id}"
        def acquire(account_id):
            return r.set(sync_key(account_id), str(uuid.uuid4()), nx=True, ex=60)
        def release(account_id):
            r.delete(f"sync-account:{account_id}")
    """, at="9:5"),
    # a module constant with .format, deleted through a method helper of the class
    Invalid("""
        import uuid
        import redis
        SYNC_KEY = "sync:{}"
        class Syncer:
            def __init__(self):
                self.r = redis.Redis()
            def _key(self, account_id):
                return "sync:" + str(account_id)
            def acquire(self, account_id):
                return self.r.set(SYNC_KEY.format(account_id), str(uuid.uuid4()), nx=True, ex=60)
            def release(self, account_id):
                self.r.delete(self._key(account_id))
    """, at="12:9"),
    Invalid(_BASE + """
        # file: proj/tasks.py
        import uuid
        from celery import shared_task
        from proj.base import RedisTask
        def release(task, key):
            task.redis.delete(key)
        @shared_task(bind=True, base=RedisTask)
        def work(self, name):
            key = f"job:{name}"
            if self.redis.set(key, str(uuid.uuid4()), nx=True, ex=60):
                try:
                    pass
                finally:
                    release(self, key)
    """, message="`work()` takes as a lock and passes here", at="5:5"),
    # ... and of one whose result backend is Redis: a plain delete of the lock
    Invalid(_APP.format(backend="redis://localhost:6379/1"), at="9:9"),
    # a lock class that takes in __enter__ without looking at the result, and deletes in __exit__
    Invalid("""
        import redis
        class redis_lock:
            def __init__(self, name, expire=60):
                self.conn = redis.Redis()
                self.name = name
                self.expire = expire
            def __enter__(self):
                self.conn.set(self.name, 1, ex=self.expire, nx=True)
            def __exit__(self, *exc):
                self.conn.delete(self.name)
    """, at="10:9"),
    # ... an async one (__aenter__/__aexit__)
    Invalid("""
        import redis.asyncio as redis
        class Lock:
            def __init__(self, name):
                self.r = redis.Redis()
                self.key = f"job:{name}"
            async def __aenter__(self):
                await self.r.set(self.key, 1, nx=True, ex=30)
                return self
            async def __aexit__(self, *exc):
                await self.r.delete(self.key)
    """, at="10:15"),
    # the client given to __init__ is annotated as a Redis client (no caller in the tree)
    Invalid("""
        from typing import Optional
        from redis import StrictRedis
        class RedisLock:
            def __init__(self, redis: "Optional[StrictRedis]", name: str, timeout: int = 30) -> None:
                self._redis = redis
                self._name = name
                self._timeout = timeout
            def __enter__(self) -> None:
                if not self._redis.set(self._name, "LOCKED", nx=True, ex=self._timeout):
                    raise RuntimeError("locked")
            def __exit__(self, *exc) -> None:
                self._redis.delete(self._name)
    """, at="12:9"),
)
