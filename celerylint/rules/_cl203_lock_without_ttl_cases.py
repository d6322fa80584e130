"""CL203 cases: clients the model finds behind classes (issue 28 item 10):
a bound task's ``base=`` class, a classmethod factory, an ``__init__``
parameter every caller gives a client, a base class of another module."""

from ..rule import Invalid, Valid

_TASK_BASE = """
        # file: proj/__init__.py
        # file: proj/base.py
        import redis
        from celery import Task
        class RedisTask(Task):
            _redis = None
            @property
            def redis(self):
                if self._redis is None:
                    self._redis = redis.Redis()
                return self._redis
"""


_LOCK_TASK = """
        # file: proj/__init__.py
        # file: proj/base.py
        import redis
        from celery import Task
        from proj.fakes import FakeRedis
        class BaseTask(Task):
            redis = FakeRedis()
        class LockTask(BaseTask):
            @property
            def redis(self):
                return redis.Redis()
"""


def _later_base(mixin: str, bases: str = "AuditMixin, LockTask") -> str:
    """A bound task whose ``base=`` class names ``LockTask`` after a mixin."""
    return _LOCK_TASK + mixin + f"""
        # file: proj/tasks.py
        from celery import shared_task
        from proj.base import LockTask
        from proj.mixins import AuditMixin
        class SyncTask({bases}):
            pass
        @shared_task(bind=True, base=SyncTask)
        def sync(self, name):
            if self.redis.set(f"lock:sync:{{name}}", 1, nx=True):
                work(name)
    """


def _backend(backend: str, tasks: str) -> str:
    """An app whose result backend is ``backend`` (a keyword of ``Celery``), and ``tasks``."""
    return f"""
        # file: proj/__init__.py
        # file: proj/celery.py
        import os
        from celery import Celery
        app = Celery("proj", broker="redis://localhost:6379/0"{backend})
        # file: proj/tasks.py
    """ + tasks


