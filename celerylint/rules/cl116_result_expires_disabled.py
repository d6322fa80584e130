from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, assignments_once, settings_everywhere
from ..domain.celeryconf.values import NULL, number
from ..facts.result_tables import RESULT_TABLE_FACT
from ..rule import Invalid, Valid, django_project


def backend_in_use(value) -> bool:
    """A result backend is configured: a literal URL other than the ones
    whose results are not kept in a store (``rpc://`` sends them back as
    messages), or a value read from the environment.  A backend class
    named by its import path (``pkg.backends.JobResultBackend``; Celery
    imports a name that is not one of its aliases) keeps and deletes
    results as that class does: unknown."""
    if value.at is None:
        return False
    if value.is_set and isinstance(value.value, str):
        url = value.value.strip().lower()
        name = url.partition("://")[0].partition("+")[0]
        return bool(url) and not url.startswith(("rpc", "disabled")) and "." not in name and ":" not in name
    if value.env:  # the environment names it; its default may be empty
        return True
    from ..domain.celeryconf.values import plain

    return plain(value.at.value)[1] is not None  # an environment variable without a default


def _records(m: Model, backend) -> bool:
    """The SQLAlchemy backend's table is a model of the project (its task
    history): results are kept on purpose (facts/result_tables.py)."""
    url = backend.value if backend.is_set and isinstance(backend.value, str) else ""
    return url.strip().lower().startswith("db+") and bool(m.by_kind[RESULT_TABLE_FACT])


