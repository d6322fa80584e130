"""``celerylint doctor --workers``: ask the running workers, with Celery's
own remote-control API, what they run and what they hold.

This publishes remote-control messages on the broker (a broadcast to the
control exchange and a reply queue, as ``celery inspect`` does): it is why
``--workers`` is opt-in.  Only ``inspect`` commands are sent (``ping``,
``stats``, ``conf``, ``active_queues``, ``reserved``, ``scheduled``,
``active``); nothing is revoked, cancelled or changed.  Celery is imported
here, lazily: it is a requirement of the ``doctor`` extra only, and the
user's code is never imported (the app is made from the broker URL)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

MISSING_CELERY = "`celerylint doctor --workers` needs Celery: pip install 'celerylint[doctor]'"
INSPECT = ("ping", "stats", "conf", "active_queues", "reserved", "scheduled", "active")
REPLY_WAIT = 2.0  # s that ``ping`` waits for the workers; the later commands end when every worker has replied


class WorkersUnavailable(Exception):
    """``--workers`` cannot run (Celery is missing): the message says why."""


@dataclass
class Workers:
    """The replies, by worker name; ``asked`` the commands sent, ``missing``
    the commands some worker did not answer in time."""

    replies: dict[str, dict[str, object]] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)
    missing: dict[str, list[str]] = field(default_factory=dict)  # command -> workers that did not answer

    @property
    def names(self) -> list[str]:
        return sorted(self.replies)

    def get(self, worker: str, command: str, default=None):
        return self.replies.get(worker, {}).get(command, default)


def celery_app(url: str, static: dict, transport_options: dict):
    """A Celery app for inspection only: the broker URL, the control
    exchange and the transport options the static model read (a
    ``global_keyprefix`` changes the Redis keys of the control exchange)."""
    try:
        from celery import Celery
    except ImportError:
        raise WorkersUnavailable(MISSING_CELERY) from None
    app = Celery("celerylint-doctor", set_as_current=False)
    app.conf.broker_url = url
    app.conf.broker_connection_retry = False
    app.conf.broker_connection_max_retries = 0
    exchange = static.get("control_exchange", (None, ""))[0]
    if isinstance(exchange, str) and exchange:
        app.conf.control_exchange = exchange
    if transport_options:
        app.conf.broker_transport_options = transport_options
    return app


def inspect(url: str, static: dict, transport_options: dict, deadline: float) -> Workers:
    """Every worker's replies to the INSPECT commands, within ``deadline``."""
    app = celery_app(url, static, transport_options)
    out = Workers()
    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=max(deadline - time.monotonic(), 0.1))
        pinged = _ask(app, conn, "ping", None, min(REPLY_WAIT, _left(deadline)))
        out.asked.append("ping")
        for name, reply in (pinged or {}).items():
            out.replies[name] = {"ping": reply}
        if not out.replies:
            return out
        limit = len(out.replies)
        for command in INSPECT[1:]:
            wait = _left(deadline)
            if wait <= 0:
                break
            got = _ask(app, conn, command, limit, min(REPLY_WAIT, wait)) or {}
            out.asked.append(command)
            for name in out.replies:
                if name in got:
                    out.replies[name][command] = got[name]
                else:
                    out.missing.setdefault(command, []).append(name)
    return out


def _ask(app, conn, command: str, limit: int | None, timeout: float):
    i = app.control.inspect(timeout=max(timeout, 0.1), connection=conn, limit=limit)
    if command == "conf":
        return i.conf(with_defaults=True)
    return getattr(i, command)()


def _left(deadline: float) -> float:
    return deadline - time.monotonic() - 0.3  # what is left for replies, keeping time to report
