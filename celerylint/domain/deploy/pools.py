"""Which time limits each execution pool enforces, as Celery 5.x's source
does it (``celery/concurrency/``):

- ``prefork`` (billiard): both, the soft one by a signal, the hard one by
  killing the child process (``prefork.py`` starts its pool with
  ``enable_timeouts=True``);
- ``gevent``: the hard one only, as a ``gevent.Timeout`` around the task
  (``gevent.py``, ``apply_timeout``), which fires only when the task yields
  to the hub; the soft limit is ignored;
- ``eventlet``: none (``eventlet.py``'s ``on_apply`` drops ``timeout`` and
  ``soft_timeout``);
- ``threads``: none (``thread.py``'s ``on_apply`` passes neither to the
  executor);
- ``solo``: none (``solo.py`` runs ``base.apply_target``, which swallows
  them; its ``_get_info`` reports ``timeouts: ()``).

Celery's worker passes the limits with every task
(``worker/request.py``, ``execute_using_pool``), and the pool decides."""

from __future__ import annotations

from .process import Process

ALIASES = {"processes": "prefork", "prefork": "prefork", "threads": "threads", "threading": "threads",
           "solo": "solo", "eventlet": "eventlet", "gevent": "gevent"}
# pool -> (enforces the hard limit, enforces the soft limit)
ENFORCED = {"prefork": (True, True), "gevent": (True, False), "eventlet": (False, False), "threads": (False, False),
            "solo": (False, False)}


def pool_name(value) -> str | None:
    """A known pool's name, or None (a custom class, unknown)."""
    return ALIASES.get(value.strip().lower()) if isinstance(value, str) else None


def process_pool(p: Process, configured: str | None) -> tuple[str | None, bool]:
    """``(pool, from the command line)`` of a worker process: ``-P`` wins
    over the app's ``worker_pool`` (``configured``), which wins over prefork."""
    written = p.command.options.get("pool")
    if written is not None:
        return pool_name(written), True
    return configured or "prefork", False
