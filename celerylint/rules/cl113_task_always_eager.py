from __future__ import annotations

import re

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.profiles import test_profiles
from ..domain.celeryconf.rulebase import ConfigRule, assignments_once, settings_everywhere
from ..rule import Invalid, Valid, django_project

# settings files for tests, development, a developer's machine or CI:
# "test", "dev" and "local" anywhere in the name (settings_test.py,
# development.py, local_settings.py), "ci" as a word of it (ci.py, settings_ci.py)
_NOT_PRODUCTION = re.compile(r"test|dev|local|(?:^|[_.\-])ci(?:$|[_.\-])", re.IGNORECASE)


def not_production(path: str) -> bool:
    """The settings file is named as one for tests, development or CI (for a
    package's ``__init__.py``, the package's name)."""
    parts = path.split("/")
    name = parts[-1][:-3] if parts[-1].endswith(".py") else parts[-1]
    if name == "__init__" and len(parts) > 1:
        name = parts[-2]
    return bool(_NOT_PRODUCTION.search(name))


class TaskAlwaysEager(ConfigRule):
    """
    ## What it does
    Checks that `task_always_eager` (`CELERY_TASK_ALWAYS_EAGER`, old name
    `CELERY_ALWAYS_EAGER`) is not `True` in a configuration that may be used
    in production. Settings in test paths are not read at all, and settings
    files named for tests, development, a local machine or CI
    (`settings/test.py`, `dev.py`, `development.py`, `local_settings.py`,
    `settings_ci.py`) are not reported; nor is an app whose Django settings
    module (as `DJANGO_SETTINGS_MODULE` names it) is one of those, since the
    production settings are then not the ones read.

    ## Why is this bad?
    With `task_always_eager = True`, `delay()` and `apply_async()` do not
    send a message: the task runs at once, inside the caller. A web request
    then waits for every task it starts, `countdown`/`eta` are ignored,
    `retry()` runs again immediately, time limits and `acks_late` do not
    apply, and the workers receive nothing. It is a testing switch (Celery's
    documentation says so); set in shared or production settings, it quietly
    turns the task queue off.

    It does not report a value that is conditional (`if DEBUG:`), read from
    the environment (`env.bool("CELERY_EAGER", default=True)`: production
    is expected to set it), or that celerylint cannot read
    (`CELERY_TASK_ALWAYS_EAGER = DEBUG` where `DEBUG` comes from elsewhere).

    ## Example
    ```python
    # celeryconfig.py
    broker_url = "redis://redis:6379/0"
    task_always_eager = True
    ```

    Use instead:
    ```python
    # celeryconfig.py
    broker_url = "redis://redis:6379/0"
    ```

    ## Fix safety
    No fix: whether the tests need the setting, and where it belongs (a test
    settings module, a pytest fixture with `app.conf.task_always_eager`),
    is a decision.

    ## References
    - [Celery: task_always_eager](https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-always-eager)
    - [Celery: testing](https://docs.celeryq.dev/en/stable/userguide/testing.html)
    """

    CODE = "CL113"
    NAME = "task-always-eager"
    SEVERITY = "warning"
    SUMMARY = "`task_always_eager = True` outside test settings: tasks run inline in the caller, the queue is bypassed"
    HINT = "move `task_always_eager` to test settings or a test fixture"
    TAGS = ("configuration",)

    VALID = (
        Valid(django_project("""
            CELERY_TASK_ALWAYS_EAGER = True
        """, module="proj.settings.test")),
        Valid(django_project("""
            from .base import *
            CELERY_TASK_ALWAYS_EAGER = True
        """, module="proj.settings.local", extra="""
            # file: proj/settings/__init__.py
            # file: proj/settings/base.py
            CELERY_BROKER_URL = "redis://redis:6379/0"
        """)),
        Valid(django_project("""
            CELERY_TASK_ALWAYS_EAGER = True
        """, module="proj.settings_ci")),
        Valid(django_project("""
            DEBUG = False
            if DEBUG:
                CELERY_TASK_ALWAYS_EAGER = True
        """)),
        # set again under a condition to another value: unknown
        Valid(django_project("""
            import os
            CELERY_TASK_ALWAYS_EAGER = True
            if os.environ.get("WORKERS"):
                CELERY_TASK_ALWAYS_EAGER = False
        """)),
        Valid(django_project("""
            import environ
            env = environ.Env()
            CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=True)
        """)),
        Valid(django_project("""
            from .flags import DEBUG
            CELERY_TASK_ALWAYS_EAGER = DEBUG
            CELERY_TASK_EAGER_PROPAGATES = True
        """)),
        Valid("""
            # file: tests/conftest.py
            from proj import app
            app.conf.task_always_eager = True
            # file: proj/__init__.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.task_always_eager = False
            ALWAYS_EAGER = True
        """),
    )
    INVALID = (
        # set again under a condition to the same value (onadata's docker
        # settings): True on every path
        Invalid(django_project("""
            import os
            TESTING = os.environ.get("TESTING") == "1"
            CELERY_TASK_ALWAYS_EAGER = True
            if TESTING:
                CELERY_TASK_ALWAYS_EAGER = True
                CELERY_RESULT_BACKEND = "cache"
        """), at="3:28", message="`CELERY_TASK_ALWAYS_EAGER` is True"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.task_always_eager = True
        """, at="3:30", message="`task_always_eager` is True"),
        Invalid(django_project("""
            BROKER_URL = "redis://redis:6379/0"
            CELERY_ALWAYS_EAGER = True
        """, celery=(
            "import os\n"
            "from celery import Celery\n"
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
            'app = Celery("proj")\n'
            'app.config_from_object("django.conf:settings")\n'
        )), message="`CELERY_ALWAYS_EAGER` is True", fixed=None),
        Invalid(django_project("""
            from .base import *
            DEBUG = False
        """, module="proj.settings.production", extra="""
            # file: proj/settings/__init__.py
            # file: proj/settings/base.py
            CELERY_BROKER_URL = "redis://redis:6379/0"
            CELERY_TASK_ALWAYS_EAGER = True
        """), message="proj/settings/base.py"),
    )

    def check_model(self, m: Model):
        for configuration, value in assignments_once(settings_everywhere(m, "task_always_eager")):
            if value.value is not True or value.env:
                continue
            a = value.at
            if not_production(a.path) or not_production(configuration.path):
                continue
            if a.path in test_profiles(m) or configuration.path in test_profiles(m):
                continue
            yield self.at_assignment(a, f"`{a.name}` is True in {a.path}, which is not a test or development "
                                        "settings file: tasks run inline in the caller instead of on a worker "
                                        "(countdowns, retries, time limits and acks_late do not apply)")
