from __future__ import annotations

import libcst as cst

from ..domain.calls import arg
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.model_values import QUERYSET, VALUES, ModelValues
from ..rule import All, Invalid, Regex, Rule, Valid

SENDING = frozenset({"delay", "s", "si"})
_EMPTY = cst.Module([])


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

    The rule does not read the serializer: with json the call fails, with
    pickle it works and sends a stale copy; both are reported.

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
    REQUIRES = (All(((b"delay", b"apply_async", Regex(rb"\.\s*si?\s*\(")),
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
        for value in given:
            kind = self.values.kind(value)
            if kind is None:
                continue
            instead = ("a list of primary keys (`list(qs.values_list(\"pk\", flat=True))`)" if kind in (QUERYSET, VALUES)
                       else "the primary key (`.pk`) and fetch the object in the task")
            self.report(value, f"`{_shown(value)}` is {kind}, passed to `{_shown(func)}()`: the json serializer "
                               "cannot encode it (`EncodeError` when sent) and pickle sends a copy that is stale "
                               f"when the task runs; pass {instead}")
