from __future__ import annotations

from collections.abc import Iterator

from ..domain.celeryconf.celery_version import unless_below_4
from ..domain.celeryconf.model import Assignment, Model
from ..facts.conf_reads import CONF_READ
from ..domain.celeryconf.renames import already_set, rename_edit, where
from ..domain.celeryconf.rulebase import ConfigRule, sources
from ..domain.celeryconf.settings_table import Table, since, table
from ..rule import Invalid, TextFix, Valid, django_project

Assigned = dict[str, list[Assignment]]


def checked(m: Model) -> Iterator[tuple[Assignment, str | None, bool, Assigned]]:
    """``(assignment, namespace, django, the source's assignments by name)``
    for every name written in a Celery settings source: the apps'
    preconfiguration and their sources."""
    for app in m.relevant_apps():
        for assigned in app.preconf.values():
            for a in assigned:
                yield a, None, False, app.preconf
    for source in sources(m):
        for a in source.assignments:
            yield a, source.namespace, source.django, source.by_name


def settings_name(name: str, namespace: str | None, django: bool, t: Table) -> bool:
    """Is ``name`` meant as a Celery setting in this source?"""
    if django:
        return name.isupper() and name.startswith(("CELERY", "BROKER_"))
    return not name.startswith("_")


# Task options (``@app.task(max_retries=...)``, ``Task`` attributes) that have
# no app setting: written as ``task_<option>`` or ``task_default_<option>``
# they look like one, and Celery ignores them.
_TASK_OPTIONS = frozenset({
    "max_retries", "default_retry_delay", "retry_backoff", "retry_backoff_max", "retry_jitter", "autoretry_for",
    "dont_autoretry_for", "retry_kwargs", "rate_limit", "expires", "throws", "bind",
})


def task_option(name: str, namespace: str | None) -> str | None:
    """The task option a setting name spells (``task_max_retries``,
    ``CELERY_TASK_DEFAULT_RETRY_DELAY``), or None."""
    lower = name.lower()
    if namespace and lower.startswith(namespace.lower() + "_"):
        lower = lower[len(namespace) + 1:]
    for prefix in ("task_default_", "task_"):
        if lower.startswith(prefix) and lower[len(prefix):] in _TASK_OPTIONS:
            return lower[len(prefix):]
    return None


def _bare(name: str, namespace: str | None) -> str:
    """The name Celery's table holds for ``name`` written in ``namespace``."""
    prefix = (namespace or "").rstrip("_") + "_"
    return name[len(prefix):].lower() if namespace and namespace.isupper() and name.startswith(prefix) else name


def rename_fix(m: Model, a: Assignment, new: str) -> TextFix | None:
    edit = rename_edit(m, a, new)
    return TextFix(f"rename `{a.name}` to `{new}`", (edit,), False, a.path) if edit else None


