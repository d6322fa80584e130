from __future__ import annotations

from collections.abc import Iterable

from ..facts.calls import EXECUTION_OPTIONS, TASK_FACT
from ..facts.task_calls import ARGS_FACT
from ..domain.task_classes import class_facts, confirmed
from ..rule import Finding, Invalid, ProjectRule, Valid

# CL209 reports these when given to .delay/.s/.si and not taken by the task.
_CL209_METHODS = frozenset({"delay", "s", "si"})


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def binding_problems(sig: dict, call: dict) -> list[str]:
    """Why ``call``'s arguments cannot bind to ``sig`` (both as recorded by
    ``facts.calls``); empty when they can.  A partial signature (``.s()``)
    may still get more positional arguments in front (a chain passes the
    previous result) and more keywords, so only what is wrong already is
    reported: too many positional arguments, unknown or doubled keywords."""
    pos, kwonly = sig["pos"], sig["kwonly"]
    n, keywords, partial = call["positional"], call["keywords"], call["partial"]
    problems = []
    if n > len(pos):
        problems.append(f"{_plural(n, 'positional argument')} given, it takes {len(pos)}")
    by_keyword = {p[0] for p in pos if not p[2]} | {k[0] for k in kwonly}
    positional_only = {p[0] for p in pos if p[2]}
    filled = {p[0] for p in pos[:n]}
    for k in keywords:
        if k in positional_only:
            problems.append(f"`{k}` is positional-only but given by keyword")
        elif k not in by_keyword:
            if call["method"] in _CL209_METHODS and k in EXECUTION_OPTIONS:
                continue  # CL209's finding, with a fix
            problems.append(f"unexpected keyword argument `{k}`")
        elif k in filled:
            problems.append(f"`{k}` given by position and by keyword")
    if not partial:
        missing = [p[0] for p in pos[n:] if not p[1] and p[0] not in keywords]
        missing += [k for k, has_default in kwonly if not has_default and k not in keywords]
        if missing:
            problems.append("missing " + ", ".join(f"`{m}`" for m in missing))
    return problems


