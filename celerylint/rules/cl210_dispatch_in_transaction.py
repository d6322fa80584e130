from __future__ import annotations

import libcst as cst

from ..domain.transaction_dispatch import FollowsTransactions, TransactionFrames, dispatched
from ..domain.view_reads import reads_only
from ..rule import All, Invalid, Rule, Valid
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED


class DispatchInTransaction(FollowsTransactions, Rule):
    """
    ## What it does
    Finds Celery tasks dispatched — `.delay(...)`, `.apply_async(...)`,
    `app.send_task(...)`, `signature(...).delay()` — lexically inside a
    Django transaction: the body of `with transaction.atomic():` or of a
    function decorated with `@transaction.atomic` / `@atomic` (imported
    from `django.db.transaction`, through any alias).

    Not reported: a dispatch deferred with `transaction.on_commit(...)` (in
    a lambda passed to it, or a function, or any function or lambda merely
    defined in the block), `delay_on_commit()` / `apply_async_on_commit()`,
    and blocks
    `atomic(using=<alias other than "default">, savepoint=False)`, the
    read-replica pattern (a transaction opened only to pin one replica,
    with nothing to commit), and blocks that show no sign of writing:
    every call in the outermost atomic block sends a task or is known to
    read (`.filter(...).select_for_update(skip_locked=True)` to claim rows,
    `.values_list()`, `.iterator()` for server-side cursors, getters such as
    `get_progress()`, logging, builtins), as CL216 judges views; any other
    call may write (a project helper, `.save()`, `.create()`) and keeps the
    finding. Views run in a transaction by
    `ATOMIC_REQUESTS = True`, model signal handlers, admin save hooks and
    atomic blocks entered in a caller of the same module are CL216's;
    `method_decorator(transaction.atomic)` is not seen and not reported.

    ## Why is this bad?
    The message goes to the broker at once, while the transaction is still
    open. A worker can pick the task up before the commit, and then does
    not see the rows the transaction wrote (`DoesNotExist`, or stale data);
    if the transaction rolls back, the task runs anyway, on data that never
    existed. Both happen only under load or on errors, so tests rarely
    catch them.

    ## Example
    ```python
    from django.db import transaction
    from proj.tasks import send_welcome

    def sign_up(form):
        with transaction.atomic():
            user = form.save()
            send_welcome.delay(user.pk)
    ```

    Use instead:
    ```python
    from django.db import transaction
    from proj.tasks import send_welcome

    def sign_up(form):
        with transaction.atomic():
            user = form.save()
            transaction.on_commit(lambda: send_welcome.delay(user.pk))
    ```

    ## Fix safety
    The fix wraps the dispatch as `transaction.on_commit(lambda: <call>)`
    (with `using=` when the enclosing block names a database). It is
    offered only when the call is a whole statement (its result is not
    used), `transaction` is imported from `django.db` in the file, and the
    call is not inside a loop, where the lambda would see only the loop
    variable's last value, nor inside a `try` that handles exceptions
    within the transaction: the send would fail at the commit, past its
    handler. It is unsafe: the task is no longer sent when
    the transaction rolls back, it is sent only after the outermost atomic
    block commits, and the lambda reads its variables when it runs, so a
    variable reassigned later in the block changes what is sent. Celery
    5.4+ offers `task.delay_on_commit(...)` as well.

    ## References
    - [Django: performing actions after commit](https://docs.djangoproject.com/en/stable/topics/db/transactions/#performing-actions-after-commit)
    - [Celery: trigger tasks at the end of the database transaction](https://docs.celeryq.dev/en/stable/django/first-steps-with-django.html#trigger-tasks-at-the-end-of-the-database-transaction)
    """

    CODE = "CL210"
    NAME = "dispatch-in-transaction"
    SEVERITY = "warning"
    SUMMARY = "A task dispatched inside `transaction.atomic()`: it can run before the commit or after a rollback"
    FIX = "sometimes"
    HINT = "dispatch in `transaction.on_commit(...)`, or with `delay_on_commit()`"
    TAGS = ("django", "calling")
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (All((b"atomic", b"transaction", (b"delay", b"apply_async", b"send_task"))),)
    GATE = "celerylint.domain.transactions:may_dispatch_in_atomic"

    VALID = (
        # blocks that write nothing: opened to lock rows for a claim (attendee's scheduler)
        # or for server-side cursors (glitchtip): nothing for the task to miss, or to roll back
        Valid("""
            import random
            from django.db import transaction
            def launch_due(now, log):
                with transaction.atomic():
                    due = Bot.objects.filter(state="scheduled", join_at__lte=now).select_for_update(skip_locked=True)
                    for bot in due:
                        delay = random.randint(0, 30)
                        log.info("launching %s", bot.id)
                        launch.apply_async(args=[bot.id, bot.join_at.isoformat()], countdown=delay)
            @transaction.atomic
            def check_all(now):
                ids = Monitor.objects.filter(active=True).values_list("id", flat=True)
                batch = []
                for monitor_id in ids.iterator():
                    batch.append(monitor_id)
                perform_checks.delay(batch, now)
        """),
        Valid("""
            from django.db import transaction
            from proj.tasks import notify, reindex
            def save(order):
                with transaction.atomic():
                    order.save()
                    transaction.on_commit(lambda: notify.delay(order.pk))
                    transaction.on_commit(reindex.s(order.pk).delay)
                    notify.delay_on_commit(order.pk)
                    reindex.apply_async_on_commit((order.pk,))
                notify.delay(order.pk)  # after the block: committed
        """),
        Valid("""
            from django.conf import settings
            from django.db import transaction
            from proj.tasks import retry_later
            def generate(ids):
                with transaction.atomic(using=settings.DATABASE_CONNECTION_REPLICA_NAME, savepoint=False):
                    if not ready(ids):
                        retry_later.delay(ids)
        """),
        Valid("""
            # look-alikes: atomic from elsewhere, a transaction of another library
            from proj.locks import atomic
            from sqlalchemy.orm import Session
            from proj.tasks import notify
            @atomic
            def one(order):
                notify.delay(order.pk)
            def two(session: Session, order):
                with session.begin():
                    notify.delay(order.pk)
                with atomic():
                    notify.apply_async((order.pk,))
        """),
        Valid("""
            from django.db import transaction
            from proj.tasks import notify
            def save(order):
                with transaction.atomic():
                    order.save()
                    def later():
                        notify.delay(order.pk)
                    transaction.on_commit(later)
                    callbacks.append(lambda: notify.delay(order.pk))
        """),
        Valid("""
            from django.db import transaction
            @transaction.atomic
            def save(order):
                order.save()
            def after(order):
                save(order)
                app.send_task("proj.notify", args=(order.pk,))
        """),
    )
    INVALID = (
        # a long task name is shown whole: it says which task
        Invalid("""
            from django.db import transaction
            def update(request, obj):
                with transaction.atomic():
                    obj.save()
                    notify_financial_assistance_request_denied_email.delay(obj.id)
        """, message="`notify_financial_assistance_request_denied_email.delay()` inside"),
        Invalid("""
            from django.db import transaction
            def update(request, obj):
                with transaction.atomic():
                    obj.save()
                    notifications.emails.notify_financial_assistance_request_denied.delay(obj.id)
        """, message="`….notify_financial_assistance_request_denied.delay()` inside"),
        Invalid(
            """
            from django.db import transaction
            from bookwyrm.tasks import app
            @app.task
            def create_export_json_task(**kwargs):
                job = Job.objects.get(id=kwargs["job_id"])
                with transaction.atomic():
                    job.save(update_fields=["export_json"])
                    create_archive_task.delay(job_id=job.id)
            """,
            fixed="""
            from django.db import transaction
            from bookwyrm.tasks import app
            @app.task
            def create_export_json_task(**kwargs):
                job = Job.objects.get(id=kwargs["job_id"])
                with transaction.atomic():
                    job.save(update_fields=["export_json"])
                    transaction.on_commit(lambda: create_archive_task.delay(job_id=job.id))
            """,
            at="8:9", message="`create_archive_task.delay()`",
        ),
        Invalid(
            """
            from django.db import transaction
            class ReviewSettings:
                @transaction.atomic
                def form_valid(self, form):
                    form.save()
                    task_recalculate_review_scores.apply_async(
                        kwargs={"event_id": self.request.event.pk}, ignore_result=True
                    )
                    return super().form_valid(form)
            """,
            fixed="""
            from django.db import transaction
            class ReviewSettings:
                @transaction.atomic
                def form_valid(self, form):
                    form.save()
                    transaction.on_commit(lambda: task_recalculate_review_scores.apply_async(
                        kwargs={"event_id": self.request.event.pk}, ignore_result=True
                    ))
                    return super().form_valid(form)
            """,
        ),
        Invalid(
            """
            from django.db.transaction import atomic as in_tx
            from celery import current_app, signature
            @in_tx()
            def publish(event):
                event.save()
                current_app.send_task("events.publish", args=(event.pk,))
                signature("events.audit", args=(event.pk,)).delay()
            """,
            fixed=None, count=2, message="transaction",
        ),
        Invalid(
            """
            import django.db.transaction
            from django.db import transaction as tx
            def bulk(orders):
                with django.db.transaction.atomic(using="orders"):
                    for order in orders:
                        order.save()
                        notify.delay(order.pk)
                    result = notify.delay(0)
                with tx.atomic(using="replica", savepoint=True):
                    Order.objects.create(number=1)
                    notify.delay(1)
            """,
            fixed=None, count=3,
        ),
        Invalid(
            """
            from django.db import transaction
            def save(order):
                with transaction.atomic(using="orders"):
                    with transaction.atomic(using="replica", savepoint=False):
                        order.refresh_from_db()
                        notify.delay(order.pk)
            """,
            fixed="""
            from django.db import transaction
            def save(order):
                with transaction.atomic(using="orders"):
                    with transaction.atomic(using="replica", savepoint=False):
                        order.refresh_from_db()
                        transaction.on_commit(lambda: notify.delay(order.pk), using="orders")
            """,
        ),
        # the send's failure is handled inside the transaction (mitodl/mitxonline): no fix,
        # at the commit it would fail past the handler; a try around the block keeps it
        Invalid(
            """
            from django.db import transaction
            def update(user, ignore_failures):
                with transaction.atomic():
                    user.save()
                    try:
                        sync_email.delay(user.id)
                    except Exception:
                        if not ignore_failures:
                            raise
            """,
            fixed=None,
        ),
        Invalid(
            """
            from django.db import transaction
            def update(user):
                try:
                    with transaction.atomic():
                        user.save()
                        sync_email.delay(user.id)
                except BrokerDown:
                    log()
            """,
            fixed="""
            from django.db import transaction
            def update(user):
                try:
                    with transaction.atomic():
                        user.save()
                        transaction.on_commit(lambda: sync_email.delay(user.id))
                except BrokerDown:
                    log()
            """,
        ),
        Invalid(
            """
            from django.db import transaction
            def save(order):
                with open("x") as f, transaction.atomic():
                    transaction.on_commit(notify.delay(order.pk))  # dispatches now
            """,
            fixed=None,
        ),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.where = TransactionFrames(ctx)
        self.read_only: dict[int, bool] = {}  # id of an outermost atomic block -> it shows no sign of writing

    # -- the dispatch ---------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if not self.where.current.atomics:
            return
        shown = dispatched(node)
        if shown is None:
            return
        outer = self.where.current.blocks[0]
        if id(outer) not in self.read_only:
            self.read_only[id(outer)] = reads_only(outer)
        if self.read_only[id(outer)]:  # nothing written for the task to miss, or to roll back
            return
        self.report(
            node,
            f"`{shown}()` inside `transaction.atomic()`: the worker can run the task before the transaction commits "
            "(and not see its writes) or after it rolls back; dispatch it in `transaction.on_commit(...)`",
            self.where.on_commit_fix(node),
        )
