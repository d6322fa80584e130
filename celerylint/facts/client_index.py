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

from collections import Counter
from collections.abc import Iterable
from typing import Any

REDIS = "redis"
CACHE = "cache"
PROVIDERS_FACT = "client-providers"
LOOKUPS_FACT = "client-lookups"

_REDIS_MODULES = ("redis", "redis.asyncio", "redis.client", "redis.asyncio.client", "redis.cluster", "aioredis")
# valkey-py and django-valkey: forks of redis-py and django-redis, the same API under Valkey's names
_VALKEY_MODULES = ("valkey", "valkey.asyncio", "valkey.client", "valkey.asyncio.client", "valkey.cluster")
REDIS_CLASSES = frozenset(
    [f"{m}.{c}" for m in _REDIS_MODULES for c in ("Redis", "StrictRedis", "RedisCluster")]
    + [f"{m}.{c}" for m in _VALKEY_MODULES for c in ("Valkey", "StrictValkey", "ValkeyCluster")]
)
REDIS_FACTORIES = frozenset(
    [*REDIS_CLASSES]
    + [f"{c}.from_url" for c in REDIS_CLASSES]
    + [f"{m}.from_url" for m in (*_REDIS_MODULES, *_VALKEY_MODULES)]
    + ["django_redis.get_redis_connection", "redis.sentinel.Sentinel.master_for",
       "django_valkey.get_valkey_connection", "valkey.sentinel.Sentinel.master_for"]
)
CACHE_OBJECTS = frozenset({"django.core.cache.cache"})
CACHE_CLASSES = frozenset({"django.core.cache.backends.base.BaseCache"})
CACHE_MAPPINGS = frozenset({"django.core.cache.caches"})
# names under these are the libraries', never a project helper's
LIBRARY_PREFIXES = ("redis.", "aioredis.", "django.", "django_redis.", "valkey.", "django_valkey.")
_MAX_DEPTH = 8
_MAX_BASES = 64  # classes above one another: deeper, the order is not computed


def build(facts: Iterable[dict[str, Any]]) -> dict[str, str]:
    """``name -> kind`` for every provider whose sources all resolve to one kind.

    Sources may also be ``args:<class>|<position>|<parameter>`` (an
    ``__init__`` parameter stored on ``self``): the kind every call of the
    class passes there, by position (``<class>(@0)``) or keyword
    (``<class>(@client)``), when there is at least one such call and none
    with ``*args``/``**kwargs``.  An attribute a class does not define is
    looked up in its bases (``classes``: bases and defined names), depth
    first from the left: a base that is not recorded, or that defines the
    name as anything unknown, leaves it unknown."""
    raw: dict[str, list[str]] = {}
    classes: dict[str, dict[str, list[str]]] = {}
    for fact in facts:
        if fact.get("kind") == PROVIDERS_FACT:
            for name, sources in fact["providers"].items():
                if not name.startswith(LIBRARY_PREFIXES):
                    raw.setdefault(name, []).extend(sources)
            for name, info in fact.get("classes", {}).items():
                classes.setdefault(name, info)
    resolved: dict[str, str | None] = {}
    orders: dict[str, list[str]] = {}  # class -> its method resolution order

    def kind_of(name: str, depth: int) -> str | None:
        if name in resolved:
            return resolved[name]
        if depth > _MAX_DEPTH:
            return None
        if name not in raw:
            return inherited(name, depth) if name not in classes else None
        resolved[name] = None  # a cycle resolves to unknown
        kinds = {s if s in (REDIS, CACHE) else passed(s, depth) if s.startswith("args:") else kind_of(s, depth + 1)
                 for s in raw[name]}
        resolved[name] = kinds.pop() if len(kinds) == 1 else None
        return resolved[name]

    def passed(source: str, depth: int) -> str | None:
        cls, position, parameter = source[5:].split("|")
        if f"{cls}(@*)" in raw:
            return None
        keys = [k for k in (f"{cls}(@{position})", f"{cls}(@{parameter})") if k in raw]
        kinds = {kind_of(k, depth + 1) for k in keys}
        return kinds.pop() if len(kinds) == 1 else None

    def inherited(name: str, depth: int) -> str | None:
        """``pkg.C.attr`` (or ``pkg.C.meth()``) that ``C`` does not define:
        what the first class of ``C``'s method resolution order that defines
        it gives, as Python looks it up.  A class on the way that is not
        recorded (it may define the name) leaves it unknown."""
        for cls, info in _owners(name, classes):
            attr = name[len(cls) + 1:]
            if attr.partition("(")[0] in info["names"]:
                return None  # defined there, as nothing the index knows
            for base in mro(cls, classes, memo=orders)[1:] or (None,):
                if base not in classes:
                    return None  # not recorded, or no order Python would accept
                if f"{base}.{attr}" in raw:
                    return kind_of(f"{base}.{attr}", depth + 1)
                if attr.partition("(")[0] in classes[base]["names"]:
                    return None
        return None

    index = {name: kind_of(name, 0) for name in raw}
    attrs: dict[str, list[str]] = {}  # class -> the attributes ``raw`` holds of it
    for name in raw:
        owner, _, attr = name.partition("(")[0].rpartition(".")
        if owner in classes:
            attrs.setdefault(owner, []).append(name[len(owner) + 1:])
    for cls in classes:
        for base in mro(cls, classes, memo=orders)[1:]:
            for attr in attrs.get(base, ()):
                if f"{cls}.{attr}" not in index:
                    index[f"{cls}.{attr}"] = kind_of(f"{cls}.{attr}", 0)
    return {name: kind for name, kind in index.items() if kind is not None and "(@" not in name}


