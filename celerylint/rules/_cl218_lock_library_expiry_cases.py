"""CL218 cases: a task that sets no time limit runs under its app's
`task_time_limit`/`task_soft_time_limit`, read from the configuration
model in every settings profile of the task's app."""

from ..rule import Invalid, Valid, django_project

_PROFILES = """
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
    CELERY_TASK_TIME_LIMIT = 600
    # file: proj/settings/production.py
    from .base import *
    # file: proj/settings/staging.py
    import os
    from .base import *
    {staging}
    # file: proj/tasks.py
    from celery import shared_task
    from celery_once import QueueOnce
    @shared_task(base=QueueOnce, once={{"timeout": 60}})
    def export(): ...
"""

VALID = (
    Valid(django_project("""
        CELERY_BROKER_URL = "redis://redis:6379/0"
        CELERY_TASK_TIME_LIMIT = 600
        CELERY_TASK_SOFT_TIME_LIMIT = 540
    """, extra="""
        # the expiry is above the app's limit; a task's own limit wins over the app's
        # file: proj/tasks.py
        from celery import shared_task
        from celery_once import QueueOnce
        from celery_singleton import Singleton
        from proj.celery import app
        @shared_task(base=QueueOnce, once={"timeout": 900})
        def export(): ...
        @app.task(base=Singleton, lock_expiry=120, time_limit=60)
        def sync(): ...
    """)),
    # the limit comes from the environment in one profile: unknown there
    Valid(_PROFILES.format(staging='CELERY_TASK_TIME_LIMIT = int(os.environ["LIMIT"])')),
    # one profile lifts the limit: the lock cannot outlive a task that has none there
    Valid(_PROFILES.format(staging="CELERY_TASK_TIME_LIMIT = None")),
    Valid(django_project("""
        CELERY_BROKER_URL = "redis://redis:6379/0"
        CELERY_TASK_TIME_LIMIT = 600
        CELERY_TASK_ANNOTATIONS = {"proj.tasks.export": {"time_limit": 30}}
    """, extra="""
        # annotations may set the task's limit
        # file: proj/tasks.py
        from celery import shared_task
        from celery_once import QueueOnce
        @shared_task(base=QueueOnce, once={"timeout": 60})
        def export(): ...
    """)),
    Valid("""
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost", task_time_limit=600)
        # file: proj/tasks.py
        from celery_singleton import Singleton
        from proj.celery import app
        @app.task(base=Singleton, lock_expiry=60)
        def sync(): ...
        # file: Procfile
        worker: celery -A proj worker --time-limit=30
    """),
    Valid("""
        # two apps run tasks: the app of a shared_task is not known
        # file: proj/__init__.py
        # file: proj/one.py
        from celery import Celery
        app = Celery("one", broker="redis://localhost", task_time_limit=600)
        # file: proj/two.py
        from celery import Celery
        app = Celery("two", broker="redis://localhost", task_time_limit=600)
        # file: proj/tasks.py
        from celery import shared_task
        from celery_singleton import Singleton
        @shared_task(base=Singleton, lock_expiry=60)
        def sync(): ...
    """),
)

INVALID = (
    Invalid(django_project("""
        CELERY_BROKER_URL = "redis://redis:6379/0"
        CELERY_TASK_TIME_LIMIT = 600
    """, extra="""
        # file: proj/tasks.py
        from celery import shared_task
        from celery_once import QueueOnce
        @shared_task(base=QueueOnce, once={"timeout": 60})
        def export(): ...
        @shared_task(base=QueueOnce, once={"timeout": 900})
        def fine(): ...
    """), count=1, at="3:47",
        message="before its app's `task_time_limit` (proj/settings.py) of 600 s (the task sets no limit of its own)"),
    Invalid("""
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        app.conf.update(task_soft_time_limit=300, task_time_limit=360)
        # file: proj/tasks.py
        from celery_singleton import Singleton
        from proj.celery import app
        @app.task(base=Singleton, lock_expiry=120)
        def sync(): ...
        class Nightly(Singleton):
            lock_expiry = 30
            def run(self): ...
    """, count=2, message="`task_time_limit` (proj/celery.py) of 360 s"),
    # every profile sets a limit above the expiry: the shortest is named, with its profile
    Invalid(_PROFILES.format(staging="CELERY_TASK_TIME_LIMIT = 300"), count=1,
            message="of 300 s (the task sets no limit of its own, settings profile `proj.settings.staging`)"),
    Invalid("""
        # the expiry of the configuration against the app's limit
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost", task_time_limit=7200)
        app.conf.singleton_lock_expiry = 600
        task = app.task(bind=True)
        # file: proj/tasks.py
        from celery_singleton import Singleton
        from proj.celery import app
        unique = app.task(base=Singleton)
        @unique
        def sync(): ...
    """, count=1, message="600 s (`singleton_lock_expiry` of the configuration), before its app's"),
)
