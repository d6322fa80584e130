"""CL205 cases: a lock on the result backend's client (issue 28 item 10),
judged when the app's result backend is Redis."""

from ..rule import Invalid, Valid

_APP = """
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost:6379/0", backend={backend!r})
        # file: proj/tasks.py
        from proj.celery import app
        @app.task(bind=True, time_limit=600)
        def rebuild(self, index):
            if not self.app.backend.client.set(f"lock:rebuild:{{index}}", 1, nx=True, ex=60):
                return
            build(index)
"""

VALID = (
    # the result backend is not Redis: its client is not a Redis client
    Valid(_APP.format(backend="rpc://")),
)

INVALID = (
    Invalid(_APP.format(backend="redis://localhost:6379/1"), message="shorter than the task's `time_limit`"),
)
