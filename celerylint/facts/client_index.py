"""The project's index of Redis clients and Django caches made by its own
helpers, without libcst.

Each file that mentions redis or ``core.cache`` contributes one
``client-providers`` fact (``facts/clients.py``): the functions, module
attributes and class attributes it defines that return or hold a client,
each as a list of sources, a kind (``"redis"``/``"cache"``) or a reference
to another name (``"Q()"``: what calling ``Q`` returns, ``"Q"``: what ``Q``
holds).  ``build`` resolves the references over the whole run into one dict,
``"pkg.mod.get_redis()" -> "redis"``, ``"pkg.mod.redis_client" -> "redis"``.

A file analysed with the index records what it asked (``client-lookups``:
name -> answer).  Its cached result is valid while the index gives the same
answers (``stale``); otherwise the file is analysed again.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

REDIS = "redis"
CACHE = "cache"
PROVIDERS_FACT = "client-providers"
LOOKUPS_FACT = "client-lookups"

_REDIS_MODULES = ("redis", "redis.asyncio", "redis.client", "redis.asyncio.client", "redis.cluster", "aioredis")
REDIS_CLASSES = frozenset(f"{m}.{c}" for m in _REDIS_MODULES for c in ("Redis", "StrictRedis", "RedisCluster"))
REDIS_FACTORIES = frozenset(
    [*REDIS_CLASSES]
    + [f"{c}.from_url" for c in REDIS_CLASSES]
    + [f"{m}.from_url" for m in _REDIS_MODULES]
    + ["django_redis.get_redis_connection", "redis.sentinel.Sentinel.master_for"]
)
CACHE_OBJECTS = frozenset({"django.core.cache.cache"})
CACHE_CLASSES = frozenset({"django.core.cache.backends.base.BaseCache"})
CACHE_MAPPINGS = frozenset({"django.core.cache.caches"})
# names under these are the libraries', never a project helper's
LIBRARY_PREFIXES = ("redis.", "aioredis.", "django.", "django_redis.")
_MAX_DEPTH = 8


def build(facts: Iterable[dict[str, Any]]) -> dict[str, str]:
    """``name -> kind`` for every provider whose sources all resolve to one kind."""
    raw: dict[str, list[str]] = {}
    for fact in facts:
        if fact.get("kind") == PROVIDERS_FACT:
            for name, sources in fact["providers"].items():
                if not name.startswith(LIBRARY_PREFIXES):
                    raw.setdefault(name, []).extend(sources)
    resolved: dict[str, str | None] = {}

    def kind_of(name: str, depth: int) -> str | None:
        if name in resolved:
            return resolved[name]
        if depth > _MAX_DEPTH or name not in raw:
            return None
        resolved[name] = None  # a cycle resolves to unknown
        kinds = {s if s in (REDIS, CACHE) else kind_of(s, depth + 1) for s in raw[name]}
        resolved[name] = kinds.pop() if len(kinds) == 1 else None
        return resolved[name]

    index = {name: kind_of(name, 0) for name in raw}
    return {name: kind for name, kind in index.items() if kind is not None}


def stale(facts: Iterable[dict[str, Any]], index: dict[str, str]) -> bool:
    """A result whose recorded lookups the current index answers differently."""
    for fact in facts:
        if fact.get("kind") == LOOKUPS_FACT:
            if any(index.get(name) != answer for name, answer in fact["lookups"].items()):
                return True
    return False
