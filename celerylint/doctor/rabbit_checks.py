"""The RabbitMQ checks: what the management API says about the broker's
nodes and the virtual host's queues, judged against the project's
configuration.  Each adds ``(code, message, severity)`` to a
``checks.Report`` and names itself in ``report.ran``."""

from __future__ import annotations

import time

from . import consumer_timeout
from .rabbitmq import DEFAULT_CONSUMER_TIMEOUT, PAGE_SIZE, QUEUE_COLUMNS, Api, version, vhost_path

SHOWN = 5
SYSTEM = (".pidbox",)  # remote-control queues: their messages are replies and broadcasts


def overview(api: Api, report) -> tuple[int, ...]:
    """The server's version (``/api/overview``)."""
    data = api.get("/api/overview")
    found = version(data.get("rabbitmq_version") if isinstance(data, dict) else None)
    report.ran.append("overview")
    if found:
        report.notices.append(f"RabbitMQ {'.'.join(map(str, found))}, node "
                              f"{data.get('node', '?') if isinstance(data, dict) else '?'}")
    return found


def alarms(api: Api, report) -> None:
    """CL151: memory and disk alarms of each node (``/api/nodes``): while
    one is raised, every publishing connection of the cluster is blocked."""
    nodes = api.get("/api/nodes?columns=name,mem_alarm,disk_free_alarm,mem_used,mem_limit,disk_free,"
                    "disk_free_limit,running")
    report.ran.append("alarms")
    for node in nodes if isinstance(nodes, list) else ():
        if not isinstance(node, dict):
            continue
        name = node.get("name", "?")
        if node.get("mem_alarm") is True:
            report.add("CL151", f"node `{name}` has raised its memory alarm (uses {_size(node.get('mem_used'))} of "
                                f"its {_size(node.get('mem_limit'))} high watermark): RabbitMQ blocks every "
                                "connection that publishes, so `apply_async` hangs until memory is freed")
        if node.get("disk_free_alarm") is True:
            report.add("CL151", f"node `{name}` has raised its disk alarm ({_size(node.get('disk_free'))} free, "
                                f"the limit is {_size(node.get('disk_free_limit'))}): RabbitMQ blocks every "
                                "connection that publishes, so `apply_async` hangs until disk is freed")


def queues(api: Api, report) -> list[dict]:
    """The virtual host's queues (one page of ``/api/queues/<vhost>``)."""
    path = f"/api/queues/{vhost_path(api.m.vhost)}?page=1&page_size={PAGE_SIZE}&columns={QUEUE_COLUMNS}"
    data = api.get(path)
    report.ran.append("queues")
    items = data.get("items") if isinstance(data, dict) else data
    items = [q for q in items if isinstance(q, dict) and isinstance(q.get("name"), str)] if isinstance(items, list) \
        else []
    total = data.get("filtered_count") if isinstance(data, dict) else None
    if isinstance(total, int) and total > len(items):
        report.notices.append(f"{total} queues in virtual host `{api.m.vhost}`: the first {len(items)} were read")
    return items


def queue_notes(items: list[dict], report, now: float | None = None) -> None:
    """CL158: queues holding ready messages without a consumer; CL155
    (information): each queue's type, ready and unacked counts."""
    now = time.time() if now is None else now
    for q in sorted(items, key=lambda q: q["name"]):
        name = q["name"]
        if name.endswith(SYSTEM) or name.startswith("celeryev."):
            continue
        ready, unacked, consumers = (_count(q.get(k)) for k in ("messages_ready", "messages_unacknowledged",
                                                                 "consumers"))
        kind = q.get("type") or "classic"
        head = q.get("head_message_timestamp")
        age = ""
        if isinstance(head, (int, float)) and not isinstance(head, bool) and 0 < head <= now:
            age = f"; the oldest waiting was published {_seconds(now - head)} ago"
        report.add("CL155", f"queue `{name}` ({kind}): {ready} message{'s' * (ready != 1)} ready, {unacked} "
                            f"unacknowledged (delivered, not yet acked), {consumers} consumer"
                            f"{'s' * (consumers != 1)}{age}")
        if ready and not consumers:
            report.add("CL158", f"queue `{name}` holds {ready} ready message{'s' * (ready != 1)} and has no "
                                "consumer: no worker consumes it, so its tasks never run (start a worker with "
                                f"`-Q {name}`, or route the tasks to a consumed queue)")
    report.ran.append("queue consumers")