class UnknownSetting(ConfigRule):
    """
    ## What it does
    Finds setting names that Celery does not know, in a Celery settings
    source (`Celery(...)` keywords, `app.conf`, a configuration module, the
    `CELERY_` names of Django settings), when they are close to a real name:
    `task_ack_late` for `task_acks_late`, or an old name written with a
    `CELERY_` it does not have (`CELERY_ENABLE_UTC`, Celery 3's spelling
    of `ENABLE_UTC`). The real names are those of every
    Celery release from 4.0 on (`celery/app/defaults.py` of each, shipped
    with celerylint), new and old spellings, with the namespace of the
    source: a name some release had is never reported, since the project
    may run that release, and a suggested name newer than Celery 4.0 says
    from which release on it exists. A task option written as a setting
    (`task_max_retries`, `task_default_retry_delay`, `CELERY_TASK_RETRY_BACKOFF`)
    is reported too, naming the option and where it belongs: on the task,
    its base class, or `task_annotations`. A name the project reads back
    from an app's `conf` (`sender.conf.get("beat_schedules")`, `conf["k"]`,
    `conf.k`) is its own key kept there, not a misspelling, and is left
    alone, as is a task option's name the project reads from Django's
    settings into that option (`max_retries = settings.CELERY_TASK_MAX_RETRIES`
    in its task class): it applies the setting itself. Any other read from
    Django's settings does not count for a task option's name or a name
    Celery once used: a view showing
    `getattr(settings, "CELERY_TASK_DEFAULT_EXPIRES")` does not make Celery
    read it. A name only close to a setting ("did you mean ...?") that the
    project reads from its settings itself (`Celery(backend=
    settings.CELERY_RESULTS_URL)`) is its own name, and is left alone.

    A project whose dependency files pin Celery below 4 (`celery==3.1.25`
    in `requirements.txt`, `Pipfile`, `pyproject.toml`, `setup.cfg` or
    `setup.py`) is not judged: Celery 3's names are its names.

    ## Why is this bad?
    Celery ignores unknown names without a word. A misspelt
    `task_ack_late = True` leaves acks_late off: the configuration reads as
    safe and is not.

    ## Example
    ```python
    # celeryconfig.py
    task_ack_late = True
    ```

    Use instead:
    ```python
    # celeryconfig.py
    task_acks_late = True
    ```

    ## Fix safety
    When exactly one real name is close, the fix renames the setting to it.
    The fixes of CL101-CL104 that would add that same setting edit the
    misspelt line instead (rename, and set the value they want), so the
    fix loop never applies both in one round and the setting is never
    written twice. It is unsafe: the setting then takes effect, which changes behaviour,
    and other code reading the misspelt name is not changed. The new name
    is written as the old one was (a string key keeps its quotes, a keyword
    stays a keyword); there is no fix when the name is not written plainly
    (a constant used as a key, a concatenation), nor when the real name is
    already set in the same source: the rename would repeat a keyword
    (a `SyntaxError`) or a key, or change which value wins.

    ## References
    - [Celery: configuration and defaults](https://docs.celeryq.dev/en/stable/userguide/configuration.html)
    """

    CODE = "CL107"
    NAME = "unknown-setting"
    SEVERITY = "warning"
    SUMMARY = "A setting name Celery does not know, close to a real one: Celery ignores it silently"
    FIX = "sometimes"
    HINT = "check the name against Celery's configuration reference"
    TAGS = ("configuration",)

    VALID = (
        # a name the project reads from its Django settings itself, close to an old name
        # (project-koku passes it to Celery as its backend): its own, no "did you mean"
        Valid(django_project("""
            CELERY_RESULTS_URL = "redis://localhost:6379/1"
        """, celery=(
            "import os\nfrom celery import Celery\nfrom django.conf import settings\n"
            'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings")\n'
            "app = Celery('proj', backend=settings.CELERY_RESULTS_URL)\n"
            'app.config_from_object("django.conf:settings", namespace="CELERY")\n'))),
        # the project applies the setting itself, to the option it names
        Valid(django_project("""
            CELERY_BROKER_URL = "redis://localhost"
            CELERY_TASK_MAX_RETRIES = 7
            CELERY_TASK_RETRY_BACKOFF = 60
        """, extra="""
            # file: proj/tasks.py
            from celery import Task, shared_task
            from django.conf import settings
            class RetryingTask(Task):
                max_retries = settings.CELERY_TASK_MAX_RETRIES
            @shared_task(base=RetryingTask, retry_backoff=getattr(settings, "CELERY_TASK_RETRY_BACKOFF", 30))
            def work(x): ...
        """)),
        # the real settings beside the task options' names
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(task_default_rate_limit="10/s", task_time_limit=60, task_default_priority=5,
                            task_annotations={"*": {"max_retries": 5}})
        """),
        Valid("""
            # file: celeryconfig.py
            task_acks_late = True
            REDIS_HOST = "localhost"
            broker_url = f"redis://{REDIS_HOST}:6379/0"
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj", broker="redis://", backend="redis://", include=["proj.tasks"])
            app.conf.update(task_acks_late=True, worker_prefetch_multiplier=1)
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            CELERY_ACKS_LATE = True
            CELERY_RESTRICT_WRITER_METHOD = "proj.db.log"
            CELERYD_PREFETCH_MULTIPLIER = 1
        """),
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.beat_schedule = {}
            app.conf["task_routes"] = {"a": "b"}
        """),
        Valid("""
            # file: other_settings.py
            task_ack_late = True
        """),
        # the project's own key, kept in ``conf`` and read back in a signal handler
        Valid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update({"beat_schedules": [{"every": 60, "task": "proj.ping"}]})
            # file: signals.py
            from proj import app
            @app.on_after_configure.connect
            def setup(sender, **kwargs):
                for entry in sender.conf.get("beat_schedules", []):
                    sender.add_periodic_task(entry["every"], app.signature(entry["task"]))
        """),
        # names of older releases: Celery 4.0's `CELERYD_SEND_EVENTS`, 4.x's
        # `task_queue_ha_policy`; the project may run one of them
        Valid("""
            # file: celeryconfig.py
            CELERYD_SEND_EVENTS = True
            task_queue_ha_policy = "all"
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
        """),
    )
    INVALID = (
        # close to an old name under the CELERY namespace (yogeshojha/rengine): named as it is now
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://localhost:6379/0"
            CELERY_IGNORE_RESULTS = True
        """), message="did you mean `CELERY_TASK_IGNORE_RESULT`?"),
        Invalid("""
            # file: celeryconfig.py
            broker_url = "redis://localhost"
            task_max_retries = 5
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("celeryconfig")
            """, message="`max_retries` is a task option"),
        Invalid("""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(task_default_retry_delay=30, task_retry_backoff=True)
            """, count=2, message="is a task option"),
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://localhost"
            CELERY_TASK_MAX_RETRIES = 3
        """), message="`max_retries` is a task option"),
        # read from Django's settings, but not into the option: shown, not applied
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://localhost"
            CELERY_TASK_MAX_RETRIES = 3
        """, extra="""
            # file: proj/views.py
            from django.conf import settings
            def limits(request):
                return {"retries": settings.CELERY_TASK_MAX_RETRIES}
        """), message="`max_retries` is a task option"),
        Invalid(
            """
            # file: proj.py
            from celery import Celery as C
            app = C("proj")
            app.conf.update(worker_prefetch_multipler=1)
            """,
            fixed="""
            # file: proj.py
            from celery import Celery as C
            app = C("proj")
            app.conf.update(worker_prefetch_multiplier=1)
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object("django.conf:settings", namespace="CELERY")
            # file: proj/settings.py
            CELERY_TASK_ACK_LATE = True
            """,
            fixed="""
            # file: proj/settings.py
            CELERY_TASK_ACKS_LATE = True
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf["task_reject_on_worker_lose"] = True
            app.conf.broker_transport_option = {"visibility_timeout": 7200}
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf["task_reject_on_worker_lost"] = True
            app.conf.broker_transport_options = {"visibility_timeout": 7200}
            """,
            count=2,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(worker_cancel_long_running_task_on_connection_loss=True)
            """,
            message="did you mean `worker_cancel_long_running_tasks_on_connection_loss` (Celery 5.1.0 and later)?",
        ),
        Invalid(django_project("""
            CELERY_BROKER_URL = "redis://localhost"
            CELERY_WORKER_DISABLE_PREFETCHING = True
        """), message="did you mean `CELERY_WORKER_DISABLE_PREFETCH` (Celery 5.6.0 and later)?"),
        Invalid(
            """
            # file: celeryconfig.py
            # Celery 3's spelling: a configuration module without a namespace has no `CELERY_` before these
            BROKER_URL = "redis://localhost"
            CELERY_ENABLE_UTC = True
            CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 7200}
            """,
            fixed="""
            # file: celeryconfig.py
            # Celery 3's spelling: a configuration module without a namespace has no `CELERY_` before these
            BROKER_URL = "redis://localhost"
            ENABLE_UTC = True
            BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 7200}
            """,
            count=2, message="did you mean `",
        ),
        Invalid(
            """
            # file: celeryconfig.py
            CELERYD_PREFETCH_MULTIPLER = 1
            """,
            fixed="""
            # file: celeryconfig.py
            CELERYD_PREFETCH_MULTIPLIER = 1
            """,
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.conf.update(task_ack_late=True, task_acks_late=False)
            """,
            fixed=None,
            message="`task_acks_late` is already set at line 3, so no rename is offered",
        ),
        Invalid(
            """
            # file: celeryconfig.py
            task_ack_late = True
            task_acks_late = False
            """,
            fixed=None,
            message="`task_acks_late` is already set at line 2",
        ),
        Invalid(
            """
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({'task_ack_late': True})
            """,
            fixed="""
            # file: proj.py
            from celery import Celery
            app = Celery("proj")
            app.config_from_object({'task_acks_late': True})
            """,
        ),
    )

    def check_model(self, m: Model):
        return unless_below_4(m, self._findings(m))  # Celery 3's names are the project's (celery_version.py)

    def _findings(self, m: Model):
        t = table()
        seen = set()
        read_back = {n for f in m.project.of_kind(CONF_READ) for n in (*f["names"], *f.get("options", ()))}
        read_itself = {n for f in m.project.of_kind(CONF_READ) for n in f.get("settings", ())}
        for a, namespace, django, assigned in checked(m):
            key = (a.path, a.pos)
            if key in seen or not settings_name(a.name, namespace, django, t) or a.name in read_back:
                continue  # a name the project reads back from ``conf`` is its own key
            seen.add(key)
            if t.known(a.name) or t.canonical_in_any_release(a.name, namespace):
                continue  # a setting of some Celery release from 4.0 on, maybe the project's
            if django and not namespace and t.canonical(a.name, "CELERY"):
                continue  # a namespaced name without the namespace: CL110
            option = task_option(a.name, namespace)
            if option is not None:
                yield self.at(f"`{a.name}` is not a Celery setting, so Celery ignores it: `{option}` is a task option; "
                              f"set it on the task (`@app.task({option}=...)`) or its base class, or for every task "
                              f"with `task_annotations = {{\"*\": {{\"{option}\": ...}}}}`", a.path, a.pos)
                continue
            if a.name in read_itself:
                continue  # read from Django's settings by the project (``Celery(backend=settings.X)``): its own name
            suggestions = t.suggestions(a.name, namespace if django or namespace else None)
            if not suggestions:
                continue
            ns = namespace if django or namespace else None
            best = t.suggestion(a.name, ns)
            shown = f"`{best}`{since(_bare(best, ns))}" if best else " or ".join(f"`{s}`" for s in suggestions)
            message = f"`{a.name}` is not a Celery setting, so Celery ignores it: did you mean {shown}?"
            first = already_set(assigned, best, a) if best else None
            if first is not None:
                yield self.at(f"{message} `{best}` is already set at {where(first, a.path)}, so no rename is offered "
                              f"(it would set `{best}` twice and change which value wins, or repeat a keyword): "
                              "delete one of them", a.path, a.pos)
                continue
            yield self.at(message, a.path, a.pos, rename_fix(m, a, best) if best else None)
