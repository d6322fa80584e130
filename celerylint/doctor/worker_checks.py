"""The findings of ``--workers``: what the running workers hold and run,
judged against the broker's queues and the project's static configuration.

Each check reads ``workers.Workers`` (the replies of ``inspect``) and adds
``(code, message, severity)`` to a ``checks.Report``; a worker that did
not answer a command is left out of that command's check, and a value the
static model cannot read is not compared (unknown stays silent)."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from urllib.parse import unquote, urlsplit

from . import consumer_timeout
from .workers import Workers

FAR_AHEAD = 3600  # s: an ETA further ahead is "far-future" (CL206's default countdown-threshold)
SHOWN = 5
POOLS = {"prefork": "prefork", "solo": "solo", "thread": "threads", "eventlet": "eventlet", "gevent": "gevent"}
COMPARED = ("task_acks_late", "task_reject_on_worker_lost", "task_time_limit", "task_soft_time_limit")
SYSTEM_QUEUES = (".pidbox", "celeryev")


def held_etas(ws: Workers, report, now: float | None = None, rabbit=None, static: dict | None = None) -> None:
    """CL156: ETA/countdown tasks in each worker's memory (``scheduled``).
    On RabbitMQ (``rabbit``: the server's version and its queues by name,
    as the management API gave them), those due after the consumer timeout
    of the queue they came from are said, and make it a warning when that
    timeout was read rather than assumed (``consumer_timeout.beyond``)."""
    now = datetime.now(timezone.utc).timestamp() if now is None else now
    for name in ws.names:
        entries = ws.get(name, "scheduled")
        if not isinstance(entries, list) or not entries:
            continue
        ahead, tasks, held = [], [], []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            eta = _timestamp(entry.get("eta"))
            request = entry.get("request") if isinstance(entry.get("request"), dict) else {}
            tasks.append(str(request.get("name") or request.get("type") or "?"))
            if eta is not None:
                ahead.append((eta - now, str(entry.get("eta"))))
                held.append((eta - now, entry))
        if not tasks:
            continue
        n = len(tasks)
        furthest = max(ahead) if ahead else None
        when = f", the furthest due in {_seconds(furthest[0])}, at {furthest[1]}" if furthest else ""
        severity = "warning" if furthest and furthest[0] > FAR_AHEAD else "note"
        past = consumer_timeout.beyond(held, ws.get(name, "active_queues"), rabbit[1], rabbit[0], static or {}) \
            if rabbit is not None else None
        extra = ""
        if past is not None:
            count, _, limit, queues = past
            which = "it is" if n == 1 else f"{count} of them {'is' if count == 1 else 'are'}"
            what = ("RabbitMQ closes the worker's channel (`PRECONDITION_FAILED`) once a delivery stays "
                    "unacknowledged that long, the worker stops (Celery 5: `Unrecoverable error`)"
                    if rabbit[0] < consumer_timeout.QUORUM_ONLY else
                    "RabbitMQ 4.3 and later cancel the worker's consumer (`basic.cancel`) or close its channel "
                    "once a delivery stays unacknowledged that long")
            extra = (f"; {which} due after the consumer timeout of queue{'s' * (len(queues) != 1)} "
                     f"{_listed(queues)}, {_seconds(limit.ms / 1000)} ({limit.where}): {what} and the message "
                     "goes back to the queue, for the next worker to hold until the timeout passes again")
            severity = "warning" if limit.known else severity
        report.add("CL156", f"worker `{name}` holds {n} ETA/countdown task{'s' * (n != 1)} in memory "
                            f"({_names(tasks)}{when}): each stays unacknowledged in the worker until it is due, "
                            "counts against the broker's redelivery timeout (Redis `visibility_timeout`, RabbitMQ "
                            "`consumer_timeout`) and goes back to the broker only when the worker shuts down "
                            f"cleanly or that timeout passes{extra}", severity)


def prefetch_hoarding(ws: Workers, report) -> None:
    """CL157: a worker whose pool is busy holds reserved (prefetched) tasks
    while another worker consuming the same queue has idle slots."""
    state = {}
    for name in ws.names:
        active, reserved, queues = ws.get(name, "active"), ws.get(name, "reserved"), _queues(ws, name)
        size = _concurrency(ws, name)
        if not isinstance(active, list) or not isinstance(reserved, list) or size is None or queues is None:
            continue
        state[name] = (len(active), len(reserved), size, set(queues))
    for name, (busy, held, size, queues) in sorted(state.items()):
        if busy < size or not held:
            continue
        idle = [(other, s - a, sorted(queues & q)) for other, (a, _, s, q) in sorted(state.items())
                if other != name and a < s and queues & q]
        if not idle:
            continue
        other, free, shared = idle[0]
        report.add("CL157", f"worker `{name}` has all {size} pool slot{'s' * (size != 1)} busy and holds {held} "
                            f"more task{'s' * (held != 1)} reserved (prefetched), while `{other}`, which consumes "
                            f"the same queue{'s' * (len(shared) != 1)} ({_listed(shared)}), has {free} idle: the "
                            "reserved tasks wait behind the running ones; `worker_prefetch_multiplier = 1` "
                            "(with `task_acks_late`) lets idle workers take them")


def unconsumed_queues(ws: Workers, waiting: dict[str, int] | None, report) -> None:
    """CL158: queues with waiting messages that no running worker consumes."""
    if not waiting or not ws.names or ws.missing.get("active_queues"):
        return
    consumed = {q for name in ws.names for q in (_queues(ws, name) or ())}
    for queue, n in sorted(waiting.items()):
        if n and queue not in consumed:
            report.add("CL158", f"queue `{queue}` has {n} message{'s' * (n != 1)} waiting and none of the "
                                f"{len(ws.names)} running worker{'s' * (len(ws.names) != 1)} ({_listed(ws.names)}) "
                                f"consumes it (they consume {_listed(sorted(consumed)) or 'nothing'}): its tasks "
                                "never run; start a worker with `-Q " + queue + "` or route the tasks elsewhere")


def unrouted_queues(ws: Workers, static: dict, mentioned, report) -> None:
    """CL158 (information): a queue the workers consume that nothing in the
    project routes to: not ``task_default_queue`` and never written as a
    string in the project's Python files (``mentioned(name)``)."""
    default = static.get("task_default_queue", (None, ""))[0]
    if not isinstance(default, str) or ws.missing.get("active_queues"):
        return
    by_queue: dict[str, list[str]] = {}
    for name in ws.names:
        for q in _queues(ws, name) or ():
            by_queue.setdefault(q, []).append(name)
    for queue, names in sorted(by_queue.items()):
        if queue == default or queue.endswith(SYSTEM_QUEUES) or mentioned(queue):
            continue
        report.add("CL158", f"worker{'s' * (len(names) != 1)} {_listed(names)} consume{'s' * (len(names) == 1)} "
                            f"queue `{queue}`, which nothing in the project routes to (it is not "
                            f"`task_default_queue` and no Python file names it): a typo in `-Q`, or a "
                            "route that was removed", "note")


