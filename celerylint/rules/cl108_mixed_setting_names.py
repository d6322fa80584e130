from __future__ import annotations

from ..domain.celeryconf.model import Model, Source
from ..domain.celeryconf.rulebase import ConfigRule, sources
from ..domain.celeryconf.settings_table import Table, table
from ..rule import Invalid, Valid


def mixed(source: Source, t: Table) -> list[tuple[str, str]]:
    """``(name, rename)`` pairs Celery refuses to start with, following
    ``celery.app.utils.detect_settings``: the majority spelling wins, and
    every key of the other spelling without its counterpart is an error.
    A namespace always means the new spelling and never mixes."""
    if source.namespace:
        return []
    have = {n for n in source.by_name if n.isupper() or not source.django}
    new, old = have & t.new, have & t.old
    if len(old) > len(new):
        return sorted((n, t.to_old[n]) for n in new if t.to_old[n] not in have)
    return sorted((n, t.to_new[n]) for n in old if t.to_new[n] not in have)


class MixedSettingNames(ConfigRule):
    """
    ## What it does
    Finds a settings source (a configuration module, or Django settings
    loaded without a namespace) that mixes old upper-case setting names
    (`CELERY_ACKS_LATE`, `BROKER_URL`) with new lower-case ones
    (`task_acks_late`, `broker_url`), the way Celery detects it: the
    majority spelling wins and every name of the other spelling is an
    error, unless its counterpart is also given.

    ## Why is this bad?
    Celery refuses to start: reading the configuration raises
    `ImproperlyConfigured: Cannot mix new and old setting keys`. The error
    appears at the first access to `app.conf`, often only when the worker
    starts in production.

    ## Example
    ```python
    # celeryconfig.py
    BROKER_URL = "redis://localhost:6379/0"
    CELERY_ACKS_LATE = True
    worker_prefetch_multiplier = 1
    ```

    Use instead:
    ```python
    # celeryconfig.py
    broker_url = "redis://localhost:6379/0"
    task_acks_late = True
    worker_prefetch_multiplier = 1
    ```

    ## Fix safety
    No fix for the mix itself; `deprecated-setting-name` (CL109) renames
    every old name of a source at once, which removes the mix.

    ## References
    - [Celery: new lowercase settings](https://docs.celeryq.dev/en/stable/userguide/configuration.html#new-lowercase-settings)
    """

    CODE = "CL108"
    NAME = "mixed-setting-names"
    SEVERITY = "error"
    SUMMARY = "Old upper-case and new lower-case setting names in one settings source: Celery refuses to start"
    HINT = "use one spelling in the whole source (`celery upgrade settings` converts a module)"
    TAGS = ("configuration",)

    VALID = (
        Valid("""
            # file: celeryconfig.py
            broker_url = "redis://localhost:6379/0"
            task_acks_late = True
        """),
        Valid("""
            # file: celeryconfig.py
            BROKER_URL = "redis://localhost:6379/0"
            CELERY_ACKS_LATE = True
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            CELERYD_PREFETCH_MULTIPLIER = 1
            BROKER_URL = "redis://"
        """),
        Valid("""
            # file: celeryconfig.py
            CELERY_ACKS_LATE = True
            task_acks_late = True
            broker_url = "redis://"
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://")
            app.conf.CELERY_ACKS_LATE = True
            app.conf.worker_prefetch_multiplier = 1
        """),
    )
    INVALID = (
        Invalid(
            """
            # file: celeryconfig.py
            CELERY_ACKS_LATE = True
            worker_prefetch_multiplier = 1
            broker_url = "redis://localhost"
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            CELERYD_CONCURRENCY = 4
            CELERY_ACKS_LATE = True
            broker_url = "redis://localhost"
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/worker_config.py
            BROKER_URL = "redis://localhost"
            task_acks_late = True
            # file: proj/app.py
            from celery import Celery as Make
            app = Make("proj")
            app.config_from_object("proj.worker_config")
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: conf/__init__.py
            # file: conf/base.py
            BROKER_URL = "redis://localhost"
            CELERY_ACKS_LATE = True
            # file: conf/celeryconfig.py
            from conf.base import *
            worker_prefetch_multiplier = 1
            """,
            fixed=None,
        ),
        Invalid(
            """
            # file: celeryconfig.py
            import os
            broker_url = os.environ["BROKER"]
            result_backend = "redis://"
            CELERYD_MAX_TASKS_PER_CHILD = 100
            """,
            fixed=None,
        ),
    )

    def check_model(self, m: Model):
        t = table()
        for source in sources(m):
            pairs = mixed(source, t)
            if not pairs:
                continue
            first = min((source.by_name[n][-1] for n, _ in pairs), key=lambda a: (a.path != source.path, a.path, a.line))
            renames = ", ".join(f"`{n}` -> `{r}`" for n, r in pairs)
            yield self.at(f"`{source.module}` mixes old and new setting names, so Celery refuses to start "
                          f"(ImproperlyConfigured); rename {renames}", first.path, first.pos)
