from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ..analysis.tasks import TASK_DEFINITION, function_task_options, is_task_class
from ..context import FileContext, dotted_name
from ..model import Edit, Finding, Fix
from ..rule import All, Checker, Invalid, ProjectRule, Regex, Valid

# Execution options of ``Task.apply_async`` (celery 5.7, task.py:587-761).
EXECUTION_OPTIONS = frozenset({
    "countdown", "eta", "expires", "shadow", "connection", "retry", "retry_policy", "time_limit",
    "soft_time_limit", "queue", "exchange", "routing_key", "priority", "serializer", "compression",
    "link", "link_error", "producer", "add_to_parent", "ignore_result", "publisher", "headers", "task_id",
})
# Options no task plausibly takes as a parameter of its own: reported even
# when the task's signature cannot be seen (or takes ``**kwargs``).  Names
# such as ``queue``, ``priority``, ``headers``, ``link``, ``task_id`` are
# common task parameters and are reported only against a known signature.
UNAMBIGUOUS = frozenset({
    "countdown", "eta", "expires", "retry_policy", "link_error", "shadow", "time_limit",
    "soft_time_limit", "add_to_parent", "ignore_result",
})
CALL_METHODS = frozenset({"delay", "s", "si"})
TASK_FACT = "celery-task-signature"
CALL_FACT = "task-call-with-options"
_EMPTY = cst.Module([])


def _text(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def _plain(node: cst.BaseExpression) -> bool:
    """Evaluating it twice, or in another order, cannot matter: literals,
    names, attribute chains, subscripts and containers of these."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Name)):
        return True
    if isinstance(node, cst.Attribute):
        return _plain(node.value)
    if isinstance(node, cst.Subscript):
        return _plain(node.value) and all(
            isinstance(e.slice, cst.Index) and _plain(e.slice.value) for e in node.slice
        )
    if isinstance(node, cst.UnaryOperation):
        return _plain(node.expression)
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        return all(isinstance(e, cst.Element) and _plain(e.value) for e in node.elements)
    if isinstance(node, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _plain(e.key) and _plain(e.value) for e in node.elements)
    return False


def _signature(params: cst.Parameters, bound: bool) -> tuple[list[str], bool]:
    """Names that can be passed by keyword, and whether ``**kwargs`` is taken."""
    names = [p.name.value for p in (*params.params, *params.kwonly_params)]
    if bound and params.params:
        names = names[1:]
    return names, isinstance(params.star_kwarg, cst.Param)


def _local_name(ctx: FileContext, name: str) -> str:
    return f"{ctx.module_name}.{name}" if ctx.module_name else f"{ctx.path}::{name}"


class TaskSignatures(Checker):
    """Records every task's keyword parameters and the ``.delay``/``.s``/``.si``
    calls that pass an execution option, for CL209's project phase."""

    # Calls: ``.delay(``, ``.s(``, ``.si(``; definitions: any task.
    NEEDLES = (
        # a call records a fact only when it passes an execution option by keyword
        All((
            Regex(rb"\.\s*(?:delay|si?)\s*\("),
            Regex(rb"\b(?:" + b"|".join(sorted(o.encode() for o in EXECUTION_OPTIONS)) + rb")\s*="),
        )),
        TASK_DEFINITION,
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        # module-level functions and classes that are certainly not tasks:
        # undecorated functions, classes without bases
        self.not_tasks: set[str] = set()
        self.calls: list[tuple[cst.Call, str | None, dict]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.ctx.classes or len(self.ctx.functions) > 1:
            return
        options = function_task_options(node, self.ctx)
        if options is None:
            if not node.decorators:
                self.not_tasks.add(node.name.value)
            return
        bind = options.get("bind")
        names, var_kw = _signature(node.params, isinstance(bind, cst.Name) and bind.value == "True")
        self._record(node.name.value, names, var_kw)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if len(self.ctx.classes) > 1 or self.ctx.functions:
            return
        if not is_task_class(node, self.ctx):
            if all(isinstance(b.value, cst.Name) and b.value.value == "object" for b in node.bases):
                self.not_tasks.add(node.name.value)
            return
        for stmt in node.body.body:
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "run":
                names, var_kw = _signature(stmt.params, True)
                self._record(node.name.value, names, var_kw)

    def _record(self, name: str, params: list[str], var_kw: bool) -> None:
        self.ctx.fact(TASK_FACT, name=_local_name(self.ctx, name), short=name, params=params, var_kw=var_kw)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in CALL_METHODS:
            return
        options = [a.keyword.value for a in node.args if a.keyword is not None and a.keyword.value in EXECUTION_OPTIONS]
        if not options:
            return
        target, local = self._target(func.value)
        args = [[a.keyword.value if a.keyword else ("**" if a.star == "**" else "*" if a.star else None), _text(a.value)]
                for a in node.args]
        code = _text(node)
        plain = all(not a.star and _plain(a.value) for a in node.args)
        self.calls.append((node, local, dict(
            target=target, short=target.rsplit(".", 1)[-1].rsplit(":", 1)[-1] if target else None,
            method=func.attr.value, receiver=_text(func.value), args=args, options=options,
            plain=plain, comments="#" in code,
        )))

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, local, data in self.calls:
            if local not in self.not_tasks:
                self.ctx.fact(CALL_FACT, node, **data)

    def _target(self, receiver: cst.BaseExpression) -> tuple[str | None, str | None]:
        """The qualified name of the task the call is made on, if it can be
        named, and the name as defined in this module when it is local."""
        if isinstance(receiver, cst.Call) and not receiver.args:
            receiver = receiver.func  # MyTask().delay(...)
        if isinstance(receiver, cst.Name) and receiver.value not in self.ctx.imports:
            bound = self.ctx.lookup(receiver.value)
            if isinstance(bound, cst.Call) and not bound.args and isinstance(bound.func, (cst.Name, cst.Attribute)):
                receiver = bound.func  # task = MyTask()
        name = dotted_name(receiver)
        if name is None or name.partition(".")[0] in ("self", "cls"):
            return None, None
        if name.partition(".")[0] in self.ctx.imports:
            return self.ctx.qualify(receiver), None
        return _local_name(self.ctx, name), name


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

    ## Options
    None.

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
    )
    INVALID = (
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
        for fact in project.of_kind(TASK_FACT):
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
            fix = Fix(f"Move {names} to {instead}", (Edit(call["line"], call["col"], call["end_line"], call["end_col"], text),), safe)
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