def config_drift(ws: Workers, static: dict, report) -> None:
    """CL159: the running workers' effective configuration against the
    project's (both values, and where each was read)."""
    diffs: dict[tuple[str, str, str], list[str]] = {}  # (setting, live, how) -> workers
    for name in ws.names:
        conf = ws.get(name, "conf")
        multiplier = _effective_multiplier(ws, name)  # what it uses, before what its configuration says
        if multiplier is None and isinstance(conf, dict) and "worker_prefetch_multiplier" in conf:
            multiplier = conf["worker_prefetch_multiplier"], "`inspect conf`"
        if isinstance(conf, dict):
            for setting in COMPARED:
                if setting in static and setting in conf and not _same(conf[setting], static[setting][0]):
                    diffs.setdefault((setting, repr(conf[setting]), "`inspect conf`"), []).append(name)
        setting = "worker_prefetch_multiplier"
        if multiplier is not None and setting in static and not _same(multiplier[0], static[setting][0]):
            diffs.setdefault((setting, repr(multiplier[0]), multiplier[1]), []).append(name)
        pool = _pool(ws, name)
        if pool is not None and "worker_pool" in static and pool != POOLS.get(str(static["worker_pool"][0]),
                                                                                str(static["worker_pool"][0])):
            diffs.setdefault(("worker_pool", repr(pool), "`inspect stats` (pool)"), []).append(name)
        size = _concurrency(ws, name)
        wanted = static.get("worker_concurrency", (None, "Celery's default"))
        if size is not None and wanted[1] != "Celery's default" and isinstance(wanted[0], int) and wanted[0] \
                and size != wanted[0]:
            diffs.setdefault(("worker_concurrency", repr(size), "`inspect stats` (max-concurrency)"), []).append(name)
    for (setting, live, how), names in sorted(diffs.items()):
        value, where = static[setting]
        report.add("CL159", f"`{setting}` is {live} in the running worker{'s' * (len(names) != 1)} "
                            f"{_listed(names)} (read with {how}) but {value!r} in the project ({where}): the "
                            "workers do not run the configuration the code says (a command-line option, an "
                            "environment variable or an older deploy)")


