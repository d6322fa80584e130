"""CL113 cases: settings modules made for the tests whatever their name
(named only by pytest's or CI's configuration; eager beside a test database)."""

from ..rule import Invalid, Valid

_PACKAGE = """
    # file: proj/__init__.py
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.prod")
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: proj/settings/__init__.py
    # file: proj/settings/base.py
    CELERY_BROKER_URL = "redis://redis:6379/0"
    CELERY_TASK_ACKS_LATE = True
    CELERY_TASK_REJECT_ON_WORKER_LOST = True
    CELERY_WORKER_PREFETCH_MULTIPLIER = 1
    # file: proj/settings/prod.py
    from .base import *
"""

VALID = (
    Valid(_PACKAGE + """
    # file: proj/settings/qa.py
    from .base import *
    CELERY_TASK_ALWAYS_EAGER = True
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
    """),
    Valid(_PACKAGE + """
    # file: proj/settings/gate.py
    from .base import *
    CELERY_TASK_ALWAYS_EAGER = True
    # file: pytest.ini
    [pytest]
    DJANGO_SETTINGS_MODULE = proj.settings.gate
    """),
    Valid(_PACKAGE + """
    # file: proj/settings/gate.py
    from .base import *
    CELERY_TASK_ALWAYS_EAGER = True
    # file: pyproject.toml
    [tool.pytest.ini_options]
    DJANGO_SETTINGS_MODULE = "proj.settings.gate"
    # file: .github/workflows/ci.yml
    env:
      DJANGO_SETTINGS_MODULE: proj.settings.gate
    """),
)

INVALID = (
    Invalid(_PACKAGE + """
    # file: proj/settings/staging.py
    from .base import *
    CELERY_TASK_ALWAYS_EAGER = True
    DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "shop"}}
    """, message="`CELERY_TASK_ALWAYS_EAGER` is True in proj/settings/staging.py"),
    Invalid(_PACKAGE + """
    # file: proj/settings/gate.py
    from .base import *
    CELERY_TASK_ALWAYS_EAGER = True
    # file: pytest.ini
    [pytest]
    DJANGO_SETTINGS_MODULE = proj.settings.gate
    # file: Procfile
    web: DJANGO_SETTINGS_MODULE=proj.settings.gate gunicorn proj.wsgi
    """, message="`CELERY_TASK_ALWAYS_EAGER` is True in proj/settings/gate.py"),
)
