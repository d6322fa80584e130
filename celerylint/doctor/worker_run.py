"""``--workers`` for one broker: ask the workers, then judge the replies."""

from __future__ import annotations

from pathlib import Path

from . import worker_checks
from .workers import REPLY_WAIT, inspect


def check(b, report, deadline: float, files: list) -> None:
    ws = inspect(b.url, b.static, b.options, deadline)
    report.ran.append("workers: " + ", ".join(f"inspect {c}" for c in ws.asked))
    if not ws.names:
        report.notices.append(f"no worker answered `inspect ping` within {REPLY_WAIT:g} s: no worker consumes "
                              "from this broker (or they run with remote control disabled); the worker checks "
                              "were skipped")
        return
    report.notices.append(f"{len(ws.names)} worker(s) answered: {', '.join(ws.names)}")
    for command, names in sorted(ws.missing.items()):
        report.notices.append(f"`inspect {command}`: no reply in time from {', '.join(names)}; they are left out "
                              "of its checks")
    worker_checks.held_etas(ws, report, rabbit=report.rabbit, static=b.static)
    worker_checks.prefetch_hoarding(ws, report)
    worker_checks.unconsumed_queues(ws, report.waiting, report)
    worker_checks.unrouted_queues(ws, b.static, _mentioned(files), report)
    worker_checks.config_drift(ws, b.static, report)
    worker_checks.broker_drift(ws, b.configured, b.configured_where, report)


def _mentioned(files: list):
    """Whether a queue's name is written as a string in one of ``files``
    (read once, at the first question)."""
    texts: list[str] = []

    def mentioned(queue: str) -> bool:
        if not texts:
            texts.append("")
            for f in files:
                try:
                    texts.append(Path(f).read_text("utf-8", "replace"))
                except OSError:
                    continue
        return any(f'"{queue}"' in t or f"'{queue}'" in t for t in texts)

    return mentioned