VALID = (
    # a bound task without ``base=``: ``self.redis`` is unknown
    Valid(_TASK_BASE + """
        # file: proj/tasks.py
        from celery import shared_task
        @shared_task(bind=True)
        def work(self, name):
            if self.redis.set(f"lock:{name}", 1, nx=True):
                pass
    """),
    # the subclass defines the attribute again (as something unknown): the base's client does not count
    Valid("""
        # file: proj/__init__.py
        # file: proj/base.py
        import redis
        class RedisMixin:
            redis_client = redis.Redis()
        # file: proj/locks.py
        from proj.base import RedisMixin
        from proj.fakes import FakeRedis
        class Locker(RedisMixin):
            redis_client = FakeRedis()
            def acquire(self, name):
                return self.redis_client.set(f"lock:{name}", 1, nx=True)
    """),
    # one caller passes something unknown: the parameter is unknown
    Valid("""
        # file: proj/__init__.py
        # file: proj/locks.py
        class RedisLock:
            def __init__(self, redis_client, key):
                self.redis = redis_client
                self.key = key
            def acquire(self):
                return self.redis.set(self.key, 1, nx=True)
        # file: proj/tasks.py
        import redis
        from proj.locks import RedisLock
        from proj.memory import MemoryStore
        def a(name):
            return RedisLock(redis.Redis(), f"lock:{name}").acquire()
        def b(name):
            return RedisLock(MemoryStore(), f"lock:{name}").acquire()
    """),
    # a call with *args: what it passes is unknown
    Valid("""
        # file: proj/__init__.py
        # file: proj/locks.py
        class RedisLock:
            def __init__(self, redis_client, key):
                self.redis = redis_client
                self.key = key
            def acquire(self):
                return self.redis.set(self.key, 1, nx=True)
        # file: proj/tasks.py
        import redis
        from proj.locks import RedisLock
        def a(name):
            return RedisLock(redis.Redis(), f"lock:{name}").acquire()
        def b(args):
            return RedisLock(*args).acquire()
    """),
    # another method stores something else on the same attribute
    Valid("""
        # file: proj/__init__.py
        # file: proj/cache.py
        import redis
        from proj.memory import MemoryStore
        class Cache:
            _client = None
            @classmethod
            def get_client(cls):
                if cls._client is None:
                    cls._client = redis.Redis()
                return cls._client
            @classmethod
            def use_memory(cls):
                cls._client = MemoryStore()
        # file: proj/tasks.py
        from proj.cache import Cache
        def work(name):
            redis_conn = Cache.get_client()
            return redis_conn.set(f"lock:{name}", 1, nx=True)
    """),
    # the result backend's client, when the result backend is not Redis: not a Redis client
    Valid(_backend(', backend="rpc://"', """
        from proj.celery import app
        @app.task(bind=True)
        def sync(self, account_id):
            self.app.backend.client.set(f"lock:sync:{account_id}", 1, nx=True)
    """)),
    # ... nor when the result backend is unknown (read from the environment without a default)
    Valid(_backend(', backend=os.environ["RESULT_BACKEND"]', """
        from proj.celery import app
        @app.task(bind=True)
        def sync(self, account_id):
            self.app.backend.client.set(f"lock:sync:{account_id}", 1, nx=True)
    """)),
    # ... nor when no result backend is set (Celery's default: none)
    Valid(_backend("", """
        from proj.celery import app
        @app.task(bind=True)
        def sync(self, account_id):
            self.app.backend.client.set(f"lock:sync:{account_id}", 1, nx=True)
    """)),
    # ``self.app`` of a @shared_task when the project has two apps: which one runs it is not known
    Valid(_backend(', backend="redis://localhost:6379/1"', """
        from celery import shared_task
        @shared_task(bind=True)
        def sync(self, account_id):
            self.app.backend.client.set(f"lock:sync:{account_id}", 1, nx=True)
    """) + """
        # file: proj/other.py
        from celery import Celery
        other = Celery("other", broker="redis://localhost:6379/0", backend="rpc://")
        @other.task
        def ping():
            pass
    """),
    # ``x.backend.client`` of an object that is not an app: unknown
    Valid(_backend(', backend="redis://localhost:6379/1"', """
        from celery import shared_task
        @shared_task
        def sync(storage, account_id):
            storage.backend.client.set(f"lock:sync:{account_id}", 1, nx=True)
    """)),
    # a mixin named before the lock task's base defines the attribute as something unknown
    Valid(_later_base("""
        # file: proj/mixins.py
        from proj.fakes import FakeRedis
        class AuditMixin:
            redis = FakeRedis()
    """)),
    # a mixin of a module celerylint does not record (it may define any name)
    Valid(_later_base("""
        # file: proj/mixins.py
        class AuditMixin:
            def audit(self, what):
                log(what)
    """)),
    # a base this module cannot name comes first
    Valid(_later_base("""
        # file: proj/mixins.py
        import redis
        AuditMixin = make_mixin(redis)
    """, bases="make_base(), LockTask")),
    # an order Python refuses (a base before its own subclass): no attribute is read
    Valid(_later_base("""
        # file: proj/mixins.py
        import redis  # noqa: F401
        from proj.base import LockTask
        class AuditMixin(LockTask):
            def audit(self, what):
                log(what)
    """, bases="LockTask, AuditMixin")),
)

