"""Which calls are external side effects: they leave the process and cannot
be rolled back (SPEC, "What counts as an external side effect").

HTTP clients (``requests``, ``httpx``, ``urllib``; reads with GET/HEAD are
not counted), mail (``send_mail``, ``EmailMessage(...).send()``,
``smtplib``), payment SDKs (``stripe.*``), calls named ``charge``,
``send*``, ``publish``, ``push``, ``notify``, task
dispatch (``.delay``, ``.apply_async``, ``send_task``), the configured
``side-effect-calls``, and a method called on an object made by a known
third-party SDK client constructor (``SDK_CLIENTS``: boto3, Twilio, Slack,
SendGrid, Firebase, Google Cloud Pub/Sub and Storage, Telegram, Vonage,
Pusher, HubSpot) or obtained from one (``boto3.resource("s3").Bucket(b)``),
unless the method name is a read (``get*``, ``list*``, ``describe*``,
``head*``, ``fetch*``, ``search*``, ``query``, ``scan``, ``download*``,
``generate_presigned*``, ``paginate``, ``load``, ...), sends metrics or logs
(``put_metric_data``, ``put_log_events``) or makes another object (``client``,
``resource``, a capitalised name such as ``Table``).  Library objects are recognised through
imports and aliases.  Reads, logging, arithmetic, Django signals, ORM writes
and Redis/cache operations (markers and locks) are not side effects.
"""

from __future__ import annotations

import re

import libcst as cst

from ..api.context import FileContext, dotted_name
from .clients import client_kind

HTTP_MODULES = ("requests", "httpx", "urllib3", "aiohttp")
HTTP_WRITES = frozenset({"post", "put", "patch", "delete", "request", "send", "stream", "urlopen"})
HTTP_SESSIONS = frozenset({
    "requests.Session", "requests.session", "requests.sessions.Session", "httpx.Client", "httpx.AsyncClient",
    "urllib3.PoolManager", "aiohttp.ClientSession",
})
MAIL_FUNCTIONS = frozenset({
    "django.core.mail.send_mail", "django.core.mail.send_mass_mail", "django.core.mail.mail_admins",
    "django.core.mail.mail_managers", "urllib.request.urlopen",
})
MAIL_MESSAGES = frozenset({
    "django.core.mail.EmailMessage", "django.core.mail.EmailMultiAlternatives",
    "django.core.mail.message.EmailMessage", "django.core.mail.message.EmailMultiAlternatives",
})
SMTP = frozenset({"smtplib.SMTP", "smtplib.SMTP_SSL"})
DISPATCH = frozenset({"delay", "apply_async", "send_task"})
PAYMENT_READS = frozenset({"retrieve", "list", "search", "construct_event", "construct_from", "auto_paging_iter"})
# *.charge, *.send*, *.publish, *.push, *.notify
EFFECT_NAME = re.compile(r"^(send|(charge|publish|push|notify)$)")
NOT_EFFECTS = re.compile(r"^(sender|send_robust|sendall_?$)")
# Constructors of third-party SDK clients whose methods call a remote service
# (qualified names as imported).  A method called on such an object, or on
# an object one of its methods returned, is a side effect unless its name is
# a read (SDK_READS).
SDK_CLIENTS = frozenset({
    "boto3.client", "boto3.resource", "boto3.Session", "boto3.session.Session", "aioboto3.Session",
    "twilio.rest.Client", "twilio.rest.client.Client",
    "slack_sdk.WebClient", "slack_sdk.web.WebClient", "slack_sdk.web.client.WebClient",
    "slack_sdk.AsyncWebClient", "slack_sdk.web.async_client.AsyncWebClient", "slack.WebClient",
    "slack_sdk.webhook.WebhookClient", "slack_sdk.WebhookClient",
    "sendgrid.SendGridAPIClient", "sendgrid.sendgrid.SendGridAPIClient",
    "google.cloud.pubsub_v1.PublisherClient", "google.cloud.pubsub.PublisherClient", "google.cloud.storage.Client",
    "telegram.Bot", "vonage.Client", "vonage.Vonage", "pusher.Pusher", "hubspot.HubSpot", "hubspot.Client.create",
    "firebase_admin.messaging",
})
SDK_READS = re.compile(
    r"^(get|list|describe|head|fetch|search|query$|scan$|download|generate_presigned|can_paginate$|read|retrieve|"
    r"exists$|lookup|batch_get|select|wait|close$|__|paginate$|load$|reload$|stream$|iter|page$|"
    r"put_metric|put_log_events|"  # metrics and logs, like logging
    r"client$|resource$|topic_path$|bucket$|blob$|[A-Z])"  # factories: ``Session().client("s3")``, ``s3.Bucket(b)``
)


