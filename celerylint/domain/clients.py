"""Is this expression a Redis client or a Django cache?  Judged by how it was
made or imported, never by its variable name alone."""

from __future__ import annotations

import re

import libcst as cst

from ..context import FileContext, dotted_name
from ..facts.client_index import CACHE, CACHE_MAPPINGS, CACHE_OBJECTS, REDIS, REDIS_FACTORIES
from ..rule import Regex

__all__ = ["CACHE", "CACHE_MAPPINGS", "CACHE_OBJECTS", "REDIS", "REDIS_FACTORIES", "client_kind", "receiver"]

# Clients are recognised only through an import in the same file, and every
# module they come from (redis, redis.asyncio, django_redis, aioredis) has a
# lowercase "redis" in its name; "redistribute" in licence text does not count.
REDIS_IMPORT_NEEDLE = Regex(rb"redis(?!tribut)")



# A Django cache is known only through a ``django.core.cache`` import, and is
# used as ``cache``/``caches[...]`` (with any prefix: ``django_cache``), or
# through an alias (``import cache as c``) or a name it was assigned to
# (``c = caches["x"]``, ``self.store = cache``), which then appear in the text.
CACHE_ALIAS = (Regex(rb"caches?\s+as\b"), Regex(rb"=\s*caches?\b"))


CACHE_HELPER = Regex(rb"cache\w*(?:\s*\([^()\n]*\))?\s*\.\s*(?:add|set|lock|delete|unlink)\s*\(")


def cache_call(methods: bytes) -> Regex:
    """A call of one of ``methods`` (a regex alternation) on ``cache`` or ``caches[...]``."""
    return Regex(rb"caches?\s*(?:\[[^\]\n]*\]\s*)?\.\s*(?:" + methods + rb")\s*\(")


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
        return _provided(node.func, ctx, "()")
    if isinstance(node, cst.Subscript):
        return CACHE if ctx.imported_name(node.value) in CACHE_MAPPINGS else None
    if isinstance(node, cst.Name):
        bound = ctx.lookup(node.value)  # a local variable shadows an import
        if bound is not None:
            return client_kind(bound, ctx, depth + 1)
        if node.value in ctx.imports:
            if ctx.imports[node.value] in CACHE_OBJECTS:
                return CACHE
            return _provided(node, ctx, "")
        return None
    if isinstance(node, cst.Attribute):
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
            bound = ctx.lookup_self_attr(node.attr.value)
            if bound is None and ctx.classes:
                bound = _class_attr(ctx.classes[-1], node.attr.value)
            return client_kind(bound, ctx, depth + 1) if bound is not None else None
        if ctx.imported_name(node) in CACHE_OBJECTS:
            return CACHE
        return _provided(node, ctx, "")
    return None


# A client from a project helper counts in a file whose code names its kind
# (the helper's module, its name, a variable: ``from app.utils.redis import
# get_client``): the rules' prefilters need no knowledge of other files.
# A Django cache helper counts where it is called on directly (a name with
# "cache" in it: ``get_cache().delete(...)``, ``default_cache.add(...)``,
# ``cache.set(...)``): CACHE_HELPER.
_MENTIONS = {REDIS: re.compile(r"redis(?!tribut)"), CACHE: re.compile(bytes(CACHE_HELPER).decode())}


def _provided(func: cst.BaseExpression, ctx: FileContext, suffix: str) -> str | None:
    """What the project index says a call of (``suffix="()"``) or a reference
    to ``func`` gives: a helper of another module (through its import) or of
    this one (a module function or class).  Every question that can change
    the outcome is recorded (none in a file that mentions neither kind), so
    that a cached result is dropped when the answer changes."""
    allowed = _mentioned(ctx)
    name = dotted_name(func) if allowed else None
    if name is None:
        return None
    head = name.partition(".")[0]
    if _parameter(head, ctx):
        return None  # a parameter shadows the import or module name
    if head in ctx.imports:
        qualified = ctx.qualify(func)
    elif ctx.lookup(head) is None and head not in ("self", "cls") and ctx.module_name:
        qualified = f"{ctx.module_name}.{name}"
    else:
        return None
    key = qualified + suffix
    kind = ctx.client_index.get(key)
    ctx.client_lookups[key] = kind
    return kind if kind in allowed else None


def _mentioned(ctx: FileContext) -> frozenset[str]:
    """The kinds a helper may give in this file (see ``_MENTIONS``)."""
    found = ctx.__dict__.get("_client_mentions")
    if found is None:
        text = code_text(ctx)
        found = ctx.__dict__["_client_mentions"] = frozenset(k for k, r in _MENTIONS.items() if r.search(text))
    return found


def _parameter(name: str, ctx: FileContext) -> bool:
    """``name`` is a parameter of a function around the current node."""
    for function in ctx.functions:
        p = function.params
        if any(x.name.value == name for x in (*p.posonly_params, *p.params, *p.kwonly_params)):
            return True
    return False


def code_text(ctx: FileContext) -> str:
    """The file's text without its leading comment block (what needles search)."""
    text = ctx.__dict__.get("_code_text")
    if text is None:
        text = ctx.__dict__["_code_text"] = _HEADER.sub("", ctx.text, count=1)
    return text


_HEADER = re.compile(r"\A(?:[ \t\f]*(?:#[^\r\n]*)?(?:\r\n|\r|\n))*")


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
