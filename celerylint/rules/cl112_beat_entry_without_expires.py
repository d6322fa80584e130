from __future__ import annotations

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.rulebase import ConfigRule, assignments_once, settings_everywhere
from ..domain.celeryconf.values import plain
from ..rule import Invalid, Valid, django_project


class BeatEntryWithoutExpires(ConfigRule):
    """
    ## What it does
    Checks that every entry of `beat_schedule` (`CELERY_BEAT_SCHEDULE`, old
    name `CELERYBEAT_SCHEDULE`) gives its messages an expiry:
    `"options": {"expires": ...}`. Entries written as dict literals are
    read, in the schedule's assignment and in later `X["name"] = {...}`
    assignments.

    This rule is off by default: enable it with
    `extend-select = ["CL112"]`.

    ## Why is this bad?
    Beat sends each entry's message on time whether or not a worker is there
    to take it. While the workers are down, busy or stuck behind a long
    queue, the messages pile up, and when the workers come back they run
    every missed occurrence one after the other: a report every minute of a
    four-hour outage is 240 reports at once. With `expires` (seconds, usually
    the entry's interval or less) a worker drops the messages whose time has
    passed and runs only the current one.

    It does not report an entry whose task declares its own
    `expires=` (`@app.task(expires=300)`, matched by the function name that
    ends the entry's `task`), schedules with `task_annotations`, entries
    celerylint cannot read (made by a function, a dict comprehension,
    `**defaults` merged into the entry, options given as a variable),
    entries of a schedule set in a condition, nor periodic tasks added at run
    time with `app.add_periodic_task(...)` or stored in a database
    (django-celery-beat): those are not read.

    ## Example
    ```python
    # celeryconfig.py
    beat_schedule = {
        "send-digest": {"task": "proj.tasks.send_digest", "schedule": 60.0},
    }
    ```

    Use instead:
    ```python
    # celeryconfig.py
    beat_schedule = {
        "send-digest": {
            "task": "proj.tasks.send_digest",
            "schedule": 60.0,
            "options": {"expires": 60},
        },
    }
    ```

    ## Fix safety
    No fix: how late a run may still start is the task's decision.

    ## References
    - [Celery: periodic tasks, available fields](https://docs.celeryq.dev/en/stable/userguide/periodic-tasks.html#available-fields)
    - [Celery: expiration](https://docs.celeryq.dev/en/stable/userguide/calling.html#expiration)
    """

    CODE = "CL112"
    NAME = "beat-entry-without-expires"
    SEVERITY = "warning"
    SUMMARY = "A beat schedule entry without `expires`: runs missed while workers are away all run when they return"
    HINT = 'add `"options": {"expires": <seconds>}` to the entry'
    TAGS = ("configuration", "beat")
    DEFAULT_ENABLED = False

    VALID = (
        # entries changed through a loop variable: unknown
        Valid("""
            # file: proj/__init__.py
            # file: proj/settings.py
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_BEAT_SCHEDULE = {
                "cleanup": {"task": "proj.tasks.work", "schedule": 300.0},
            }
            for entry in CELERY_BEAT_SCHEDULE.values():
                entry.setdefault("options", {})["expires"] = 240
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            """),
        Valid(django_project("""
            from celery.schedules import crontab
            CELERY_BEAT_SCHEDULE = {
                "cleanup": {"task": "proj.tasks.cleanup", "schedule": crontab(minute=0), "options": {"expires": 3600}},
            }
        """)),
        Valid("""
            # file: celeryconfig.py
            beat_schedule = {
                "a": {"task": "proj.tasks.a", "schedule": 60, **COMMON},
                "b": {"task": "proj.tasks.b", "schedule": 60, "options": OPTIONS},
                "c": make_entry("proj.tasks.c"),
            }
        """),
        Valid("""
            # file: celeryconfig.py
            beat_schedule = {name: {"task": name, "schedule": 60} for name in TASKS}
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.beat_schedule = {"poll": {"task": "proj.poll", "schedule": 30}}
            @app.task(expires=30)
            def poll(): ...
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            @app.on_after_configure.connect
            def setup(sender, **kwargs):
                sender.add_periodic_task(30.0, poll.s())
            @app.task
            def poll(): ...
        """),
        Valid(django_project("""
            DEBUG = False
            if DEBUG:
                CELERY_BEAT_SCHEDULE = {"a": {"task": "proj.tasks.a", "schedule": 60}}
            SCHEDULE = {"a": {"task": "proj.tasks.a", "schedule": 60}}
        """)),
    )
    INVALID = (
        Invalid(django_project("""
            from datetime import timedelta
            CELERY_BEAT_SCHEDULE = {
                "fresh": {"task": "proj.tasks.fresh", "schedule": timedelta(minutes=5), "options": {"expires": 300}},
                "stale": {"task": "proj.tasks.stale", "schedule": timedelta(minutes=5)},
                "queued": {"task": "proj.tasks.queued", "schedule": 300, "options": {"queue": "beat"}},
            }
        """), count=2, at="4:14", message="beat entry"),
        Invalid(django_project("""
            CELERYBEAT_SCHEDULE = {}
            CELERYBEAT_SCHEDULE["nightly"] = {"task": "proj.tasks.nightly", "schedule": 86400}
        """, celery=(
            "import os\n"
            "from celery import Celery\n"
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
            'app = Celery("proj")\n'
            'app.config_from_object("django.conf:settings")\n'
        )), message="'nightly'", at="2:34"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://localhost")
            app.conf.beat_schedule = {"poll": {"task": "proj.poll", "schedule": 30}}
            @app.task(expires=None)
            def other(): ...
        """, count=1),
    )

    def check_model(self, m: Model):
        expiring = {task["name"] for task in m.tasks if m.task_option(task, "expires")[1] != "unset"}
        for configuration, value in assignments_once(settings_everywhere(m, "beat_schedule")):
            if not configuration("task_annotations").is_default:
                continue
            a = value.at
            entries: dict[str, tuple] = {}
            top = a.value.get("dict") if isinstance(a.value, dict) else None
            if isinstance(top, dict):
                entries = {key: (encoded, a.value_pos or a.pos, a.path) for key, encoded in top.items()}
            for key, (encoded, pos, _, path) in a.items.items():
                entries[key] = (encoded, pos or a.value_pos or a.pos, path)
            for key, (encoded, pos, path) in entries.items():
                entry, _ = plain(encoded)
                if not isinstance(entry, dict):
                    continue  # unknown: not read
                task, _ = plain(entry.get("task"))
                if not isinstance(task, str) or task.rsplit(".", 1)[-1] in expiring:
                    continue
                if "options" in entry:
                    options, _ = plain(entry["options"])
                    if not isinstance(options, dict) or "expires" in options:
                        continue
                yield self.at(f"beat entry {key!r} ({a.name}) runs `{task}` without `expires`: while no worker takes "
                              "its messages they pile up, and every missed run executes when the workers return",
                              path, pos)