def quorum_note(items: list[dict], celery_version: str | None, report) -> None:
    """CL155 (information): quorum queues, and what they mean for ETA and
    countdown tasks on the Celery version installed here."""
    quorum = sorted(q["name"] for q in items if q.get("type") == "quorum")
    if not quorum:
        return
    shown = ", ".join(f"`{n}`" for n in quorum[:SHOWN]) + (" ..." if len(quorum) > SHOWN else "")
    v = version(celery_version)
    if not v:
        what = ("Celery before 5.5 applies a global QoS that quorum queues refuse; 5.5 and later detect them "
                "(`worker_detect_quorum_queues`) and deliver ETA/countdown tasks through native delayed delivery")
    elif v < (5, 5):
        what = (f"Celery {celery_version} (installed here) applies a global QoS, which quorum queues refuse, and "
                "holds ETA/countdown tasks by raising it: upgrade to Celery 5.5 or keep these queues classic")
    else:
        what = (f"Celery {celery_version} (installed here) detects them (`worker_detect_quorum_queues`) and "
                "sends ETA/countdown tasks through native delayed delivery (the `celery_delayed_*` exchanges and "
                "queues), so workers do not hold them in memory")
    report.add("CL155", f"quorum queue{'s' * (len(quorum) != 1)} {shown}: {what}", "note")


def consumer_timeouts(items: list[dict], server: tuple[int, ...], static: dict, report) -> None:
    """CL159: the ``consumer_timeout`` in force against how long the
    project keeps a message unacknowledged: its task time limit under
    ``task_acks_late``, and, where every queue has the node's timeout (so
    the queue a countdown goes to does not matter), its longest countdown
    or ETA.  Per queue where the server honours it, else the node's value
    as the project's deployment files set it (``consumer_timeout``
    module), else RabbitMQ's default, as a note."""
    longest = _longest(static, held=False)  # per queue: the time limit, which any task of any queue may run to
    own = {q["name"]: ms for q in items if (ms := consumer_timeout.per_queue(q)) is not None}
    if own and server and server < consumer_timeout.PER_QUEUE:
        report.notices.append(f"{len(own)} queue(s) set a per-queue consumer timeout ({', '.join(sorted(own)[:SHOWN])}), "
                              f"which RabbitMQ {'.'.join(map(str, server))} ignores (3.11.15 and later honour it)")
    report.ran.append("consumer_timeout")
    limits = {q["name"]: consumer_timeout.for_queue(q, server, static) for q in items}
    for name, t in sorted(limits.items()):
        if longest is None:
            break
        seconds, what = longest
        if t.where.startswith("queue `") and t.ms is not None and t.ms / 1000 < seconds:
            report.add("CL159", f"queue `{name}` has a consumer timeout of {_seconds(t.ms / 1000)} (its arguments or "
                                f"policy, read from /api/queues) but {what} is {_seconds(seconds)}: RabbitMQ closes "
                                "the worker's channel when a delivery stays unacknowledged that long, and the task "
                                "is delivered again")
    n = consumer_timeout.node(static)
    if items and not any(t.where == n.where for t in limits.values()):
        return  # every queue has a timeout of its own (or, on 4.3 and later, none)
    if not items or all(t.where == n.where for t in limits.values()):  # a countdown's queue then does not matter
        longest = _longest(static) or longest
    if longest is None:
        return
    seconds, what = longest
    if n.known and n.ms is not None and n.ms / 1000 < seconds:
        report.add("CL159", f"RabbitMQ's `consumer_timeout` is {_seconds(n.ms / 1000)} ({n.where}, the node's "
                            f"value as the project deploys it) but {what} is {_seconds(seconds)}: RabbitMQ closes "
                            "the worker's channel when a delivery stays unacknowledged that long, and the task is "
                            "delivered again")
    elif not n.known and seconds > DEFAULT_CONSUMER_TIMEOUT:
        report.add("CL159", f"{what} is {_seconds(seconds)}, longer than RabbitMQ's default `consumer_timeout` of "
                            f"{_seconds(DEFAULT_CONSUMER_TIMEOUT)}; the node's own value (rabbitmq.conf) is not "
                            "exposed by the management API: check it (`rabbitmq-diagnostics environment | grep "
                            "consumer_timeout`), or RabbitMQ closes the channel and delivers the task again", "note")


def _longest(static: dict, held: bool = True):
    """How long a message stays unacknowledged, as the project says: a
    task running under ``task_acks_late``, or (``held``) a countdown/ETA
    a worker holds until it is due, wherever the static model reads one
    (its queue is not known): (seconds, what), or None."""
    acks_late = static.get("task_acks_late", (None, ""))
    limit = static.get("task_time_limit", (None, ""))
    found = None
    if acks_late[0] is True and isinstance(limit[0], (int, float)) and not isinstance(limit[0], bool) and limit[0]:
        found = float(limit[0]), f"the project's `task_time_limit` ({limit[1]}, with `task_acks_late`)"
    longest = static.get("longest_unacked") if held else None  # the static model's (CL124's): a countdown, a limit
    if longest is not None and (found is None or longest[0] > found[0]):
        found = float(longest[0]), f"the longest the project holds a message unacknowledged ({longest[1]})"
    return found


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _size(n) -> str:
    if not isinstance(n, (int, float)) or isinstance(n, bool):
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _seconds(s: float) -> str:
    from .worker_checks import _seconds as approx

    return approx(s)
