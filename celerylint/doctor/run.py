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
from .rabbitmq import ManagementError, is_amqp
from .targets import DEFAULT_VISIBILITY, AppBroker, Where, app_brokers
from .workers import WorkersUnavailable

MISSING_REDIS = ("`celerylint doctor` needs redis-py: pip install 'celerylint[doctor]'")
REDIS_CHECKS = ("eviction policy", "memory", "keyspace", "unacked", "queue lengths")
RABBIT_CHECKS = ("overview", "alarms", "queues", "queue consumers", "consumer_timeout")
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
    static: dict = field(default_factory=dict)  # the WATCHED settings of the first app (targets.watched)
    configured: str | None = None  # the apps' own broker_url, where it differs from what is checked
    configured_where: str = ""


@dataclass
class DoctorResult:
    findings: list[Finding] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # exit status 2
    brokers: int = 0  # brokers whose checks all ran
    failed: int = 0  # brokers whose checks did not all run
    files: list = field(default_factory=list)  # the project's Python files (for --workers' routes)
    fixed: dict = field(default_factory=dict)  # for the reporters


def brokers(paths: list[Path], settings, broker_url: str | None, notices: list[str],
            files: list | None = None) -> list[Broker]:
    """--broker-url, else ``CELERY_BROKER_URL`` (which Celery itself puts
    before every app's setting), else each app's broker; one Broker per URL."""
    apps = app_brokers(paths, settings, notices, files)
    given = broker_url or os.environ.get("CELERY_BROKER_URL") or None
    if given:
        if is_amqp(first_url(given)):
            shown = target_shown(given)
            same = [a for a in apps if a.url and _same_amqp(a.url, given)]
        else:
            t = target(given)
            shown = t.shown
            same = [a for a in apps if a.url and _same(a.url, t)]
        if not broker_url:  # the environment decides, as it does for Celery: say whom it overrides
            for a in apps:
                if a.url and a not in same:
                    at = f" ({a.where.path}:{a.where.line})" if a.where else ""
                    notices.append(f"CELERY_BROKER_URL ({shown}) overrides the broker_url of `{a.app}`{at}, "
                                   f"{target_shown(a.url)}: checking the environment's broker")
        chosen = _merge(given, same or apps, where_from=same)
        other = next((a for a in apps if a.url and a not in same), None)
        if other is not None:
            chosen.configured = other.url
            chosen.configured_where = f"{other.where.path}:{other.where.line}" if other.where else f"`{other.app}`"
        return [chosen]
    out: dict[str, Broker] = {}
    for a in apps:
        if a.url is None and a.state == "default":
            continue  # no broker_url: Celery's default is amqp
        if a.url is None:
            notices.append(f"`{a.app}`: its broker URL is not a literal celerylint can read; pass --broker-url")
            continue
        if not (first_url(a.url).lower().startswith(("redis", "rediss", "sentinel", "unix"))
                or is_amqp(first_url(a.url))):
            continue  # sqs, ...: nothing to check
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
    b.static = next((a.static for a in apps if a.static), {})
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


def _same_amqp(url: str, given: str) -> bool:
    from .worker_checks import address

    return is_amqp(first_url(url)) and address(first_url(url)) == address(first_url(given))


def doctor(paths: list[Path], settings, *, broker_url: str | None, timeout: float, workers: bool = False,
           management_url: str | None = None) -> DoctorResult:
    deadline = time.monotonic() + timeout
    result = DoctorResult()
    chosen = brokers(paths, settings, broker_url, result.notices, result.files)
    if not chosen:
        raise DoctorError("no Redis or RabbitMQ broker URL found in the apps of " + ", ".join(map(str, paths))
                          + ": pass --broker-url redis://host:6379/0 (or amqp://...) or set CELERY_BROKER_URL")
    if any(not is_amqp(first_url(b.url)) for b in chosen):
        try:
            import redis  # noqa: F401
        except ImportError:
            raise DoctorError(MISSING_REDIS) from None
    for b in chosen:
        report = checks.Report()
        amqp = is_amqp(first_url(b.url))
        shown = target_shown(b.url)
        error = _check_broker(b, report, deadline, timeout, management_url) if amqp else \
            _check_redis(b, report, deadline, timeout)
        if error is None and workers:
            error = _check_workers(b, report, deadline, timeout, result.files)
        if error is not None:
            expected = (*(RABBIT_CHECKS if amqp else REDIS_CHECKS), *(("workers",) if workers else ()))
            result.errors.append(masked(error + _which_ran(report.ran, expected)))
            result.failed += 1
        else:
            result.brokers += 1
        result.notices.extend(masked(f"{shown}: {n}") for n in report.notices)
        for code, message, severity in report.findings:
            result.findings.append(_finding(code, masked(message), shown, b, severity))
    result.findings.sort(key=Finding.sort_key)
    return result


