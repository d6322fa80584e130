from __future__ import annotations

from ..domain.celeryconf.celery_version import unless_below_4
from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule
from ..domain.celeryconf.settings_table import table
from ..domain.celeryconf.values import plain
from ..domain.celeryconf.worker_cli import ENV_SETTINGS
from ..rule import Invalid, TextEdit, TextFix, Valid, django_project


def _the_default(a, new: str, t) -> bool:
    """``a`` sets Celery's default, literally: ignoring it changes nothing
    (``CELERY_ENABLE_UTC = True``, "the default now anyway")."""
    value, env = plain(a.value)
    return env is None and value is not None and not a.cond and value == t.defaults.get(new, _NO_DEFAULT)


_NO_DEFAULT = object()


def _also_old(a, new: str, source, t) -> bool:
    """``a`` holds the value of the old name Celery reads for the same
    setting, set in the same source (``CELERY_BROKER_URL = BROKER_URL``):
    ignoring it loses nothing.  So does an environment variable Celery
    reads itself before any setting, with that value as its default
    (``os.environ.get("CELERY_BROKER_URL", BROKER_URL)``)."""
    value = a.value
    if isinstance(value, dict) and "env" in value and ENV_SETTINGS.get(value["env"]) == new:
        value = value.get("default")
    if a.cond or plain(value) == (None, None):  # unknown: maybe another value
        return False
    return any(b.name in t.old and t.to_new.get(b.name) == new and not b.cond and _core(b.value) == _core(value)
               for b in source.assignments)


def _core(value):
    """An encoded value without how it is shown: a variable read without a
    default, named or not (``{"same": "env:X", "shown": "NAME", "env": "X"}``),
    is ``{"env": "X"}``."""
    if isinstance(value, dict) and "env" in value and not value.get("suffix"):
        return {"env": value["env"], "default": value.get("default")}
    return value


