"""Which Redis instance a broker, result backend or Django cache uses."""

from __future__ import annotations

import re

from .model import App, Assignment
from .settings import Resolved
from .redis_conf import RedisAddress, parse_redis_url
from .values import plain


def redis_urls(value) -> list[str]:
    if isinstance(value, str):
        return [u for u in value.replace(",", ";").split(";") if u.strip()]
    if isinstance(value, list):
        return [u for u in value if isinstance(u, str)]
    return []


def comparable(a_env: str | None, b_env: str | None) -> bool:
    """Two values say the same about production only when both are literal
    or both come from the same environment variable."""
    return a_env == b_env


def cache_locations(app: App) -> list[tuple[str, object, str | None, Assignment]]:
    """``(alias, LOCATION value, env, assignment)`` of the Django CACHES."""
    return [(alias, location, env, caches) for alias, location, env, _, caches in _caches(app)]


def cache_origins(app: App) -> list[tuple[str, tuple[str, str, str], Assignment]]:
    """``(alias, origin, assignment)`` of the Django CACHES whose ``LOCATION``
    is unknown but read from a known place (``values_origin.py``)."""
    return [(alias, origin, caches) for alias, _, _, origin, caches in _caches(app) if origin is not None]


def same_origin(encoded) -> tuple[str, str, str] | None:
    """``(origin, shown name, suffix)`` of an encoded value that is unknown
    but read from a known place (``{"same": ...}``)."""
    if isinstance(encoded, dict) and isinstance(encoded.get("same"), str):
        return encoded["same"], str(encoded.get("shown") or ""), str(encoded.get("suffix") or "")
    return None


def unknown_origin(resolved: Resolved) -> tuple[str, str, str] | None:
    """The origin of a setting that is unknown because it is read at run time
    from one place, set unconditionally."""
    a = resolved.at
    if not resolved.is_unknown or a is None or a.cond or a.items:
        return None
    return same_origin(a.value)


def _caches(app: App) -> list[tuple[str, object, str | None, tuple[str, str, str] | None, Assignment]]:
    source = app.source
    if source is None or not source.django or not source.by_name.get("CACHES"):
        return []
    caches = source.by_name["CACHES"][-1]
    if caches.cond:
        return []
    value, _ = plain(caches.value)
    out = []
    if not isinstance(value, dict):
        return out
    value = {**value, **{alias: item[0] for alias, item in caches.items.items()}}  # ``CACHES["default"] = {...}``
    for alias, encoded in value.items():
        config, _ = plain(encoded)
        if not isinstance(config, dict) or "LOCATION" not in config:
            continue
        backend, _ = plain(config.get("BACKEND"))
        if not isinstance(backend, str) or "redis" not in backend.lower():
            continue
        location, env = plain(config["LOCATION"])
        out.append((alias, location, env, same_origin(config["LOCATION"]), caches))
    return out


# django-redis-cache (``redis_cache.RedisCache``) also takes a bare ``host:port``
_BARE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*:[0-9]{1,5}")


def instance_of(value, env) -> RedisAddress | None:
    urls = redis_urls(value)
    if not urls:
        return None
    url = urls[0].strip()
    if _BARE.fullmatch(url):  # the database comes from OPTIONS: unknown here
        found = parse_redis_url(f"redis://{url}")
        return RedisAddress(found.host, found.port, None) if found is not None else None
    return parse_redis_url(url)