class TaskCallSignatureMismatch(ProjectRule):
    """
    ## What it does
    Checks the arguments of calls that send or prepare a task —
    `.delay(...)`, `.apply_async(args, kwargs)`, `.s(...)`, `.si(...)`,
    `.signature(args, kwargs)` — against the parameters of the task's
    function (with `bind=True`, or for the `run` method of a task class,
    the first parameter is `self` and takes nothing): too many or too few
    positional arguments, unknown or missing keywords, a keyword that
    repeats a positional argument.

    The task is found across the linted files through the imports (`from
    proj.tasks import send`, `import proj.tasks`, relative imports, a task
    in the same module). `.s(...)` and `.signature(...)` (unless
    `immutable=True`) are partial: a chain may add the arguments that are
    missing, so only too many positional arguments and unknown or repeated
    keywords are reported for them; `.si(...)` is complete.

    Silent whenever the answer is not certain: `*args`/`**kwargs` in the
    call or in the task's signature, `args`/`kwargs` of `apply_async` that
    are not literal tuples, lists and dicts, a task that cannot be resolved
    unambiguously (not defined in the linted files, defined twice under one
    module path, reached through `self.`, a lookup or a re-export), a task
    with a `base=` other than Celery's `Task`, with a decorator between the
    task decorator and the function (other than `transaction.atomic`, which
    keeps the signature), a non-literal `bind`, and task classes without a
    `run` or that redefine `__call__`/`delay`/`apply_async`. An execution
    option (`countdown=`, `queue=`, …) given to `.delay()`/`.s()`/`.si()` is
    CL209's finding, not this rule's. A call inside `with pytest.raises(...)`
    or `with self.assertRaises(...)` is a test that it fails, and is not
    reported.

    ## Why is this bad?
    Arguments are bound only when the task is sent (with Celery's default
    `strict_typing`) or when the worker runs it: a call that cannot bind
    raises `TypeError` there, often in code paths tests do not reach (a
    rarely taken branch, a signature in a chord), and a message already
    queued with the old arguments fails on every worker after a signature
    change.

    ## Example
    ```python
    # file: proj/__init__.py
    # file: proj/tasks.py
    from celery import shared_task

    @shared_task(bind=True)
    def send_invoice(self, order_id, email):
        ...
    # file: proj/views.py
    from proj.tasks import send_invoice

    def checkout(order):
        send_invoice.delay(order.id)
    ```

    Use instead:
    ```python
    # file: proj/__init__.py
    # file: proj/tasks.py
    from celery import shared_task

    @shared_task(bind=True)
    def send_invoice(self, order_id, email):
        ...
    # file: proj/views.py
    from proj.tasks import send_invoice

    def checkout(order):
        send_invoice.delay(order.id, order.email)
    ```

    ## Fix safety
    There is no automatic fix: which argument is missing or extra is for
    the author to say.

    ## References
    - [Celery: calling tasks](https://docs.celeryq.dev/en/stable/userguide/calling.html)
    - [Celery: partial signatures](https://docs.celeryq.dev/en/stable/userguide/canvas.html#partials)
    - [Celery: `strict_typing`](https://docs.celeryq.dev/en/stable/reference/celery.html#celery.Celery.strict_typing)
    """

    CODE = "CL213"
    NAME = "task-call-signature-mismatch"
    SEVERITY = "error"
    SUMMARY = "A task called with arguments that cannot bind to its parameters: `TypeError` when sent or run"
    HINT = "pass the arguments the task's function takes"
    TAGS = ("calling",)

    VALID = (
        # a test that checks a wrong call fails (celery's own integration tests): tests are not linted
        Valid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task
            @shared_task
            def add(x, y): ...
            # file: proj/tests/test_tasks.py
            from proj.tasks import add
            result = add.delay(5, wrong_arg=5)
            # file: proj/tests.py
            from proj.tasks import add
            add.delay(5)
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task
            @shared_task
            def export(user_id, fmt="csv", *, notify=False): ...
            @shared_task
            def store(result, bucket): ...
            # file: proj/views.py
            from celery import chain
            from proj.tasks import export, store
            from proj import tasks
            export.delay(1)
            export.delay(1, "xlsx", notify=True)
            export.apply_async((1,), {"fmt": "json"}, countdown=5)
            export.apply_async(args=[1], kwargs=None)
            tasks.export.si(user_id=1)
            chain(export.s(1), store.s("exports")).delay()
            store.s(bucket="b")
            store.signature(("r",), {"bucket": "b"}, countdown=3)
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task
            @shared_task
            def flexible(*args, **kwargs): ...
            @shared_task
            def fixed(a): ...
            # file: proj/views.py
            from proj.tasks import flexible, fixed
            flexible.delay(1, 2, 3, x=4)
            fixed.delay(*[1, 2])
            fixed.delay(**{"b": 1})
            fixed.apply_async(make_args())
            fixed.apply_async(kwargs=build())
            fixed.delay(1, countdown=10)  # CL209's finding
        """),
        Valid("""
            # file: a/__init__.py
            # file: a/tasks.py
            from celery import shared_task
            @shared_task
            def ping(host): ...
            # file: b/__init__.py
            # file: b/tasks.py
            from celery import shared_task
            @shared_task
            def ping(host, port): ...
            # file: c.py
            import pytest
            from a.tasks import ping
            from unknown.tasks import pong
            ping.delay("h")
            pong.delay()
            def run(ping):
                ping.delay()
            def test_wrong_arguments(self):
                with pytest.raises(TypeError):
                    ping.delay()
                with self.assertRaises(TypeError):
                    ping.delay("h", "extra")
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import Task, shared_task
            from proj.base import TenantTask
            from proj.locks import single_instance
            @shared_task(base=TenantTask)
            def sync(tenant): ...
            @shared_task
            @single_instance
            def rebuild(index): ...
            class Poll(Task):
                def __call__(self, *args, **kwargs):
                    return self.run(*args[1:], **kwargs)
                def run(self, url):
                    ...
            class NoRun(Task):
                pass
            # file: proj/views.py
            from proj.tasks import sync, rebuild, Poll, NoRun
            sync.delay()
            rebuild.delay()
            Poll().delay("tenant", "https://example.org")
            NoRun().delay(1)
        """),
        Valid("""
            # look-alikes: not tasks
            import inspect
            import multiprocessing
            def work(a): ...
            pool = multiprocessing.Pool()
            pool.apply_async(work, (1, 2, 3))
            inspect.signature(work)
            class Timer:
                def delay(self, seconds): ...
            Timer().delay(1, 2, 3)
        """),
        Valid("""
            # file: proj/__init__.py
            # file: proj/jobs.py
            class Job:
                def run(self, a, b): ...
            # file: proj/tasks.py
            from django.contrib import admin
            from proj.jobs import Job
            from proj.unlinted import Unknown
            class Charge(Job):
                def run(self, order_id): ...
            class Refund(Unknown):
                def run(self, order_id): ...
            admin.site.register(Charge)
            registry.register(Refund())
            Charge().delay(1, 2)
            Refund().delay(1, 2)
        """),
    )
    INVALID = (
        Invalid("""
            # file: proj/__init__.py
            # file: proj/jobs.py
            from proj.framework import Job
            class Charge(Job):
                def run(self, order_id): ...
            # file: proj/celery.py
            from celery import Celery
            from proj.jobs import Charge
            app = Celery("proj")
            app.register_task(Charge())
            # file: proj/views.py
            from proj.jobs import Charge
            Charge().delay(1, 2)
        """, count=1, message="task `Charge(order_id)`"),
        Invalid("""
            from proj.celery import app
            from proj.jobs import Job
            class Charge(Job):
                def run(self, order_id): ...
            app.tasks.register(Charge())
            Charge().delay(1, 2)
        """, count=1, message="2 positional arguments given, it takes 1"),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class ProjectTask(Task):
                acks_late = True
            # file: proj/tasks.py
            from proj.base import ProjectTask
            from proj.celery import app
            class Charge(ProjectTask):
                def run(self, order_id): ...
            charge = app.register_task(Charge())
            charge.delay(1, 2)
            Charge().delay()
        """, count=2, message="task `Charge(order_id)`"),
        Invalid("""
            from celery import Task
            class Base(Task):
                abstract = True
            class Charge(Base):
                def run(self, order_id): ...
            Charge().delay(1, 2)
        """, count=1),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task as task
            @task
            def export(user_id, fmt="csv"): ...
            # file: proj/views.py
            from proj.tasks import export
            export.delay(1, "csv", "extra")
        """, count=1, message="3 positional arguments given, it takes 2", at="2:1"),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from proj.celery import app
            @app.task(bind=True)
            def deliver(self, order_id, *, express): ...
            # file: proj/views.py
            from . import tasks as t
            t.deliver.apply_async((1,), {"expres": True})
            t.deliver.apply_async(args=[1, 2])
        """, count=2),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task
            @shared_task
            def store(result, bucket, /): ...
            # file: proj/flows.py
            from celery import chain
            from .tasks import store
            chain(fetch.s(), store.s("a", "b", "c"))
            store.s(bucket="b")
            store.si("r")
            store.signature(("r",), immutable=True)
        """, count=4),
        Invalid("""
            from celery import Celery, Task
            app = Celery()
            class Cleanup(Task):
                def run(self, days):
                    ...
            @app.task
            def nightly(when, days):
                Cleanup().delay(days=30, when=1)
                nightly.delay(1, when=2)
                nightly.si()
        """, count=3),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/tasks.py
            from celery import shared_task
            from django.db import transaction
            @shared_task(bind=False)
            @transaction.atomic
            def recalc(event_id): ...
            # file: proj/signals.py
            import proj.tasks
            def on_save(instance):
                proj.tasks.recalc.apply_async(kwargs={"event": instance.pk})
        """, count=1, message="unexpected keyword argument `event`"),
        Invalid("""
            from celery import shared_task
            @shared_task
            def ping(host): ...
            # ping.delay() in a comment
            ping.delay()
            x = [ping.delay(1, 2), ping.s(host=1, port=2)]
        """, count=3, at="5:1"),
    )

    def check(self, project) -> Iterable[Finding]:
        tasks: dict[str, list[dict]] = {}
        classes = class_facts(project)
        for fact in project.of_kind(TASK_FACT):
            if confirmed(fact, classes):
                tasks.setdefault(fact["name"], []).append(fact)
        for call in project.of_kind(ARGS_FACT):
            found = tasks.get(call["target"], ())
            if len(found) != 1:
                continue  # unknown, or two definitions under one name
            sig = found[0].get("sig")
            if not sig or sig["var_pos"] or sig["var_kw"]:
                continue
            problems = binding_problems(sig, call)
            if problems:
                yield self._finding(call, found[0], sig, problems)

    def _finding(self, call: dict, task: dict, sig: dict, problems: list[str]) -> Finding:
        receiver = call["receiver"] if len(call["receiver"]) <= 40 and "\n" not in call["receiver"] else "…"
        partial = " (a partial signature: arguments may be added later, but not these)" if call["partial"] else ""
        bound = " (`self` is the task and takes no argument)" if sig.get("bound") else ""
        message = (f"`{receiver}.{call['method']}()` does not match task `{task['short']}{sig['text']}`{bound}: "
                   f"{'; '.join(problems)}{partial}; it fails with `TypeError` when sent or run")
        return self.finding(message, call["path"], call["line"], call["col"], call["end_line"], call["end_col"])