# bases whose attributes never hold a client of the project
_BASES_WITHOUT_CLIENTS = ("celery.", "object", "builtins.", "typing.", "abc.", "django.db.models.")


def mro(cls: str, classes: dict[str, dict[str, list[str]]], depth: int = 0,
        memo: dict[str, list[str]] | None = None) -> list[str]:
    """``cls`` and its bases in Python's method resolution order (C3), the
    bases that hold no client left out; a base that is not recorded stands
    for itself alone (its own bases unknown: nothing after it is reached).
    Empty when there is none (an inconsistent hierarchy, a cycle, too deep)."""
    memo = {} if memo is None else memo
    if cls in memo:
        return memo[cls]
    memo[cls] = []  # a cycle: no order
    if depth > _MAX_BASES:
        return []
    memo[cls] = _merged(cls, classes, depth, memo)
    return memo[cls]


def _merged(cls: str, classes: dict[str, dict[str, list[str]]], depth: int, memo: dict[str, list[str]]) -> list[str]:
    bases = [b for b in classes[cls]["bases"] if not b.startswith(_BASES_WITHOUT_CLIENTS)] if cls in classes else []
    lines = [mro(b, classes, depth + 1, memo) if b in classes else [b] for b in bases]
    if any(not line for line in lines) or cls in bases:
        return []
    if len(lines) == 1:  # single inheritance: nothing to merge
        return [] if cls in lines[0] else [cls, *lines[0]]
    # C3 on reversed copies (the head at the end), with a count of where each
    # class still stands in a tail: linear in the lines' total length
    stacks = [line[::-1] for line in (*lines, bases) if line]
    in_tails = Counter(name for stack in stacks for name in stack[:-1])
    out, seen = [cls], {cls}
    while stacks:
        head = next((stack[-1] for stack in stacks if not in_tails[stack[-1]]), None)
        if head is None or head in seen:
            return []
        out.append(head)
        seen.add(head)
        for stack in stacks:
            if stack[-1] == head:
                stack.pop()
                if stack:
                    in_tails[stack[-1]] -= 1
        stacks = [stack for stack in stacks if stack]
    return out


def _owners(name: str, classes: dict[str, dict[str, list[str]]]):
    """The class ``name`` is an attribute of, when it is a recorded class."""
    head = name.partition("(")[0]
    cls = head.rpartition(".")[0]
    if cls in classes:
        yield cls, classes[cls]


def stale(facts: Iterable[dict[str, Any]], index: dict[str, str]) -> bool:
    """A result whose recorded lookups the current index answers differently."""
    for fact in facts:
        if fact.get("kind") == LOOKUPS_FACT:
            if any(index.get(name) != answer for name, answer in fact["lookups"].items()):
                return True
    return False
