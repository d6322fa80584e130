"""Is this expression a Redis client or a Django cache?  Judged by how it was
made or imported, never by its variable name alone."""

from __future__ import annotations

import libcst as cst

from ..context import FileContext
from ..rule import Regex

REDIS = "redis"
CACHE = "cache"

# Clients are recognised only through an import in the same file, and every
# module they come from (redis, redis.asyncio, django_redis, aioredis) has a
# lowercase "redis" in its name; "redistribute" in licence text does not count.
REDIS_IMPORT_NEEDLE = Regex(rb"redis(?!tribut)")



# A Django cache is known only through a ``django.core.cache`` import, and is
# used as ``cache``/``caches[...]`` (with any prefix: ``django_cache``), or
# through an alias (``import cache as c``) or a name it was assigned to
# (``c = caches["x"]``, ``self.store = cache``), which then appear in the text.
CACHE_ALIAS = (Regex(rb"caches?\s+as\b"), Regex(rb"=\s*caches?\b"))


def cache_call(methods: bytes) -> Regex:
    """A call of one of ``methods`` (a regex alternation) on ``cache`` or ``caches[...]``."""
    return Regex(rb"caches?\s*(?:\[[^\]\n]*\]\s*)?\.\s*(?:" + methods + rb")\s*\(")


_REDIS_MODULES = ("redis", "redis.asyncio", "redis.client", "redis.asyncio.client", "redis.cluster", "aioredis")
REDIS_FACTORIES = frozenset(
    [f"{m}.{c}" for m in _REDIS_MODULES for c in ("Redis", "StrictRedis", "RedisCluster")]
    + [f"{m}.{c}.from_url" for m in _REDIS_MODULES for c in ("Redis", "StrictRedis", "RedisCluster")]
    + [f"{m}.from_url" for m in _REDIS_MODULES]
    + ["django_redis.get_redis_connection", "redis.sentinel.Sentinel.master_for"]
)
LOCK_CLASSES = frozenset({"redis.lock.Lock", "redis.asyncio.lock.Lock", "redis.Lock"})
CACHE_OBJECTS = frozenset({"django.core.cache.cache"})
CACHE_MAPPINGS = frozenset({"django.core.cache.caches"})
_MAX_DEPTH = 6


def client_kind(node: cst.BaseExpression, ctx: FileContext, depth: int = 0) -> str | None:
    """REDIS, CACHE or None (unknown)."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, cst.Await):
        return client_kind(node.expression, ctx, depth + 1)
    if isinstance(node, cst.Call):
        name = ctx.imported_name(node.func)
        if name in REDIS_FACTORIES:
            return REDIS
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "get_client":
            # django-redis: cache.client.get_client() is the raw redis client
            inner = node.func.value
            if isinstance(inner, cst.Attribute) and inner.attr.value == "client":
                return REDIS if client_kind(inner.value, ctx, depth + 1) == CACHE else None
        return None
    if isinstance(node, cst.Subscript):
        return CACHE if ctx.imported_name(node.value) in CACHE_MAPPINGS else None
    if isinstance(node, cst.Name):
        if node.value in ctx.imports:
            return CACHE if ctx.imports[node.value] in CACHE_OBJECTS else None
        bound = ctx.lookup(node.value)
        return client_kind(bound, ctx, depth + 1) if bound is not None else None
    if isinstance(node, cst.Attribute):
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
            bound = ctx.lookup_self_attr(node.attr.value)
            if bound is None and ctx.classes:
                bound = _class_attr(ctx.classes[-1], node.attr.value)
            return client_kind(bound, ctx, depth + 1) if bound is not None else None
        if ctx.imported_name(node) in CACHE_OBJECTS:
            return CACHE
    return None


def _class_attr(cls: cst.ClassDef, attr: str) -> cst.BaseExpression | None:
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name) and target.target.value == attr:
                            return small.value
    return None


def receiver(call: cst.Call, methods: frozenset[str] | set[str]) -> tuple[str, cst.BaseExpression] | None:
    """``(method, receiver)`` when ``call`` is ``<receiver>.<method>(...)``."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in methods:
        return func.attr.value, func.value
    return None