def _which_ran(ran: list[str], expected: tuple[str, ...]) -> str:
    """What a partial check did: the checks that ran and those that did not."""
    done = [c for c in expected if any(r == c or r.startswith(c + ":") for r in ran)]
    if not done:
        return "; nothing was checked"
    left = [c for c in expected if c not in done]
    return f"; checks that ran: {', '.join(done)}; not run: {', '.join(left) or 'none'}"


def _check_redis(b: Broker, report: checks.Report, deadline: float, timeout: float) -> str | None:
    """The Redis checks of ``b``: None, or the error line."""
    try:
        t = target(b.url)
    except Unsupported as exc:
        return str(exc)
    if any(";" in u for u in urls(b.url)):
        report.notices.append("kombu splits a broker URL at every `;` (a list of failover URLs): write a `;` "
                              "of the password as %3B")
    try:
        _watched(_check, (t, b, report, deadline), deadline)
    except Unsupported as exc:
        return str(exc)
    except Deadline:
        return f"{t.shown}: stopped after --timeout {timeout:g} s; the checks were not all run"
    except Exception as exc:  # noqa: BLE001 - whatever the server sent, an error line and exit 2
        return _failure(t, exc, timeout, deadline)
    return None


def _check_broker(b: Broker, report: checks.Report, deadline: float, timeout: float,
                  management_url: str | None) -> str | None:
    """The RabbitMQ checks of ``b``: None, or the error line."""
    from .rabbit_run import check

    try:
        _watched(check, (b.url, b.static, management_url, report, deadline, timeout), deadline)
    except ManagementError as exc:
        return str(exc)
    except Deadline:
        return f"{target_shown(b.url)}: stopped after --timeout {timeout:g} s; the checks were not all run"
    except Exception as exc:  # noqa: BLE001 - a reply of a shape the checks did not expect: one line, exit 2
        return f"broker {target_shown(b.url)}: unexpected reply from the management API ({type(exc).__name__}: " \
               f"{_short(str(exc))})"
    return None


def _check_workers(b: Broker, report: checks.Report, deadline: float, timeout: float, files: list) -> str | None:
    from .worker_run import check

    try:
        _watched(check, (b, report, deadline, files), deadline)
    except WorkersUnavailable as exc:
        return str(exc)
    except Deadline:
        return f"{target_shown(b.url)}: stopped after --timeout {timeout:g} s waiting for the workers"
    except Exception as exc:  # noqa: BLE001 - kombu's connection errors: one line, exit 2
        return f"{target_shown(b.url)}: the workers could not be asked ({type(exc).__name__}: {_short(str(exc))})"
    return None


def _failure(t, exc: Exception, timeout: float, deadline: float) -> str:
    """The error line of a check the client or a reply ended: connection
    refused, authentication, TLS, the socket's deadline; anything else is a
    reply the doctor could not read."""
    import redis

    from .tls_probe import hint

    shown = t.shown
    if isinstance(exc, redis.AuthenticationError) or "WRONGPASS" in str(exc) or "NOAUTH" in str(exc):
        return (f"{shown}: authentication failed ({_short(str(exc))}): check the user and password of the broker "
                "URL")
    if isinstance(exc, redis.TimeoutError):
        return f"{shown}: stopped after --timeout {timeout:g} s waiting for the server"
    if isinstance(exc, redis.ConnectionError) and "refused" in str(exc).lower():
        return f"{shown}: connection refused: nothing listens there (is Redis running, and is the port right?)"
    if isinstance(exc, redis.RedisError) and not isinstance(exc, (redis.InvalidResponse, redis.DataError)):
        return f"{shown}: {type(exc).__name__}: {_short(str(exc))}{hint(t, deadline)}"
    if isinstance(exc, (Malformed, Oversized)):
        why = str(exc)
    elif isinstance(exc, RecursionError):
        why = "RecursionError: nested too deeply to read"
    else:
        why = f"{type(exc).__name__}: {_short(str(exc))}"
    return f"broker {shown}: unexpected reply ({why}){hint(t, deadline)}"


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
    if t.kind == "tls":
        from .tls_probe import plain_server

        plain_server(t, deadline)  # a plain Redis would leave the TLS handshake waiting until the deadline
    r = client(t, deadline)
    try:
        layout = Layout.from_options(b.options)
        memory = checks._info(r, "memory", report)
        checks.eviction_policy(r, report, memory)
        report.ran.append("eviction policy")
        checks.memory_pressure(memory, checks._info(r, "stats", report), report)
        report.ran.append("memory")
        queues = checks.shared_keyspace(r, t.db, layout, checks._info(r, "keyspace", report), report)
        report.ran.append("keyspace")
        checks.unacked(r, layout, b.timeout, b.explicit, report)
        report.ran.append("unacked")
        report.waiting = checks.queue_lengths(r, layout, queues or ["celery"], report)
        report.ran.append("queue lengths")
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
