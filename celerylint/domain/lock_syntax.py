"""The shapes of lock calls as CPython's ``ast`` sees them: the gates of
CL203 and CL204, which keep files without a lock take or release from
libcst.  No libcst here; ``locks.py`` and the lock rules take their names
from this module."""

from __future__ import annotations

import ast
import re

# "lock" as a word of an identifier or key: lock_key, lockKey, LOCK_ID,
# "lock:order:1", "import-lock", but not block, clock, unlock_at, or an
# account lockout (a throttle).
LOCK_WORD = re.compile(
    r"(?<![a-z])(?:lock(?!out)|mutex|semaphore)|(?:Lock(?!out)|Mutex|Semaphore)|(?<![A-Z])(?:LOCK(?!OUT)|MUTEX|SEMAPHORE)"
)
TAKE_METHODS = frozenset({"set", "setnx", "add", "lock"})
RELEASE_METHODS = frozenset({"delete", "unlink"})
LOCK_CLASSES = frozenset({"redis.lock.Lock", "redis.asyncio.lock.Lock", "redis.Lock",
                          "valkey.lock.Lock", "valkey.asyncio.lock.Lock", "valkey.Lock"})


def _calls(tree: ast.Module):
    """The calls without ``*``/``**`` arguments (the lock rules skip the others)."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and not any(isinstance(a, ast.Starred) for a in node.args)
                and all(k.arg is not None for k in node.keywords)):
            yield node


def _lock_class(call: ast.Call, imported: set[str]) -> bool:
    """``Lock(...)``/``redis.lock.Lock(...)``: an attribute named ``Lock``, or
    a name imported as one of ``LOCK_CLASSES``."""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "Lock") or (isinstance(func, ast.Name) and func.id in imported)


def _lock_class_names(tree: ast.Module) -> set[str]:
    return {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
            for alias in node.names if f"{node.module}.{alias.name}" in LOCK_CLASSES}


def _keywords(call: ast.Call) -> set[str]:
    return {k.arg for k in call.keywords}


def _may_take(calls, imported: set[str], add_needs_timeout: bool) -> bool:
    """A call that may take a lock: ``Lock(...)``, ``.lock(...)``,
    ``.setnx(...)``, ``.add(...)`` (given a timeout, when
    ``add_needs_timeout``), ``.set(...)`` given ``nx``."""
    for call in calls:
        if _lock_class(call, imported):
            return True
        method = call.func.attr if isinstance(call.func, ast.Attribute) else None
        if method in ("lock", "setnx"):
            return True
        if method == "add" and (not add_needs_timeout or "timeout" in _keywords(call) or len(call.args) > 2):
            return True
        if method == "set" and ("nx" in _keywords(call) or len(call.args) > 4):
            return True
    return False


def may_take_without_ttl(tree: ast.Module, text: str) -> bool:
    """A superset of the calls CL203 reports (``lock_expiry.unexpiring_take``):
    a take, ``.add(...)`` only when given a timeout (without one it takes the
    cache's default, which expires)."""
    return _may_take(_calls(tree), _lock_class_names(tree), add_needs_timeout=True)


def may_release_lock(tree: ast.Module, text: str) -> bool:
    """A superset of the files CL204 reports in: a ``.delete(key)`` or
    ``.unlink(key)``, and either a lock word in the text (a key named as a
    lock) or a call that may take one (``locks.lock_take``)."""
    calls = list(_calls(tree))
    if not any(isinstance(c.func, ast.Attribute) and c.func.attr in RELEASE_METHODS and (c.args or c.keywords)
               for c in calls):
        return False
    if LOCK_WORD.search(text) or any(isinstance(n, ast.Constant) and isinstance(n.value, str) and LOCK_WORD.search(n.value)
                                     for n in ast.walk(tree)):
        return True  # the key's code or its string's value (escapes, implicit concatenation) says lock
    return _may_take(calls, _lock_class_names(tree), add_needs_timeout=False)
