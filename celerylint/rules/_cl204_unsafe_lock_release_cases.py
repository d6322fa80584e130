"""CL204 cases: a parameter's attribute on a bound task (issue 28 item 10):
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

VALID = (
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
)

INVALID = (
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
)
