from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.dispatch_syntax import ADMIN_HOOKS, VIEW_HOOKS
from ..domain.model_values import model_signals
from ..domain.outer_transactions import (
    SIGNALS, admin_hook, is_view, on_commit_edits, same_function, signal_context, signal_handler_shaped,
)
from ..domain.transaction_dispatch import FollowsTransactions, TransactionFrames, dispatched
from ..domain.view_reads import reads_only
from ..facts.atomic_requests import ATOMIC_REQUESTS_FACT
from ..facts.signal_connects import CONNECT_FACT
from ..rule import All, Finding, Invalid, Regex, Rule, Valid

VIEW_FACT = "dispatch-in-view"
HANDLER_FACT = "dispatch-in-signal-handler"
POST_SAVE_FACT = "dispatch-in-post-save-receiver"
_WHAT = ("the worker can run the task before the transaction commits (and not see its writes) or after it rolls "
         "back; dispatch it in `transaction.on_commit(...)`")


@dataclass
class _Dispatch:
    node: cst.Call
    shown: str
    func: cst.FunctionDef
    cls: cst.ClassDef | None
    fixable: bool
    fix: object


class DispatchInOuterTransaction(FollowsTransactions, Rule):
    """
    ## What it does
    Finds Celery tasks dispatched (`.delay()`, `.apply_async()`,
    `app.send_task()`) in code that runs inside a Django transaction opened
    somewhere else, which CL210 (dispatch lexically inside `atomic`) does
    not see:

    - a receiver of a model signal that Django sends inside a transaction
      of its own (`pre_delete`, `post_delete`, `m2m_changed`) or before
      the row is written (`pre_save`), decorated `@receiver(pre_delete,
      ...)` or connected with `pre_delete.connect(handler)` in any module
      of the project (the handler takes `sender` and `**kwargs`), or a
      method of a class that connects it itself
      (`pre_delete.connect(self.handle_delete)`, as search-index signal
      processors do);
    - a `post_save` receiver, when a settings module of the project sets
      `ATOMIC_REQUESTS` (below): Django sends `post_save` after its own
      save transaction, so the receiver is inside one only when the code
      that saves has one, and celerylint cannot see the callers; with
      `ATOMIC_REQUESTS` every save in a view does;
    - the `ModelAdmin` hooks Django's admin calls inside `atomic`
      (`save_model`, `save_related`, `save_formset`, `delete_model`,
      `response_add`, `response_change`, `response_delete`), in a class
      deriving from `admin.ModelAdmin` itself;
    - a function of the module called from a `@transaction.atomic`
      function or a `with transaction.atomic():` block of the same module,
      directly or through one more function of the module (calls by plain
      name; methods called through `self` are not followed);
    - a view, when a settings module of the project sets
      `ATOMIC_REQUESTS` to a literal `True` for a database (read in the
      project phase, from any settings module outside tests): a
      module-level function whose first parameter is `request`, a method
      taking `request` after `self`, an operation of a django-ninja-extra
      controller (`@route.post(...)`, `@http_get(...)`), or
      `form_valid`/`perform_create`/`perform_update`/`perform_destroy` of a
      class with bases. Async views
      (Django refuses `ATOMIC_REQUESTS` for them), middleware, and views
      marked `@transaction.non_atomic_requests` are left out, and so are
      views that show no sign of writing: every call in them sends a task
      or is known to read or answer (`request.POST.get`, `.filter()`,
      `.exists()`, `get_object_or_404`, a getter or predicate by its name
      such as `get_progress()` or `is_valid()` unless the name says it makes
      or changes something (`get_or_create`), building a serializer, a form
      or a task signature, `messages.success`, `redirect`, `Response`,
      Python's builtins). Any other call may write (a project
      helper, `serializer.save()`, `super().form_valid(form)`), so such a
      view is reported.

    Not reported: a dispatch deferred with `transaction.on_commit(...)` (in
    a lambda or a nested function), `delay_on_commit()`, anything
    CL210 reports, and test modules (a test function taking pytest's
    `request` fixture is not a view).

    ## Why is this bad?
    The message goes to the broker at once, while the outer transaction is
    still open: a worker can pick the task up before the commit and not
    see the rows written (`DoesNotExist`, or stale data), and if the
    transaction rolls back the task runs anyway. Django sends `pre_delete`
    and `post_delete` inside the `transaction.atomic` of `Collector.delete`,
    and `m2m_changed` inside the related manager's; `Model.save_base` sends
    `pre_save` before the row is written at all (a race even in
    autocommit) and `post_save` after the block of its own transaction,
    so inside the caller's only (the admin's, a view's under
    `ATOMIC_REQUESTS`, an `atomic` block).

    ## Example
    ```python
    from django.db.models.signals import m2m_changed
    from django.dispatch import receiver
    from django.db import transaction
    from proj.models import Order
    from proj.tasks import index_order

    @receiver(m2m_changed, sender=Order.items.through)
    def reindex(sender, instance, **kwargs):
        index_order.delay(instance.pk)
    ```

    Use instead:
    ```python
    from django.db.models.signals import m2m_changed
    from django.dispatch import receiver
    from django.db import transaction
    from proj.models import Order
    from proj.tasks import index_order

    @receiver(m2m_changed, sender=Order.items.through)
    def reindex(sender, instance, **kwargs):
        transaction.on_commit(lambda: index_order.delay(instance.pk))
    ```

    ## Fix safety
    As CL210's: the dispatch is wrapped as `transaction.on_commit(lambda:
    <call>)` when it is a whole statement, not in a loop nor in a `try`
    that handles exceptions, and `transaction` is imported from
    `django.db`. Outside a transaction `on_commit` runs
    the callback at once, so the fix changes nothing there; inside one the
    task is sent after the commit, and not at all on a rollback. Unsafe,
    since the lambda reads its variables when it runs. No fix for `pre_save`
    receivers: in autocommit `on_commit` runs at once, still before the
    row is written.

    ## References
    - [Django: tying transactions to HTTP requests (`ATOMIC_REQUESTS`)](https://docs.djangoproject.com/en/stable/topics/db/transactions/#tying-transactions-to-http-requests)
    - [Django: performing actions after commit](https://docs.djangoproject.com/en/stable/topics/db/transactions/#performing-actions-after-commit)
    - [Django: model signals](https://docs.djangoproject.com/en/stable/ref/signals/#module-django.db.models.signals)
    - [Django: `Model.save_base`, where `pre_save` and `post_save` are sent](https://github.com/django/django/blob/stable/5.1.x/django/db/models/base.py)
    - [Celery: trigger tasks at the end of the database transaction](https://docs.celeryq.dev/en/stable/django/first-steps-with-django.html#trigger-tasks-at-the-end-of-the-database-transaction)
    """

    CODE = "CL216"
    NAME = "dispatch-in-outer-transaction"
    SEVERITY = "warning"
    SUMMARY = "A task dispatched in a signal receiver, admin hook, atomic callee or atomic-request view: it can run before the commit"
    FIX = "sometimes"
    HINT = "dispatch in `transaction.on_commit(...)`, or with `delay_on_commit()`"
    TAGS = ("django", "calling")
    REQUIRES = (
        # a dispatch, and a place that runs in a transaction: atomic, a receiver, a
        # handler's ``sender``, a ninja-extra controller, an admin or view hook, a parameter
        # ``request`` after ``(`` or ``self,``
        All(((b"delay", b"apply_async", b"send_task"),
             (b"atomic", b"receiver", b"sender", b"ninja_extra",
              *(h.encode() for h in sorted(ADMIN_HOOKS | VIEW_HOOKS)),
              Regex(rb"\(\s*(?:self\b[^,()]*,\s*)?request\b")))),
    )  # the ``connect`` calls that tie a handler to a model signal: facts/signal_connects.py
    # tests run no request and no admin: and pytest's ``request`` fixture is not a view's
    PATHS = TEST_PATHS_EXCLUDED
    GATE = "celerylint.domain.dispatch_syntax:may_dispatch_in_outer_transaction"
    VALID = (
        Valid("""
            # a test module: pytest's ``request`` fixture is not a view's request
            # file: proj/settings.py
            DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "ATOMIC_REQUESTS": True}}
            # file: proj/tests/test_orders.py
            def test_order_is_sent(request, order):
                send_order.delay(order.pk)
        """),
        Valid("""
            # deferred, or not in a transaction opened elsewhere
            from django.db import transaction
            from django.db.models.signals import post_save
            from django.dispatch import receiver
            @receiver(post_save, sender="proj.Order")
            def reindex(sender, instance, **kwargs):
                transaction.on_commit(lambda: index.delay(instance.pk))
                index.delay_on_commit(instance.pk)
            def plain(order):
                index.delay(order.pk)
        """),
        Valid("""
            # post_save is sent after Django's own save transaction: in one only when the caller is,
            # and no settings module here sets ATOMIC_REQUESTS
            from django.db.models.signals import post_save
            from django.dispatch import receiver
            @receiver(post_save, sender="proj.Order")
            def reindex(sender, instance, **kwargs):
                index.delay(instance.pk)
        """),
    )
    INVALID = (
        Invalid("""
            from django.db import transaction
            @transaction.atomic
            def place(order):
                order.save()
                notify_later(order)
            def notify_later(order):
                audit(order)
            def audit(order):
                record.delay(order.pk)
        """, fixed="""
            from django.db import transaction
            @transaction.atomic
            def place(order):
                order.save()
                notify_later(order)
            def notify_later(order):
                audit(order)
            def audit(order):
                transaction.on_commit(lambda: record.delay(order.pk))
        """, at="9:5", message="place → notify_later → audit"),
        Invalid("""
            # file: proj/settings.py
            DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "ATOMIC_REQUESTS": True}}
            # file: proj/signals.py
            from django.db import transaction
            from django.db.models.signals import post_save
            from django.dispatch import receiver
            @receiver(post_save, sender="proj.Order")
            def reindex(sender, instance, **kwargs):
                index.delay(instance.pk)
        """, fixed="""
            # file: proj/settings.py
            DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", "ATOMIC_REQUESTS": True}}
            # file: proj/signals.py
            from django.db import transaction
            from django.db.models.signals import post_save
            from django.dispatch import receiver
            @receiver(post_save, sender="proj.Order")
            def reindex(sender, instance, **kwargs):
                transaction.on_commit(lambda: index.delay(instance.pk))
        """, at="6:5", message="`ATOMIC_REQUESTS = True` (proj/settings.py)"),
        Invalid("""
            # pre_save: the row is not written yet, a race even without a transaction; no fix
            from django.db.models.signals import pre_save
            from django.dispatch import receiver
            @receiver(pre_save, sender="proj.Order")
            def warm(sender, instance, **kwargs):
                index.delay(instance.pk)
        """, fixed=None, at="6:5", message="before the row is even written"),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.where = TransactionFrames(ctx)
        self.dispatches: list[_Dispatch] = []
        # calls by plain name from module functions: caller name -> [(callee, inside an atomic block)]
        self.calls: dict[str, list[tuple[str, bool]]] = {}

    def _owner(self) -> tuple[cst.FunctionDef, cst.ClassDef | None] | None:
        """The function whose own body is the current point, when it is a
        module-level function or a method of a module-level class."""
        frame = self.where.current
        scopes = self.ctx.scopes
        if not isinstance(frame.node, cst.FunctionDef) or scopes[-1].node is not frame.node:
            return None
        if len(scopes) == 2:
            return frame.node, None
        if len(scopes) == 3 and isinstance(scopes[1].node, cst.ClassDef):
            return frame.node, scopes[1].node
        return None

    # -- what happens ------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        owner = self._owner()
        if owner is None:
            return
        if isinstance(func, cst.Name) and owner[1] is None:
            name = func.value
            if self.ctx.lookup(name) is None and name not in self.ctx.imports:
                self.calls.setdefault(owner[0].name.value, []).append((name, bool(self.where.current.atomics)))
            return
        shown = dispatched(node)
        if shown is None or self.where.current.atomics:  # inside atomic: CL210's
            return
        self.dispatches.append(_Dispatch(node, shown, owner[0], owner[1], self.where.fixable(node),
                                         self.where.on_commit_fix(node)))

    def leave_Module(self, original_node: cst.Module) -> None:
        called_in_atomic = self._called_in_atomic()
        for d in self.dispatches:
            name = d.func.name.value
            signals = model_signals(d.func, self.ctx)
            if signals:
                signal, words, fixable = signal_context(signals)
                if signal == "post_save":  # in a transaction only when saves are: the project phase decides
                    self.ctx.fact(POST_SAVE_FACT, d.node, function=name, shown=d.shown, fixable=d.fixable)
                    continue
                self.report(d.node, f"`{d.shown}()` in a `{signal}` receiver runs {words}"
                            + ("" if not fixable else f": {_WHAT}"), d.fix if fixable else None)
            elif admin_hook(d.func, d.cls, self.ctx):
                self.report(d.node, f"`{d.shown}()` in `{d.cls.name.value}.{name}`, which the admin runs inside "
                                    f"`transaction.atomic`: {_WHAT}", d.fix)
            elif d.cls is None and name in called_in_atomic:
                chain = " → ".join((*called_in_atomic[name], name))
                self.report(d.node, f"`{d.shown}()` in `{name}`, called inside `transaction.atomic` ({chain}): {_WHAT}",
                            d.fix)
            elif is_view(d.func, d.cls, self.ctx):
                if reads_only(d.func):  # nothing written for the task to miss, or to roll back
                    continue
                where = f"{d.cls.name.value}.{name}" if d.cls is not None else name
                self.ctx.fact(VIEW_FACT, d.node, view=where, shown=d.shown, fixable=d.fixable)
            elif signal_handler_shaped(d.func):  # connected in some module (a method: by its own class)
                module = self.ctx.module_name or self.ctx.path
                where = f"{d.cls.name.value}.{name}" if d.cls is not None else name
                self.ctx.fact(HANDLER_FACT, d.node, function=f"{module}.{where}", where=where, shown=d.shown,
                              fixable=d.fixable)

    def _called_in_atomic(self) -> dict[str, tuple[str, ...]]:
        """Module functions an atomic block calls, each with the chain of
        callers from the atomic one: directly, or through one more function."""
        functions = self.ctx.module_functions
        found: dict[str, tuple[str, ...]] = {}
        for caller, calls in self.calls.items():
            for callee, in_atomic in calls:
                if in_atomic and callee in functions and callee != caller:
                    found.setdefault(callee, (caller,))
        for first, chain in list(found.items()):
            for callee, _ in self.calls.get(first, ()):
                if callee in functions and callee not in chain:
                    found.setdefault(callee, (*chain, first))
        return found

    @classmethod
    def check_project(cls, project) -> Iterable[Finding]:
        """Views and ``post_save`` receivers, when a settings module sets
        ``ATOMIC_REQUESTS``; handlers that a model signal is connected to in
        any module."""
        settings = sorted({f["path"] for f in project.of_kind(ATOMIC_REQUESTS_FACT)})
        named = settings[0] + (f" and {len(settings) - 1} more" if len(settings) > 1 else "") if settings else ""
        if settings:
            for f in project.of_kind(VIEW_FACT):
                yield cls.finding(
                    f"`{f['shown']}()` in view `{f['view']}`: `ATOMIC_REQUESTS = True` ({named}) runs every request "
                    f"in one transaction; {_WHAT}",
                    f["path"], f["line"], f["col"], f["end_line"], f["end_col"], on_commit_edits(f))
            for f in project.of_kind(POST_SAVE_FACT):
                yield cls.finding(
                    f"`{f['shown']}()` in a `post_save` receiver runs {_post_save(named)}; {_WHAT}",
                    f["path"], f["line"], f["col"], f["end_line"], f["end_col"], on_commit_edits(f))
        handlers = list(project.of_kind(HANDLER_FACT))
        connects = list(project.of_kind(CONNECT_FACT)) if handlers else []
        for f in handlers:
            signals = [c["signal"] for c in connects if same_function(c["target"], f["function"])]
            context = signal_context(signals)
            if context is None:
                continue
            signal, words, fixable = context
            if signal == "post_save":
                if not settings:
                    continue
                words = _post_save(named)
            yield cls.finding(
                f"`{f['shown']}()` in `{f['where']}`, connected to `{signal}`, runs {words}"
                + (f"{';' if signal == 'post_save' else ':'} {_WHAT}" if fixable else ""),
                f["path"], f["line"], f["col"], f["end_line"], f["end_col"], on_commit_edits(f) if fixable else None)


def _post_save(settings: str) -> str:
    """Why a ``post_save`` receiver is in a transaction: the project's views are."""
    return (f"{SIGNALS['post_save'][0]}: `ATOMIC_REQUESTS = True` ({settings}) makes every request one "
            f"transaction, so a save in a view sends it before the commit")
