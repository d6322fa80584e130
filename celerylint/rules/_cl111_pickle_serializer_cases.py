"""CL111 cases: configuration given as a module object, a class, or a dict
unpacked into ``app.conf.update(**...)`` / ``Celery(..., **...)``."""

from ..rule import Invalid, Valid

VALID = (
    # djcelery installed but its loader not set up: no app, nothing read
    Valid("""
        # file: proj/__init__.py
        # file: proj/settings.py
        import djcelery
        INSTALLED_APPS = ["djcelery"]
        CELERY_TASK_SERIALIZER = "pickle"
    """),
    # the dict is filled in a loop: unknown, nothing reported
    Valid("""
        # file: proj.py
        from celery import Celery
        from proj_env import PAIRS
        CONFIG = {"broker_url": "redis://localhost:6379/0"}
        for key, value in PAIRS:
            CONFIG[key] = value
        app = Celery("proj")
        app.conf.update(**CONFIG)
    """),
    # a dict imported from another module: changed there (unknown), not
    # linted (unknown), or overridden by a later line of the app's file
    Valid("""
        # file: proj/__init__.py
        # file: proj/conf.py
        import os
        CELERY_CONFIG = {"task_serializer": "pickle"}
        CELERY_CONFIG.update(os.environ.get("EXTRA", {}))
        # file: proj/worker.py
        from celery import Celery
        from proj.conf import CELERY_CONFIG
        app = Celery("proj")
        app.conf.update(**CELERY_CONFIG)
    """),
    Valid("""
        # file: proj/__init__.py
        # file: proj/worker.py
        from celery import Celery
        from vendored_conf import CELERY_CONFIG
        app = Celery("proj", **CELERY_CONFIG)
    """),
    Valid("""
        # file: proj/__init__.py
        # file: proj/conf.py
        CELERY_CONFIG = {"task_serializer": "pickle", "accept_content": ["json"]}
        # file: proj/worker.py
        from celery import Celery
        from proj.conf import CELERY_CONFIG
        app = Celery("proj")
        app.conf.update(**CELERY_CONFIG)
        app.conf.task_serializer = "json"
    """),
    # a module-level name of an imported module that is not a module: unknown
    Valid("""
        # file: proj.py
        from celery import Celery
        from settings import conf
        app = Celery("proj")
        app.config_from_object(conf)
    """),
)

INVALID = (
    # an accept set (ocf/ocfweb): read, reported, not rewritten; so the serializers are not
    # switched to JSON either, which the workers would then refuse
    Invalid("""
        # file: celeryconfig.py
        task_serializer = "pickle"
        result_serializer = "pickle"
        accept_content = {"pickle"}
        # file: proj.py
        from celery import Celery
        app = Celery("proj")
        app.config_from_object("celeryconfig")
    """, fixed=None, count=3),
    # a task that declares pickle (SuperAGI): no fix for the accept list, whose
    # change would make the workers refuse that task's messages
    Invalid("""
        # file: proj.py
        from celery import Celery
        app = Celery("proj", broker="redis://localhost")
        app.conf.accept_content = ["application/json", "application/x-python-serialize"]
        @app.task(serializer="pickle")
        def summarize(resource): ...
        @app.task
        def plain(x): ...
    """, fixed=None, at="3:27", message='task `summarize` declares `serializer="pickle"`'),
    # a dict of another module of the project unpacked into app.conf.update / Celery(...)
    Invalid("""
        # file: proj/__init__.py
        # file: proj/conf.py
        CELERY_CONFIG = {"broker_url": "redis://localhost:6379/0", "task_serializer": "pickle"}
        # file: proj/worker.py
        from celery import Celery
        from proj.conf import CELERY_CONFIG
        app = Celery("proj")
        app.conf.update(**CELERY_CONFIG)
    """, message="`task_serializer` is 'pickle'"),
    Invalid("""
        # file: proj/__init__.py
        # file: proj/conf.py
        CELERY_CONFIG = {"accept_content": ["pickle", "json"]}
        # file: proj/worker.py
        from celery import Celery
        from proj import conf
        app = Celery("proj", **conf.CELERY_CONFIG)
    """, message="`accept_content` allows pickle"),
    Invalid("""
        # file: celeryconfig.py
        broker_url = "redis://localhost:6379/0"
        task_serializer = "pickle"
        # file: proj.py
        import celeryconfig
        from celery import Celery
        app = Celery("proj")
        app.config_from_object(celeryconfig)
    """, message="pickle"),
    Invalid("""
        # file: proj.py
        from celery import Celery
        CELERY_CONFIG = {"broker_url": "redis://localhost:6379/0", "task_serializer": "pickle"}
        app = Celery("proj")
        app.conf.update(**CELERY_CONFIG)
    """, message="pickle"),
    Invalid("""
        # file: proj.py
        from celery import Celery
        CONF = {"broker_url": "redis://localhost:6379/0"}
        CONF["task_serializer"] = "pickle"
        app = Celery("proj", **CONF)
    """, message="pickle"),
    Invalid("""
        # file: proj.py
        from celery import Celery
        class Config:
            broker_url = "redis://localhost:6379/0"
            task_serializer = "pickle"
        app = Celery("proj")
        app.config_from_object(Config)
    """, message="pickle"),
    # Django settings assembled from star imports of a settings package, in a
    # module whose path does not look like settings
    Invalid("""
        # file: config/__init__.py
        # file: config/celery.py
        import os
        from celery import Celery
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.django.base")
        app = Celery("proj")
        app.config_from_object("django.conf:settings", namespace="CELERY")
        # file: config/django/__init__.py
        # file: config/django/base.py
        DEBUG = False
        from config.settings.celery import *  # noqa
        from config.settings.cache import *  # noqa
        # file: config/settings/__init__.py
        # file: config/settings/celery.py
        CELERY_BROKER_URL = "redis://redis:6379/0"
        CELERY_TASK_SERIALIZER = "pickle"
        # file: config/settings/cache.py
        CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    """, message="pickle"),
    # django-celery: ``djcelery.setup_loader()`` makes the Django settings the configuration
    Invalid("""
        # file: manage.py
        import os
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
        # file: proj/__init__.py
        # file: proj/settings.py
        import djcelery
        djcelery.setup_loader()
        BROKER_URL = "redis://localhost:6379/0"
        CELERY_TASK_SERIALIZER = "pickle"
    """, message="pickle"),
)