def broker_drift(ws: Workers, configured_url: str | None, configured_where: str, report) -> None:
    """CL159: workers connected to another broker host, port or database
    than the project's ``broker_url`` names."""
    if not configured_url:
        return
    want = address(configured_url)
    if want is None:
        return
    odd: dict[tuple, list[str]] = {}
    for name in ws.names:
        stats = ws.get(name, "stats")
        broker = stats.get("broker") if isinstance(stats, dict) else None
        if not isinstance(broker, dict):
            continue
        got = (_host(broker.get("hostname")), broker.get("port"), str(broker.get("virtual_host") or "").strip("/"))
        got = (got[0], got[1] or want[1], got[2])
        if got[0] and got != want[:3]:
            odd.setdefault(got, []).append(name)
    what = "database" if want[3] == "redis" else "virtual host"
    for (host, port, vhost), names in sorted(odd.items(), key=str):
        report.add("CL159", f"worker{'s' * (len(names) != 1)} {_listed(names)} "
                            f"{'are' if len(names) != 1 else 'is'} connected to {host}:{port} {what} "
                            f"`{vhost or '/'}` (`inspect stats`), but the project's `broker_url` "
                            f"({configured_where}) names {want[0]}:{want[1]} {what} `{want[2] or '/'}`: the "
                            "workers and the code that sends tasks do not share a broker")


def address(url: str):
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    kind = "redis" if scheme in ("redis", "rediss") else "amqp" if scheme in ("amqp", "amqps", "pyamqp") else None
    if kind is None:
        return None
    try:
        parts = urlsplit(url.split(";", 1)[0])
        port = parts.port or (6379 if kind == "redis" else 5672)
    except ValueError:
        return None
    path = unquote(parts.path[1:]) if parts.path.startswith("/") else ""
    vhost = (path or "0") if kind == "redis" else path
    return _host(parts.hostname or "localhost"), port, vhost.strip("/"), kind


def _host(host) -> str:
    host = str(host or "").lower()
    return "localhost" if host in ("127.0.0.1", "::1", "localhost") else host


def _effective_multiplier(ws: Workers, name: str):
    """The multiplier the worker really uses: its QoS prefetch count
    (``inspect stats``), less one per ETA task it holds (Celery raises the
    count for each), over its pool size; None unless it divides exactly,
    and for the pools whose size is not the worker's concurrency (solo
    reports one process; the count uses ``--concurrency``)."""
    stats, size = ws.get(name, "stats"), _concurrency(ws, name)
    if _pool(ws, name) not in ("prefork", "threads"):
        return None
    scheduled = ws.get(name, "scheduled")
    if not isinstance(stats, dict) or not size or not isinstance(scheduled, list):
        return None
    count = stats.get("prefetch_count")
    if isinstance(count, bool) or not isinstance(count, int):
        return None
    base = count - len(scheduled)
    if base < 0 or base % size:
        return None
    return base // size, f"`inspect stats` (prefetch_count {count} over {size} process{'es' * (size != 1)})"


def _concurrency(ws: Workers, name: str) -> int | None:
    stats = ws.get(name, "stats")
    pool = stats.get("pool") if isinstance(stats, dict) else None
    size = pool.get("max-concurrency") if isinstance(pool, dict) else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def _pool(ws: Workers, name: str) -> str | None:
    stats = ws.get(name, "stats")
    pool = stats.get("pool") if isinstance(stats, dict) else None
    impl = pool.get("implementation") if isinstance(pool, dict) else None
    if not isinstance(impl, str):
        return None
    module = impl.split(":", 1)[0].rsplit(".", 1)[-1]
    return POOLS.get(module, module)


def _queues(ws: Workers, name: str) -> list[str] | None:
    queues = ws.get(name, "active_queues")
    if not isinstance(queues, list):
        return None
    return [str(q["name"]) for q in queues if isinstance(q, dict) and q.get("name")]


def _same(live, static) -> bool:
    if isinstance(live, bool) or isinstance(static, bool):
        return bool(live) == bool(static) and isinstance(live, bool) == isinstance(static, bool)
    if isinstance(live, (int, float)) and isinstance(static, (int, float)):
        return math.isclose(live, static)
    return live == static


def _timestamp(value) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def _names(tasks) -> str:
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t] = counts.get(t, 0) + 1
    shown = [f"`{t}`" + (f" x{n}" if n > 1 else "") for t, n in sorted(counts.items())[:SHOWN]]
    return ", ".join(shown) + (", ..." if len(counts) > SHOWN else "")


def _listed(names) -> str:
    names = list(names)
    shown = ", ".join(f"`{n}`" for n in names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _seconds(s: float) -> str:
    """A duration, rounded to its largest unit (``about 2 d``)."""
    s = max(s, 0)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if s >= 2 * size:
            whole = s / size
            return f"{whole:.0f} {unit}" if abs(whole - round(whole)) < 0.02 else f"about {whole:.1f} {unit}"
    return f"{s:.0f} s"