class ResultExpiresDisabled(ConfigRule):
    """
    ## What it does
    Checks that `result_expires` (old name `CELERY_TASK_RESULT_EXPIRES`) is
    not `None` or `0` in a configuration that sets a result backend.

    ## Why is this bad?
    `None` or `0` means results never expire. Every task's result (its return
    value, or the traceback of its failure) then stays in the backend
    forever: a Redis backend grows until it hits `maxmemory` (and starts
    evicting, or refusing writes, broker keys included when it shares the
    instance), a database backend grows its `celery_taskmeta` table without
    bound, because `celery.backend_cleanup`, the beat task that deletes old
    results, does nothing without an expiry. Celery's default is one day.

    It does not report a configuration that ignores results
    (`task_ignore_result = True`), an `rpc://` backend (results are messages
    there, not stored), a configuration with no result backend, or one whose
    backend or expiry celerylint cannot read (a function's return value,
    `os.environ["X"]`). A backend read from the environment
    (`os.environ.get("RESULT_BACKEND")`) counts as set. A backend class
    given by its import path (`"myapp.backends.JobResultBackend"`) is not
    judged: whether and how it deletes old results is up to that class
    (Nautobot keeps job results as history and prunes them with a job of
    its own). Nor is a database backend whose table the project maps as a
    model of its own (`class Meta: db_table = "celery_taskmeta"`, or
    SQLAlchemy's `__tablename__`): the results are its task history.

    ## Example
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    result_backend = "redis://localhost:6379/1"
    result_expires = None
    ```

    Use instead:
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    result_backend = "redis://localhost:6379/1"
    result_expires = 86400  # seconds: results are kept for a day
    ```

    ## Fix safety
    The fix sets the value to `86400` (one day, Celery's default). It is
    unsafe: code that reads results later than that (a report fetched the next
    week, a chord waiting on old results) no longer finds them; pick the
    longest time anything reads a result. A value that is the default of an
    environment variable is reported without a fix.

    ## References
    - [Celery: result_expires](https://docs.celeryq.dev/en/stable/userguide/configuration.html#result-expires)
    - [Celery: celery.backend_cleanup](https://docs.celeryq.dev/en/stable/userguide/periodic-tasks.html)
    """

    CODE = "CL116"
    NAME = "result-expires-disabled"
    SEVERITY = "warning"
    SUMMARY = "`result_expires` is None or 0 with a result backend: results are never deleted and the backend grows forever"
    FIX = "unsafe"
    TAGS = ("configuration", "results")

    VALID = (
        Valid("""
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            result_expires = None
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost", backend="redis://localhost/1")
            app.conf.result_expires = 3600
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost", backend="rpc://")
            app.conf.result_expires = None
        """),
        # a backend class of the project: how long it keeps results is its own business
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_RESULT_BACKEND = "proj.celery_backends.JobResultBackend"
            CELERY_RESULT_EXPIRES = None
        """)),
        # the result table is the project's task history
        Valid("""
            # file: proj/celeryconfig.py
            result_backend = "db+postgresql://db/celery"
            result_expires = None
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("proj.celeryconfig")
            # file: web/models.py
            from django.db import models
            class TaskHistory(models.Model):
                task_id = models.CharField(max_length=255)
                class Meta:
                    managed = False
                    db_table = "celery_taskmeta"
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost", backend="redis://localhost/1")
            app.conf.task_ignore_result = True
            app.conf.result_expires = None
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost", backend="redis://localhost/1")
            app.conf.result_expires = EXPIRY
            app.conf.result_chord_expires = None
        """),
        Valid(django_project("""
            CELERY_RESULT_BACKEND = load_backend_url()
            CELERY_RESULT_EXPIRES = None
        """)),
        Valid(django_project("""
            CELERY_RESULT_BACKEND = "django-db"
            CELERY_RESULT_EXPIRES = 7 * 24 * 3600
            SESSION_EXPIRES = None
        """)),
    )
    INVALID = (
        Invalid(
            django_project("""
                import os
                CELERY_RESULT_BACKEND = os.environ.get("RESULT_BACKEND")
                CELERY_RESULT_EXPIRES = 0
            """),
            fixed="""
                # file: proj/settings.py
                import os
                CELERY_RESULT_BACKEND = os.environ.get("RESULT_BACKEND")
                CELERY_RESULT_EXPIRES = 86400
            """,
            at="3:25", message="`CELERY_RESULT_EXPIRES` is 0",
        ),
        Invalid(
            """
            # file: celeryconfig.py
            CELERY_RESULT_BACKEND = "redis://localhost:6379/1"
            CELERY_TASK_RESULT_EXPIRES = None
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """,
            fixed="""
            # file: celeryconfig.py
            CELERY_RESULT_BACKEND = "redis://localhost:6379/1"
            CELERY_TASK_RESULT_EXPIRES = 86400
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from datetime import timedelta
            from celery import Celery as C
            app = C("proj", backend="db+postgresql://db/results")
            app.conf.update(result_expires=timedelta(seconds=0))
            """,
            fixed="""
            # file: proj.py
            from datetime import timedelta
            from celery import Celery as C
            app = C("proj", backend="db+postgresql://db/results")
            app.conf.update(result_expires=86400)
            """,
        ),
        Invalid(
            """
            # file: proj.py
            import os
            from celery import Celery
            app = Celery("proj", backend="redis://localhost/1", result_expires=os.getenv("EXPIRES", None))
            """,
            fixed=None, message="environment variable EXPIRES",
        ),
        Invalid(
            """
            # file: proj.py
            import os
            from celery import Celery as C
            app = C("proj", backend="db+postgresql://db/results")
            app.conf.update(result_expires=int(os.environ.get("RESULT_EXPIRES", 0)))
            """,
            fixed=None,
        ),
    )

    def check_model(self, m: Model):
        for get, value in assignments_once(settings_everywhere(m, "result_expires")):
            seconds = number(value.value)
            if not (value.value is NULL or seconds == 0):
                continue
            backend = get("result_backend")
            if not backend_in_use(backend) or _records(m, backend):
                continue
            ignore = get("task_ignore_result")
            if ignore.is_unknown or ignore.truthy:
                continue
            a = value.at
            fix = None if value.env else a.fix_replacing("86400", "keep results for a day (Celery's default): set "
                                                                   f"`{a.name}` to 86400")
            yield self.at_assignment(a, f"`{a.name}` is {value.shown()} while a result backend is set: results never "
                                        "expire, and the backend grows until it runs out of memory or disk", fix)
