from __future__ import annotations

import libcst as cst

from ..domain.dataflow import Flow, flow, marks_done, statements_movable_after, throttles, within
from ..domain.tasks import TaskRule, task_and
from ..rule import Fix, Invalid, MoveLinesAfter, Valid
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED


class MarkerBeforeSideEffect(TaskRule):
    """
    ## What it does
    Finds tasks that write their "done" marker before the external side
    effect it guards. A marker is

    - a Redis or Django cache key the task first reads as an "already
      done?" check (`get`, `exists`) and then writes (`set`, `setex`), or
    - a model field the task tests in a guard that leaves (`if
      order.confirmation_sent: return`, `if mail.state in (SENT, SENDING):
      raise …`) and then sets to a value the guard treats as done and saves
      (`order.confirmation_sent = True; order.save()`).

    It is reported when an external side effect (HTTP call, e-mail,
    payment, `send*`/`publish`/`push`/`notify`/`charge` call, task dispatch)
    follows the write in the same block or nested in it, and none comes
    between the check and the write (then the marker follows the work it
    guards, and later side effects are follow-ups). A key that the task
    deletes again is a lock, not a marker, and a marker that is written
    again after the side effect (an "in progress" state followed by "done")
    is left alone, and so is a key that stores the current time and is read
    back as a number (a "last run" timestamp that throttles). A task class
    is one through its bases in any linted file.

    ## Why is this bad?
    If the side effect fails, or the worker dies between the two lines, the
    marker already says "done": the retry or the redelivered message finds
    it and returns without doing the work. The e-mail is never sent, the
    payment never made, and nothing reports it.

    ## Example
    ```python
    from celery import shared_task
    from django.core.cache import cache
    from django.core.mail import send_mail

    @shared_task
    def send_confirmation(order_id):
        key = f"confirmation-sent:{order_id}"
        if cache.get(key):
            return
        cache.set(key, True, 86400)
        send_mail("Your order", body(order_id), None, [email(order_id)])
    ```

    Use instead:
    ```python
    from celery import shared_task
    from django.core.cache import cache
    from django.core.mail import send_mail

    @shared_task
    def send_confirmation(order_id):
        key = f"confirmation-sent:{order_id}"
        if cache.get(key):
            return
        send_mail("Your order", body(order_id), None, [email(order_id)])
        cache.set(key, True, 86400)
    ```

    ## Fix safety
    The fix moves the marker write (for a model flag: the assignment and the
    `save()`) to just after the side effect. It is offered only when they are
    plain statements of the same block, and it is unsafe: a marker written
    after the side effect no longer keeps a concurrent duplicate out, so
    pair it with a lock (SET NX EX) if two deliveries can run at once.

    ## References
    - [Celery: tasks should be idempotent](https://docs.celeryq.dev/en/stable/userguide/tasks.html#idempotence)
    - [Celery: acks_late and redelivery](https://docs.celeryq.dev/en/stable/faq.html#faq-acks-late-vs-retry)
    """

    CODE = "CL202"
    NAME = "marker-before-side-effect"
    SEVERITY = "error"
    SUMMARY = "The \"done\" marker is written before the side effect it guards: a failure in between loses the work"
    FIX = "unsafe"
    HINT = "write the marker only after the side effect succeeded"
    TAGS = ("idempotency",)
    OPTIONS = ("side-effect-calls",)
    PATHS = TEST_PATHS_EXCLUDED
    # a task, and a Redis/cache client ("edis", "cache") or a model flag save
    REQUIRES = (task_and((b"edis", b"cache", b"save")),)
    GATE = "celerylint.domain.marker_syntax:may_mark_before_effect"

    VALID = (
        # the corrected version
        Valid("""
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            @shared_task(bind=True)
            def charge_customer(self, idempotency_key, order_id, amount_cents):
                already_done = redis_client.get(f"idempotency:{idempotency_key}")
                if already_done:
                    return already_done.decode()
                charge_id = payment_gateway.charge(order_id=order_id, amount_cents=amount_cents)
                redis_client.set(f"idempotency:{idempotency_key}", charge_id, ex=86400)
                return charge_id
        """),
        # the e-mail version, with a lock taken by a helper
        Valid("""
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            @shared_task(bind=True)
            def send_order_confirmation(self, idempotency_key, order_id):
                lock_key = f"lock:email:{idempotency_key}"
                token = acquire_lock(lock_key, ttl_seconds=15)
                if token is None:
                    raise self.retry(countdown=3, max_retries=5)
                try:
                    sent_key = f"idempotency:email:{idempotency_key}"
                    if redis_client.get(sent_key):
                        return "already-sent"
                    email_provider.send(to=get_order_email(order_id), template="order_confirmation")
                    redis_client.set(sent_key, "1", ex=604800)
                    return "sent"
                finally:
                    release_lock(lock_key, token)
        """),
        # a lock (deleted again) is not a marker
        Valid("""
            from django.core.cache import cache
            from celery import shared_task
            @shared_task
            def sync(account_id):
                key = f"sync:{account_id}"
                if cache.get(key):
                    return
                cache.set(key, 1, 600)
                try:
                    push_account(account_id)
                finally:
                    cache.delete(key)
        """),
        # "in progress" first, "done" after the side effect
        Valid("""
            from celery import shared_task
            @shared_task
            def send_receipt(order_id):
                order = Order.objects.get(pk=order_id)
                if order.receipt_state != "pending":
                    return
                order.receipt_state = "sending"
                order.save()
                send_receipt_mail(order)
                order.receipt_state = "sent"
                order.save()
        """),
        # a status the guard does not treat as done (a state transition)
        Valid("""
            from celery import shared_task
            @shared_task
            def rebuild(bundle_id):
                bundle = Bundle.objects.get(pk=bundle_id)
                if bundle.status == "processing":
                    return
                bundle.status = "pending"
                bundle.save()
                build_bundle.apply_async((bundle.pk,))
        """),
        # the flag is set in a branch that returns before the side effect
        Valid("""
            from celery import shared_task
            @shared_task
            def deliver(mail_id):
                mail = Mail.objects.get(pk=mail_id)
                if mail.sent:
                    return
                if delivered_elsewhere(mail):
                    mail.sent = True
                    mail.save()
                    return
                mail.send()
                mail.sent = True
                mail.save()
        """),
        # model flag saved after the e-mail; not a task: silent anyway
        Valid("""
            from django.core.mail import send_mail as mail
            from celery import shared_task
            @shared_task
            def remind(invoice_id):
                invoice = Invoice.objects.get(pk=invoice_id)
                if invoice.reminded:
                    return
                mail("Reminder", "Please pay", None, [invoice.email])
                invoice.reminded = True
                invoice.save()
            def not_a_task(key):
                if cache.get(key):
                    return
                cache.set(key, 1)
                notify_admins()
        """),
    )
    INVALID = (
        # the classic pitfall: marked as done before the charge
        Invalid(
            """
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            @shared_task(bind=True)
            def charge_customer(self, idempotency_key, order_id, amount_cents):
                if redis_client.get(f"idempotency:{idempotency_key}"):
                    return
                redis_client.set(f"idempotency:{idempotency_key}", "1", ex=86400)
                payment_gateway.charge(order_id=order_id, amount_cents=amount_cents)
            """,
            fixed="""
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            @shared_task(bind=True)
            def charge_customer(self, idempotency_key, order_id, amount_cents):
                if redis_client.get(f"idempotency:{idempotency_key}"):
                    return
                payment_gateway.charge(order_id=order_id, amount_cents=amount_cents)
                redis_client.set(f"idempotency:{idempotency_key}", "1", ex=86400)
            """,
        ),
        # model flag, aliased mail import
        Invalid(
            """
            from django.core.mail import send_mail as mail
            from celery import shared_task
            @shared_task
            def remind(invoice_id):
                invoice = Invoice.objects.get(pk=invoice_id)
                if invoice.reminded:
                    return
                invoice.reminded = True
                invoice.save(update_fields=["reminded"])
                mail("Reminder", "Please pay", None, [invoice.email])
            """,
            fixed="""
            from django.core.mail import send_mail as mail
            from celery import shared_task
            @shared_task
            def remind(invoice_id):
                invoice = Invoice.objects.get(pk=invoice_id)
                if invoice.reminded:
                    return
                mail("Reminder", "Please pay", None, [invoice.email])
                invoice.reminded = True
                invoice.save(update_fields=["reminded"])
            """,
        ),
        # class-based task, Django cache through a variable key
        Invalid(
            """
            from celery import Task
            from django.core.cache import cache as django_cache
            import requests
            class PushWebhook(Task):
                def run(self, event_id):
                    sent_key = f"webhook-sent:{event_id}"
                    if django_cache.get(sent_key):
                        return
                    django_cache.set(sent_key, True, 3600)
                    requests.post(webhook_url(), json={"id": event_id})
                    audit_webhook.delay(event_id)
            """,
            fixed="""
            from celery import Task
            from django.core.cache import cache as django_cache
            import requests
            class PushWebhook(Task):
                def run(self, event_id):
                    sent_key = f"webhook-sent:{event_id}"
                    if django_cache.get(sent_key):
                        return
                    requests.post(webhook_url(), json={"id": event_id})
                    django_cache.set(sent_key, True, 3600)
                    audit_webhook.delay(event_id)
            """,
        ),
        # async Redis; the side effect is in another block: reported, no fix
        Invalid(
            """
            import redis.asyncio as aioredis
            from proj.celery import app
            r = aioredis.Redis()
            @app.task
            async def notify(user_id):
                key = f"notified:{user_id}"
                if await r.exists(key):
                    return
                await r.set(key, 1, ex=3600)
                if wants_push(user_id):
                    await push_client.notify(user_id)
            """,
            fixed=None,
        ),
        # a status the guard treats as done, set before the dispatch
        Invalid(
            """
            from celery import shared_task
            @shared_task
            def queue_mail(mail_id):
                mail = Mail.objects.get(pk=mail_id)
                if mail.state in ("sent", "sending"):
                    raise AlreadySent(mail_id)
                mail.state = "sending"
                mail.save(update_fields=["state"])
                deliver_mail.apply_async((mail.pk,), countdown=5)
            """,
            fixed="""
            from celery import shared_task
            @shared_task
            def queue_mail(mail_id):
                mail = Mail.objects.get(pk=mail_id)
                if mail.state in ("sent", "sending"):
                    raise AlreadySent(mail_id)
                deliver_mail.apply_async((mail.pk,), countdown=5)
                mail.state = "sending"
                mail.save(update_fields=["state"])
            """,
        ),
        # configured side effect, aliased redis import
        Invalid(
            """
            import redis as rds
            from billing import gateway
            from celery import shared_task
            conn = rds.StrictRedis()
            @shared_task
            def bill(account_id):
                if conn.exists(f"billed:{account_id}"):
                    return
                conn.setex(f"billed:{account_id}", 86400, 1)
                gateway.bill_account(account_id)
            """,
            fixed="""
            import redis as rds
            from billing import gateway
            from celery import shared_task
            conn = rds.StrictRedis()
            @shared_task
            def bill(account_id):
                if conn.exists(f"billed:{account_id}"):
                    return
                gateway.bill_account(account_id)
                conn.setex(f"billed:{account_id}", 86400, 1)
            """,
            config={"side-effect-calls": ["billing.gateway.bill_account"]},
        ),
    )

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        self._check(flow(node, self.ctx))

    def _check(self, f: Flow) -> None:
        events = f.events
        released = {e.key for e in events if e.kind in ("release", "lock")}
        for i, event in enumerate(events):
            if event.kind == "mark" and event.key not in released:
                checked = [e for e in events[:i] if e.kind == "check" and e.key == event.key
                           and not throttles(e, event, f, self.ctx)]
                rewritten = [e for e in events[i + 1:] if e.kind == "mark" and e.key == event.key]
                marker = [event]
                what = "the key this task checks for \"already done\""
            elif event.kind == "flag_set":
                checked = [
                    e for e in events[:i]
                    if e.kind == "flag_check" and e.key == event.key and marks_done(e.detail, event.detail)
                ]
                obj = event.key.partition(".")[0]
                save = next((e for e in events[i + 1:] if e.kind == "flag_save" and e.key == obj), None)
                if save is None:
                    continue
                rewritten = [e for e in events[i + 1:] if e.kind == "flag_set" and e.key == event.key]
                marker = [event, save]
                what = f"`{event.key}`, which this task checks,"
            else:
                continue
            if not checked:
                continue
            if any(e.kind == "effect" for e in events[checked[-1].index + 1:i]):
                continue  # the marker follows the side effect it guards; later ones are follow-ups
            # the side effect runs after the marker: later in the marker's block or nested in it
            end = marker[-1].index
            effect = next((e for e in events[end + 1:] if e.kind == "effect" and within(e, event.block)), None)
            if effect is None or any(e.index > effect.index for e in rewritten):
                continue
            movable = statements_movable_after(marker, effect)
            fix = Fix("move the marker write after the side effect", (MoveLinesAfter(movable, effect.stmt),)) if movable else None
            self.report(event.node if event.kind == "mark" else event.stmt or event.node,
                        f"{what} is marked done before {effect.detail}: if that fails or the worker dies in between, "
                        "the retry or redelivery sees the marker and the work is lost", fix)
