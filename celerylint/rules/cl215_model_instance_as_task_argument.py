from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import libcst as cst

from ..domain.calls import arg
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.model_values import QUERYSET, VALUES, ModelValues
from ..facts.task_calls import TASK_CALL
from ..rule import All, Finding, Invalid, Rule, Valid

SENDING = frozenset({"delay", "s", "si"})
_EMPTY = cst.Module([])
FACT = "model-task-argument"  # judged in the project phase, by the serializer of the task's app
# kombu's serializers that cannot encode a model or a queryset (pickle can: a stale copy)
_ENCODERS = frozenset({"json", "yaml", "msgpack"})


def _shown(node: cst.CSTNode) -> str:
    code = _EMPTY.code_for_node(node)
    return code if len(code) <= 40 and "\n" not in code else "…"


def _elements(expr: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """The values of a literal ``args`` tuple/list or ``kwargs`` dict."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        return [e.value for e in expr.elements if not isinstance(e, cst.StarredElement)]
    if isinstance(expr, cst.Dict):
        return [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
    return []


class ModelInstanceAsTaskArgument(Rule):
    """
    ## What it does
    Finds a Django model instance or queryset passed as a task argument:
    to `.delay(...)`, `.s(...)`, `.si(...)`, or inside a literal `args=`
    tuple or `kwargs=` dict of `.apply_async(...)`. A value counts only
    when celerylint sees where it comes from: `Model.objects.get(...)`,
    `.create(...)`, `.first()`, `.last()`, `.latest()`, `.earliest()`
    (instances), `.filter(...)`, `.all()`, `.values_list(...)` and the other
    queryset methods (querysets), through a chain of queryset methods;
    `get_object_or_404(...)`, `get_list_or_404(...)`; `request.user` (with
    `request` a parameter of the function) and `self.request.user` in a
    class that is not a task; the `instance` parameter of a function
    decorated `@receiver(post_save, ...)` (or `pre_save`, `m2m_changed`),
    or connected with `post_save.connect(handler)` in the same module (not
    the instance of `pre_delete`/`post_delete`: the row is gone, and the
    copy is all the task can get); a
    local name last assigned one of these; the variable of a `for` loop over
    a queryset. A model is recognised by its spelling (`CamelCase.objects`).
    Test files are not checked.

    Not reported: `obj.pk`, `obj.id` and other attributes, `list(...)` of
    anything, values celerylint cannot trace. `datetime`, `date`, `time`,
    `Decimal` and `UUID` values are not reported either: kombu's json
    encoder (5.3 and later) encodes them.

    The message follows the serializer the task is sent with: a literal
    `serializer=` of the `apply_async` call, else the task's own
    `serializer=`, else `task_serializer` of the app the task is registered
    on (of every app the project configures, for a `shared_task` or a task
    defined elsewhere), when they all agree. With json (Celery's default),
    yaml or msgpack the send fails: an error. With pickle, chosen on
    purpose by projects such as taiga and paperless-ngx, the send works and
    the task gets a copy that is stale when it runs: still reported, as a
    warning, because that copy is how a task overwrites newer writes. A
    serializer the project registers under a name with `pickle` in it
    (paperless-ngx's `signed-pickle`) counts as pickle. A
    serializer celerylint cannot read, or apps that disagree: the message
    names both outcomes, as an error.

    ## Why is this bad?
    With the json serializer (Celery's default) kombu cannot encode a model
    or a queryset: the call raises `kombu.exceptions.EncodeError` when the
    task is sent, often in production only, on the path that sends it. With
    pickle the task receives a copy of the row as it was when sent: when the
    task runs (seconds or hours later, or after a retry) it acts on stale
    data and may overwrite newer writes with `save()`. The object may not
    even be committed yet.

    ## Example
    ```python
    from proj.models import Order
    from proj.tasks import ship

    def confirm(order_id):
        order = Order.objects.get(pk=order_id)
        ship.delay(order)
    ```

    Use instead:
    ```python
    from proj.models import Order
    from proj.tasks import ship

    def confirm(order_id):
        order = Order.objects.get(pk=order_id)
        ship.delay(order.pk)  # the task fetches the order
    ```

    ## Fix safety
    No fix: passing the primary key needs the task to fetch the object,
    which changes the task's code as well as the call.

    ## References
    - [Celery: state (do not pass database objects)](https://docs.celeryq.dev/en/stable/userguide/tasks.html#state)
    - [Celery: serializers](https://docs.celeryq.dev/en/stable/userguide/calling.html#serializers)
    - [kombu: the json encoder's types](https://github.com/celery/kombu/blob/main/kombu/utils/json.py)
    """

    CODE = "CL215"
    NAME = "model-instance-as-task-argument"
    SEVERITY = "error"
    SUMMARY = "A model instance or queryset passed to a task: json cannot encode it, pickle sends a stale copy"
    HINT = "pass the primary key (`obj.pk`) and fetch the object in the task"
    TAGS = ("django", "calling")
    # ``TASK_CALL`` matches every ``.s(``/``.si(`` call, and is searched in every file for the task-call facts
    REQUIRES = (All(((b"delay", b"apply_async", TASK_CALL),
                     (b"objects", b"_manager", b"_or_404", b"request", b"instance"))),)
    PATHS = TEST_PATHS_EXCLUDED  # a test may send a mock or an eager call
    GATE = "celerylint.domain.dispatch_syntax:may_pass_model"

    VALID = (
        Valid("""
            from proj.models import Order
            def confirm(order_id, request):
                order = Order.objects.get(pk=order_id)
                ship.delay(order.pk, order.id, request.user.pk, str(order))
                ids = list(Order.objects.filter(paid=True).values_list("pk", flat=True))
                ship.delay(ids)
                ship.delay(Order.objects.filter(paid=True).count())
                ship.apply_async(args=(order.pk,), kwargs={"user": request.user.id})
        """),
        Valid("""
            # look-alikes: not a model manager, a rebound name, a request that is not a parameter
            from proj.models import Order
            def confirm(order_id, cache, instance):
                thing = cache.objects.get(order_id)
                ship.delay(thing)
                order = Order.objects.get(pk=order_id)
                order = order.pk
                ship.delay(order)
                ship.delay(instance)  # not a signal receiver
                ship.delay(request.user)
                for o in range(3):
                    ship.delay(o)
                for pk in Order.objects.filter(paid=True).values_list("id", flat=True):
                    ship.delay(pk)
                ship.delay(Order.objects.values_list("id", flat=True).first())
                ship.delay(Order.objects.filter(paid=True).values("id").get(pk=1))
        """),
        Valid("""
            # ``alert_id = alert`` took the argument: ``alert`` is fetched only after
            from proj.models import Alert
            def on_create(**kwargs):
                alert = kwargs["alert"]
                if isinstance(alert, Alert):
                    alert_id = alert.pk
                else:
                    alert_id = alert
                    alert = Alert.objects.get(pk=alert_id)
                notify.apply_async((alert_id,))
        """),
        Valid("""
            # self.request in a task is the task's request
            from celery import Task
            class Notify(Task):
                def run(self):
                    later.delay(self.request.user)
        """),
        Valid("""
            from proj.models import Order
            from proj.tasks import ship
            def test_ship():
                ship.delay(Order.objects.create())
        """, path="tests/test_ship.py"),
        Valid("""
            # a receiver of a signal that is not a model signal
            from django.dispatch import receiver
            from django.core.signals import request_finished
            @receiver(request_finished)
            def done(sender, instance=None, **kwargs):
                audit.delay(instance)
        """),
    )
    INVALID = (
        Invalid("""
            from django.shortcuts import get_object_or_404 as fetch
            from proj.models import Order
            def view(request, pk):
                order = fetch(Order, pk=pk)
                ship.delay(order, user=request.user)
        """, count=2, at="5:16", message="a model instance"),
        Invalid("""
            from proj import models
            def resend(ids):
                pending = models.Order.objects.filter(pk__in=ids).exclude(sent=True)
                resend_all.apply_async(args=(pending,), countdown=10)
                resend_all.apply_async((), {"orders": models.Order.objects.values_list("pk", flat=True)})
                for order in pending:
                    ship.s(order).delay()
                first = models.Order._default_manager.filter(sent=False).first()
                ship.si(first).apply_async()
        """, count=4),
        Invalid("""
            # an alias of a fetched instance is the instance
            from proj.models import Order
            def confirm(pk):
                order = Order.objects.get(pk=pk)
                current = order
                ship.delay(current)
        """, message="a model instance", count=1),
        Invalid("""
            from django.db.models.signals import post_save, pre_save
            from django.dispatch import receiver
            @receiver([post_save, pre_save], sender="proj.Order")
            def on_save(sender, instance, created, **kwargs):
                index.delay(instance)
        """, message="signal's model instance", count=1),
        Invalid("""
            from django.db.models import signals
            def on_save(sender, instance, **kwargs):
                index.delay(instance)
            def on_delete(sender, instance, **kwargs):
                purge.delay(instance)  # the row is gone: the copy is all there is
            def unrelated(sender, instance, **kwargs):
                purge.delay(instance)
            signals.post_save.connect(on_save, sender=Order)
            signals.post_delete.connect(on_delete, sender=Order)
            other_signal.connect(unrelated)
        """, message="signal's model instance", count=1, at="3:17"),
        Invalid("""
            from django.views.generic import View
            class Checkout(View):
                def post(self, *args):
                    audit.delay(self.request.user)
        """, message="request's user", count=1),
        Invalid("""
            # json (Celery's default): the send fails
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", broker="redis://")
            @app.task
            def ship(order): ...
            # file: proj/views.py
            from proj.celery import ship
            from proj.models import Order
            def confirm(pk):
                ship.delay(Order.objects.get(pk=pk))
        """, message="the json serializer cannot encode it (`EncodeError` when it is sent)", at="4:16"),
        Invalid("""
            # pickle chosen for the app: the copy is stale, the send works
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", broker="redis://")
            app.conf.task_serializer = "pickle"
            app.conf.accept_content = ["pickle"]
            @app.task
            def ship(order): ...
            # file: proj/views.py
            from proj.celery import ship
            from proj.models import Order
            def confirm(pk):
                ship.delay(Order.objects.get(pk=pk))
        """, message="pickle (the serializer it is sent with) sends a copy as it is now", count=1),
        Invalid("""
            # the task's own serializer, and one call's, override the app's json
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", broker="redis://")
            @app.task(serializer="pickle")
            def ship(order): ...
            @app.task
            def bill(order): ...
            # file: proj/views.py
            from proj.celery import bill, ship
            from proj.models import Order
            def confirm(pk):
                ship.delay(Order.objects.get(pk=pk))
                bill.apply_async(args=(Order.objects.get(pk=pk),), serializer="pickle")
        """, message="stale data", count=2),
        Invalid("""
            # a serializer the project registers under a pickle name
            # file: proj/celery.py
            from celery import Celery
            app = Celery("proj", broker="redis://", task_serializer="signed-pickle")
            @app.task
            def ship(order): ...
            # file: proj/views.py
            from proj.celery import ship
            from proj.models import Order
            def confirm(pk):
                ship.delay(Order.objects.get(pk=pk))
        """, message="`signed-pickle` (the serializer it is sent with) sends a copy"),
        Invalid("""
            # a serializer celerylint cannot read: both outcomes are named
            # file: proj/celery.py
            import os
            from celery import Celery
            app = Celery("proj", broker="redis://")
            app.conf.task_serializer = os.environ["SERIALIZER"]
            @app.task
            def ship(order): ...
            # file: proj/views.py
            from proj.celery import ship
            from proj.models import Order
            def confirm(pk):
                ship.delay(Order.objects.get(pk=pk))
        """, message="the json serializer cannot encode it (`EncodeError` when sent) and pickle sends a copy"),
        Invalid("""
            # what the gate must not pass over: a signature split over lines, an alias after a
            # comment, a name bound at module level and sent there
            from django.shortcuts import (get_object_or_404  # a comment
                                          as fetch)
            from proj.models import Order
            def view(pk):
                order = fetch(Order, pk=pk)
                signature = (ship.  # a comment
                             si)(order)
            first = Order.objects.first()
            ship.delay(first)
        """, count=2, at="9:22"),
        Invalid("""
            from proj.models import Order
            def export():
                export_all.delay(Order.objects.all())
                export_all.delay(Order.objects.values("pk"))
        """, message="a queryset", count=2),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.values = ModelValues(ctx)

    def visit_Module(self, node: cst.Module) -> None:
        self.values.visit_Module(node)

    def visit_For(self, node: cst.For) -> None:
        self.values.visit_For(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.values.leave_For(original_node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method in SENDING:
            given = [a.value for a in node.args if not a.star]
        elif method == "apply_async":
            args, kwargs = arg(node, "args", 0), arg(node, "kwargs", 1)
            given = _elements(args.value if args else None) + _elements(kwargs.value if kwargs else None)
        else:
            return
        serializer = None
        if method == "apply_async":  # ``serializer=`` of this call overrides the app's and the task's
            given_serializer = arg(node, "serializer", None)
            if given_serializer is not None:
                value = given_serializer.value
                serializer = value.evaluated_value if isinstance(value, cst.SimpleString) else "?"
        for value in given:
            kind = self.values.kind(value)
            if kind is None:
                continue
            self.ctx.fact(FACT, value, task=self._task(func.value), serializer=serializer, shown=_shown(value),
                          what=kind, func=_shown(func))

    def _task(self, node: cst.BaseExpression) -> str | None:
        """The dotted name of the task sent (``proj.tasks.ship``), or None."""
        name = self.ctx.qualify(node)
        if name and "." not in name and name not in self.ctx.imports:
            name = f"{self.ctx.module_name or self.ctx.path}.{name}"
        return name

    @classmethod
    def check_project(cls, project) -> Iterable[Finding]:
        """Each argument recorded, worded by the serializer its task is sent with."""
        facts = list(project.of_kind(FACT))
        if not facts:
            return
        from ..domain.celeryconf.model import model  # the configuration model: only for these facts

        m = model(project)
        for f in facts:
            serializer = f["serializer"] if f.get("serializer") is not None else _serializer(m, f.get("task"))
            serializer = serializer.strip().lower() if isinstance(serializer, str) and serializer != "?" else None
            finding = cls.finding(_message(f, serializer), f["path"], f["line"], f["col"], f["end_line"], f["end_col"])
            yield replace(finding, severity=_severity(serializer))


def _pickles(serializer: str | None) -> bool:
    """pickle, or a serializer the project registers under a name that says
    it pickles (paperless-ngx's ``signed-pickle``)."""
    return serializer is not None and "pickle" in serializer


def _severity(serializer: str | None) -> str:
    return "warning" if _pickles(serializer) else ModelInstanceAsTaskArgument.SEVERITY


def _message(f: dict, serializer: str | None) -> str:
    kind = f["what"]
    instead = ("a list of primary keys (`list(qs.values_list(\"pk\", flat=True))`)" if kind in (QUERYSET, VALUES)
               else "the primary key (`.pk`) and fetch the object in the task")
    head = f"`{f['shown']}` is {kind}, passed to `{f['func']}()`: "
    if _pickles(serializer):
        shown = "pickle" if serializer == "pickle" else f"`{serializer}`"
        return (head + f"{shown} (the serializer it is sent with) sends a copy as it is now, and the task, which "
                "runs later, works on stale data (a `save()` there overwrites newer writes); pass " + instead)
    if serializer in _ENCODERS:
        return head + f"the {serializer} serializer cannot encode it (`EncodeError` when it is sent); pass {instead}"
    return (head + "the json serializer cannot encode it (`EncodeError` when sent) and pickle sends a copy that is "
            f"stale when the task runs; pass {instead}")


def _serializer(m, task: str | None) -> str | None:
    """The serializer the task is sent with: its own ``serializer=``, else
    ``task_serializer`` of its app (of every app the project configures,
    for a ``shared_task`` or a task not found), when all agree; None when
    any is unknown."""
    module, _, name = (task or "").rpartition(".")
    path = m.path_of(module) if module else None
    found = [t for t in m.tasks if t["name"] == name and (path is None or t["path"] == path)]
    apps = m.configured_apps()
    values: set = set()
    if len(found) == 1:
        own, state = m.task_option(found[0], "serializer")
        if state == "set":
            values.add(own)
        elif state == "unknown":
            return None
        else:
            registered = found[0].get("app")
            if registered:
                apps = [a for a in m.relevant_apps() if a.key.replace(":", ".") == registered] or apps
    if not values:
        if not apps:
            return None
        for app in apps:
            setting = app.get("task_serializer")
            if setting.is_unknown:
                return None
            values.add(setting.value)
    if len(values) != 1:
        return None
    value = values.pop()
    return value.strip().lower() if isinstance(value, str) else None
