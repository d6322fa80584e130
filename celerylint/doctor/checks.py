"""The live checks: each reads the server (only the commands in
``connect.READ_COMMANDS``) and returns ``(code, message)`` pairs.

Bounds: SCAN reads at most ``SCAN_KEYS`` keys of the broker's database
(``SCAN_COUNT`` per call), each binding set at most ``SSCAN_MEMBERS``
members, and at most ``UNACKED_SAMPLE`` unacked entries (oldest first) and
``UNACKED_BYTES`` of their messages (each message's size is asked first,
with HSTRLEN, and a message that does not fit is not read).

A reply of the wrong shape (an integer where INFO text belongs, a score
that is not a finite number, a body nested too deeply to parse) raises
``Malformed``: the run reports it as an unexpected reply."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from .connect import Malformed
from .kombu_keys import Layout

NEAR_MAXMEMORY = 0.90  # used_memory / maxmemory at or above this is "near"
SCAN_KEYS = 1000
SCAN_COUNT = 200
SSCAN_MEMBERS = 1000
UNACKED_SAMPLE = 500
UNACKED_BYTES = 16 * 1024 * 1024  # of unacked message bodies read (HMGET), at most
HMGET_BYTES = 4 * 1024 * 1024  # of message bodies asked for in one HMGET (a larger body is read alone)
HMGET_FIELDS = 50
HSTRLEN_BATCH = 100  # HSTRLEN commands sent together (one round trip)
SHOWN = 5  # examples named in a message
FANOUT_EXCHANGES = ("celeryev",)  # and every ``*.pidbox``: pub/sub, no list keys

CONSOLES = ("AWS ElastiCache: the parameter group's `maxmemory-policy`; "
            "Azure Cache for Redis: Advanced settings > maxmemory-policy; "
            "Google Memorystore: Configuration > `maxmemory-policy`; "
            "Heroku: `heroku redis:maxmemory`; elsewhere the provider's Redis parameters")


@dataclass
class Report:
    findings: list[tuple[str, str, str | None]] = field(default_factory=list)  # (code, message, severity)
    notices: list[str] = field(default_factory=list)  # what could not be checked
    ran: list[str] = field(default_factory=list)  # the checks that ended, for an error's "which checks ran"
    waiting: dict[str, int] = field(default_factory=dict)  # messages waiting, by queue (for --workers)
    rabbit: tuple | None = None  # RabbitMQ: (server version, {queue name: /api/queues item}), for --workers

    def add(self, code: str, message: str, severity: str | None = None) -> None:
        """``severity``: None for the code's own."""
        self.findings.append((code, message, severity))


def _errors():
    import redis

    return (redis.ResponseError,)  # NOPERM, unknown (renamed or disabled) command


def _info(r, section: str, report: Report) -> dict | None:
    try:
        info = r.info(section)
    except _errors() as exc:
        report.notices.append(f"INFO {section} is not available ({exc}); its checks were skipped")
        return None
    if not isinstance(info, dict):
        raise Malformed(f"INFO {section} gave {_kind(info)}, not INFO text")
    return info


def _int(info: dict, section: str, name: str) -> int:
    value = info.get(name, 0) or 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Malformed(f"INFO {section}: `{name}` is {_short(repr(value))}, not a number")
    return int(value)


def eviction_policy(r, report: Report, memory: dict | None) -> None:
    """CL150: the policy from CONFIG GET, else from INFO memory."""
    policy, how = None, None
    try:
        value = r.config_get("maxmemory-policy")
        policy, how = value.get("maxmemory-policy"), "CONFIG GET"
    except _errors() as exc:
        why = str(exc)
    else:
        why = "CONFIG GET returned nothing"
    if policy is None and memory and memory.get("maxmemory_policy"):
        policy, how = memory["maxmemory_policy"], f"INFO memory (CONFIG is unavailable: {why})"
    if policy is None:
        report.add("CL150", "the broker's `maxmemory-policy` is unknown: CONFIG is disabled or renamed and INFO "
                            f"does not show it ({why}); check it in the provider's console ({CONSOLES}); "
                            "it must be `noeviction`", "note")
        return
    policy = str(policy).lower()
    if policy.startswith("volatile"):
        # kombu's queue lists, ``unacked`` and bindings have no TTL: a volatile-*
        # policy never evicts them; it evicts what has one (Celery's results),
        # and once nothing with a TTL is left Redis refuses writes as noeviction does
        report.add("CL150", f"the broker's `maxmemory-policy` is `{policy}` (read with {how}): under memory pressure "
                            "Redis evicts only keys that have a TTL, so kombu's queues and unacked messages (no TTL) "
                            "stay, but Celery's result keys on this instance vanish before they are read, and once "
                            "nothing with a TTL is left, publishing fails with OOM errors; use `noeviction` to make "
                            "memory pressure an error rather than lost results")
    elif policy != "noeviction":
        report.add("CL150", f"the broker's `maxmemory-policy` is `{policy}` (read with {how}): under memory "
                            "pressure Redis deletes keys, and queued or unacked task messages vanish without an error; "
                            "use `noeviction`")


