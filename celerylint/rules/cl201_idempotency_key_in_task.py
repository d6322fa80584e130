from __future__ import annotations

import re

import libcst as cst

from ..domain.clients import REDIS_NEEDLES
from ..domain.dataflow import flow, fresh_origin, params_of
from ..domain.side_effects import side_effect
from ..domain.tasks import TaskRule, task_and
from ..rule import FileContext, Invalid, Regex, Valid
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

KEY_NAME = re.compile(r"idempot|dedup", re.IGNORECASE)
_EMPTY = cst.Module([])


class IdempotencyKeyInTask(TaskRule):
    """
    ## What it does
    Finds idempotency, deduplication and lock keys that a task makes itself
    from a fresh random or time value: `uuid4()`, `uuid1()`, `time.time()`,
    `datetime.now()`, `timezone.now()`, `secrets.token_*()`, `random.*()`,
    `os.urandom()`, directly or through local variables, f-strings, `%`,
    `+`, `.format()`, `"...".join()`, `str()` and `.hex`, or a helper
    function of the same module (defined before the task) whose returns
    are so built. A value counts as a key when it is
    the key of a Redis or Django cache "already done?" check (`get`,
    `exists`), of a lock (`set(..., nx=True)`, `setnx`, `cache.add`,
    `lock()`), or when an external call (a payment API, an HTTP request, a
    `publish`/`send*` call) receives it as an `idempotency_key=`/`dedup…=`
    argument, through a variable so named, or as an `Idempotency-Key`
    header.

    Random values used for anything else (file names, invite tokens,
    correlation ids, a key under which a result is stored, a key saved with
    the database record that carries the work) are not keys and are not
    reported; neither are time values bucketed with `strftime`,
    `.date()` or division, which make deliberate per-period keys, nor random
    keys drawn in a loop until one is free. A task class is one through
    its bases in any linted file.

    ## Why is this bad?
    Celery delivers at least once: a redelivered message runs the task body
    again, and the body draws a new random value or reads a new time. The
    key is different on every run, so the check never finds the previous
    run's key and the side effect happens again. The key has to be made by
    the caller, where the decision to do the work is taken, and passed to the
    task.

    ## Example
    ```python
    import uuid
    import redis
    from celery import shared_task

    redis_client = redis.Redis()

    @shared_task
    def charge_order(order_id, amount):
        idempotency_key = str(uuid.uuid4())
        if redis_client.get(f"charged:{idempotency_key}"):
            return
        gateway.charge(order_id, amount)
        redis_client.set(f"charged:{idempotency_key}", 1, ex=86400)
    ```

    Use instead:
    ```python
    import redis
    from celery import shared_task

    redis_client = redis.Redis()

    def checkout(order):
        charge_order.delay(order.id, order.total, idempotency_key=f"charge-{order.id}")

    @shared_task
    def charge_order(order_id, amount, idempotency_key):
        if redis_client.get(f"charged:{idempotency_key}"):
            return
        gateway.charge(order_id, amount)
        redis_client.set(f"charged:{idempotency_key}", 1, ex=86400)
    ```

    ## Fix safety
    There is no automatic fix: the key has to move to the caller, which
    changes the task's signature and every call site.

    ## References
    - [Celery: tasks should be idempotent](https://docs.celeryq.dev/en/stable/userguide/tasks.html#idempotence)
    - [Stripe: idempotent requests](https://docs.stripe.com/api/idempotent_requests)
    """

    CODE = "CL201"
    NAME = "idempotency-key-in-task"
    SEVERITY = "error"
    SUMMARY = "An idempotency/dedup key made inside the task from a random or time value: it changes on every redelivery"
    HINT = "make the key where the work is decided and pass it in: `task.delay(..., idempotency_key=f\"charge-{order.id}\")`"
    TAGS = ("idempotency",)
    PATHS = TEST_PATHS_EXCLUDED
    # a task, a use of a key (a Redis client or Django cache, both known only
    # through an import, or a name saying idempotency/dedup), and an import
    # of a fresh-value source (uuid, time/datetime/timezone, random, secrets,
    # os.urandom, arrow, pendulum)
    REQUIRES = (task_and(
        (*REDIS_NEEDLES, b"cache", Regex(rb"(?i)idempot|dedup")),
        (b"uuid", b"time", b"random", b"secrets", b"urandom", b"arrow", b"pendulum"),
    ),)
    GATE = "celerylint.domain.fresh_syntax:may_make_fresh_value"  # a call that makes a fresh value

    VALID = (
        # the corrected version: the caller passes the key
        Valid("""
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            @shared_task(bind=True)
            def charge_customer(self, idempotency_key, order_id, amount_cents):
                done = redis_client.get(f"idempotency:{idempotency_key}")
                if done:
                    return done.decode()
                charge_id = payment_gateway.charge(order_id=order_id, amount_cents=amount_cents)
                redis_client.set(f"idempotency:{idempotency_key}", charge_id, ex=86400)
                return charge_id
        """),
        # a random lock token is a value, not a key
        Valid("""
            import uuid
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task
            def sync(account_id):
                token = str(uuid.uuid4())
                if r.set(f"lock:sync:{account_id}", token, nx=True, ex=600):
                    push_account(account_id)
        """),
        # a helper's random file name stored under a stable key
        Valid("""
            import uuid
            from django.core.cache import cache
            from celery import shared_task
            def report_path(report_id):
                return f"/tmp/{report_id}-{uuid.uuid4().hex}.csv"
            @shared_task
            def build(report_id):
                if cache.get(f"report:{report_id}"):
                    return
                cache.set(f"report:{report_id}", report_path(report_id))
        """),
        # random file names and invite tokens are not keys
        Valid("""
            from uuid import uuid4 as new_id
            import secrets
            from proj.celery import app
            @app.task
            def export(report_id):
                path = f"/tmp/{new_id().hex}.csv"
                write_report(report_id, path)
                invite = Invite.objects.create(token=secrets.token_urlsafe(16))
                return path
        """),
        # a per-day key is deliberate
        Valid("""
            from datetime import datetime
            from django.core.cache import cache
            from celery import shared_task
            @shared_task
            def daily_digest():
                key = f"digest:{datetime.now().strftime('%Y-%m-%d')}"
                if cache.get(key):
                    return
                send_digest()
                cache.set(key, 1, 86400)
        """),
        # not a task
        Valid("""
            import uuid
            import redis
            r = redis.Redis()
            def helper():
                key = f"seen:{uuid.uuid4()}"
                if r.get(key):
                    return
        """),
        # storing a result under a fresh key, then reading it back
        Valid("""
            import uuid
            from django.core.cache import cache
            from celery import shared_task
            @shared_task
            def render(doc_id):
                key = f"render:{uuid.uuid4()}"
                cache.set(key, build(doc_id), 300)
                return cache.get(key)
        """),
        # a key stored with the record that carries the work, in the same
        # transaction that claims it, travels with the record
        Valid("""
            import uuid
            from django.db import transaction
            from proj.celery import app
            @app.task
            def release_funds():
                with transaction.atomic():
                    for item in pending_items():
                        RefundRequest.objects.create(item=item, idempotency_key=str(uuid.uuid4()))
                    pending_items().update(claimed=True)
        """),
        # drawing random codes until one is free
        Valid("""
            import secrets
            import redis
            from celery import shared_task
            r = redis.Redis()
            @shared_task
            def make_code(user_id):
                while True:
                    code = secrets.token_hex(4)
                    if r.set(f"code:{code}", user_id, nx=True, ex=3600):
                        return code
        """),
    )
    INVALID = (
        # a key helper of the module, and keys built with join and format
        Invalid("""
            import time
            import uuid
            from django.core.cache import cache
            from celery import shared_task
            def job_key(job_id):
                return ":".join(["job", str(job_id), uuid.uuid4().hex])
            @shared_task
            def run(job_id):
                if cache.get(job_key(job_id)):
                    return
                if cache.add("run:{}:{}".format(job_id, int(time.time())), 1, 60):
                    work(job_id)
        """, count=2, message="is made inside the task"),
        # the broken version: the key is made inside the task
        Invalid("""
            import uuid
            import redis
            from celery import shared_task
            redis_client = redis.Redis()
            @shared_task(bind=True)
            def charge_customer(self, order_id, amount_cents):
                idempotency_key = str(uuid.uuid4())
                done = redis_client.get(f"idempotency:{idempotency_key}")
                if done:
                    return done.decode()
                charge_id = payment_gateway.charge(order_id=order_id, amount_cents=amount_cents)
                redis_client.set(f"idempotency:{idempotency_key}", charge_id, ex=86400)
                return charge_id
        """, count=1),
        # aliased import, key passed to a payment API
        Invalid("""
            from uuid import uuid4 as new_id
            import stripe
            from celery import shared_task as task
            @task
            def charge(customer, amount):
                stripe.PaymentIntent.create(customer=customer, amount=amount, idempotency_key=str(new_id()))
        """, count=1),
        # class-based task, Django cache, time-based key
        Invalid("""
            import time
            from celery import Task
            from django.core.cache import cache
            class SendInvoice(Task):
                def run(self, invoice_id):
                    key = "invoice-sent-%s" % time.time()
                    if cache.add(key, 1, 3600):
                        mail_invoice(invoice_id)
        """, count=1),
        # async Redis, key derived through .hex and concatenation
        Invalid("""
            import uuid
            import redis.asyncio as aioredis
            from proj.celery import app
            r = aioredis.Redis()
            @app.task
            async def notify(user_id):
                dedup = "notify:" + uuid.uuid1().hex
                if await r.exists(dedup):
                    return
                await push_notification(user_id)
                await r.set(dedup, 1, ex=600)
        """, count=1),
        # call-form registration, timezone.now() key formatted with .format
        Invalid("""
            from django.utils import timezone
            import redis as rds
            from celery import Celery
            app = Celery("proj")
            conn = rds.StrictRedis()
            def refund(payment_id):
                key = "refund:{}:{}".format(payment_id, timezone.now().isoformat())
                with conn.lock(key, timeout=60):
                    gateway.refund(payment_id)
            refund_task = app.task(refund)
        """, count=1),
        # an Idempotency-Key header built inside the task
        Invalid("""
            import uuid
            import httpx
            from celery import shared_task
            @shared_task(autoretry_for=(httpx.TimeoutException,))
            def capture(payment_id):
                httpx.post(f"https://psp.example/captures/{payment_id}", headers={"Idempotency-Key": uuid.uuid4().hex})
        """, count=1),
        # a variable named as a dedup key
        Invalid("""
            import secrets
            from celery import shared_task
            @shared_task
            def publish_event(payload):
                dedup_id = secrets.token_hex(8)
                bus.publish(payload, message_id=dedup_id)
        """, count=1),
    )

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.reported: set[int] = set()

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        f = flow(node, self.ctx)
        written: set[str] = set()
        for event in f.events:
            if event.kind == "mark":
                written.add(event.key)
            if event.kind not in ("check", "lock") or event.in_loop or event.key_node is None:
                continue
            if event.kind == "check" and event.key in written:
                continue  # reading back what this run stored
            origin = fresh_origin(event.key_node, self.ctx, f.params)
            if origin is not None:
                self._report(origin, "the key of this "
                             + ("lock" if event.kind == "lock" else "\"already done?\" check"))

    def visit_Call(self, node: cst.Call) -> None:
        task = self.tasks.current
        if task is None or self.ctx.function is not task.node or side_effect(node, self.ctx) is None:
            return
        params = params_of(task.node)
        for a in node.args:
            for what, value in _key_arguments(a):
                origin = fresh_origin(value, self.ctx, params)
                if origin is not None:
                    self._report(origin, what)

    def _report(self, origin: cst.Call, what: str) -> None:
        if id(origin) in self.reported:
            return
        self.reported.add(id(origin))
        made = _EMPTY.code_for_node(origin)
        self.report(origin, f"{what} is made inside the task from `{made}`: a redelivered message makes a new key, "
                            "so the duplicate check never matches; make the key in the caller and pass it to the task")


def _key_arguments(a: cst.Arg) -> list[tuple[str, cst.BaseExpression]]:
    """The parts of a call argument that name themselves a key:
    ``idempotency_key=…``, ``dedup_id`` passed by name, a header
    ``{"Idempotency-Key": …}``."""
    if a.keyword is not None and KEY_NAME.search(a.keyword.value):
        return [(f"the `{a.keyword.value}=` argument", a.value)]
    if isinstance(a.value, cst.Name) and KEY_NAME.search(a.value.value):
        return [(f"`{a.value.value}`", a.value)]
    if isinstance(a.value, cst.Dict):
        return [
            (f"the `{e.key.raw_value}` entry", e.value) for e in a.value.elements
            if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
            and KEY_NAME.search(e.key.raw_value)
        ]
    return []