class SettingsNamespaceMismatch(ConfigRule):
    """
    ## What it does
    Finds Django settings that hold `CELERY_`-prefixed new-style names
    (`CELERY_BROKER_URL`, `CELERY_TASK_ACKS_LATE`) while the app loads them
    with `config_from_object("django.conf:settings")` without
    `namespace="CELERY"`, or with a lower-case namespace (a `namespace=`
    given to `Celery(...)` counts, as in Celery, for its `config_source=`
    and for a later `config_from_object` without one). Names that are
    also valid old names (`CELERY_RESULT_BACKEND`, `CELERY_TIMEZONE`) work
    either way and are not counted, nor are names set literally to Celery's
    default or to the value of the old name Celery reads for the same
    setting (`CELERY_BROKER_URL = BROKER_URL`, or
    `os.environ.get("CELERY_BROKER_URL", BROKER_URL)`, a variable Celery
    reads itself first: ignoring them changes nothing), nor names whose setting the app
    sets itself, as a project copying them by hand does
    (`app.conf.beat_schedule = app.conf.CELERY_BEAT_SCHEDULE`,
    `app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER`).

    A project whose dependency files pin Celery below 4 (`celery==3.1.25`
    in `requirements.txt`, `Pipfile`, `pyproject.toml`, `setup.cfg` or
    `setup.py`) is not judged: Celery 3's names are its names.

    ## Why is this bad?
    Without the namespace Celery looks for `broker_url`/`BROKER_URL`, not
    `CELERY_BROKER_URL`: every such setting is silently ignored. The broker
    falls back to `amqp://guest@localhost//`, acks_late stays off, time
    limits vanish, and nothing says so.

    ## Example
    ```python
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
    app = Celery("proj")
    app.config_from_object("django.conf:settings")
    # file: proj/settings.py
    CELERY_BROKER_URL = "redis://localhost:6379/0"
    CELERY_TASK_ACKS_LATE = True
    ```

    Use instead:
    ```python
    # file: proj/celery.py
    import os
    from celery import Celery
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
    app = Celery("proj")
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # file: proj/settings.py
    CELERY_BROKER_URL = "redis://localhost:6379/0"
    CELERY_TASK_ACKS_LATE = True
    ```

    ## Fix safety
    The fix adds `namespace="CELERY"` (or upper-cases a lower-case one). It
    is unsafe: settings that were ignored until now take effect.

    ## References
    - [Celery: First steps with Django](https://docs.celeryq.dev/en/stable/django/first-steps-with-django.html)
    - [Celery: configuration namespaces](https://docs.celeryq.dev/en/stable/userguide/configuration.html#new-lowercase-settings)
    """

    CODE = "CL110"
    NAME = "settings-namespace-mismatch"
    SEVERITY = "error"
    SUMMARY = "`CELERY_`-prefixed Django settings loaded without `namespace=\"CELERY\"`: Celery silently ignores them"
    FIX = "unsafe"
    TAGS = ("configuration", "django")

    VALID = (
        # the namespace given to the constructor applies to its source and to
        # a later ``config_from_object`` without one
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery(config_source="django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://"
            CELERY_TASK_ACKS_LATE = True
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", namespace="CELERY")
            app.config_from_object("django.conf:settings")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://"
            CELERY_TASK_ACKS_LATE = True
        """),
        # the variable Celery reads itself first, else the old name's value
        Valid(django_project("""
            import os
            REDIS_URL = os.environ.get("REDIS_URL")
            BROKER_URL = REDIS_URL
            CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", BROKER_URL)
        """, celery=(
            "import os\nfrom celery import Celery\n"
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
            'app = Celery("proj")\napp.config_from_object("django.conf:settings")\n'))),
        # the new name only repeats the old one, which Celery reads without a namespace
        Valid(django_project("""
            BROKER_URL = "redis://localhost:6379/0"
            CELERY_BROKER_URL = BROKER_URL
        """, celery=(
            "import os\nfrom celery import Celery\n"
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
            'app = Celery("proj")\napp.config_from_object("django.conf:settings")\n'))),
        # the only name lost is set to Celery's default: losing it changes nothing
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings.py
            BROKER_URL = "amqp://rabbitmq"
            CELERY_ACKS_LATE = True
            CELERY_ENABLE_UTC = True  # the default anyway
        """),
        # each `CELERY_` name copied into the app by hand
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            import os
            from celery import Celery
            from django.conf import settings
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            app.conf.beat_schedule = app.conf.CELERY_BEAT_SCHEDULE
            app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER
            # file: proj/settings.py
            BROKER_URL = "redis://localhost:6379/0"
            CELERY_BEAT_SCHEDULE = {"ping": {"task": "proj.ping", "schedule": 60.0}}
            CELERY_TASK_ALWAYS_EAGER = False
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://"
            CELERY_TASK_ACKS_LATE = True
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings.py
            BROKER_URL = "redis://"
            CELERY_ACKS_LATE = True
            CELERY_RESULT_BACKEND = "redis://"
            CELERY_TIMEZONE = "UTC"
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="celery")
            # file: proj/settings.py
            celery_broker_url = "redis://"
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("proj.celeryconfig")
            # file: proj/celeryconfig.py
            broker_url = "redis://"
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://"
        """),
    )
    INVALID = (
        # another variable: when it is set, its value is lost
        Invalid(django_project("""
            import os
            BROKER_URL = "redis://localhost:6379/0"
            CELERY_BROKER_URL = os.environ.get("REDIS_URL", BROKER_URL)
        """, celery=(
            "import os\nfrom celery import Celery\n"
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
            'app = Celery("proj")\napp.config_from_object("django.conf:settings")\n')),
            message="so Celery silently ignores `CELERY_BROKER_URL`"),
        # the names not copied are still lost
        Invalid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            app.conf.beat_schedule = app.conf.CELERY_BEAT_SCHEDULE
            # file: proj/settings.py
            CELERY_BEAT_SCHEDULE = {}
            CELERY_TASK_ACKS_LATE = True
        """, message="so Celery silently ignores `CELERY_TASK_ACKS_LATE`"),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            """,
            fixed="""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            import os
            from celery import Celery as C
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = C("proj")
            app.config_from_object("django.conf:settings", namespace="celery")
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            """,
            fixed="""
            # file: proj/celery.py
            import os
            from celery import Celery as C
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")
            app = C("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object(
                "django.conf:settings",
            )
            # file: proj/settings.py
            CELERY_WORKER_PREFETCH_MULTIPLIER = 1
            """,
            fixed="""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object(
                "django.conf:settings", namespace="CELERY",
            )
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/worker.py
            from celery import Celery
            from django.conf import settings
            app = Celery("proj")
            app.config_from_object(settings)
            # file: proj/settings.py
            CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 7200}
            """,
            fixed="""
            # file: proj/worker.py
            from celery import Celery
            from django.conf import settings
            app = Celery("proj")
            app.config_from_object(settings, namespace="CELERY")
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings")
            # file: proj/settings/__init__.py
            from .base import *
            # file: proj/settings/base.py
            CELERY_BROKER_URL = "redis://"
            CELERY_ACKS_LATE = True
            """,
            fixed="""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            """,
        ),
    )

    def check_model(self, m: Model):
        return unless_below_4(m, self._findings(m))  # Celery 3's names are the project's (celery_version.py)

    def _findings(self, m: Model):
        t = table()
        for app in m.relevant_apps():
            source, config = app.source, app.config
            if source is None or not source.django or (source.namespace and source.namespace.isupper()):
                continue
            # a name whose setting the app sets itself (copied by hand: ``app.conf.beat_schedule =
            # app.conf.CELERY_BEAT_SCHEDULE``) is not lost
            ignored = sorted({a.name for a in source.assignments
                              if a.name.isupper() and a.name not in t.old
                              and (new := t.canonical(a.name, "CELERY")) and new not in app.preconf
                              and not _the_default(a, new, t) and not _also_old(a, new, source, t)})
            if not ignored:
                continue
            shown = ", ".join(f"`{n}`" for n in ignored[:4]) + (f" and {len(ignored) - 4} more" if len(ignored) > 4 else "")
            fix = None
            ns = app.config_args.get("config_source_namespace")
            last = app.config_args.get("config_source_last_arg")
            if source.namespace:
                pos = (ns["line"], ns["col"], ns["end_line"], ns["end_col"]) if ns else None
                if pos:
                    fix = TextFix('use namespace="CELERY"', (TextEdit(*pos, '"CELERY"'),), False, ns["path"])
                how = f"with the lower-case namespace {source.namespace!r}"
            else:
                if last is not None:
                    at = (last["end_line"], last["end_col"])
                    fix = TextFix('add namespace="CELERY"', (TextEdit(*at, *at, ', namespace="CELERY"'),), False, last["path"])
                how = "without `namespace=\"CELERY\"`"
            yield self.at(f"the Django settings are loaded {how}, so Celery silently ignores {shown}",
                          config["path"], (config["line"], config["col"], config["end_line"], config["end_col"]), fix)
