"""Which calls take a Redis or cache lock, on which key, with which token and
TTL; and which keys are named like locks.  Shared by the lock rules."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ..context import FileContext
from .calls import arg, code_of, has_star
from .clients import CACHE, LOCK_CLASSES, REDIS, client_kind, receiver
from .values import evaluate

# "lock" as a word of an identifier or key: lock_key, lockKey, LOCK_ID,
# "lock:order:1", "import-lock", but not block, clock, unlock_at, or an
# account lockout (a throttle).
_LOCK_WORD = re.compile(
    r"(?<![a-z])(?:lock(?!out)|mutex|semaphore)|(?:Lock(?!out)|Mutex|Semaphore)|(?<![A-Z])(?:LOCK(?!OUT)|MUTEX|SEMAPHORE)"
)
TAKE_METHODS = frozenset({"set", "setnx", "add", "lock"})
RELEASE_METHODS = frozenset({"delete", "unlink"})


def says_lock(text: str) -> bool:
    return bool(_LOCK_WORD.search(text))


@dataclass(frozen=True)
class LockTake:
    """A call that takes a lock (or may: ``nx``/``setnx``/``add`` are also
    used for markers and throttles; see ``always``)."""

    call: cst.Call
    method: str  # set | setnx | add | lock | Lock
    client: str  # REDIS | CACHE
    key: cst.BaseExpression | None
    token: cst.BaseExpression | None  # the value stored, when the call stores one
    ttl: cst.Arg | None  # the argument that gives the expiry, if any
    ttl_unit: float  # seconds per unit of ``ttl`` (px: 0.001)

    @property
    def always(self) -> bool:
        """``lock()``/``Lock(...)`` are locks whatever the key is called."""
        return self.method in ("lock", "Lock")


def lock_take(call: cst.Call, ctx: FileContext) -> LockTake | None:
    if has_star(call):
        return None
    if ctx.imported_name(call.func) in LOCK_CLASSES:
        name = arg(call, "name", 1)
        return LockTake(call, "Lock", REDIS, name.value if name else None, None, arg(call, "timeout", 2), 1.0)
    found = receiver(call, TAKE_METHODS)
    if found is None:
        return None
    method, target = found
    kind = client_kind(target, ctx)
    if kind is None:
        return None
    key = call.args[0].value if call.args and call.args[0].keyword is None else None
    value = arg(call, "value", 1)
    token = value.value if value is not None else None
    if method == "lock":
        ttl = arg(call, "timeout", 1 if kind == REDIS else None)
        return LockTake(call, method, kind, key, None, ttl, 1.0)
    if method == "setnx":
        return LockTake(call, method, kind, key, token, None, 1.0) if kind == REDIS else None
    if method == "add":
        return LockTake(call, method, kind, key, token, arg(call, "timeout", 2), 1.0) if kind == CACHE else None
    # set(..., nx=True)
    nx = arg(call, "nx", 4 if kind == REDIS else None)
    if nx is None or evaluate(nx.value, ctx) is not True:
        return None
    if kind == CACHE:
        return LockTake(call, method, kind, key, token, arg(call, "timeout", 2), 1.0)
    px = arg(call, "px", 3)
    if px is not None:
        return LockTake(call, method, kind, key, token, px, 0.001)
    return LockTake(call, method, kind, key, token, arg(call, "ex", 2), 1.0)


def key_texts(key: cst.BaseExpression, ctx: FileContext) -> tuple[str, ...]:
    """How a key can be recognised again: its code, and for a variable the
    code of the value it was last assigned."""
    texts = [code_of(key)]
    if isinstance(key, cst.Name):
        bound = ctx.lookup(key.value)
        if bound is not None:
            texts.append(code_of(bound))
    return tuple(texts)


def key_says_lock(key: cst.BaseExpression, ctx: FileContext) -> bool:
    return any(says_lock(t) for t in key_texts(key, ctx))


def stable_texts(key: cst.BaseExpression, ctx: FileContext) -> tuple[str, ...]:
    """The texts of a key that mean the same in every function of a module:
    not a bare variable or parameter, whose name is local to its function."""
    texts = key_texts(key, ctx)
    if isinstance(key, cst.Name):
        texts = texts[1:]
    return tuple(t for t in texts if not t.isidentifier())
