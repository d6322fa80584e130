from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from ..domain.celeryconf.model import Model
from ..domain.celeryconf.values import NULL, number
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


# the Redis backend (and its Sentinel variant) counts the header's returns in
# ``on_chord_part_return`` whether or not a task stores its result
_COUNTS_RETURNS = frozenset({"redis", "rediss", "redis+socket", "sentinel", "sentinels"})


def _needs_stored_results(app) -> bool:
    """The app's backend is known and completes a chord from the header's
    stored results (a database's ``chord_unlock``, a key-value store's
    join): not the Redis backend."""
    r = app.get("result_backend")
    if r.is_unknown or r.env or not isinstance(r.value, str) or not r.value:
        return False
    return r.value.split(":", 1)[0].lower() not in _COUNTS_RETURNS


class ChordCannotComplete(ConfigRule):
    """
    ## What it does
    Finds chords whose callback can never run: `chord(header)(callback)`,
    `chord(header, body)`, `chord(header=..., body=...)`, and a group followed by a task in a chain
    (`group(...) | task.s()`, `chain(group(...), task.s())`), which Celery
    turns into a chord, when

    - no Celery app of the project has a result backend (`result_backend`
      unset or `None`), or every app uses the `rpc://` backend, which
      does not support chords;
    - a task of the header, named in the code (`task.s(...)` in a list,
      tuple or comprehension, or in a local list the function builds only
      with `.append(...)`; for a chain in the header, its last task, whose
      result the chord counts), is defined with `ignore_result=True`, or the
      app sets `task_ignore_result = True` and the task does not set
      `ignore_result=False`, and the backend is known and is not Redis
      (which counts the header's returns whether or not they are stored:
      there the callback runs).

    - a task of the header has a hard time limit (its own `time_limit=`,
      else the app's `task_time_limit`) longer than the app's
      `result_expires` (a day by default), in every app: the header is
      allowed to run longer than its results are kept. How long the header
      really runs is not known statically; its time limit is the longest it
      may run, so this finding says the callback *may* never run, as CL104
      and CL205 compare a timeout with the time limit. A header task
      without a limit, a limit or an expiry celerylint cannot read, or
      results that never expire (`result_expires = None` or 0, CL116's
      case) give no finding.

    A backend read from the environment, a header celerylint cannot name,
    or a task it cannot find are unknown and not reported.

    ## Why is this bad?
    The chord's callback runs when every header task has stored its result
    in the result backend, which counts them. Without a backend, or with
    `rpc://`, Celery raises `NotImplementedError` when the chord is applied;
    on a database or key-value backend, which completes the chord from
    the stored results, a header task that ignores its result never counts
    as done, so the
    callback never runs and the chord's group stays in the backend until it
    expires. The backend keeps the chord's count and the header's results
    for `result_expires` (the Redis backend renews that expiry each time a
    header task returns): a header task that returns later than that finds
    the count gone, and the chord never completes.

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
    SUMMARY = ("A chord without a result backend, with `rpc://`, with a header task that ignores its result or may "
               "outlive `result_expires`")
    HINT = "configure a result backend that supports chords (Redis, a database) and keep the header's results"
    TAGS = ("canvas",)

    VALID = (
        Valid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="db+postgresql://localhost/results")
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
                chord([log.s(urls[0]) | fetch.s()])(log.s())  # a chain counts as its last task
            def built(urls, extra):
                steps = [fetch.s(urls[0])]
                steps.append(log.s(urls[1]))
                steps += extra  # changed another way: unknown
                chord(steps)(log.s())
            def passed_in(steps):
                steps.append(log.s(1))
                chord(steps)(log.s())  # a parameter: unknown
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
        Valid("""
            # the Redis backend counts the header's returns, stored or not (SEED's
            # ``ignore_result=True`` header): the callback runs; so may it where the
            # backend is unknown
            # file: proj/celery.py
            import os
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            other = Celery("other", backend=os.environ["RESULT_BACKEND"])
            # file: proj/tasks.py
            from celery import chord
            from proj.celery import app, other
            @app.task(ignore_result=True)
            def save(row): ...
            @other.task(ignore_result=True)
            def send(row): ...
            def load(rows):
                chord([save.s(r) for r in rows])(summarise.s())
                chord([send.s(r) for r in rows])(summarise.s())
        """),
        Valid("""
            # limits within the expiry, no limit at all, an expiry read from the environment,
            # results that never expire (CL116's), a limit that cannot be read
            # file: proj/celery.py
            import os
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            app.conf.result_expires = 7200
            other = Celery("other", backend="redis://localhost:6379/2")
            other.conf.result_expires = int(os.environ["EXPIRES"])
            # file: proj/tasks.py
            from celery import chord
            from proj.celery import app, other
            @app.task(time_limit=3600)
            def fetch(url): ...
            @app.task
            def unlimited(url): ...
            @other.task(time_limit=86400)
            def slow(url): ...
            @app.task(time_limit=LIMIT)
            def unread(url): ...
            def crawl(urls):
                chord([fetch.s(u) for u in urls])(summarise.s())
                chord([unlimited.s(u) for u in urls])(summarise.s())
                chord([slow.s(u) for u in urls])(summarise.s())
                chord([unread.s(u) for u in urls])(summarise.s())
        """),
        Valid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1", result_expires=None)
            # file: proj/tasks.py
            from celery import chord
            from proj.celery import app
            @app.task(time_limit=10 * 86400)
            def rebuild(part): ...
            def crawl(parts):
                chord([rebuild.s(p) for p in parts])(summarise.s())
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
            app = Celery("proj", backend="django-db")
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
                chord(header=[fetch.s(urls[0]), other.s(urls[1])], body=summarise.s()).delay()
        """, count=2, message="`fetch`, `other`"),
        Invalid("""
            # a header list built with append, of chains: the chord counts each chain's last task
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="db+postgresql://localhost/results")
            # file: proj/tasks.py
            from celery import chain, chord
            from proj.celery import app
            @app.task
            def render(page): ...
            @app.task(ignore_result=True)
            def ocr(image, page): ...
            def process(pages):
                steps = []
                for page in pages:
                    steps.append(chain(render.s(page), ocr.s(page=page)))
                chord(steps)(finished.s())
                more = [render.s(0)]
                more.append(render.s(1) | ocr.s(page=1))
                chord(more)(finished.s())
        """, count=2, message="header task `ocr` ignores its result"),
        Invalid("""
            # a header task may run longer than its results are kept: the decorator's limit
            # against the default expiry (a day), and the app's limit against a shorter one
            # file: proj/celery.py
            from datetime import timedelta
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            # file: proj/tasks.py
            from celery import chord
            from proj.celery import app
            @app.task(time_limit=2 * 86400)
            def rebuild(part): ...
            @app.task(time_limit=60)
            def fetch(url): ...
            def crawl(urls):
                chord([fetch.s(urls[0]), rebuild.s(1)])(summarise.s())
        """, count=1, message="header task `rebuild` may run for 172800 s (its time limit), longer than "
                              "`result_expires` (86400 s)"),
        Invalid("""
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", backend="redis://localhost:6379/1")
            app.conf.task_time_limit = 3 * 3600
            app.conf.result_expires = 3600
            # file: proj/tasks.py
            from celery import group
            from proj.celery import app
            @app.task
            def fetch(url): ...
            def crawl(urls):
                (group(fetch.s(u) for u in urls) | summarise.s()).delay()
        """, count=1, message="`fetch` may run for 10800 s"),
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
                continue
            outliving = _outliving(m, apps, use.get("header"))
            if outliving:
                name, limit, expires = outliving
                yield self.at(f"this chord's callback may never run: header task `{name}` may run for {limit:g} s "
                              f"(its time limit), longer than `result_expires` ({expires:g} s); when it does, the "
                              "chord's stored state expires before it is done, and the chord never completes",
                              use["path"], pos)

    @staticmethod
    def _ignoring(m: Model, apps, header: list[str] | None) -> list[str]:
        """The header's tasks that do not store their result in every app,
        when every app's backend needs stored results."""
        if not header or not all(_needs_stored_results(app) for app in apps):
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