def _sdk_made(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> bool:
    """``node`` is an SDK client (``boto3.client("sns")``, ``Client(sid, tok)``),
    an attribute of one (``client.messages``), what one of its methods
    returned (``s3.Bucket(name)``), or a name or ``self`` attribute bound to
    such a value."""
    if depth > 6:
        return False
    if isinstance(node, cst.Name):
        if node.value in ctx.imports:
            return ctx.imported_name(node) in SDK_CLIENTS  # ``from firebase_admin import messaging``
        bound = ctx.lookup(node.value)
        return bound is not None and _sdk_made(bound, ctx, depth + 1)
    if isinstance(node, cst.Attribute):
        if isinstance(node.value, cst.Name) and node.value.value == "self":
            bound = ctx.lookup_self_attr(node.attr.value)
            return bound is not None and _sdk_made(bound, ctx, depth + 1)
        if ctx.imported_name(node) in SDK_CLIENTS:
            return True
        return _sdk_made(node.value, ctx, depth + 1)
    if isinstance(node, cst.Await):
        return _sdk_made(node.expression, ctx, depth + 1)
    if isinstance(node, cst.Call):
        if ctx.imported_name(node.func) in SDK_CLIENTS:
            return True
        return isinstance(node.func, cst.Attribute) and _sdk_made(node.func.value, ctx, depth + 1)
    return False


def _sdk_call(func: cst.Attribute, ctx: FileContext) -> str | None:
    method = func.attr.value
    if SDK_READS.match(method) or LOGGERS.match(method) or not _sdk_made(func.value, ctx):
        return None
    return f"SDK call `{_short(func)}()`"


LOGGERS = re.compile(r"^(log|logger|logging|_log|_logger|LOG|LOGGER|log_\w*|\w*_log(ger)?)$")


def _receiver_made_by(node: cst.BaseExpression, ctx: FileContext, names: frozenset[str]) -> bool:
    """``node`` is ``Factory(...)`` or a name bound to it, for a factory in ``names``."""
    if isinstance(node, cst.Name):
        bound = ctx.lookup(node.value)
        node = bound if bound is not None else node
    if isinstance(node, (cst.With, cst.Await)):
        return False
    return isinstance(node, cst.Call) and ctx.imported_name(node.func) in names


def side_effect(call: cst.Call, ctx: FileContext) -> str | None:
    """A short description (``HTTP request `requests.post```) when ``call``
    is an external side effect, else None."""
    func = call.func
    name = ctx.qualify(func) or ""
    imported = ctx.imported_name(func)
    configured = _configured(name, ctx)
    if configured:
        return f"`{configured}`"
    last = name.rpartition(".")[2] if name else (func.attr.value if isinstance(func, cst.Attribute) else "")
    if imported:
        head = imported.partition(".")[0]
        if head in HTTP_MODULES or imported.startswith("urllib.request."):
            return f"HTTP request `{imported}`" if last in HTTP_WRITES else None
        if imported in MAIL_FUNCTIONS:
            return f"`{imported.rpartition('.')[2]}`"
        if head == "stripe" and imported.count(".") >= 2 and last not in PAYMENT_READS:
            return f"payment call `{imported}`"
    if isinstance(func, cst.Attribute):
        target = func.value
        if last in HTTP_WRITES and _receiver_made_by(target, ctx, HTTP_SESSIONS):
            return f"HTTP request `.{last}()`"
        if last == "send" and _receiver_made_by(target, ctx, MAIL_MESSAGES):
            return "e-mail `.send()`"
        if last in ("sendmail", "send_message") and _receiver_made_by(target, ctx, SMTP):
            return f"SMTP `.{last}()`"
        if last in DISPATCH:
            return f"task dispatch `.{last}()`"
        sdk = _sdk_call(func, ctx)
        if sdk is not None:
            return sdk
        if client_kind(target, ctx) is not None:
            return None  # Redis/cache operations: markers, locks, reads
        receiver = dotted_name(target) or ""
        signal = "signal" in receiver.lower() or ".signals." in (ctx.imported_name(target) or "")
        if LOGGERS.match(receiver.rpartition(".")[2]) or signal:
            return None  # logging; Django/blinker signals are in-process
    if not last or NOT_EFFECTS.match(last) or not EFFECT_NAME.match(last):
        return None
    if any(a.keyword is not None and a.keyword.value == "sender" for a in call.args):
        return None  # a Django signal: in-process
    return f"`{_short(func)}()`"


def _configured(name: str, ctx: FileContext) -> str | None:
    for entry in ctx.settings.side_effect_calls:
        if name == entry or ("." not in entry and name.rpartition(".")[2] == entry) or name.endswith("." + entry):
            return entry
    return None


def _short(func: cst.BaseExpression) -> str:
    name = dotted_name(func)
    if name:
        return name
    if isinstance(func, cst.Attribute):
        return "." + func.attr.value
    return "call"
