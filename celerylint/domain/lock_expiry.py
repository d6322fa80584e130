"""Which lock takes set no expiry (CL203): the message and fix for each shape."""

from __future__ import annotations

import builtins

import libcst as cst

from ..api.context import FileContext
from ..api.rule import Fix, Replace
from .celeryconf.paths import TEST_PATHS_EXCLUDED  # noqa: F401 - CL203 takes it from here
from .calls import arg, code_of, given, with_keyword
from .clients import CACHE, REDIS
from .guards import Blocks
from .locks import (
    NxCandidate, NxScope, TakeEvidence, expire_statement, key_says_lock, may_name_a_take, setnx_as_set, setnx_fix,
    stable_texts, transactional,
)
from .values import NONE, evaluate



class PendingTakes(TakeEvidence, Blocks):
    """Mixin for CL203: takes without expiry wait for the end of their
    function (a delete or an ``expire`` of the key there makes them locks), or
    of the module (a delete of the same key expression in another function,
    on a client)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.scopes: list[NxScope] = [NxScope()]
        self.module_deleted: set[str] = set()  # stable texts of keys a client deletes anywhere
        self.later: list[NxCandidate] = []
        self.releasers: dict[str, set[int]] = {}  # module function -> positions of the parameters it deletes
        self.calls: list[tuple[str, list[tuple[str, ...]]]] = []  # f(a, b): name, stable texts of each argument
        self.decremented: set[str] = set()  # stable texts of keys a client ``decr``s anywhere (a semaphore's release)
        self.counters: list[NxCandidate] = []  # takes that initialise a counter (see ``_flush``)
        self.if_tests: dict[int, str] = {}  # id of an ``if``'s body -> the code of its test
        self.setnx_receivers: set[str] = set()  # code of objects ``setnx`` was called on (Redis clients)
        self.discarded: set[int] = set()  # ids of calls that are whole statements (their result unused)
        self.module_read: set[str] = set()  # stable texts of keys a client reads anywhere (``get``)
        self.reads_matter = may_name_a_take(ctx.text)  # only a take named for taking asks what is read
        self.named: list[NxCandidate] = []  # takes whose only evidence is their function's name
        # takes on an object not known to be a client: reported once the module
        # calls a Redis-only method on the same receiver expression (``eval``)
        self.tentative: dict[int, str] = {}  # id(call) -> receiver code
        self.unconfirmed: list[tuple[cst.Call, str, Fix | None, str]] = []

    def take_found(self, call: cst.Call, message: str, fix: Fix | None) -> None:
        """A take judged a lock without expiry: reported, or, on an object not
        known to be a Redis client, held until the module has been read."""
        target = self.tentative.get(id(call))
        if target is None:
            self.report(call, message, fix)
        else:
            self.unconfirmed.append((call, message, fix, target))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(NxScope())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._flush(self.scopes.pop())

    def leave_Module(self, original_node: cst.Module) -> None:
        self._flush(self.scopes.pop())
        for name, args in self.calls:  # release_lock(f"job:{id}"): deleted through a helper
            for i in self.releasers.get(name, ()):
                if i < len(args):
                    self.module_deleted.update(args[i])
        for c in self.later:
            if any(t in self.module_deleted for t in c.stable):
                self.take_found(c.call, c.message, c.fix)
        for c in self.named:  # ``claim_bonus``: a marker when the file reads the key and never deletes it
            if not (any(t in self.module_read for t in c.stable) and not any(t in self.module_deleted for t in c.stable)):
                self.take_found(c.call, c.message, c.fix)
        for c in self.counters:  # a counting semaphore: incremented to take, decremented to release
            if any(t in self.decremented for t in c.stable):
                self.take_found(c.call, c.message, c.fix)
        for call, message, fix, target in self.unconfirmed:  # ``self.conn.set(..., nx=True)`` of an unknown object
            if target in self.setnx_receivers:
                self.report(call, message, fix)

    def _flush(self, scope: NxScope) -> None:
        for c in scope.candidates:
            if c.key in scope.incremented:
                # ``cache.add(key, 0, None)`` then ``cache.incr(key)``: the value
                # initialises a counter, and no lock is held by the add; a
                # semaphore tests what ``incr`` returns (``incr(key) <= 3``)
                if c.key in scope.tested:
                    self.counters.append(c)
                continue
            expired = c.call.func.attr.value == "setnx" and c.key in scope.expires
            if expired and c.pipeline and any(code_of(e.func.value) == c.pipeline for _, e, _ in scope.expires[c.key]):
                continue  # ``pipe.setnx(k, v); pipe.expire(k, t)`` on a transactional pipeline: one MULTI/EXEC
            if c.named and not (c.key in scope.deleted or expired):
                self.named.append(c)
            elif c.lockish or c.key in scope.deleted or expired:
                guarded = expired and c.key in scope.guarded_expires
                fix = setnx_fix(c.call, scope.expires[c.key], self.ttl) if expired and not guarded else c.fix
                if guarded:
                    fix = None
                self.take_found(c.call, c.message, fix)
            elif c.stable:
                self.later.append(c)

    def visit_If(self, node: cst.If) -> None:
        super().visit_If(node)
        self.if_tests[id(node.body)] = code_of(node.test)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.discarded.update(id(s.value) for s in node.body if isinstance(s, cst.Expr) and isinstance(s.value, cst.Call))
        call = expire_statement(node)
        if call is not None:
            removable = bool(self.blocks) and len(self.blocks[-1].body) > 1
            key = code_of(call.args[0].value)
            self.scopes[-1].expires.setdefault(key, []).append((node, call, removable))
            # ``if self.expire: r.expire(key, self.expire)``: an expiry that may
            # be 0 (or None), so no TTL at all; no ``set(..., ex=...)`` can say that
            test = self.if_tests.get(id(self.blocks[-1])) if self.blocks else None
            if test is not None and len(call.args) > 1 and code_of(call.args[1].value) in test:
                self.scopes[-1].guarded_expires.add(key)

    def note_delete(self, node: cst.Call, on_client: bool) -> None:
        function = self.ctx.function if len(self.ctx.functions) == 1 else None
        params = [p.name.value for p in function.params.params] if function is not None else []
        for a in node.args:
            self.scopes[-1].deleted.add(code_of(a.value))
            if on_client:
                self.module_deleted.update(stable_texts(a.value, self.ctx))
                if isinstance(a.value, cst.Name) and a.value.value in params and self.ctx.lookup(a.value.value) is None:
                    self.releasers.setdefault(function.name.value, set()).add(params.index(a.value.value))

    def note_setnx_receiver(self, target: cst.BaseExpression) -> None:
        self.setnx_receivers.add(code_of(target))

    def setnx_receiver(self, target: cst.BaseExpression) -> bool:
        """Whether ``setnx`` was called on this receiver expression so far
        (``self.client`` in ``acquire``, then its ``delete`` in ``release``)."""
        return code_of(target) in self.setnx_receivers

    def note_count(self, node: cst.Call, method: str) -> None:
        """``incr``/``decr`` of a key on a client: a counter, not a lock (unless its
        ``incr`` is tested and it is decremented: a semaphore)."""
        if not node.args:
            return
        key = node.args[0].value
        if method.startswith("incr"):
            self.scopes[-1].incremented.add(code_of(key))
            if id(node) not in self.discarded:
                self.scopes[-1].tested.add(code_of(key))
        else:
            self.decremented.update(stable_texts(key, self.ctx))

    def note_call(self, node: cst.Call) -> None:
        """A call of a plain name, in case it is a helper that deletes its argument."""
        if (isinstance(node.func, cst.Name) and node.args and node.func.value not in _NOT_HELPERS
                and node.func.value not in self.ctx.imports  # releasers are functions of this module
                and all(a.keyword is None and not a.star for a in node.args)):
            self.calls.append((node.func.value, [stable_texts(a.value, self.ctx) for a in node.args]))

    def candidate(self, node: cst.Call, message: str, fix: Fix | None) -> None:
        key = node.args[0].value if node.args else None
        text, lockish = (code_of(key), key_says_lock(key, self.ctx)) if key is not None else (None, False)
        named = not lockish and not self.acted_evidence(node) and self.named_take()
        lockish = lockish or self.acted_evidence(node)
        stable = stable_texts(key, self.ctx) if key is not None else ()
        target = node.func.value if isinstance(node.func, cst.Attribute) else None
        pipeline = code_of(target) if target is not None and transactional(target, self.ctx) else None
        self.scopes[-1].candidates.append(NxCandidate(node, text, message, lockish, fix, stable, named, pipeline))

    def note_read(self, node: cst.Call) -> None:
        """``get`` of a key on a client: the key holds data someone reads."""
        if node.args:
            self.module_read.update(stable_texts(node.args[0].value, self.ctx))


_NOT_HELPERS = frozenset(dir(builtins))  # print(key), str(key): never a module's release helper


def add_keyword_fix(node: cst.Call, keyword: str, ttl: str) -> Fix:
    return Fix(f"add `{keyword}={ttl}`", (Replace(node, with_keyword(node, keyword, ttl)),))


def replace_value_fix(a: cst.Arg, keyword: str, ttl: str) -> Fix:
    return Fix(f"set `{keyword}` to {ttl} seconds", (Replace(a.value, cst.Integer(ttl)),))


def redis_lock_take(node: cst.Call, ctx: FileContext, ttl: str) -> tuple[str, Fix] | None:
    """A Django cache's ``lock()`` read as python-redis-lock's cache backend
    has it (``redis_lock.django_cache.RedisCache.lock(key, expire=None, id=None)``):
    its expiry is ``expire``, a ``timeout`` keyword is a ``TypeError``."""
    expire = arg(node, "expire", 1)
    if given(expire, ctx):
        return None
    what = "python-redis-lock's `cache.lock()`"
    if expire is not None:
        return (f"{what} with `expire=None`: a worker that dies holding it blocks the lock forever",
                replace_value_fix(expire, "expire", ttl))
    return f"{what} without `expire`: a worker that dies holding it blocks the lock forever", add_keyword_fix(node, "expire", ttl)


def unexpiring_take(node: cst.Call, method: str, kind: str, ctx: FileContext,
                    ttl: str) -> tuple[str, Fix | None, bool] | None:
    """``(message, fix, always)`` for a take on a ``kind`` client that sets no
    expiry; ``always``: a lock whatever its key (``lock()``), else only with
    evidence that it is one."""
    if method == "lock":
        timeout = arg(node, "timeout", 1 if kind == REDIS else None)
        if given(timeout, ctx):
            return None
        what = "`lock()`" if kind == REDIS else "django-redis `cache.lock()`"
        if timeout is not None:  # ``timeout=None`` written: a lock that never expires, on purpose or not
            return (f"{what} with `timeout=None`: a worker that dies holding it blocks the lock forever",
                    replace_value_fix(timeout, "timeout", ttl), True)
        return (f"{what} without `timeout`: a worker that dies holding it blocks the lock forever",
                add_keyword_fix(node, "timeout", ttl), True)
    if method == "setnx" and kind == REDIS:
        return ("`setnx` sets no expiry (and an `expire` after it is not atomic with it): a worker that dies "
                "holding the lock blocks it forever",
                Fix(f"use `set(..., nx=True, ex={ttl})`", (Replace(node, setnx_as_set(node, "ex", ttl)),)), False)
    if method == "add" and kind == CACHE:
        timeout = arg(node, "timeout", 2)
        if timeout is not None and evaluate(timeout.value, ctx) is NONE:
            return ("`cache.add(..., timeout=None)` takes a lock that never expires: a worker that dies holding it "
                    "blocks it forever", replace_value_fix(timeout, "timeout", ttl), False)
        return None
    if method != "set":
        return None
    if kind == REDIS:
        nx = arg(node, "nx", 4)
        if nx is None or evaluate(nx.value, ctx) is not True:
            return None
        ttls = [arg(node, "ex", 2), arg(node, "px", 3), arg(node, "exat", 9), arg(node, "pxat", 10)]
        if any(given(t, ctx) for t in ttls):
            return None
        ex = ttls[0]
        fix = replace_value_fix(ex, "ex", ttl) if ex is not None else add_keyword_fix(node, "ex", ttl)
        return ("`SET ... NX` without `ex`/`px`: a lock that never expires, so a worker that dies holding it "
                "blocks it forever", fix, False)
    # django-redis cache.set(key, value, timeout=None, nx=True)
    nx = arg(node, "nx", None)
    timeout = arg(node, "timeout", 2)
    if nx is None or evaluate(nx.value, ctx) is not True or timeout is None:
        return None
    if evaluate(timeout.value, ctx) is NONE:
        return ("`cache.set(..., timeout=None, nx=True)` takes a lock that never expires",
                replace_value_fix(timeout, "timeout", ttl), False)
    return None