def _header_tasks(m: Model, header: list[str] | None) -> list[dict]:
    """The header's tasks found in the project, each once."""
    found = []
    for target in header or ():
        tasks = [t for t in m.tasks if same_function(target, f"{_module_of(t['path'])}.{t['name']}")]
        if len(tasks) == 1 and tasks[0] not in found:
            found.append(tasks[0])
    return found


def _expires(app) -> float | None:
    """The app's ``result_expires`` in seconds; None when unknown or when
    results never expire (``None``/0: CL116's case)."""
    r = app.get("result_expires")
    if r.is_unknown or r.env or r.value is NULL:
        return None
    seconds = number(r.value.total_seconds() if isinstance(r.value, timedelta) else r.value)  # the default: a day
    return seconds if seconds else None


def _limit(m: Model, task: dict, app) -> float | None:
    """The task's hard time limit in seconds: its own ``time_limit=``, else
    the app's ``task_time_limit``; None when unknown or unlimited."""
    value, state = m.task_option(task, "time_limit")
    if state == "unset":
        r = app.get("task_time_limit")
        if r.is_unknown or r.env or r.value is NULL:
            return None
        value = r.value
    elif state == "unknown":
        return None
    return number(value)


def _outliving(m: Model, apps, header: list[str] | None) -> tuple[str, float, float] | None:
    """A header task whose time limit is longer than ``result_expires`` in
    every app: (its name, its limit, the expiry), or None."""
    for task in _header_tasks(m, header):
        pairs = [(_limit(m, task, app), _expires(app)) for app in apps]
        if pairs and all(limit is not None and expires is not None and limit > expires for limit, expires in pairs):
            limit, expires = min(pairs, key=lambda p: p[0] - p[1])
            return task["name"], limit, expires
    return None
