"""CL101 cases: apps that run no tasks (made at module level only to send,
inspect or monitor) and their look-alikes."""

from ..rule import Invalid, Valid

_WORKER = """
    # file: proj/__init__.py
    # file: proj/celery.py
    from celery import Celery
    app = Celery("proj", broker="redis://localhost:6379/0", task_acks_late=True,
                 task_reject_on_worker_lost=True, worker_prefetch_multiplier=1)
    @app.task
    def add(x, y):
        return x + y
"""

VALID = (
    Valid(_WORKER + """
    # file: proj/monitor.py
    from celery import Celery
    monitor = Celery("monitor", broker="redis://localhost:6379/0")
    def active():
        return monitor.control.inspect().active()
    """),
    Valid(_WORKER + """
    # file: proj/events.py
    from celery import Celery
    app = Celery(broker="redis://localhost:6379/0")
    app.conf.update(broker_connection_retry_on_startup=True)
    def watch(handlers):
        state = app.events.State()
        with app.connection() as connection:
            app.events.Receiver(connection, handlers=handlers).capture()
        return state
    """),
    Valid(_WORKER + """
    # file: proj/sender.py
    from celery import Celery
    client = Celery("sender", broker="redis://localhost:6379/0")
    def send(x):
        return client.send_task("proj.add", (x, 1))
    """),
    # the app's task class decides, whatever the setting says (learningequality/studio)
    Valid("""
    # file: proj/__init__.py
    # file: proj/tasks_base.py
    from celery import Task
    class ProjectTask(Task):
        acks_late = False  # acknowledged just before the task starts: a choice
        reject_on_worker_lost = False
    # file: proj/celery.py
    from celery import Celery
    app = Celery("proj", broker="redis://localhost:6379/0", task_cls="proj.tasks_base:ProjectTask",
                 task_acks_late=True, worker_prefetch_multiplier=1)
    other = Celery("other", broker="redis://localhost:6379/0", task_cls="proj.tasks_base:ProjectTask",
                   worker_prefetch_multiplier=1)
    @app.task
    def a(): ...
    @other.task
    def b(): ...
    """),
    # a monitoring exporter's app beside a Django app with settings profiles
    # (Substra's metrics exporter): a client of the project, as without profiles
    Valid("""
    # file: proj/__init__.py
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.production")
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: proj/settings/__init__.py
    # file: proj/settings/base.py
    CELERY_BROKER_URL = "redis://localhost:6379/0"
    CELERY_TASK_ACKS_LATE = True
    CELERY_TASK_REJECT_ON_WORKER_LOST = True
    CELERY_WORKER_PREFETCH_MULTIPLIER = 1
    # file: proj/settings/production.py
    from .base import *
    # file: proj/settings/staging.py
    from .base import *
    DEBUG = True
    # file: exporter/exporter/server.py
    import celery
    from exporter import settings, collector
    if __name__ == "__main__":
        app = celery.Celery(broker=settings.CELERY_BROKER_URL)
        collector.register(app)
    """),
    Valid("""
    # file: ops/ping.py
    from celery import Celery
    app = Celery(broker="redis://localhost:6379/0")
    if __name__ == "__main__":
        print(app.control.ping(timeout=1.0))
    """),
)

INVALID = (
    # the settings module is named only by the image (bram2w/baserow's Dockerfile ``ENV``)
    Invalid("""
    # file: proj/__init__.py
    # file: proj/celery.py
    from celery import Celery
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: proj/settings/__init__.py
    # file: proj/settings/base.py
    CELERY_BROKER_URL = "redis://redis:6379/0"
    # file: proj/settings/test.py
    from .base import *
    CELERY_TASK_ALWAYS_EAGER = True
    # file: tools/settings.py
    LINT = True
    # file: Dockerfile
    FROM python:3.12
    ENV DJANGO_SETTINGS_MODULE=proj.settings.base
    CMD ["celery", "-A", "proj", "worker"]
    """, message="(settings profile `proj.settings.base`)"),
    # two deployables, each importing its own ``celeryconfig`` from its source
    # root: each app reads the one beside it (only back's lacks acks_late)
    Invalid("""
    # file: back/src/celery_app.py
    import celeryconfig
    from celery import Celery
    app = Celery("back")
    app.config_from_object(celeryconfig)
    # file: back/src/celeryconfig.py
    broker_url = "redis://redis:6379/0"
    # file: front/src/celery_app.py
    import celeryconfig
    from celery import Celery
    app = Celery("front")
    app.config_from_object(celeryconfig)
    # file: front/src/celeryconfig.py
    broker_url = "redis://redis:6379/1"
    task_acks_late = True
    task_reject_on_worker_lost = True
    worker_prefetch_multiplier = 1
    """, count=1, message="configuration module `back.src.celeryconfig`"),
    # the app's only ``conf.update`` is under an ``if``: the setting is added
    # where it always applies, not to that call
    Invalid("""
    # file: proj.py
    import os
    from celery import Celery
    app = Celery("proj")
    app.conf.broker_url = "redis://redis:6379/0"
    PREFETCH = int(os.environ.get("PREFETCH") or 1)
    if PREFETCH:
        app.conf.update(worker_prefetch_multiplier=PREFETCH)
    """, fixed="""
    # file: proj.py
    import os
    from celery import Celery
    app = Celery("proj")
    app.conf.broker_url = "redis://redis:6379/0"
    app.conf.task_acks_late = True
    PREFETCH = int(os.environ.get("PREFETCH") or 1)
    if PREFETCH:
        app.conf.update(worker_prefetch_multiplier=PREFETCH)
    """),
    Invalid("""
    # file: proj/monitor.py
    from celery import Celery
    app = Celery("monitor", broker="redis://localhost:6379/0")
    def active():
        return app.control.inspect().active()
    @app.task
    def cleanup():
        pass
    """, message="`task_acks_late` is not enabled"),
    Invalid(_WORKER + """
    # file: proj/monitor.py
    from celery import Celery
    monitor = Celery("monitor", broker="redis://localhost:6379/0")
    def active():
        return monitor.control.inspect().active()
    # file: proj/jobs.py
    from proj.monitor import monitor
    @monitor.task
    def purge():
        pass
    """, message="`task_acks_late` is not enabled"),
    Invalid("""
    # file: proj/celery.py
    from celery import Celery
    app = Celery("proj", broker="redis://localhost:6379/0")
    def active():
        return app.control.inspect().active()
    # file: proj/tasks.py
    from celery import shared_task
    @shared_task
    def purge():
        pass
    """, message="`task_acks_late` is not enabled"),
    Invalid(_WORKER + """
    # file: proj/monitor.py
    from celery import Celery
    monitor = Celery("monitor", broker="redis://localhost:6379/0")
    monitor.autodiscover_tasks(["proj"])
    def active():
        return monitor.control.inspect().active()
    """, message="`task_acks_late` is not enabled"),
)