def memory_pressure(memory: dict | None, stats: dict | None, report: Report) -> None:
    """CL151: used_memory near maxmemory; evicted_keys > 0."""
    if memory:
        used, limit = _int(memory, "memory", "used_memory"), _int(memory, "memory", "maxmemory")
        if limit and used >= NEAR_MAXMEMORY * limit:
            report.add("CL151", f"the broker uses {_size(used)} of its {_size(limit)} `maxmemory` "
                                f"({100 * used / limit:.0f}%, at least {NEAR_MAXMEMORY:.0%} is near): "
                                "Redis is evicting keys or refusing writes")
    if stats:
        evicted = _int(stats, "stats", "evicted_keys")
        if evicted:
            report.add("CL151", f"Redis has evicted {evicted} key{'s' * (evicted != 1)} since it started "
                                "(`evicted_keys` in INFO stats): task messages may already have been lost")


def shared_keyspace(r, db: int, layout: Layout, keyspace: dict | None, report: Report) -> list[str]:
    """CL152: other databases with keys; keys of the broker's database
    that are not Celery's.  Returns the queues found in the bindings."""
    if keyspace:
        others = []
        for name, info in sorted(keyspace.items()):
            if name.startswith("db") and name[2:].isdigit() and int(name[2:]) != db:
                keys = info.get("keys", 0) if isinstance(info, dict) else 0
                if keys:
                    others.append(f"db{name[2:]} ({keys} key{'s' * (keys != 1)})")
        if others:
            report.add("CL152", f"the broker's Redis instance also holds {', '.join(others)}: memory and the eviction "
                                f"policy are shared with the broker's db{db}, and whatever fills them can evict "
                                "or crowd out task messages")
    sample: list[str] = []
    cursor = 0
    while len(sample) < SCAN_KEYS:
        cursor, keys = r.scan(cursor=cursor, count=SCAN_COUNT)
        sample.extend(_text(k) for k in keys)
        if cursor == 0:
            break
    complete = cursor == 0
    sample = sample[:SCAN_KEYS]
    queues: list[str] = []
    binding = layout.key("_kombu.binding.")
    for key in sample:
        if not key.startswith(binding):
            continue
        exchange = key[len(binding):]
        for member in _sscan(r, key):
            queue = layout.queue_of_binding_member(member)
            if queue is None:
                continue
            layout.queues.add(queue)
            if exchange not in FANOUT_EXCHANGES and not exchange.endswith(".pidbox") and queue not in queues:
                queues.append(queue)
    layout.queues.add("celery")  # Celery's default queue, bound or not
    foreign = [k for k in sample if not layout.is_celery_key(k)]
    if foreign:
        expiring = sum(1 for k in foreign[:20] if r.ttl(k) not in (-1, -2))
        shown = ", ".join(repr(k[:60]) for k in foreign[:SHOWN])
        of = f"{len(sample)} keys" + ("" if complete else " sampled (SCAN, bounded)")
        ttl = f"; {expiring} of the first {min(len(foreign), 20)} expire, like cache entries" if expiring else ""
        report.add("CL152", f"{len(foreign)} of the {of} in the broker's db{db} are not Celery's or kombu's "
                            f"(e.g. {shown}){ttl}: another application shares the broker's database, and "
                            "its FLUSHDB or its memory use reaches the task messages")
    return sorted(queues)


def queue_lengths(r, layout: Layout, queues: list[str], report: Report) -> dict[str, int]:
    """CL155 (information): LLEN of each queue and its priority lists;
    returns the lengths by queue."""
    waiting = {}
    for queue in queues:
        lengths = [r.llen(k) for k in layout.queue_keys(queue)]
        total = sum(lengths)
        by_priority = ""
        if any(lengths[1:]):
            steps = [p for p in layout.priority_steps if p]
            parts = [f"{n} at priority {p}" for p, n in zip([0, *steps], lengths) if n]
            by_priority = f" ({', '.join(parts)})"
        report.add("CL155", f"queue `{queue}`: {total} message{'s' * (total != 1)} waiting{by_priority}")
        waiting[queue] = total
    return waiting


