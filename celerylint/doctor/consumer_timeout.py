"""RabbitMQ's ``consumer_timeout`` in force for a queue, and the ETA and
countdown tasks the workers hold past it.

What a RabbitMQ server enforces, by version (each verified as noted in
docs/doctor.md):

- 3.8.15 and later: the node's ``consumer_timeout`` (rabbitmq.conf,
  advanced.config, ``-rabbit consumer_timeout``); 30 minutes by default.
  Each channel compares its oldest unacknowledged delivery with it every
  ``channel_tick_interval`` (60 s) and closes the channel
  (``PRECONDITION_FAILED``) when it is older.  3.10's channel reads only
  the node's value: a queue's ``x-consumer-timeout`` argument is stored
  and shown by the management API, but not enforced, and a policy with
  ``consumer-timeout`` is refused.
- 3.11.15 and later: a queue's ``x-consumer-timeout`` argument or the
  ``consumer-timeout`` key of its policy (the smaller of the two) replaces
  the node's value for that queue.
- 4.3 and later: consumer timeouts apply to quorum queues only.

The node's value is not exposed by any GET endpoint of the management API
(``/api/nodes`` names the config files, not their contents), so it is the
value the project's deployment files set (``domain/deploy``, as CL124
reads it, carried in the static settings as ``consumer_timeout``), else
RabbitMQ's documented default, said as such."""

from __future__ import annotations

from dataclasses import dataclass

PER_QUEUE = (3, 11, 15)  # the first RabbitMQ that honours x-consumer-timeout and the consumer-timeout policy
QUORUM_ONLY = (4, 3)  # from here on classic queues have no consumer timeout
DEFAULT_MS = 1_800_000  # rabbitmq.conf's default since 3.8.17 (15 min in 3.8.15)


@dataclass(frozen=True)
class Timeout:
    ms: int | None  # None: no timeout applies
    where: str  # where the value comes from, for the message
    known: bool  # read (a queue's argument or policy, the project's files), not RabbitMQ's default assumed


def node(static: dict) -> Timeout:
    """The node-wide value: the project's deployment files, else the default."""
    ms, where = static.get("consumer_timeout", (DEFAULT_MS, ""))
    if where:
        return Timeout(ms, where, True)
    return Timeout(DEFAULT_MS, "RabbitMQ's default; the node's own value is not readable through the "
                               "management API", False)


def per_queue(q: dict) -> int | None:
    """The smaller of a queue's ``x-consumer-timeout`` argument and its
    policy's ``consumer-timeout``, as /api/queues shows them."""
    values = []
    args = q.get("arguments")
    if isinstance(args, dict):
        values.append(args.get("x-consumer-timeout"))
    policy = q.get("effective_policy_definition")
    if isinstance(policy, dict):
        values.append(policy.get("consumer-timeout"))
    found = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and v >= 0]
    return min(found) if found else None


def for_queue(q: dict | None, server: tuple[int, ...], static: dict) -> Timeout:
    """The timeout RabbitMQ ``server`` enforces on deliveries from ``q``
    (None: the queue is not known; the node's value)."""
    if q is not None and server and server >= QUORUM_ONLY and (q.get("type") or "classic") != "quorum":
        return Timeout(None, f"RabbitMQ {_v(server)} applies consumer timeouts to quorum queues only", True)
    own = per_queue(q) if q is not None and server and server >= PER_QUEUE else None
    if own is not None:
        return Timeout(own, f"queue `{q['name']}`'s `x-consumer-timeout` argument or `consumer-timeout` policy, "
                            "read from /api/queues", True)
    return node(static)


def origin(entry: dict, consumed: list[dict] | None) -> list[str]:
    """The queues a message a worker holds may have come from: the one its
    delivery's exchange and routing key lead to among the queues the
    worker consumes, else every queue it consumes."""
    request = entry.get("request") if isinstance(entry.get("request"), dict) else {}
    info = request.get("delivery_info") if isinstance(request.get("delivery_info"), dict) else {}
    queues = [q for q in consumed or () if isinstance(q, dict) and isinstance(q.get("name"), str)]
    exchange, key = info.get("exchange"), info.get("routing_key")
    if exchange == "" and any(q["name"] == key for q in queues):  # the default exchange routes by queue name
        return [key]
    matched = [q["name"] for q in queues if isinstance(key, str) and q.get("routing_key") == key
               and _exchange(q) == exchange]
    return matched or [q["name"] for q in queues]


def beyond(entries: list[tuple[float, dict]], consumed, queues: dict[str, dict], server: tuple[int, ...],
           static: dict) -> tuple[int, float, Timeout, list[str]] | None:
    """Of a worker's held ETA tasks (seconds ahead, entry): how many are due
    after the consumer timeout of the queue they came from, the furthest,
    that timeout (the longest, when the queue is not certain) and the
    queues.  None when none is, or nothing is known."""
    count, furthest, timeout, names = 0, 0.0, None, set()
    for ahead, entry in entries:
        candidates = origin(entry, consumed)
        if not candidates:
            continue
        limits = [for_queue(queues.get(n), server, static) for n in candidates]
        if any(t.ms is None for t in limits):
            continue  # some queue it may have come from has no timeout
        longest = max(limits, key=lambda t: t.ms)
        if ahead * 1000 <= longest.ms:
            continue
        count += 1
        names.update(candidates)
        if ahead > furthest:
            furthest, timeout = ahead, longest
    if not count or timeout is None:
        return None
    return count, furthest, timeout, sorted(names)


def _exchange(q: dict):
    ex = q.get("exchange")
    return ex.get("name") if isinstance(ex, dict) else ex


def _v(server: tuple[int, ...]) -> str:
    return ".".join(map(str, server))
