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
(``worker/request.py``, ``execute_using_pool``), and the pool decides.

Only prefork runs tasks in child processes: ``WorkerLostError``, the
failure ``reject_on_worker_lost`` requeues, is billiard's report of a child
that died (``billiard/pool.py``).  Under the other pools a task dies with
its worker, whose connection closes, and the broker redelivers what was not
acknowledged."""

from __future__ import annotations

from .configmod import setting as config_module_setting
from .process import Process

ALIASES = {"processes": "prefork", "prefork": "prefork", "threads": "threads", "threading": "threads",
           "solo": "solo", "eventlet": "eventlet", "gevent": "gevent"}
# pool -> (enforces the hard limit, enforces the soft limit)
ENFORCED = {"prefork": (True, True), "gevent": (True, False), "eventlet": (False, False), "threads": (False, False),
            "solo": (False, False)}
IN_PROCESS = frozenset({"gevent", "eventlet", "threads", "solo"})  # no child process runs the task


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


def configured_pool(app) -> tuple[str | None, object]:
    """The app's ``worker_pool``: ``(pool, resolved)``; pool None when unknown."""
    r = app.get("worker_pool")
    if r.is_unknown:
        return None, r
    if r.is_default:
        return "prefork", r
    return pool_name(r.value), r


def worker_pool(m, app, p: Process, configured: str | None) -> tuple[str | None, bool]:
    """``process_pool``, with the ``worker_pool`` of the worker's ``--config``
    module between ``-P`` and the app's."""
    pool, written = process_pool(p, configured)
    if not written:
        module_pool = config_module_setting(m, app, p, "worker_pool")
        if module_pool is not None:
            return (None if module_pool.is_unknown else pool_name(module_pool.value)), True
    return pool, written


def runs_in_process(m, app) -> bool:
    """Every worker of ``app`` runs a pool without child processes: each one
    the deployment starts, or, with none found, the app's ``worker_pool``."""
    from .model import processes_for

    configured, _ = configured_pool(app)
    workers = [p for p in processes_for(m, app) if p.role != "beat"]
    if not workers:
        return configured in IN_PROCESS
    return all(worker_pool(m, app, p, configured)[0] in IN_PROCESS for p in workers)
