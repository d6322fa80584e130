from __future__ import annotations

from collections.abc import Iterable

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.values import NULL
from ..domain.outer_transactions import same_function
from ..facts.chords import CHORD_FACT
from ..rule import ConfigRule, Finding, Invalid, Valid


def _module_of(path: str) -> str:
    module = path[:-3] if path.endswith(".py") else path
    module = module.replace("/", ".")
    return module[:-9] if module.endswith(".__init__") else module


def _backend_problem(app) -> str | None:
    """Why the app's result backend cannot run a chord, or None (fine or unknown)."""
    r = app.get("result_backend")
    if r.is_unknown or r.env:
        return None
    if r.is_default or r.value is NULL or r.value == "":
        return "no result backend is configured (`result_backend` is not set)"
    if isinstance(r.value, str) and r.value.split(":", 1)[0] == "rpc":
        return f"the `rpc://` result backend ({r.shown()}) does not support chords"
    return None


class ChordCannotComplete(ConfigRule):
    """
    ## What it does
    Finds chords whose callback can never run: `chord(header)(callback)`,
    `chord(header, body)`, and a group followed by a task in a chain
    (`group(...) | task.s()`, `chain(group(...), task.s())`), which Celery
    turns into a chord, when

    - no Celery app of the project has a result backend (`result_backend`
      unset or `None`), or every app uses the `rpc://` backend, which
      does not support chords;
    - a task of the header, named in the code (`task.s(...)` in a list,
      tuple or comprehension), is defined with `ignore_result=True`, or the
      app sets `task_ignore_result = True` and the task does not set
      `ignore_result=False`.

    A backend read from the environment, a header celerylint cannot name,
    or a task it cannot find are unknown and not reported. The time the
    header runs is not known statically, so a `result_expires` shorter
    than it is not checked.

    ## Why is this bad?
    The chord's callback runs when every header task has stored its result
    in the result backend, which counts them. Without a backend, or with
    `rpc://`, Celery raises `NotImplementedError` when the chord is applied;
    a header task that ignores its result never counts as done, so the
    callback never runs and the chord's group stays in the backend until it
    expires.

    ## Example
    ```python
    # file: proj/celery.py
    from celery import Celery

    app = Celery("proj", broker="redis://localhost:6379/0")
    # file: proj/tasks.py
    from celery import chord
    from proj.celery import app

    @app.task
    def fetch(url): ...

    @app.task
    def summarise(pages): ...

    def crawl(urls):
        chord([fetch.s(u) for u in urls])(summarise.s())
    ```

    Use instead:
    ```python
    # file: proj/celery.py
    from celery import Celery

    app = Celery("proj", broker="redis://localhost:6379/0", backend="redis://localhost:6379/1")
    # file: proj/tasks.py
    from celery import chord
    from proj.celery import app

    @app.task
    def fetch(url): ...

    @app.task
    def summarise(pages): ...

    def crawl(urls):
        chord([fetch.s(u) for u in urls])(summarise.s())
    ```

    ## Fix safety
    No fix: which backend to run, or whether a task's results should be
    kept, is a decision.

    ## References
    - [Celery: chords, important notes](https://docs.celeryq.dev/en/stable/userguide/canvas.html#chord-important-notes)
    - [Celery: RPC result backend (chords not supported)](https://docs.celeryq.dev/en/stable/userguide/configuration.html#rpc-backend-settings)
    - [celery#4862](https://github.com/celery/celery/issues/4862), [celery#5237](https://github.com/celery/celery/issues/5237)
    """

    CODE = "CL217"
    NAME = "chord-cannot-complete"
    SEVERITY = "error"
    SUMMARY = "A chord without a result backend, with `rpc://`, or with a header task that ignores its result"
    HINT = "configure a result backend that supports chords (Redis, a database) and keep the header's results"
    TAGS = ("canvas",)

    VALID = (
        Valid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            # file: proj/tasks.py
            from celery import chord, group
            from proj.celery import app
            @app.task(ignore_result=False)
            def fetch(url): ...
            @app.task(ignore_result=True)
            def log(x): ...
            def crawl(urls):
                chord(fetch.s(u) for u in urls)(log.s())  # only the header's results count
                (group(fetch.s(u) for u in urls) | log.si()).delay()
                group(log.s(u) for u in urls).delay()  # a group alone is not a chord
        """),
        Valid("""
            # the backend comes from the environment; a chord in a test
            # file: proj/celery.py
            import os
            from celery import Celery
            app = Celery("proj", backend=os.environ.get("RESULT_BACKEND", "rpc://"))
            # file: proj/tasks.py
            from celery import chord
            def crawl(urls, header):
                chord(header)(summarise.s())
            # file: tests/test_tasks.py
            from celery import chord
            def test_chord():
                chord([])(summarise.s())
        """),
        Valid("""
            # look-alike: a chord of another library
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            # file: proj/music.py
            from music.theory import chord
            def play(notes):
                chord(notes)
        """),
    )
    INVALID = (
        Invalid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj")
            app.conf.result_backend = "rpc://"
            # file: proj/tasks.py
            from celery import chain, group
            from proj.celery import app
            def crawl(urls):
                (group(fetch.s(u) for u in urls) | summarise.s())()
                chain(group(fetch.s(u) for u in urls), summarise.s()).delay()
        """, count=2, message="`rpc://`"),
        Invalid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            app.conf.task_ignore_result = True
            # file: proj/tasks.py
            from celery import chord
            from proj.celery import app
            @app.task
            def fetch(url): ...
            @app.task(ignore_result=True)
            def other(url): ...
            def crawl(urls):
                chord([fetch.s(urls[0]), other.s(urls[1])])(summarise.s())
        """, count=1, message="`fetch`, `other`"),
    )

    def check_model(self, m: Model) -> Iterable[Finding]:
        uses = m.by_kind[CHORD_FACT]
        apps = m.configured_apps()
        if not uses or not apps:
            return
        problems = [_backend_problem(app) for app in apps]
        for use in uses:
            pos = (use["line"], use["col"], use["end_line"], use["end_col"])
            if all(problems):
                yield self.at(f"this chord's callback cannot run: {problems[0]}", use["path"], pos)
                continue
            ignoring = self._ignoring(m, apps, use.get("header"))
            if ignoring:
                names = ", ".join(f"`{n}`" for n in ignoring)
                yield self.at(f"this chord's callback never runs: header task{'s' if len(ignoring) > 1 else ''} "
                              f"{names} ignore{'' if len(ignoring) > 1 else 's'} {'their' if len(ignoring) > 1 else 'its'} "
                              "result, so the chord never counts it done", use["path"], pos)

    @staticmethod
    def _ignoring(m: Model, apps, header: list[str] | None) -> list[str]:
        """The header's tasks that do not store their result in every app."""
        if not header:
            return []
        ignore_all = all(app.get("task_ignore_result").value is True for app in apps)
        found = []
        for target in header:
            tasks = [t for t in m.tasks if same_function(target, f"{_module_of(t['path'])}.{t['name']}")]
            if len(tasks) != 1:
                continue
            value, state = m.task_option(tasks[0], "ignore_result")
            if (state == "set" and value is True) or (state == "unset" and ignore_all):
                found.append(tasks[0]["name"])
        return found
