from __future__ import annotations

from collections.abc import Iterable

from ..domain.task_classes import TASK_BASES, class_facts, is_project_task_class
from ..facts.task_effects import EFFECTS_FACT
from ..rule import Finding, Invalid, ProjectRule, Valid


class BroadAutoretry(ProjectRule):
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
    than one. A side effect inside a `try` whose handler catches every
    exception and raises nothing cannot fail the task: it counts only when
    a side effect whose failure does propagate comes after it. Side effects
    count together only when one run can reach both: a side effect in a
    block that ends with `return` or `raise` (outside a loop and a `try`
    body) is not followed by those after that block, as when a task
    re-queues itself and returns early.

    A task that never retries (`max_retries=0`, or
    `retry_kwargs={"max_retries": 0}`: Celery gives up on the first
    retry) is not reported.

    `autoretry_for` is the task's own option or one it inherits from its
    `base=` class or the classes a task class derives from, in the same
    file or in other linted files (through imports, along the whole chain
    of bases; the first base that sets it wins). A base class that is not
    among the linted files, or cannot be named, leaves the option unknown:
    no finding. A class is a task when it derives from `celery.Task` or
    `app.Task`, directly or through classes of the project, or is
    registered with `app.register_task(Cls())`/`app.tasks.register(...)`.

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

    VALID = (
        Valid("""
            # decorators celerylint does not read exactly make no task: a branch,
            # a call it cannot follow, a name that does not say task
            from celery import shared_task
            def cond_task(*args, **kwargs):
                if HAS_CELERY:
                    return shared_task(*args, **kwargs)
                return noop(*args, **kwargs)
            def popped_task(*args, **kwargs):
                kwargs.pop("wait", None)
                return shared_task(*args, **kwargs)
            def job(*args, **kwargs):
                return shared_task(*args, **kwargs)
            @cond_task(autoretry_for=(Exception,))
            def a(user_id):
                send_mail(user_id)
                send_sms(user_id)
            @popped_task(autoretry_for=(Exception,))
            def b(user_id):
                send_mail(user_id)
                send_sms(user_id)
            @job(autoretry_for=(Exception,))
            def c(user_id):
                send_mail(user_id)
                send_sms(user_id)
        """),
        Valid("""
            # the project's decorator makes it never retry
            # file: proj/__init__.py
            # file: proj/deco.py
            from celery import shared_task
            def once_task(*args, **kwargs):
                return shared_task(*args, max_retries=0, **kwargs)
            # file: proj/tasks.py
            from proj.deco import once_task
            @once_task(autoretry_for=(Exception,))
            def notify(user_id):
                send_mail(user_id)
                send_sms(user_id)
        """),
        Valid("""
            # never retried (grafana/oncall's beat starters): Celery's ``Task.retry``
            # gives up when retries + 1 > max_retries
            from celery import Task, shared_task
            from proj.base import Retrying
            @shared_task(autoretry_for=(Exception,), max_retries=0)
            def start_sync(org_ids):
                for org_id in org_ids:
                    sync_org.delay(org_id)
            @shared_task(autoretry_for=(Exception,), retry_kwargs={"max_retries": 0})
            def notify(user_id):
                send_mail(user_id)
                send_sms(user_id)
            @shared_task(base=Retrying, max_retries=0)
            def alert(user_id):
                send_mail(user_id)
                send_sms(user_id)
        """),
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
            # the two dispatches are on different paths: the first ends the run
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def create_alert(channel_id, payload):
                try:
                    alert = Alert.create(channel_id, payload)
                except ConcurrentUpdateError:
                    create_alert.apply_async((channel_id, payload), countdown=5)
                    logger.warning("retrying")
                    return
                if alert.auto_resolve:
                    resolve.apply_async((alert.pk,), countdown=5)
                    alert.save()
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
        Valid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class RetryingTask(Task):
                autoretry_for = (Exception,)
            class Narrow(RetryingTask):
                autoretry_for = (ConnectionError,)
            # file: proj/jobs.py
            class Job:
                autoretry_for = (Exception,)
            # file: proj/tasks.py
            from celery import shared_task
            from proj.base import Narrow
            from proj.jobs import Job
            from proj.unlinted import Unknown
            @shared_task(base=Narrow)
            def one(order_id):
                payments.charge(order_id)
                send_receipt(order_id)
            @shared_task(base=Unknown)
            def two(order_id):
                payments.charge(order_id)
                send_receipt(order_id)
            class Three(Job):
                def run(self, order_id):
                    payments.charge(order_id)
                    send_receipt(order_id)
        """),
        Valid("""
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def fan_out(urls):
                for url in urls:
                    try:
                        refresh.delay(url)
                    except Exception as exc:
                        print(exc)
        """),
    )
    INVALID = (
        Invalid("""
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def fan_out(url):
                try:
                    refresh.delay(url)
                except Exception:
                    pass
                send_report(url)
        """, count=1),
        Invalid("""
            # an early return after a second effect: both happen in that run
            import requests
            from celery import shared_task
            @shared_task(autoretry_for=(Exception,))
            def sync(order_id, urgent):
                requests.post("https://erp/orders", json={"id": order_id})
                if urgent:
                    send_sms(order_id)
                    return
                audit(order_id)
        """, count=1, message="(HTTP request `requests.post` and `send_sms()`)"),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class BaseTaskWithRetry(Task):
                autoretry_for = (Exception,)
                retry_kwargs = {"max_retries": 5}
            # file: proj/tasks.py
            from celery import shared_task
            from proj.base import BaseTaskWithRetry
            @shared_task(base=BaseTaskWithRetry)
            def checkout(order_id):
                payments.charge(order_id)
                send_receipt(order_id)
        """, count=1, at="4:5", message="(inherited from `proj.base.BaseTaskWithRetry`)"),
        Invalid("""
            # the project's own task decorator (grafana/oncall), imported through its package
            # file: proj/__init__.py
            # file: proj/deco/__init__.py
            from .retry import retry_task  # noqa
            # file: proj/deco/retry.py
            from celery import Task, shared_task
            class RetryQueueTask(Task):
                pass
            def retry_task(*args, **kwargs):
                return shared_task(*args, base=RetryQueueTask, **kwargs)
            # file: proj/tasks.py
            from proj.deco import retry_task
            @retry_task(autoretry_for=(Exception,), retry_backoff=True)
            def notify(user_id):
                send_mail(user_id)
                send_sms(user_id)
        """, count=1, at="2:28", message="task `notify`"),
        Invalid("""
            # a decorator of the same module that sets the option itself, and wraps:
            # the finding is at the decorator, since the option is not written there
            from celery import shared_task
            def job_task(**kwargs):
                kwargs.setdefault("bind", True)
                kwargs["autoretry_for"] = (Exception,)
                def decorator(func):
                    return shared_task(**kwargs)(func)
                return decorator
            @job_task(queue="mail")
            def notify(self, user_id):
                send_mail(user_id)
                send_sms(user_id)
        """, count=1, at="10:1"),
        Invalid("""
            # file: proj/__init__.py
            # file: proj/base.py
            from celery import Task
            class RetryingTask(Task):
                autoretry_for = (Exception,)
            # file: proj/mid.py
            from proj.base import RetryingTask
            class Limited(RetryingTask):
                time_limit = 300
            # file: proj/tasks.py
            from proj.mid import Limited
            class Local(Limited):
                max_retries = 3
            class Charge(Local):
                def run(self, order_id):
                    payments.charge(order_id)
                    send_receipt(order_id)
        """, count=1, at="4:7", message="task `Charge`"),
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

    def check(self, project) -> Iterable[Finding]:
        classes = class_facts(project)
        for fact in project.of_kind(EFFECTS_FACT):
            if fact["candidate"] and not (is_project_task_class(classes, fact.get("cls") or "")
                                          or any(is_project_task_class(classes, b) for b in fact["bases"])):
                continue  # a class whose bases are not known to make it a task
            if fact["own"]:
                inherited = "" if fact["local"] else " (inherited from a base class)"
            else:
                origin = next((o for o in (_broad_origin(classes, b, 0) for b in fact["bases"]) if o != "unset"), None)
                if origin in (None, "narrow"):
                    continue  # not broad, or a class on the way is not among the linted files
                inherited = f" (inherited from `{origin}`)"
            effects = fact["effects"]
            shown = effects[0] + (f" and {effects[1]}" if len(effects) > 1 else "")
            yield self.finding(
                f"`autoretry_for`{inherited} catches every exception, and task `{fact['task']}` has several "
                f"external side effects ({shown}): a failure after the first one retries the whole task and "
                "repeats it", fact["path"], fact["line"], fact["col"], fact["end_line"], fact["end_col"])


def _broad_origin(classes: dict, name: str, depth: int) -> str | None:
    """Where the class ``name`` gets its ``autoretry_for``: the class that
    sets a broad one, ``"narrow"`` when the first one found is not broad,
    ``"unset"`` when no class sets it, None when a class on the way is not
    among the linted files."""
    if name in TASK_BASES or name == "object" or name.startswith("builtins."):
        return "unset"
    fact = classes.get(name)
    if fact is None or depth > 20:
        return None
    if "autoretry_broad" in fact:
        return name if fact["autoretry_broad"] else "narrow"
    for base in fact.get("bases", ()):
        found = _broad_origin(classes, base, depth + 1)
        if found != "unset":
            return found
    return "unset"
