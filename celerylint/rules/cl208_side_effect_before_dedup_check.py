from __future__ import annotations

import libcst as cst

from ..domain.dataflow import Event, Flow, flow
from ..domain.tasks import TaskRule, task_and
from ..rule import Invalid, Valid
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED


# Exception classes that catch much more than a duplicate key: a handler naming
# one of them beside ``IntegrityError`` is error handling, not a dedup check.
_BROAD = frozenset({
    "Exception", "BaseException", "DatabaseError", "Error", "SQLAlchemyError", "DBAPIError", "OSError", "IOError",
    "RuntimeError", "RequestException",
})


def _docstring(stmt: cst.BaseStatement) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _returns(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Return, cst.Pass)) for s in stmt.body)


class SideEffectBeforeDedupCheck(TaskRule):
    """
    ## What it does
    Finds tasks that perform an external call (HTTP, e-mail, payment,
    `send*`/`publish`/`push`/`notify`/`charge`, task dispatch,
    `side-effect-calls`) and only afterwards rely on a database unique
    constraint to detect a duplicate run: the call comes before a `try`
    whose handler catches `IntegrityError` (Django, SQLAlchemy, psycopg), or
    inside that `try` before its first database write. Tasks that take a
    lock anywhere (`set(..., nx=True)`, `setnx`, `cache.add`, `lock()`, a
    `with …lock…:` block, a helper whose name says lock,
    `select_for_update()`) are left alone. A task class is one through its
    bases in any linted file. The handler counts as the dedup check only
    where the unique constraint is what it is about: `IntegrityError` alone
    or in a tuple of specific classes; not in a tuple that also names a broad
    class (`Exception`, `DatabaseError`, `OSError`, `RequestException`...),
    nor in a tuple around the whole task body (error handling for
    everything the task does).

    ## Why is this bad?
    The unique constraint keeps the database consistent, but by the time it
    fires the external call has already happened. Two deliveries of the same
    message that run at the same time both charge the card or send the
    e-mail; only the second insert fails. The constraint is the second line
    of defence, not the first.

    ## Example
    ```python
    from celery import shared_task
    from django.db import IntegrityError

    @shared_task
    def charge_customer(idempotency_key, order_id, amount):
        charge_id = gateway.charge(order_id=order_id, amount=amount)
        try:
            Charge.objects.create(idempotency_key=idempotency_key, gateway_id=charge_id)
        except IntegrityError:
            pass  # a duplicate delivery, but the customer paid twice
    ```

    Use instead:
    ```python
    import redis
    from celery import shared_task
    from django.db import IntegrityError

    redis_client = redis.Redis()

    @shared_task
    def charge_customer(idempotency_key, order_id, amount):
        with redis_client.lock(f"lock:charge:{idempotency_key}", timeout=300, blocking=False):
            if Charge.objects.filter(idempotency_key=idempotency_key).exists():
                return
            charge_id = gateway.charge(order_id=order_id, amount=amount)
            try:
                Charge.objects.create(idempotency_key=idempotency_key, gateway_id=charge_id)
            except IntegrityError:
                pass  # the second line of defence
    ```

    ## Fix safety
    There is no automatic fix: the task needs a lock or a check before the
    external call.

    ## References
    - [Redis: distributed locks](https://redis.io/docs/latest/develop/use/patterns/distributed-locks/)
    - [Django: `IntegrityError`](https://docs.djangoproject.com/en/stable/ref/exceptions/#database-exceptions)
    """

    CODE = "CL208"
    NAME = "side-effect-before-dedup-check"
    SEVERITY = "warning"
    SUMMARY = "An external call happens before the task relies on a unique constraint to detect duplicates"
    HINT = "take a lock (SET NX EX) or check for the existing row before the external call"
    TAGS = ("idempotency", "locks")
    OPTIONS = ("side-effect-calls",)
    PATHS = TEST_PATHS_EXCLUDED
    # the handler and the task are in one file: IntegrityError and a task marker
    REQUIRES = (task_and((b"IntegrityError",)),)

    VALID = (
        # defence in depth: the lock comes first
        Valid("""
            import redis
            from celery import shared_task
            from sqlalchemy.exc import IntegrityError
            r = redis.Redis()
            @shared_task(bind=True)
            def charge_customer(self, idempotency_key, order_id, amount_cents):
                with r.lock(f"lock:charge:{idempotency_key}", timeout=300):
                    charge_id = payment_gateway.charge(order_id=order_id, amount_cents=amount_cents)
                    try:
                        db.session.add(Charge(idempotency_key=idempotency_key, gateway_charge_id=charge_id))
                        db.session.commit()
                    except IntegrityError:
                        db.session.rollback()
        """),
        # insert first, then the external call
        Valid("""
            from django.db import IntegrityError
            from celery import shared_task
            @shared_task
            def welcome(user_id):
                try:
                    Welcome.objects.create(user_id=user_id)
                except IntegrityError:
                    return
                send_welcome_mail(user_id)
        """),
        # the external call is inside the try, after the insert
        Valid("""
            from django.db import IntegrityError
            from celery import shared_task
            @shared_task
            def welcome(user_id):
                try:
                    Welcome.objects.create(user_id=user_id)
                    send_welcome_mail(user_id)
                except IntegrityError:
                    pass
        """),
        # a lock taken through a helper
        Valid("""
            import django.db
            from celery import shared_task
            @shared_task
            def charge(key, order_id):
                token = acquire_lock(f"lock:{key}")
                gateway.charge(order_id)
                try:
                    Charge.objects.create(key=key)
                except django.db.IntegrityError:
                    pass
        """),
        # not a task
        Valid("""
            from django.db import IntegrityError
            def charge(key, order_id):
                gateway.charge(order_id)
                try:
                    Charge.objects.create(key=key)
                except IntegrityError:
                    pass
        """),
        # no external call: a read before the insert
        Valid("""
            import requests
            from django.db import IntegrityError
            from celery import shared_task
            @shared_task
            def import_feed(url):
                data = requests.get(url).json()
                try:
                    Feed.objects.create(url=url, data=data)
                except IntegrityError:
                    pass
        """),
        # a class whose base is imported and that is not registered: not known to be a task here
        Valid("""
            from django.db import IntegrityError
            from proj.base import Job
            class Mail(Job):
                def run(self, key):
                    send_mail_to(key)
                    try:
                        Sent.objects.create(key=key)
                    except IntegrityError:
                        pass
        """),
        # a base in another linted file that is no task class there (and a name that says Task)
        Valid("""
            # file: proj/__init__.py
            # file: proj/base.py
            class BaseTask:
                retries = 3
            # file: proj/mail.py
            from django.db import IntegrityError
            from proj.base import BaseTask
            class Mail(BaseTask):
                def run(self, key):
                    send_mail_to(key)
                    try:
                        Sent.objects.create(key=key)
                    except IntegrityError:
                        pass
        """),
    )
    INVALID = (
        # a base task class of another linted file, through a second project base not named ...Task
        Invalid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class BaseTask(Task):
                acks_late = True
            class Job(BaseTask):
                pass
            # file: proj/mail.py
            from django.db import IntegrityError
            from proj.base import Job
            class Welcome(Job):
                def run(self, key):
                    send_mail_to(key)
                    try:
                        Sent.objects.create(key=key)
                    except IntegrityError:
                        pass
        """, count=1, at="5:9"),
        # class-based tasks: a subclass of a project base task, a registered class
        Invalid("""
            import boto3
            from celery import Task
            from django.db import IntegrityError
            from proj.celery import app
            from proj.base import Job
            class BaseTask(Task):
                acks_late = True
            class Notify(BaseTask):
                def run(self, key, topic):
                    boto3.client("sns").publish(TopicArn=topic, Message=key)
                    try:
                        Sent.objects.create(key=key)
                    except IntegrityError:
                        pass
            class Mail(Job):
                def run(self, key):
                    send_mail_to(key)
                    try:
                        Sent.objects.create(key=key)
                    except IntegrityError:
                        pass
            app.register_task(Mail())
        """, count=2),
        # the same without the lock
        Invalid("""
            from sqlalchemy.exc import IntegrityError
            from celery import shared_task
            @shared_task(bind=True)
            def charge_customer(self, idempotency_key, order_id, amount_cents):
                charge_id = payment_gateway.charge(order_id=order_id, amount_cents=amount_cents)
                try:
                    db.session.add(Charge(idempotency_key=idempotency_key, gateway_charge_id=charge_id))
                    db.session.commit()
                except IntegrityError:
                    db.session.rollback()
                return charge_id
        """, count=1),
        # aliased imports, inside the try before the insert
        Invalid("""
            from django.db import IntegrityError as Duplicate
            from django.core.mail import send_mail as mail
            from celery import shared_task as task
            @task
            def welcome(user_id):
                try:
                    mail("Welcome", "Hello", None, [address(user_id)])
                    Welcome.objects.create(user_id=user_id)
                except Duplicate:
                    pass
        """, count=1),
        # class-based task, HTTP POST
        Invalid("""
            import requests
            from celery import Task
            from django import db
            class Forward(Task):
                def run(self, event_id, payload):
                    requests.post("https://hooks.example.com", json=payload)
                    try:
                        Forwarded.objects.create(event_id=event_id)
                    except (db.IntegrityError, ValueError):
                        pass
        """, count=1),
        # task dispatch before the insert, async task
        Invalid("""
            from django.db import IntegrityError
            from proj.celery import app
            @app.task
            async def register(user_id):
                await send_to_crm(user_id)
                try:
                    await Registration.objects.acreate(user_id=user_id)
                except IntegrityError:
                    return
        """, count=1),
        # configured side effect
        Invalid("""
            from django.db import IntegrityError
            from billing.gateway import bill_account
            from celery import shared_task
            @shared_task
            def bill(account_id, period):
                bill_account(account_id)
                try:
                    Bill.objects.create(account_id=account_id, period=period)
                except IntegrityError:
                    pass
        """, count=1, config={"side-effect-calls": ["billing.gateway.bill_account"]}),
    )

    VALID += (
        # IntegrityError among broad classes: error handling, not a dedup check
        Valid("""
            import requests
            from django.db import DatabaseError, IntegrityError
            from celery import shared_task
            @shared_task
            def sync(event_id, payload):
                requests.post("https://hooks.example.com", json=payload)
                try:
                    Forwarded.objects.create(event_id=event_id)
                except (IntegrityError, DatabaseError):
                    log.exception("sync failed")
        """),
        # a tuple with IntegrityError around the whole task body
        Valid("""
            import requests
            from django.db import IntegrityError
            from celery import shared_task
            @shared_task
            def sync(event_id, payload):
                \"\"\"Forward one event.\"\"\"
                try:
                    requests.post("https://hooks.example.com", json=payload)
                    Forwarded.objects.create(event_id=event_id)
                except (IntegrityError, ValueError, KeyError):
                    log.exception("sync failed")
                return None
        """),
    )
    INVALID += (
        # a tuple, but around the insert only: the constraint is the dedup
        Invalid("""
            import requests
            from django.db import IntegrityError
            from celery import shared_task
            @shared_task
            def sync(event_id, payload):
                requests.post("https://hooks.example.com", json=payload)
                try:
                    Forwarded.objects.create(event_id=event_id)
                except (IntegrityError, ValueError):
                    return
        """, count=1),
        # IntegrityError alone around the whole body is still the dedup check
        Invalid("""
            import requests
            from django.db import IntegrityError
            from celery import shared_task
            @shared_task
            def sync(event_id, payload):
                try:
                    requests.post("https://hooks.example.com", json=payload)
                    Forwarded.objects.create(event_id=event_id)
                except IntegrityError:
                    return
        """, count=1),
    )

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        self._check(flow(node, self.ctx))

    def _check(self, f: Flow) -> None:
        if f.of("lock", "lockish"):
            return
        reported: set[int] = set()
        for handler in f.of("integrity"):
            if not self._dedup_check(f, handler):
                continue
            effect = self._before(f, handler)
            if effect is not None and effect.index not in reported:
                reported.add(effect.index)
                self.report(effect.node, f"{effect.detail} happens before the task relies on a unique constraint "
                                         "(`except IntegrityError`) to detect a duplicate: two deliveries running "
                                         "at once both make this call before either insert fails")

    def _dedup_check(self, f: Flow, handler: Event) -> bool:
        """Whether ``except IntegrityError`` is where the unique constraint
        detects a duplicate.  Not when ``IntegrityError`` is one of a tuple
        that also names a broad class (``Exception``, ``DatabaseError``,
        ``OSError``...), nor when such a tuple guards the whole task body:
        that is error handling around everything the task does."""
        node = handler.node
        if not (isinstance(node, cst.ExceptHandler) and isinstance(node.type, cst.Tuple)):
            return True
        names = {(self.ctx.qualify(e.value) or "").rpartition(".")[2] for e in node.type.elements}
        if names & _BROAD:
            return False
        body = [s for s in f.func.body.body if not _docstring(s)] if isinstance(f.func.body, cst.IndentedBlock) else []
        rest = [s for s in body if s is not handler.owner]
        whole = bool(body) and body[0] is handler.owner and all(_returns(s) for s in rest)
        return not whole

    @staticmethod
    def _before(f: Flow, handler: Event) -> Event | None:
        try_stmt = handler.owner
        writes = [e.index for e in f.events if e.kind == "db_write" and try_stmt in e.trys]
        if not writes:
            return None  # nothing in the try that the constraint would stop
        for e in f.events:
            if e.kind != "effect":
                continue
            if e.index < handler.index or (try_stmt in e.trys and e.index < writes[0]):
                return e
        return None
