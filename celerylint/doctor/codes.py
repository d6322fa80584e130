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
         "The live broker's `used_memory` is near `maxmemory`, or Redis has already evicted keys",
         "give the broker more memory or move other data off it; evicted keys may have been queued tasks"),
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
         "Queue lengths of the broker (information)",
         "none"),
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
