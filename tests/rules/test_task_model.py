"""The task model (``domain.tasks.TaskTracker``), side-effect recognition
and the data-flow helper, run in the same batched traversal as rules."""

from __future__ import annotations

import textwrap

import libcst as cst

from celerylint.domain.dataflow import flow, fresh_origin
from celerylint.domain.side_effects import side_effect
from celerylint.domain.tasks import TaskTracker
from celerylint.config.settings import Settings
from celerylint.api.context import ContextCloser, ContextOpener, FileContext


class _Probe(cst.BatchableCSTVisitor):
    def __init__(self, ctx: FileContext, candidates: bool = False) -> None:
        super().__init__()
        self.ctx = ctx
        self.tasks = TaskTracker(ctx, candidates=candidates)
        self.found: dict[str, tuple[str, list[str], bool]] = {}  # function -> (task, options, bound)
        self.infos: list = []  # every task body entered, in order
        self.flows: dict[str, list[tuple[str, str]]] = {}
        self.effects: list[str] = []

    def visit_Module(self, node):
        self.tasks.visit_Module(node)

    def visit_ClassDef(self, node):
        self.tasks.visit_ClassDef(node)

    def leave_ClassDef(self, node):
        self.tasks.leave_ClassDef(node)

    def visit_FunctionDef(self, node):
        self.tasks.visit_FunctionDef(node)
        task = self.tasks.current
        if task is not None:
            self.found[node.name.value] = (task.name, sorted(task.options), task.bound)
            self.infos.append(task)

    def leave_FunctionDef(self, node):
        self.flows[node.name.value] = [(e.kind, e.key) for e in flow(node, self.ctx).events]
        self.tasks.leave_FunctionDef(node)

    def visit_Call(self, node):
        what = side_effect(node, self.ctx)
        if what:
            self.effects.append(what)


def probe(source: str, settings: Settings | None = None, candidates: bool = False) -> _Probe:
    text = textwrap.dedent(source)
    ctx = FileContext("tasks.py", text, settings or Settings(), "proj.tasks")
    p = _Probe(ctx, candidates)
    cst.visit_batched(cst.parse_module(text), [ContextOpener(ctx), p, ContextCloser(ctx)])
    return p


def test_task_forms():
    p = probe("""
        from celery import shared_task as st, Celery, Task
        from proj.celery import app as proj_app
        app = Celery("x")
        retrying = st(autoretry_for=(Exception,))

        @st
        def a(): ...
        @st(bind=True, acks_late=True)
        def b(self): ...
        @proj_app.task(time_limit=60)
        def c(): ...
        @retrying
        def d(): ...
        def e(): ...
        e_task = app.task(e, soft_time_limit=30)
        def f(): ...
        f_task = app.task(max_retries=3)(f)
        class G(Task):
            acks_late = True
            def run(self): ...
            def helper(self): ...
        def not_a_task(): ...
        @proj_app.task
        def outer():
            def inner(): ...
    """)
    assert p.found == {
        "a": ("a", [], False),
        "b": ("b", ["acks_late", "bind"], True),
        "c": ("c", ["time_limit"], False),
        "d": ("d", ["autoretry_for"], False),
        "e": ("e", ["soft_time_limit"], False),
        "f": ("f", ["max_retries"], False),
        "run": ("G", ["acks_late"], True),
        "outer": ("outer", [], False),
    }


def test_side_effects():
    p = probe("""
        import requests as rq
        import httpx
        from django.core.mail import send_mail as mail, EmailMessage
        from django.core.cache import cache
        from billing import gateway
        def f(task):
            rq.post("u")
            rq.get("u")
            httpx.Client().put("u")
            mail("s", "b", None, ["x"])
            EmailMessage("s").send()
            gateway.charge(1)
            gateway.refund(1)
            task.delay(1)
            cache.set("k", 1)
            logger.info("x")
            post_save.send(sender=None)
            signals.user_created.send(user)
            bus.publish("x")
            publish_pending_translations()
    """, Settings(options=(("side-effect-calls", ("billing.gateway.refund",)),)))
    assert p.effects == [
        "HTTP request `requests.post`", "HTTP request `.put()`", "`send_mail`", "e-mail `.send()`",
        "`gateway.charge()`", "`billing.gateway.refund`", "task dispatch `.delay()`", "`bus.publish()`",
    ]


def test_dataflow_keys_and_flags():
    p = probe("""
        import redis
        r = redis.Redis()
        def f(order_id, order):
            key = f"done:{order_id}"
            if r.get(key):
                return
            if order.sent:
                return
            r.set(f"lock:{order_id}", 1, nx=True, ex=5)
            r.set(key, 1)
            order.sent = True
            order.save()
            r.delete(f"lock:{order_id}")
    """)
    assert p.flows["f"] == [
        ("check", "key:done:{order_id}"), ("flag_check", "order.sent"), ("lock", "key:lock:{order_id}"),
        ("mark", "key:done:{order_id}"), ("flag_set", "order.sent"), ("flag_save", "order"),
        ("db_write", ""), ("release", "key:lock:{order_id}"),
    ]