def unacked(r, layout: Layout, timeout: float | None, explicit: bool, report: Report, now: float | None = None) -> None:
    """CL153: unacked entries delivered longer ago than the visibility
    timeout; CL154: ETA/countdown messages whose eta is later than their
    delivery plus the visibility timeout."""
    index, hash_key = layout.key(layout.unacked_index), layout.key(layout.unacked)
    total = r.zcard(index)
    if not total:
        return
    if timeout is None:
        report.notices.append(f"{total} unacked message(s), but the app's visibility timeout is unknown: "
                              "CL153/CL154 were not checked")
        return
    now = time.time() if now is None else now
    overdue_total = r.zcount(index, "-inf", f"({now - timeout}")
    entries = r.zrangebyscore(index, "-inf", "+inf", start=0, num=UNACKED_SAMPLE, withscores=True)
    for tag, delivered in entries:
        if not isinstance(delivered, (int, float)) or not math.isfinite(delivered):
            raise Malformed(f"`{index}` gives {_short(_text(tag))!r} the score {delivered!r}, not a time")
    headers, skipped = _bodies(r, hash_key, [tag for tag, _ in entries])
    if skipped:
        report.notices.append(f"{skipped} unacked message{'s were' if skipped != 1 else ' was'} not read: the "
                              f"doctor reads at most {UNACKED_BYTES // (1024 * 1024)} MiB of message bodies; "
                              "CL153/CL154 do not count them")
    entries = [(tag, delivered, headers[tag]) for tag, delivered in entries if tag in headers]
    overdue, late_eta = [], []
    for _, delivered, message in entries:
        task = _short(_text(message.get("task") or "?"))
        eta = _timestamp(message.get("eta"))
        if eta is not None and eta > delivered + timeout:
            late_eta.append((eta - delivered, task, message.get("eta")))
        elif delivered < now - timeout:
            overdue.append((now - delivered, task))
    vt = f"{_seconds(timeout)}{'' if explicit else ' (the default)'}"
    if overdue:
        oldest = max(a for a, _ in overdue)
        tasks = _names(t for _, t in overdue)
        more = "" if overdue_total <= len(entries) else f" ({overdue_total} in all are older than the timeout)"
        report.add("CL153", f"{len(overdue)} message{'s' * (len(overdue) != 1)} in kombu's `unacked` "
                            f"{'were' if len(overdue) != 1 else 'was'} delivered longer ago than the visibility "
                            f"timeout of {vt} (oldest {_seconds(oldest)} ago; {tasks}){more}: kombu will deliver "
                            f"{'them' if len(overdue) != 1 else 'it'} again while the first run may still be going")
    if late_eta:
        longest = max(late_eta)
        tasks = _names(t for _, t, _ in late_eta)
        report.add("CL154", f"{len(late_eta)} ETA/countdown message{'s' * (len(late_eta) != 1)} held in `unacked` "
                            f"{'are' if len(late_eta) != 1 else 'is'} due up to {_seconds(longest[0])} after delivery "
                            f"(eta {longest[2]}; {tasks}), beyond the visibility timeout of {vt}: "
                            "each is delivered again every visibility timeout until it runs")


def _bodies(r, hash_key: str, tags: list) -> tuple[dict, int]:
    """The headers of the messages of ``tags`` in the ``unacked`` hash,
    oldest first, up to ``UNACKED_BYTES`` of bodies; and how many did not
    fit.  Each body's size is asked first (HSTRLEN), so nothing larger is
    read; the bodies are parsed a chunk at a time and only headers kept."""
    sizes = []
    for i in range(0, len(tags), HSTRLEN_BATCH):
        sizes += r.batch(*(("HSTRLEN", hash_key, tag) for tag in tags[i:i + HSTRLEN_BATCH]))
    left, skipped = UNACKED_BYTES, 0
    chunks: list[list] = [[]]
    chunk_bytes = 0
    for tag, size in zip(tags, sizes):
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise Malformed(f"HSTRLEN of an unacked message gave {_kind(size)}, not a length")
        if size > left:
            skipped += 1
            continue
        left -= size
        if chunks[-1] and (chunk_bytes + size > HMGET_BYTES or len(chunks[-1]) >= HMGET_FIELDS):
            chunks.append([])
            chunk_bytes = 0
        chunks[-1].append(tag)
        chunk_bytes += size
    headers: dict = {}
    for chunk in chunks:
        if chunk:
            for tag, raw in zip(chunk, r.hmget(hash_key, chunk)):
                headers[tag] = _headers(raw)
    return headers, skipped


def _headers(raw) -> dict:
    if raw is None:
        return {}
    try:
        message = json.loads(raw)[0]
        headers = message.get("headers") or {}
        return headers if isinstance(headers, dict) else {}
    except RecursionError:
        raise Malformed("an unacked message body is JSON nested too deeply to read") from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError):
        return {}


def _timestamp(value) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def _names(tasks) -> str:
    seen: list[str] = []
    for t in tasks:
        if t not in seen:
            seen.append(t)
    shown = ", ".join(f"`{t}`" for t in seen[:SHOWN])
    return f"task{'s' * (len(seen) != 1)} {shown}{', ...' if len(seen) > SHOWN else ''}"


def _sscan(r, key: str):
    cursor, n = 0, 0
    while n < SSCAN_MEMBERS:
        cursor, members = r.sscan(key, cursor=cursor, count=SCAN_COUNT)
        for m in members:
            n += 1
            yield _text(m)
        if cursor == 0:
            return


def _kind(value) -> str:
    return f"{type(value).__name__} {_short(repr(value))}"


def _short(text: str, most: int = 80) -> str:
    return text if len(text) <= most else text[:most] + "..."


def _text(value) -> str:
    return value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else str(value)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _seconds(s: float) -> str:
    from ..domain.delays import human

    return human(max(round(s), 0))
