"""Findings of the per-file phase that hold only if the project's
configuration says so (``core.model.DEFERRED_FINDING`` facts).

``{"time_limit_over": ttl, "app": "*"}``: a lock a task took in its own
body with a TTL of ``ttl`` seconds and released with a plain delete (CL204),
the task setting no time limit of its own.  The condition holds unless every
settings profile of the app sets ``task_time_limit`` to at most ``ttl`` and
no worker of it passes a larger or unreadable ``--time-limit``: the worker
is then killed before the lock can expire.

``{"cache_lock": "django_redis"|"redis_lock"}``: a Django cache's ``lock()``
(CL203), read as django-redis's (``timeout``), or as python-redis-lock's
(``expire``) when a ``CACHES`` setting of the project names that library's
backend (``redis_lock.django_cache.RedisCache``).  Exactly one holds.

``{"result_backend": "redis", "app": key}``, a
lock taken on ``<app>.backend.client`` (``domain/backend_client.py``), which
is a Redis client when the app's result backend is Redis.  ``key`` is the
app as the model keys it (``module:var``), or ``*`` for the app the worker
runs (the project's one app that runs tasks).  The condition holds when
every settings profile of that app reads ``result_backend`` as a URL whose
scheme is ``redis``, ``rediss`` or ``sentinel`` (``redis+socket://`` too:
Celery takes the part before ``+``), as Celery's backend aliases map them to
``RedisBackend``; an unknown backend, an app not found, or several apps
for ``*`` do not: the finding is dropped.
"""

from __future__ import annotations

from typing import Any

from ...core.model import DEFERRED_FINDING, Finding

_REDIS_SCHEMES = frozenset({"redis", "rediss", "sentinel"})


def deferred_findings(project: Any, code: str) -> list[Finding]:
    """The deferred findings of rule ``code`` whose condition holds (the
    rule's ``check_project`` yields them)."""
    facts = [f for f in project.of_kind(DEFERRED_FINDING)
             if isinstance(f.get("finding"), dict) and f["finding"].get("code") == code]
    if not facts:
        return []
    from .model import model

    m = model(project)
    out = []
    for fact in facts:
        if holds(m, fact.get("when")):
            try:
                out.append(Finding.from_dict(fact["finding"]))
            except (KeyError, ValueError):
                continue
    return out


def holds(m: Any, when: Any) -> bool:
    if isinstance(when, dict) and isinstance(when.get("time_limit_over"), (int, float)):
        return not _killed_first(m, when["time_limit_over"])
    if isinstance(when, dict) and when.get("cache_lock") in ("django_redis", "redis_lock"):
        return _redis_lock_caches(m) == (when["cache_lock"] == "redis_lock")
    if not isinstance(when, dict) or when.get("result_backend") != "redis":
        return False
    apps = app_profiles(m, str(when.get("app") or ""))
    return bool(apps) and all(redis_backend(app) for app in apps)


def _redis_lock_caches(m: Any) -> bool:
    """A ``CACHES`` of the project names python-redis-lock's cache backend
    (once per model: every cache lock of the project asks)."""
    found = getattr(m, "_redis_lock_caches", None)
    if found is None:
        import json

        found = m._redis_lock_caches = any(
            f.get("name") == "CACHES" and _REDIS_LOCK_BACKEND in json.dumps(f.get("value"))
            for kind in ("setting", "setting_item") for f in m.by_kind[kind])
    return found


_REDIS_LOCK_BACKEND = "redis_lock.django_cache"


def app_profiles(m: Any, key: str) -> list:
    """Every profile of the app ``key`` stands for (``module:var``, or
    ``*``: the project's one app that runs tasks; none when there are
    several)."""
    by_app: dict[str, list] = {}
    for name, app in m.apps.items():
        by_app.setdefault(name.partition("#")[0].partition("@")[0], []).append(app)
    if key == "*":
        workers = [k for k, apps in by_app.items() if not all(a.send_only for a in apps)]
        return by_app[workers[0]] if len(workers) == 1 else []
    return by_app.get(key, [])


def redis_backend(app: Any) -> bool:
    """The app's result backend is read, and is Celery's Redis backend."""
    resolved = app.get("result_backend")
    if not resolved.is_set or not isinstance(resolved.value, str):
        return False
    value = resolved.value.strip()
    scheme = value.partition("://")[0] if "://" in value else value
    return scheme.partition("+")[0].lower() in _REDIS_SCHEMES


def _killed_first(m: Any, ttl: float) -> bool:
    """Every profile of the project's app kills a task by ``ttl`` seconds."""
    from ..deploy.cmdline import UNKNOWN
    from ..deploy.model import processes_for
    from ..unacked import seconds_option
    from .values import number

    apps = app_profiles(m, "*")
    if not apps:
        return False
    for app in apps:
        limit = app.get("task_time_limit")
        value = number(limit.value) if limit.is_set else None
        if value is None or value > ttl:
            return False
        for p in processes_for(m, app):
            written = p.command.options.get("time_limit")
            if written is None:
                continue
            given = seconds_option(written) if written != UNKNOWN else None
            if given is None or given > ttl:
                return False
    return True