def test_a_key_is_one_key_however_it_is_built():
    p = probe("""
        import redis
        r = redis.Redis()
        def f(order_id, shop):
            r.get(f"done:{shop}:{order_id}")
            r.get("done:%s:%s" % (shop, order_id))
            r.get("done:{}:{}".format(shop, order_id))
            r.get("done:{0}:{o}".format(shop, o=order_id))
            r.get("done:" + str(shop) + ":" + order_id)
            r.get(":".join(["done", shop, str(order_id)]))
            key = "done:%s" % shop
            r.get(key + ":" + order_id)
            r.get(f"done:{shop:>4}:{order_id}")  # a format spec: spelled as written
            r.get(other_key)
    """)
    keys = [key for kind, key in p.flows["f"]]
    assert keys[:7] == ["key:done:{shop}:{order_id}"] * 7
    assert keys[7:] == ['f"done:{shop:>4}:{order_id}"', "other_key"]


def test_fresh_origin():
    text = textwrap.dedent("""
        import uuid, time
        from datetime import datetime
        a = f"k:{uuid.uuid4().hex[:8]}"
        b = "k:%s" % time.time()
        c = "k:" + str(uuid.uuid1())
        d = "k:{}".format(datetime.now().isoformat())
        e = f"k:{datetime.now().strftime('%Y-%m-%d')}"
        g = f"k:{int(time.time()) // 3600}"
        h = uuid.uuid4().int
    """)
    ctx = FileContext("m.py", text, Settings(), "m")
    module = cst.parse_module(text)
    opener = ContextOpener(ctx)
    cst.visit_batched(module, [opener])
    fresh = {name: fresh_origin(cst.Name(name), ctx) is not None for name in "abcdegh"}
    assert fresh == {"a": True, "b": True, "c": True, "d": True, "e": False, "g": False, "h": True}


def test_task_classes_through_bases_of_the_file_and_registration():
    text = textwrap.dedent("""
        from celery import Task
        from proj.celery import app
        from proj.base import Imported
        class Base(Task):
            autoretry_for = (Exception,)
        class Middle(Base):
            time_limit = 120
        class Leaf(Middle):
            def run(self): ...
        class Registered(Imported):
            def run(self): ...
        class NotRegistered(Imported):
            def run(self): ...
        class Plain:
            def run(self): ...
        app.register_task(Registered())
        admin.site.register(Plain)
        @app.task(base=Middle, bind=True)
        def f(self): ...
    """)

    def found(candidates):
        return [(t.name, sorted(t.inherited or {}), t.candidate) for t in probe(text, candidates=candidates).infos]

    assert found(False) == [
        ("Leaf", ["autoretry_for", "time_limit"], False),
        ("Registered", [], False),
        ("f", ["autoretry_for", "base", "bind", "time_limit"], False),
    ]
    candidates = found(True)
    assert ("NotRegistered", [], True) in candidates and all(name != "Plain" for name, _, _ in candidates)


def test_inherited_options():
    text = textwrap.dedent("""
        from celery import Task, shared_task
        class Base(Task):
            autoretry_for = (Exception,)
            time_limit = 60
        class Middle(Base):
            time_limit = 120
        @shared_task(base=Middle, max_retries=2)
        def f(): ...
    """)
    from celerylint.domain.tasks import effective_options, function_task_options

    ctx = FileContext("tasks.py", text, Settings(), "proj.tasks")
    module = cst.parse_module(text)
    seen = {}

    class Grab(cst.BatchableCSTVisitor):
        def visit_FunctionDef(self, node):
            options = effective_options(function_task_options(node, ctx), ctx)
            seen.update({k: cst.Module([]).code_for_node(v) for k, v in options.items()})

    cst.visit_batched(module, [ContextOpener(ctx), Grab(), ContextCloser(ctx)])
    assert seen == {"autoretry_for": "(Exception,)", "time_limit": "120", "base": "Middle", "max_retries": "2"}


def test_sdk_side_effects():
    p = probe("""
        import boto3
        from twilio.rest import Client
        from slack_sdk import WebClient as Slack
        from sendgrid import SendGridAPIClient
        from firebase_admin import messaging
        def f(key):
            s3 = boto3.client("s3")
            s3.put_object(Bucket="b", Key=key)
            s3.get_object(Bucket="b", Key=key)
            s3.list_objects_v2(Bucket="b")
            bucket = boto3.resource("s3").Bucket("b")
            bucket.upload_file("f", key)
            boto3.Session().client("sqs").send_message(QueueUrl="q", MessageBody=key)
            client = Client("sid", "token")
            client.messages.create(to="+1", body=key)
            client.messages.list()
            Slack(token="t").chat_postMessage(channel="c", text=key)
            SendGridAPIClient("k").send(key)
            messaging.send(messaging.Message(topic=key))
            cw = boto3.client("cloudwatch")
            cw.put_metric_data(Namespace="n", MetricData=[])
            for page in s3.get_paginator("list_objects_v2").paginate(Bucket="b"):
                pass
            not_an_sdk = make_client()
            not_an_sdk.put_object(Bucket="b")
    """)
    assert p.effects == [
        "SDK call `s3.put_object()`", "SDK call `bucket.upload_file()`", "SDK call `.send_message()`",
        "SDK call `client.messages.create()`", "SDK call `.chat_postMessage()`", "SDK call `.send()`",
        "SDK call `messaging.send()`",
    ]
