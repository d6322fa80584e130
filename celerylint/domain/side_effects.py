"""Which calls are external side effects: they leave the process and cannot
be rolled back (SPEC, "What counts as an external side effect").

HTTP clients (``requests``, ``httpx``, ``urllib``; reads with GET/HEAD are
not counted), mail (``send_mail``, ``EmailMessage(...).send()``,
``smtplib``), payment SDKs (``stripe.*``), calls named ``charge``,
``send*``, ``publish``, ``push``, ``notify``, task
dispatch (``.delay``, ``.apply_async``, ``send_task``) and the configured
``side-effect-calls``.  Library objects are recognised through imports and
aliases.  Reads, logging, arithmetic, Django signals and Redis/cache
operations (markers and locks) are not side effects.
"""

from __future__ import annotations

import re

import libcst as cst

from ..context import FileContext, dotted_name
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
