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
)

INVALID = (
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
)