INVALID = (
    # Valkey's clients (valkey-py, django-valkey: rapidpro) are Redis clients
    Invalid("""
        import valkey
        from django_valkey import get_valkey_connection
        r = valkey.Valkey(host="localhost")
        def acquire(name):
            return r.set(f"lock:{name}", "1", nx=True)
        def take(name):
            return get_valkey_connection("default").set(f"lock:{name}", "1", nx=True)
    """, count=2, message="`SET ... NX` without `ex`/`px`"),
    # ``self`` of a bound task whose ``base=`` class (another module) has a client property
    Invalid(_TASK_BASE + """
        # file: proj/tasks.py
        from celery import shared_task
        from proj.base import RedisTask
        @shared_task(bind=True, base=RedisTask)
        def work(self, name):
            if self.redis.set(f"lock:{name}", 1, nx=True):
                pass
    """, message="`SET ... NX` without `ex`/`px`", at="5:8"),
    # a classmethod factory that caches the client on the class
    Invalid("""
        # file: proj/__init__.py
        # file: proj/cache.py
        import redis
        class Cache:
            _client = None
            @classmethod
            def get_client(cls):
                if cls._client is None:
                    cls._client = redis.Redis(host="localhost")
                return cls._client
        # file: proj/tasks.py
        from proj.cache import Cache
        def work(name):
            redis_conn = Cache.get_client()
            return redis_conn.set(f"lock:{name}", 1, nx=True)
    """, at="4:12"),
    # an unannotated __init__ parameter whose every caller passes a Redis client
    Invalid("""
        # file: proj/__init__.py
        # file: proj/locks.py
        class RedisLock:
            def __init__(self, redis_client, key):
                self.redis = redis_client
                self.key = key
            def acquire(self):
                return self.redis.set(self.key, 1, nx=True)
        # file: proj/tasks.py
        import redis
        from proj.locks import RedisLock
        r = redis.Redis()
        def a(name):
            return RedisLock(r, f"lock:{name}").acquire()
        def b(name):
            client = redis.Redis.from_url("redis://localhost")
            return RedisLock(redis_client=client, key=f"lock:{name}").acquire()
    """, at="6:16"),
    # a client attribute inherited from a base class of another module
    Invalid("""
        # file: proj/__init__.py
        # file: proj/base.py
        import redis
        class RedisMixin:
            def __init__(self):
                self.redis_client = redis.Redis()
        # file: proj/locks.py
        from proj.base import RedisMixin
        class Locker(RedisMixin):
            def acquire(self, name):
                return self.redis_client.set(f"lock:{name}", 1, nx=True)
    """, at="4:16"),
    # the base class's property is annotated ``-> redis.Redis``: its body need not be traced
    Invalid("""
        # file: proj/__init__.py
        # file: proj/base.py
        import redis
        from celery import Task
        from proj.clients import LockClient
        class BaseTask(Task):
            _locks = None
            @property
            def redis_locks(self) -> redis.Redis:
                if self._locks is None:
                    self._locks = LockClient()
                return self._locks.redis
        # file: proj/tasks.py
        from celery import shared_task
        from proj.base import BaseTask
        @shared_task(bind=True, base=BaseTask)
        def work(self, name):
            if self.redis_locks.set(f"lock:{name}", 1, nx=True):
                pass
    """, at="5:8"),
    # a flat layout (modules without a package): the caller's module gives the client
    Invalid("""
        # file: locks.py
        class RedisLock:
            def __init__(self, redis_client, key):
                self.redis = redis_client
                self.key = key
            def acquire(self):
                return self.redis.set(self.key, 1, nx=True)
        # file: tasks.py
        import redis
        from locks import RedisLock
        r = redis.Redis()
        def work(name):
            return RedisLock(r, f"lock:{name}").acquire()
    """, at="6:16"),
    # the result backend's client in a bound task, the app's result backend being Redis
    Invalid(_backend(', backend="redis://localhost:6379/1"', """
        from proj.celery import app
        @app.task(bind=True)
        def sync(self, account_id):
            client = self.app.backend.client
            if client.set(f"lock:sync:{account_id}", 1, nx=True):
                work(account_id)
    """), message="without `ex`/`px`"),
    # ... through the app's name (rediss://), and through current_app of the one app
    Invalid(_backend(', backend="rediss://cache.internal:6380/1"', """
        from proj.celery import app as celery_app
        def run_once(job_id):
            if celery_app.backend.client.setnx(f"job-lock:{job_id}", 1):
                work(job_id)
    """), message="`setnx` sets no expiry"),
    Invalid(_backend(', backend="redis://localhost:6379/1"', """
        from celery import current_app, shared_task
        @shared_task
        def nightly():
            if current_app.backend.client.set("nightly-lock", 1, nx=True):
                report()
    """), message="without `ex`/`px`"),
    # the result backend from Django settings (old name, sentinel://)
    Invalid("""
        # file: proj/__init__.py
        # file: proj/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: proj/settings.py
        CELERY_BROKER_URL = "redis://localhost:6379/0"
        CELERY_RESULT_BACKEND = "sentinel://sentinel-1:26379/1"
        # file: proj/tasks.py
        from celery import shared_task
        @shared_task(bind=True)
        def sync(self, account_id):
            self.app.backend.client.set(f"lock:sync:{account_id}", 1, nx=True)
    """, message="without `ex`/`px`"),
    # the client is a property of a base named after a mixin: Python's method resolution order reaches it
    Invalid(_later_base("""
        # file: proj/mixins.py
        class AuditMixin:
            def audit(self, what):
                self.redis.rpush("audit", what)
    """), message="without `ex`/`px`"),
    # ... also in a diamond, where the shared base comes after both (C3), and hides nothing
    Invalid(_later_base("""
        # file: proj/mixins.py
        from proj.base import BaseTask
        class AuditMixin(BaseTask):
            def audit(self, what):
                self.redis.rpush("audit", what)
    """), message="without `ex`/`px`"),
)
