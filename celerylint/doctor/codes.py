"""The doctor's finding codes.  They are not static rules (nothing in
``celerylint/rules/``): ``--explain`` falls back to this table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Code:
    code: str
    name: str
    severity: str  # error | warning | note; notes do not change the exit status
    summary: str
    hint: str


CODES = {c.code: c for c in (
    Code("CL150", "broker-eviction-policy", "warning",
         "The live broker's `maxmemory-policy` is not `noeviction` (or cannot be read): queued tasks can be evicted",
         "set `maxmemory-policy noeviction` on the broker instance (CL106 is the static twin)"),
    Code("CL151", "broker-memory-pressure", "warning",
         "The live broker's `used_memory` is near `maxmemory`, Redis has already evicted keys, or a RabbitMQ node "
         "has raised its memory or disk alarm",
         "give the broker more memory (or disk) or move other data off it (on Redis, evicted keys may have been "
         "queued tasks)"),
    Code("CL152", "broker-shared-keyspace", "warning",
         "The broker's Redis holds other keyspaces, or keys in the broker's database that are not Celery's",
         "use a dedicated Redis instance (or at least database) for the broker"),
    Code("CL153", "unacked-past-visibility-timeout", "warning",
         "Messages in kombu's `unacked` set are older than the visibility timeout: they are about to be delivered again",
         "raise `broker_transport_options['visibility_timeout']` above the longest task, or shorten the task"),
    Code("CL154", "eta-beyond-visibility-timeout", "warning",
         "ETA/countdown messages held in `unacked` are due after the visibility timeout: they will be delivered again before they run",
         "raise the visibility timeout above the longest eta/countdown, or schedule far-future work with beat"),
    Code("CL155", "queue-length", "note",
         "Queue lengths of the broker, and on RabbitMQ unacknowledged counts and queue types (information)",
         "none"),
    Code("CL156", "worker-held-eta", "warning",
         "A running worker holds ETA/countdown tasks in memory (`--workers`); a warning when one is due more than an "
         "hour ahead, or, on RabbitMQ, after the consumer timeout read for the queue it came from",
         "schedule far-future work with celery beat or a database row, not a long countdown"),
    Code("CL157", "prefetch-hoarding", "warning",
         "A worker whose pool is busy holds prefetched tasks while another worker of the same queue idles "
         "(`--workers`)",
         "set `worker_prefetch_multiplier = 1` (with `task_acks_late`) for long tasks"),
    Code("CL158", "queue-without-consumer", "warning",
         "A queue holds messages that no running worker consumes (a note: workers consume a queue nothing in the "
         "project routes to)",
         "start a worker with `-Q <queue>`, or route the tasks to a queue that is consumed"),
    Code("CL159", "live-config-mismatch", "warning",
         "What the running workers or the broker really use differs from the project's configuration: acks, "
         "prefetch, pool, time limits, the broker instance, RabbitMQ's `consumer_timeout`",
         "make the deployment run the configuration the code says (or change the code to say what runs)"),
)}

# Severities that make the exit status 1 (notes are information)
FAILING = ("error", "warning")


def explain(code: str) -> str | None:
    c = CODES.get(code.upper()) or next((c for c in CODES.values() if c.name == code), None)
    if c is None:
        return None
    return (f"{c.code} {c.name} ({c.severity}; a `celerylint doctor` check of a live broker, not a static rule)\n\n"
            f"{c.summary}\n\nWhat to do: {c.hint}\n")


def sarif_rules() -> list[dict]:
    from ..docs import DOCTOR_URI

    levels = {"error": "error", "warning": "warning", "note": "note"}
    return [{
        "id": c.code,
        "name": c.name,
        "shortDescription": {"text": c.summary},
        "fullDescription": {"text": c.summary},
        "help": {"text": f"{c.summary}. {c.hint}", "markdown": f"{c.summary}. {c.hint}"},
        "helpUri": DOCTOR_URI,
        "defaultConfiguration": {"level": levels[c.severity]},
        "properties": {"tags": ["celery", "reliability", "redis", "doctor"], "precision": "high",
                       "problem.severity": "warning"},
    } for c in CODES.values()]
