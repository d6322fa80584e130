from __future__ import annotations

import libcst as cst

from ..domain.dataflow import flow
from ..domain.tasks import TaskRule, broad_exception, task_and
from ..rule import Invalid, Valid

class BroadAutoretry(TaskRule):
    """
    ## What it does
    Finds tasks declared with `autoretry_for` containing `Exception` or
    `BaseException` (decorator option or `Task` class attribute) whose body
    performs more than one external side effect: HTTP calls, e-mail,
    payments, `send*`/`publish`/`push`/`notify`/`charge` calls, task
    dispatch, a method that is not a read called on a client of a known
    SDK (`boto3.client("s3").put_object`, Twilio `messages.create`, Slack
    `chat_postMessage`, SendGrid, Firebase `messaging.send`, ...), or a
    `side-effect-calls` entry. A side effect inside a loop counts as more
    than one.

    `autoretry_for` is the task's own option or one it inherits: from a
    `base=` class or the `Task` subclasses it derives from, when they are
    defined in the same file (a base class imported from another module is
    not read by this rule, and a task inheriting from one is not reported).
    A class is a task when it derives from `celery.Task`/`app.Task` directly
    or through classes of the same file, or is registered there with
    `app.register_task(Cls())`.

    ## Why is this bad?
    `autoretry_for` re-runs the whole task body. With a catch-all exception
    list, any failure after the first side effect, even a bug or a timeout
    in the second call, retries the task from the top, so the first side
    effect happens again: the customer is charged twice because the receipt
    e-mail timed out.

    ## Example
    ```python
    from celery import shared_task

    @shared_task(autoretry_for=(Exception,), max_retries=5)
    def checkout(order_id):
        payments.charge(order_id)
        send_receipt(order_id)
    ```

    Use instead:
    ```python
    from celery import shared_task
    from payments import GatewayTimeout

    @shared_task(autoretry_for=(GatewayTimeout,), max_retries=5)
    def checkout(order_id):
        payments.charge(order_id)
        send_receipt_task.delay(order_id)  # its own task, its own retries
    ```

    ## Fix safety
    There is no automatic fix: which exceptions are safe to retry, and
    where to split the task, is a design decision.

    ## References
    - [Celery: automatic retry for known exceptions](https://docs.celeryq.dev/en/stable/userguide/tasks.html#automatic-retry-for-known-exceptions)
    - [Celery: tasks should be idempotent](https://docs.celeryq.dev/en/stable/userguide/tasks.html#idempotence)
    """

    CODE = "CL207"
    NAME = "broad-autoretry"
    SEVERITY = "warning"
    SUMMARY = "`autoretry_for=(Exception,)` on a task with several side effects: a failure in one repeats the others"
    HINT = "retry only on the exceptions that are safe to retry, or split the side effects into separate tasks"
    TAGS = ("retries", "idempotency")
    OPTIONS = ("side-effect-calls",)
    REQUIRES = (task_and((b"autoretry_for",)),)

    VALID = (
        Valid("""
            import requests
            from celery import shared_task
            @shared_task(autoretry_for=(requests.Timeout,), retry_backoff=True)
            def sync(order_id):
                requests.post("https://erp/orders", json={"id": order_id})
                notify_customer(order_id)
        """),
        Valid("""
            import requests
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def sync(order_id):
                requests.post("https://erp/orders", json={"id": order_id})
                logger.info("synced %s", order_id)
        """),
        Valid("""
            from proj.celery import app
            @app.task(autoretry_for=(Exception,), max_retries=3)
            def refresh(feed_id):
                data = fetch(feed_id)
                Feed.objects.filter(pk=feed_id).update(data=data)
        """),
        Valid("""
            from celery import Task
            class Export(Task):
                autoretry_for = (IOError,)
                def run(self, export_id):
                    upload(export_id)
                    send_done_mail(export_id)
        """),
        Valid("""
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def outer(order_id):
                def later():
                    gateway.charge(order_id)
                    send_receipt(order_id)
                return later
        """),
        Valid("""
            import boto3
            from twilio.rest import Client
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def audit(key):
                s3 = boto3.client("s3")
                s3.get_object(Bucket="b", Key=key)
                s3.head_object(Bucket="b", Key=key)
                boto3.resource("dynamodb").Table("t").query(KeyConditionExpression=key)
                Client("sid", "token").messages.list(limit=20)
        """),
        Valid("""
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def fake_sdk(key):
                client = {"messages": []}
                client.messages.create(to="+1")
                make_client().chat_postMessage(channel="c")
        """),
        Valid("""
            from celery import shared_task
            from proj.base import RetryingTask
            @shared_task(base=RetryingTask)
            def sync(order_id):
                payments.charge(order_id)
                send_receipt(order_id)
            autoretry_for = None
        """),
        Valid("""
            from celery import Task, shared_task
            class Base(Task):
                autoretry_for = (ConnectionError,)
            class Narrow(Base):
                autoretry_for = (TimeoutError,)
            @shared_task(base=Base)
            def sync(order_id):
                payments.charge(order_id)
                send_receipt(order_id)
            class Child(Narrow):
                def run(self, order_id):
                    payments.charge(order_id)
                    send_receipt(order_id)
        """),
    )
    INVALID = (
        Invalid("""
            import boto3 as aws
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def export(key):
                s3 = aws.client("s3")
                s3.put_object(Bucket="b", Key=key, Body=b"")
                aws.client("sqs").send_message(QueueUrl="q", MessageBody=key)
        """, count=1, message="SDK call `s3.put_object()`"),
        Invalid("""
            from twilio.rest import Client
            from slack_sdk import WebClient
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def alert(text):
                client = Client("sid", "token")
                client.messages.create(to="+1", from_="+2", body=text)
                WebClient(token="t").chat_postMessage(channel="ops", text=text)
        """, count=1, message="`client.messages.create()`"),
        Invalid("""
            import boto3
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def store(item):
                table = boto3.resource("dynamodb").Table("t")
                for part in item:
                    table.put_item(Item=part)
        """, count=1, message="`table.put_item()` (in a loop)"),
        Invalid("""
            from celery import Task, shared_task
            class RetryingTask(Task):
                autoretry_for = (Exception,)
            class Slow(RetryingTask):
                time_limit = 600
            @shared_task(base=Slow)
            def checkout(order_id):
                payments.charge(order_id)
                send_receipt(order_id)
        """, count=1, at="7:5", message="(inherited from a base class)"),
        Invalid("""
            from celery import Task
            from proj.celery import app
            from proj.base import Registered
            class Charge(Registered):
                autoretry_for = (Exception,)
                def run(self, order_id):
                    payments.charge(order_id)
                    send_receipt(order_id)
            app.register_task(Charge())
        """, count=1, at="5:22"),
        Invalid("""
            from celery import Task
            class RetryingTask(Task):
                autoretry_for = (Exception,)
            class Charge(RetryingTask):
                def run(self, order_id):
                    payments.charge(order_id)
                    send_receipt(order_id)
        """, count=1, at="4:7", message="task `Charge`"),
        Invalid("""
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,), max_retries=5)
            def checkout(order_id):
                payments.charge(order_id)
                send_receipt(order_id)
        """, count=1),
        Invalid("""
            import requests as http
            from celery import shared_task as task
            @task(bind=True, autoretry_for=[BaseException])
            def sync(self, order_id):
                http.post("https://erp/orders", json={"id": order_id})
                http.put("https://crm/orders", json={"id": order_id})
        """, count=1),
        Invalid("""
            from celery import Task
            from django.core.mail import EmailMessage
            class Notify(Task):
                autoretry_for = (Exception,)
                def run(self, user_ids):
                    for user_id in user_ids:
                        EmailMessage("Hi", "Body", to=[address(user_id)]).send()
        """, count=1),
        Invalid("""
            from proj.celery import app
            @app.task(autoretry_for=(KeyError, Exception))
            async def fan_out(event):
                await bus.publish("events", event)
                audit.delay(event["id"])
        """, count=1),
        Invalid("""
            from celery import Celery
            from billing import gateway
            app = Celery("proj")
            def bill(account_id):
                gateway.bill_account(account_id)
                gateway.bill_account(account_id + 1)
            bill_task = app.task(bill, autoretry_for=(Exception,))
        """, count=1, config={"side-effect-calls": ["billing.gateway.bill_account"]}),
    )

    def leave_task(self, node: cst.FunctionDef, task) -> None:
        option = task.option("autoretry_for")
        if option is not None and self._broad(option):
            effects = [e for e in flow(node, self.ctx).events if e.kind == "effect"]
            if sum(2 if e.in_loop else 1 for e in effects) >= 2:
                shown = effects[0].detail + (" (in a loop)" if len(effects) == 1 else f" and {effects[1].detail}")
                own = "autoretry_for" in task.options
                where = option if own else (task.cls.name if task.cls is not None else node.name)
                inherited = "" if own else " (inherited from a base class)"
                self.report(where, f"`autoretry_for`{inherited} catches every exception, and task `{task.name}` has several "
                                    f"external side effects ({shown}): a failure after the first one retries the "
                                    "whole task and repeats it")

    def _broad(self, option: cst.BaseExpression) -> bool:
        return broad_exception(option, self.ctx) is not None
