from __future__ import annotations

from collections.abc import Iterable

from ..facts.calls import CALL_FACT, TASK_FACT, UNAMBIGUOUS
from ..domain.task_classes import class_facts, confirmed
from ..rule import Finding, Invalid, ProjectRule, TextEdit, TextFix, Valid


class ExecutionOptionAsTaskArgument(ProjectRule):
    """
    ## What it does
    Finds Celery execution options — `countdown`, `eta`, `expires`, `queue`,
    `priority`, `routing_key`, `link`, `task_id`, … (the options of
    `apply_async`) — given to `.delay(...)`, `.s(...)` or `.si(...)`.

    Whether a keyword is an option or a real task argument is decided from
    the task's signature when the task is defined in the linted code (a
    `@shared_task`/`@app.task` function, or the `run` method of a `Task`
    subclass, in any linted file): a keyword the task does not accept is
    reported. When the signature cannot be seen (the task comes from a
    library, or is reached through `self.` or a lookup), or the task takes
    `**kwargs`, only the options that no task plausibly takes as its own
    parameter are reported: `countdown`, `eta`, `expires`, `retry_policy`,
    `link_error`, `shadow`, `time_limit`, `soft_time_limit`,
    `add_to_parent`, `ignore_result`. `queue`, `priority`, `headers`,
    `link`, `task_id`, … are common parameter names, so they are left alone
    then.

    ## Why is this bad?
    `delay(*args, **kwargs)` is `apply_async(args, kwargs)`: every keyword
    goes to the task itself, and `.s()`/`.si()` likewise store every keyword
    as a task argument. The option is silently ignored — the task runs at
    once, on the default queue, without expiry — and the worker then calls
    the task with an unexpected keyword argument, which fails with a
    `TypeError` (or is swallowed by `**kwargs`).

    ## Example
    ```python
    from celery import shared_task

    @shared_task
    def send_reminder(user_id): ...

    send_reminder.delay(user.id, countdown=600)
    chain(send_reminder.s(user.id, queue="mail"), log_sent.s())
    ```

    Use instead:
    ```python
    from celery import shared_task

    @shared_task
    def send_reminder(user_id): ...

    send_reminder.apply_async((user.id,), countdown=600)
    chain(send_reminder.s(user.id).set(queue="mail"), log_sent.s())
    ```

    ## Fix safety
    `.delay(a, k=v, countdown=10)` becomes `.apply_async((a,), {"k": v},
    countdown=10)` and `.s(a, queue="q")` becomes `.s(a).set(queue="q")`;
    the options reported move, every other argument stays a task argument.

    The fix is safe when the task's signature is known and the arguments are
    plain: no `*`/`**` arguments, and every argument is a literal, a name, an
    attribute, a subscript, or a tuple/list/set/dict of those, so that
    evaluating them in a different order cannot change anything. Otherwise
    (calls among the arguments, or the signature could not be seen) it is
    unsafe. A call with a comment inside gets no fix, because the rewrite
    would drop the comment.

    ## References
    - [Celery: `Task.delay`](https://docs.celeryq.dev/en/stable/reference/celery.app.task.html#celery.app.task.Task.delay)
    - [Celery: Calling tasks, `apply_async` options](https://docs.celeryq.dev/en/stable/userguide/calling.html)
    - [Celery: Signatures, `.set()`](https://docs.celeryq.dev/en/stable/userguide/canvas.html#signatures)
    """

    CODE = "CL209"
    NAME = "execution-option-as-task-argument"
    SEVERITY = "error"
    SUMMARY = "An execution option such as countdown or queue given to delay()/s(): it becomes a task argument"
    FIX = "sometimes"
    HINT = "use apply_async(args, kwargs, option=...) or .s(...).set(option=...)"
    TAGS = ("calling",)

    VALID = (
        Valid("""
            from celery import shared_task
            @shared_task
            def report(day): ...
            report.apply_async((1,), countdown=60)
            report.s(1).set(queue="reports")
            report.delay(1)
        """),
        Valid("""
            from celery import shared_task
            @shared_task
            def notify(user_id, queue, priority=0): ...
            notify.delay(1, queue="mail", priority=5)
        """),
        Valid("""
            from proj.tasks import notify
            notify.delay(1, queue="mail", priority=5, headers={"x": 1})
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import Task
            class Poll(Task):
                def run(self, url, countdown=3):
                    ...
            # file: proj/views.py
            from proj.tasks import Poll
            Poll().delay("https://example.org", countdown=5)
        """),
        Valid("""
            class Timer:
                def delay(self, seconds, countdown=None): ...
            def schedule(): ...
            t = Timer()
            t.delay(3, countdown=5)
            Timer().delay(3, countdown=5)
            schedule.delay(expires=3)
        """),
        Valid("""
            from celery import Celery
            app = Celery()
            @app.task(bind=True)
            def retry_once(self, *args, expires=None, countdown=0.1): ...
            retry_once.delay(expires=60)
            retry_once.s(countdown=None)
        """),
        Valid("""
            from proj.celery import app
            @app.task
            def export(user_id, queue=None): ...
            sig = export.s(1)
            sig.delay(queue="reports")
            export.signature((1,), countdown=10, queue="reports").delay()
            export.s(1).set(countdown=10).delay()
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/jobs.py
            class Job:
                def run(self, order_id): ...
            # file: proj/tasks.py
            from proj.jobs import Job
            class Charge(Job):
                def run(self, order_id): ...
            Charge().s(1, queue="payments")
        """),
    )
    INVALID = (
        Invalid("""
            from proj.celery import app
            @app.task
            def export(user_id): ...
            export.s(1).delay(queue="reports")
            sig = export.signature((1,))
            sig.delay(priority=5)
        """, count=2, message="given to `.delay()`"),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class ProjectTask(Task):
                acks_late = True
            # file: proj/tasks.py
            from proj.base import ProjectTask
            class Charge(ProjectTask):
                def run(self, order_id): ...
            Charge().s(1, queue="payments")
        """, count=1, message="`queue` given to `.s()`"),
        Invalid(
            """
            from celery import shared_task
            @shared_task
            def send_reminder(user_id): ...
            def on_signup(user):
                send_reminder.delay(user.id, countdown=600)
            """,
            fixed="""
            from celery import shared_task
            @shared_task
            def send_reminder(user_id): ...
            def on_signup(user):
                send_reminder.apply_async((user.id,), countdown=600)
            """,
        ),
        Invalid(
            """
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task as task
            @task(bind=True)
            def deliver(self, order_id, *, express=False): ...
            # file: proj/views.py
            from proj import tasks as t
            def checkout(order):
                t.deliver.delay(order.id, express=True, queue="priority", priority=9)
            """,
            fixed="""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task as task
            @task(bind=True)
            def deliver(self, order_id, *, express=False): ...
            # file: proj/views.py
            from proj import tasks as t
            def checkout(order):
                t.deliver.apply_async((order.id,), {"express": True}, queue="priority", priority=9)
            """,
        ),
        Invalid(
            """
            from celery import chain
            from proj.tasks import fetch, store
            chain(fetch.s("url", expires=30), store.si(queue="db", eta=None)).delay()
            """,
            fixed="""
            from celery import chain
            from proj.tasks import fetch, store
            chain(fetch.s("url").set(expires=30), store.si(queue="db").set(eta=None)).delay()
            """,
            count=2,
        ),
        Invalid(
            """
            from celery import Celery, Task
            app = Celery()
            class Cleanup(Task):
                def run(self, days):
                    ...
            cleanup = app.register_task(Cleanup())
            def nightly():
                Cleanup().delay(days=30, expires=3600)
            """,
            fixed="""
            from celery import Celery, Task
            app = Celery()
            class Cleanup(Task):
                def run(self, days):
                    ...
            cleanup = app.register_task(Cleanup())
            def nightly():
                Cleanup().apply_async(kwargs={"days": 30}, expires=3600)
            """,
        ),
        Invalid(
            """
            from kitsune.tasks import send_group_email
            def connector(instance):
                send_group_email.delay(instance.pk, eta=instance.show_after)
            """,
            fixed="""
            from kitsune.tasks import send_group_email
            def connector(instance):
                send_group_email.apply_async((instance.pk,), eta=instance.show_after)
            """,
        ),
        Invalid(
            """
            from celery import shared_task
            @shared_task
            def export(user_id, fmt="csv"): ...
            def f(request, users):
                export.delay(request.user.pk, *users, countdown=compute_delay())
                export.delay(
                    request.user.pk,  # who asked
                    countdown=10,
                )
            """,
            fixed="""
            from celery import shared_task
            @shared_task
            def export(user_id, fmt="csv"): ...
            def f(request, users):
                export.apply_async((request.user.pk, *users), countdown=compute_delay())
                export.delay(
                    request.user.pk,  # who asked
                    countdown=10,
                )
            """,
            count=2,
        ),
    )

    def check(self, project) -> Iterable[Finding]:
        exact: dict[str, dict] = {}
        by_short: dict[str, list[dict]] = {}
        classes = class_facts(project)
        for fact in project.of_kind(TASK_FACT):
            if confirmed(fact, classes):  # else a class whose bases do not make it a task: only doubt
                exact[fact["name"]] = fact
            by_short.setdefault(fact["short"], []).append(fact)
        for call in project.of_kind(CALL_FACT):
            known = exact.get(call["target"]) if call["target"] else None
            reported = [o for o in call["options"] if self._misplaced(o, known, by_short.get(call["short"], []))]
            if not reported:
                continue
            yield self._finding(call, reported, known is not None)

    @staticmethod
    def _misplaced(option: str, known: dict | None, same_name: list[dict]) -> bool:
        if known is not None:
            if option in known["params"]:
                return False
            return option in UNAMBIGUOUS or not known["var_kw"]
        # Unknown signature: a task of the same name elsewhere that takes the
        # keyword is enough doubt to stay silent.
        if any(option in t["params"] or t["var_kw"] for t in same_name):
            return False
        return option in UNAMBIGUOUS

    def _finding(self, call: dict, reported: list[str], known: bool) -> Finding:
        names = ", ".join(f"`{o}`" for o in reported)
        method = call["method"]
        if method == "delay":
            how = "`delay()` passes every keyword to the task"
            instead = "`apply_async(args, kwargs, ...)`"
        else:
            how = f"`.{method}()` stores every keyword as a task argument"
            instead = f"`.{method}(...).set(...)`"
        message = (f"{names} given to `.{method}()` becomes a task argument, not an execution option: {how}, "
                   f"so the option is ignored and the task gets an unexpected argument; use {instead}")
        fix = None
        if not call["comments"]:
            text = self._rewrite(call, set(reported))
            safe = known and call["plain"]
            fix = TextFix(f"move {names} to {instead}", (TextEdit(call["line"], call["col"], call["end_line"], call["end_col"], text),), safe)
        return self.finding(message, call["path"], call["line"], call["col"], call["end_line"], call["end_col"], fix)

    @staticmethod
    def _rewrite(call: dict, moved: set[str]) -> str:
        options = [f"{k}={v}" for k, v in call["args"] if k in moved]
        rest = [(k, v) for k, v in call["args"] if k not in moved]
        if call["method"] != "delay":
            kept = [v if k is None else f"{k}{v}" if k in ("*", "**") else f"{k}={v}" for k, v in rest]
            return f"{call['receiver']}.{call['method']}({', '.join(kept)}).set({', '.join(options)})"
        positional = [v if k is None else f"*{v}" for k, v in rest if k in (None, "*")]
        keywords = [f'"{k}": {v}' if k != "**" else f"**{v}" for k, v in rest if k not in (None, "*")]
        parts = []
        if positional:
            parts.append("(" + ", ".join(positional) + ("," if len(positional) == 1 else "") + ")")
        if keywords:
            mapping = "{" + ", ".join(keywords) + "}"
            parts.append(mapping if positional else f"kwargs={mapping}")
        return f"{call['receiver']}.apply_async({', '.join(parts + options)})"
