from __future__ import annotations

from collections.abc import Iterable

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.values import NULL
from ..facts.chords import CHORD_FACT
from ..facts.result_reads import READ_FACT
from ..rule import ConfigRule, Finding, Invalid, Valid


class ResultsNeverRead(ConfigRule):
    """
    ## What it does
    Advice, off by default (select `CL219` to run it). Reports an app that
    stores every task's result in its result backend (`result_backend`
    set, `task_ignore_result` not `True`) in a project whose code never
    reads a result: no `AsyncResult`, `GroupResult`, `ResultSet` or
    django-celery-results' `TaskResult` anywhere outside tests, no import
    of `celery.result` or `django_celery_results`, no chord, and the value
    of every `.delay()`, `.apply_async()` and `.send_task()` dropped (a
    value assigned, returned or passed on may be read, so it counts as
    read). Tasks that set `ignore_result` themselves are left out; with
    none left, nothing is reported. A `django-db` backend is left alone
    (its results are read in the admin).

    ## Why is this bad?
    Each task run writes a key (Redis) or a row (a database) that nobody
    reads, until `result_expires` (one day by default) removes it: memory
    and writes for nothing, and with `result_expires` off the backend
    grows without end (celery#7801, #6089).

    ## Example
    ```python
    # file: proj/celery.py
    from celery import Celery

    app = Celery("proj", backend="redis://localhost:6379/1")

    @app.task
    def send_email(to): ...
    # file: proj/views.py
    from proj.celery import send_email

    def sign_up(request):
        send_email.delay(request.POST["email"])
    ```

    Use instead:
    ```python
    # file: proj/celery.py
    from celery import Celery

    app = Celery("proj", backend="redis://localhost:6379/1")
    app.conf.task_ignore_result = True

    @app.task
    def send_email(to): ...
    # file: proj/views.py
    from proj.celery import send_email

    def sign_up(request):
        send_email.delay(request.POST["email"])
    ```

    ## Fix safety
    The fix adds `task_ignore_result = True` where the app's configuration
    lives. It is unsafe: a reader celerylint does not see (another
    service, Flower, a shell) no longer finds results.

    ## References
    - [Celery: `task_ignore_result`](https://docs.celeryq.dev/en/stable/userguide/configuration.html#task-ignore-result)
    - [Celery: result backends, ignoring results](https://docs.celeryq.dev/en/stable/userguide/tasks.html#ignore-results-you-don-t-want)
    """

    CODE = "CL219"
    NAME = "results-never-read"
    SEVERITY = "note"
    SUMMARY = "Every task's result is stored in the result backend, and the project never reads one"
    FIX = "sometimes"
    HINT = "set `task_ignore_result = True` (or `ignore_result=True` on the tasks)"
    TAGS = ("results",)
    DEFAULT_ENABLED = False

    VALID = (
        Valid("""
            # a result is read somewhere
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            @app.task
            def add(x, y): ...
            # file: proj/views.py
            from celery.result import AsyncResult
            def status(request, task_id):
                return AsyncResult(task_id).state
        """),
        Valid("""
            # a dispatch's value is kept; tasks that choose for themselves; no backend
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            @app.task
            def add(x, y): ...
            # file: proj/views.py
            from proj.celery import add
            def start(request):
                job = add.delay(1, 2)
                request.session["job"] = job.id
        """),
        Valid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            @app.task(ignore_result=True)
            def a(): ...
            @app.task(ignore_result=False)
            def b(): ...
            # file: proj/other.py
            from celery import Celery
            other = Celery("other")
            @other.task
            def c(): ...
        """),
        Valid("""
            # results read only in tests do not count, but the backend is django-db
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="django-db")
            @app.task
            def a(): ...
        """),
    )
    INVALID = (
        Invalid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.conf.result_backend = "redis://localhost:6379/1"
            @app.task
            def add(x, y): ...
            # file: proj/views.py
            from proj.celery import add
            def start(request, kind):
                add.delay(1, 2)
                match kind:
                    case "x":
                        add.delay(3, 4)
            # file: tests/test_add.py
            from celery.result import AsyncResult
            from proj.celery import add
            def test_add():
                assert AsyncResult(add.delay(1, 2).id).get() == 3
        """, message="1 task", fixed="""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.conf.result_backend = "redis://localhost:6379/1"
            app.conf.task_ignore_result = True
            @app.task
            def add(x, y): ...
            # file: proj/views.py
            from proj.celery import add
            def start(request, kind):
                add.delay(1, 2)
                match kind:
                    case "x":
                        add.delay(3, 4)
            # file: tests/test_add.py
            from celery.result import AsyncResult
            from proj.celery import add
            def test_add():
                assert AsyncResult(add.delay(1, 2).id).get() == 3
        """),
    )

    def check_model(self, m: Model) -> Iterable[Finding]:
        if m.by_kind[READ_FACT] or m.by_kind[CHORD_FACT]:
            return
        storing = []
        for task in m.tasks:
            value, state = m.task_option(task, "ignore_result")
            if state == "unknown":
                return
            if state == "unset":
                storing.append(task["name"])
        if not storing:
            return
        apps = m.configured_apps()
        storing_apps = [app for app in apps if _stores(app)]
        if not storing_apps or len(storing_apps) != len(apps):
            return  # a task of an app that stores nothing may be among those counted
        count = len(storing)
        for app in storing_apps:
            yield self.at_app(app, f"results of {count} task{'s' if count > 1 else ''} (`{storing[0]}`"
                                   f"{' and more' if count > 1 else ''}) are stored in the result backend, and no "
                                   "code of the project reads a result (no `AsyncResult`, no `.get()`, no chord, "
                                   "every dispatch's value dropped)",
                              m.fix_adding(app, "task_ignore_result", "True"))


def _stores(app) -> bool:
    """The app stores every result: a result backend (not django-db, read in
    the admin), ``task_ignore_result`` not True; unknown values: no."""
    backend, ignore = app.get("result_backend"), app.get("task_ignore_result")
    if not backend.is_set or backend.value is NULL or not backend.value or ignore.is_unknown or ignore.value is True:
        return False
    return not (isinstance(backend.value, str) and backend.value.startswith("django-db"))
