"""One doctor run: the brokers to check, each checked within the deadline,
and the findings placed where the broker URL is set."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import Finding
from ..reporters.secrets import masked
from . import checks
from .codes import CODES
from .connect import (Deadline, Malformed, Oversized, Unsupported, client, first_url, sentinel_master, target,
                      urls)
from .kombu_keys import Layout
from .targets import DEFAULT_VISIBILITY, AppBroker, Where, app_brokers

MISSING_REDIS = ("`celerylint doctor` needs redis-py: pip install 'celerylint[doctor]'")
GRACE = 0.5  # s after the deadline before a check that has not ended (a name lookup that hangs) is left behind


class DoctorError(Exception):
    """Exit status 2: nothing could be checked, or a check could not finish."""


@dataclass
class Broker:
    url: str
    where: Where | None
    apps: list[str] = field(default_factory=list)
    timeout: float | None = DEFAULT_VISIBILITY
    explicit: bool = False
    options: dict = field(default_factory=dict)


@dataclass
class DoctorResult:
    findings: list[Finding] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # exit status 2
    brokers: int = 0
    failed: int = 0  # brokers whose checks did not all run
    fixed: dict = field(default_factory=dict)  # for the reporters
    files: int = 0


def brokers(paths: list[Path], settings, broker_url: str | None, notices: list[str]) -> list[Broker]:
    """--broker-url, else ``CELERY_BROKER_URL`` (which Celery itself puts
    before every app's setting), else each app's broker; one Broker per URL."""
    apps = app_brokers(paths, settings, notices)
    given = broker_url or os.environ.get("CELERY_BROKER_URL") or None
    if given:
        t = target(given)
        same = [a for a in apps if a.url and _same(a.url, t)]
        if not broker_url:  # the environment decides, as it does for Celery: say whom it overrides
            for a in apps:
                if a.url and a not in same:
                    at = f" ({a.where.path}:{a.where.line})" if a.where else ""
                    notices.append(f"CELERY_BROKER_URL ({t.shown}) overrides the broker_url of `{a.app}`{at}, "
                                   f"{target_shown(a.url)}: checking the environment's broker")
        chosen = _merge(given, same or apps, where_from=same)
        return [chosen]
    out: dict[str, Broker] = {}
    for a in apps:
        if a.url is None and a.state == "default":
            continue  # no broker_url: Celery's default is amqp
        if a.url is None:
            notices.append(f"`{a.app}`: its broker URL is not a literal celerylint can read; pass --broker-url")
            continue
        if not first_url(a.url).lower().startswith(("redis", "rediss", "sentinel", "unix")):
            continue  # amqp, sqs, ...: nothing to check
        key = a.url
        if key in out:
            out[key] = _merge(a.url, [*_apps_of(out[key], apps), a], where_from=[*_apps_of(out[key], apps), a])
        else:
            out[key] = _merge(a.url, [a], where_from=[a])
    return list(out.values())


def target_shown(url: str) -> str:
    from .connect import mask

    return mask(first_url(url))


def _apps_of(b: Broker, apps: list[AppBroker]) -> list[AppBroker]:
    return [a for a in apps if a.app in b.apps]


def _merge(url: str, apps: list[AppBroker], where_from: list[AppBroker]) -> Broker:
    """Apps sharing a broker: kombu's sweep uses the shortest visibility timeout."""
    b = Broker(url, next((a.where for a in where_from if a.where is not None), None), [a.app for a in apps])
    b.options = next((a.transport_options for a in apps if a.transport_options), {})
    timeouts = [a for a in apps if a.visibility_timeout is not None]
    if apps and len(timeouts) < len(apps):
        b.timeout = None
    elif timeouts:
        shortest = min(timeouts, key=lambda a: a.visibility_timeout)
        b.timeout, b.explicit, b.options = shortest.visibility_timeout, shortest.explicit_timeout, shortest.transport_options
    return b


def _same(url: str, t) -> bool:
    try:
        other = target(url)
    except Unsupported:
        return False
    from urllib.parse import urlsplit

    def addr(u):
        p = urlsplit(first_url(u))
        host = (p.hostname or "localhost").lower()
        return ("localhost" if host == "127.0.0.1" else host, p.port or 6379)

    return other.db == t.db and addr(other.url) == addr(t.url)


def doctor(paths: list[Path], settings, *, broker_url: str | None, timeout: float) -> DoctorResult:
    deadline = time.monotonic() + timeout
    result = DoctorResult()
    try:
        import redis  # noqa: F401
    except ImportError:
        raise DoctorError(MISSING_REDIS) from None
    chosen = brokers(paths, settings, broker_url, result.notices)
    if not chosen:
        raise DoctorError("no Redis broker URL found in the apps of " + ", ".join(map(str, paths))
                          + ": pass --broker-url redis://host:6379/0 or set CELERY_BROKER_URL")
    result.brokers = len(chosen)
    for b in chosen:
        try:
            t = target(b.url)
        except Unsupported as exc:
            result.errors.append(str(exc))
            continue
        report = checks.Report()
        if any(";" in u for u in urls(b.url)):
            report.notices.append("kombu splits a broker URL at every `;` (a list of failover URLs): write a `;` "
                                  "of the password as %3B")
        try:
            _watched(_check, (t, b, report, deadline), deadline)
        except Unsupported as exc:
            result.errors.append(masked(str(exc)))
            continue
        except Deadline:
            result.errors.append(f"{t.shown}: stopped after --timeout {timeout:g} s; the checks were not all run")
            report = checks.Report(list(report.findings), list(report.notices))  # a check left running adds no more
        except Exception as exc:  # noqa: BLE001 - whatever the server sent, an error line and exit 2
            result.errors.append(masked(_failure(t.shown, exc, timeout)))
        result.notices.extend(masked(f"{t.shown}: {n}") for n in report.notices)
        for code, message, severity in report.findings:
            result.findings.append(_finding(code, masked(message), t.shown, b, severity))
    result.failed = len(result.errors)
    result.findings.sort(key=Finding.sort_key)
    return result


def _failure(shown: str, exc: Exception, timeout: float) -> str:
    """The error line of a check the client or a reply ended: connection
    refused, authentication, TLS, the socket's deadline; anything else is a
    reply the doctor could not read."""
    import redis

    if isinstance(exc, redis.TimeoutError):
        return f"{shown}: stopped after --timeout {timeout:g} s waiting for the server"
    if isinstance(exc, redis.RedisError) and not isinstance(exc, (redis.InvalidResponse, redis.DataError)):
        return f"{shown}: {type(exc).__name__}: {_short(str(exc))}"
    if isinstance(exc, (Malformed, Oversized)):
        why = str(exc)
    elif isinstance(exc, RecursionError):
        why = "RecursionError: nested too deeply to read"
    else:
        why = f"{type(exc).__name__}: {_short(str(exc))}"
    return f"broker {shown}: unexpected reply ({why})"


def _short(text: str, most: int = 200) -> str:
    return text if len(text) <= most else text[:most] + "..."


def _watched(work, args: tuple, deadline: float) -> None:
    """``work(*args)`` in a thread, waited for until the deadline (and
    ``GRACE``): the socket's reads and writes keep the deadline themselves,
    this bounds what they do not (name resolution, parsing a large reply).
    Deadline when it is still running; its exception when it raised one."""
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            work(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            outcome.append(exc)

    worker = threading.Thread(target=run, name="celerylint-doctor-check", daemon=True)
    worker.start()
    worker.join(max(deadline - time.monotonic(), 0) + GRACE)
    if worker.is_alive():
        raise Deadline()
    if outcome:
        raise outcome[0]


def _check(t, b: Broker, report: checks.Report, deadline: float) -> None:
    if t.kind == "sentinel":
        t = sentinel_master(t, b.options, deadline)
        report.notices.append(f"Sentinel: the master is {t.shown}")
    r = client(t, deadline)
    try:
        layout = Layout.from_options(b.options)
        memory = checks._info(r, "memory", report)
        checks.eviction_policy(r, report, memory)
        checks.memory_pressure(memory, checks._info(r, "stats", report), report)
        queues = checks.shared_keyspace(r, t.db, layout, checks._info(r, "keyspace", report), report)
        checks.unacked(r, layout, b.timeout, b.explicit, report)
        checks.queue_lengths(r, layout, queues or ["celery"], report)
    finally:
        r.close()


def _finding(code: str, message: str, shown: str, b: Broker, severity: str | None) -> Finding:
    c = CODES[code]
    severity = severity or c.severity
    if b.where is not None:
        w = b.where
        message = f"{message} (broker {shown})"
        return Finding(code, c.name, message, w.path, w.line, w.col, w.end_line, w.end_col, severity, None,
                       None if c.hint == "none" else c.hint)
    return Finding(code, c.name, message, shown, 1, 0, 1, 0, severity, None, None if c.hint == "none" else c.hint)
