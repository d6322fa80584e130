"""Which calls take a Redis or cache lock, on which key, with which token and
TTL; and which keys are named like locks.  Shared by the lock rules."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from ..api.context import FileContext
from .calls import arg, code_of, has_star, with_keyword
from .keys import spelled
from .clients import CACHE, REDIS, client_kind, receiver
from .values import evaluate, seconds
from ..api.rule import Fix, RemoveLines, Replace

from .lock_syntax import LOCK_CLASSES, LOCK_WORD, RELEASE_METHODS, TAKE_METHODS  # noqa: F401 - RELEASE_METHODS: for CL204, CL205
# Lock.extend/reacquire, EXPIRE/PEXPIRE, Django cache touch(): a function
# that calls one of these renews the TTL as it goes.
RENEW_METHODS = frozenset({"extend", "reacquire", "expire", "pexpire", "touch"})


def says_lock(text: str) -> bool:
    return bool(LOCK_WORD.search(text))


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
    kind = client_kind(target, ctx, conditional=True)
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
    built = spelled(key, ctx)  # job:{id}, however the string was built (keys.py)
    if built is not None:
        texts.append("key:" + built)
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


# KEYS[1] is deleted only while it still holds ARGV[1], the caller's token
# (the script of redis-py's Lock.release and of the Redis documentation).
RELEASE_SCRIPT = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def compare_and_delete(delete: cst.Call, key: cst.BaseExpression, token: cst.Name) -> cst.Call:
    """``client.delete(key)`` rewritten as ``client.eval(RELEASE_SCRIPT, 1, key, token)``."""
    script = cst.SimpleString(repr(RELEASE_SCRIPT))
    new = delete.with_changes(
        func=delete.func.with_changes(attr=cst.Name("eval")),
        args=[cst.Arg(script), cst.Arg(cst.Integer("1")), cst.Arg(key), cst.Arg(cst.Name(token.value))],
    )
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return new.with_changes(args=[a.with_changes(comma=comma) for a in new.args[:-1]] + [new.args[-1]])


# Functions that handle locks, by name: a key taken in one and deleted in
# another counts as a lock only when one of them is named so (otherwise it
# may be a "seen" marker and its reset).  A context manager's
# ``__enter__`` takes what the ``with`` block holds (its ``__exit__`` alone is not
# lock handling: a key another method takes may be a marker it resets).
LOCK_HANDLING = re.compile(r"acquire|release|unlock|^__a?enter__$", re.IGNORECASE)


def handles_locks(function_name: str) -> bool:
    """The function's name says it takes or releases locks."""
    return says_lock(function_name) or bool(LOCK_HANDLING.search(function_name))


@dataclass
class LockHelper:
    """A module function that takes a lock whose TTL is one of its parameters:
    ``def acquire_lock(key, ttl=30): ... set(key, token, nx=True, ex=ttl)``."""

    take: LockTake
    param: str
    position: int | None  # of the parameter, when it can be passed positionally
    default: float | None  # seconds


def lock_helper(node: cst.FunctionDef, take: LockTake, ctx: FileContext) -> LockHelper | None:
    name = take.ttl.value.value
    params = list(node.params.params)
    for i, p in enumerate([*params, *node.params.kwonly_params]):
        if p.name.value == name:
            default = seconds(evaluate(p.default, ctx)) if p.default is not None else None
            return LockHelper(take, name, i if i < len(params) else None, default)
    return None


def expire_statement(stmt: cst.SimpleStatementLine) -> cst.Call | None:
    """The ``expire``/``pexpire`` call (awaited or not) a statement consists of."""
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return None
    call = stmt.body[0].value
    if isinstance(call, cst.Await):
        call = call.expression
    if isinstance(call, cst.Call) and receiver(call, {"expire", "pexpire"}) and call.args:
        return call
    return None


def setnx_as_set(node: cst.Call, keyword: str, ttl: str) -> cst.Call:
    """``client.setnx(k, v)`` as ``client.set(k, v, nx=True, <keyword>=<ttl>)``."""
    renamed = node.with_changes(func=node.func.with_changes(attr=cst.Name("set")))
    return with_keyword(with_keyword(renamed, "nx", "True"), keyword, ttl)



# A value that only this call's caller knows: what a lock holder stores to
# recognise its own lock (a "done" marker stores a constant or a result).
FRESH_TOKENS = frozenset({
    "uuid.uuid4", "uuid.uuid1", "secrets.token_hex", "secrets.token_urlsafe", "secrets.token_bytes",
    "os.urandom", "uuid.uuid4.hex",
})
# Function names that take a lock: acquire_x, lock_x, claim_x, take_x, grab_x
# (as words of the name, not "mistake" or "reclaimed").
_TAKING = re.compile(r"(?:^|_)(?:acquire|lock|claim|take|grab|try_lock|mutex)(?:_|$)|^(?:acquire|lock|claim|take|grab)[A-Z]",
                     re.IGNORECASE)


def is_fresh_token(node: cst.BaseExpression | None, ctx: FileContext, depth: int = 0) -> bool:
    """``uuid4()``, ``str(uuid.uuid4())``, ``uuid4().hex``, ``f"{uuid4()}"``,
    ``secrets.token_hex(16)``, or a variable last assigned one."""
    if node is None or depth > 4:
        return False
    if isinstance(node, cst.Call):
        if ctx.imported_name(node.func) in FRESH_TOKENS:
            return True
        if isinstance(node.func, cst.Name) and node.func.value in ("str", "bytes") and len(node.args) == 1:
            return is_fresh_token(node.args[0].value, ctx, depth + 1)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("encode", "decode"):
            return is_fresh_token(node.func.value, ctx, depth + 1)
        return False
    if isinstance(node, cst.Attribute) and node.attr.value in ("hex", "bytes", "int"):
        return is_fresh_token(node.value, ctx, depth + 1)
    if isinstance(node, cst.FormattedString):  # f"{uuid4()}", not a file name made from one
        return (len(node.parts) == 1 and isinstance(node.parts[0], cst.FormattedStringExpression)
                and is_fresh_token(node.parts[0].expression, ctx, depth + 1))
    if isinstance(node, cst.Name):
        bound = ctx.lookup(node.value)
        return bound is not None and is_fresh_token(bound, ctx, depth + 1)
    return False


# a ``def`` whose name is one ``names_a_take`` accepts, in a module's text
_TAKING_DEF = re.compile(r"\bdef[ \t]+(?:\w*_)?(?:acquire|lock|claim|take|grab|try_lock|mutex)(?:_\w*)?[ \t]*\("
                         r"|\bdef[ \t]+(?:acquire|lock|claim|take|grab)[A-Z]\w*[ \t]*\(", re.IGNORECASE)


def may_name_a_take(text: str) -> bool:
    """Whether some function of the module may be named for taking (a cheap
    test of the text before anything is tracked for ``names_a_take``)."""
    return _TAKING_DEF.search(text) is not None


def names_a_take(function_name: str) -> bool:
    """The function's name says it takes something exclusively (acquire, lock, claim, take, grab)."""
    return bool(_TAKING.search(function_name))


def negated_call(test: cst.BaseExpression) -> cst.Call | None:
    """The call ``c`` of a test ``not c`` / ``not await c``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = test.expression.expression if isinstance(test.expression, cst.Await) else test.expression
        return inner if isinstance(inner, cst.Call) else None
    return None


class TakeEvidence:
    """Mixin for a checker: is a ``SET NX`` a lock, whatever its key is
    called?  Yes when it stores a fresh token, when the function is named
    for taking (``acquire``, ``lock``, ``claim``, ``take``, ``grab``), or
    when its failure retries the task, sleeps, or spins (``while not
    r.set(...)``).  A bare ``raise`` on failure is no evidence: a "done"
    marker raises too."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.retried: set[int] = set()  # takes whose failure retries, waits or spins

    def visit_If(self, node: cst.If) -> None:
        take = negated_call(node.test)
        if take is not None and any(w in code_of(node.body) for w in (".retry(", "sleep(")):
            self.retried.add(id(take))

    def visit_While(self, node: cst.While) -> None:
        take = negated_call(node.test)
        if take is not None:
            self.retried.add(id(take))

    def take_evidence(self, call: cst.Call) -> bool:
        return self.acted_evidence(call) or self.named_take()

    def acted_evidence(self, call: cst.Call) -> bool:
        """What the code does says lock: a fresh token, a retry or a wait."""
        value = arg(call, "value", 1)
        return id(call) in self.retried or (value is not None and is_fresh_token(value.value, self.ctx))

    def named_take(self) -> bool:
        return names_a_take(self.ctx.function.name.value if self.ctx.function else "")


@dataclass
class NxCandidate:
    """A take without expiry that CL203 reports once it is known to be a lock."""

    call: cst.Call
    key: str | None
    message: str
    lockish: bool
    fix: Fix | None
    stable: tuple[str, ...] = ()  # texts of the key that mean the same in every function
    named: bool = False  # the only evidence is the function's name (``claim_x``): see PendingTakes
    pipeline: str | None = None  # the receiver's text, when it is a transactional pipeline (``transactional``)


@dataclass
class NxScope:
    candidates: list[NxCandidate] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)
    # key -> (statement, expire call, whether the statement can be deleted)
    expires: dict[str, list[tuple[cst.SimpleStatementLine, cst.Call, bool]]] = field(default_factory=dict)
    incremented: set[str] = field(default_factory=set)  # keys this function ``incr``s: counters
    tested: set[str] = field(default_factory=set)  # of those, keys whose ``incr`` result is used (a semaphore's take)
    guarded_expires: set[str] = field(default_factory=set)  # keys expired only ``if <the TTL>:``


def transactional(target: cst.BaseExpression, ctx: FileContext) -> bool:
    """A name bound to ``<client>.pipeline()`` with redis-py's default
    ``transaction=True``: its commands run in one MULTI/EXEC, so a ``setnx``
    and an ``expire`` queued on it are atomic."""
    if not isinstance(target, cst.Name):
        return False
    bound = ctx.lookup(target.value)
    if not (isinstance(bound, cst.Call) and isinstance(bound.func, cst.Attribute) and bound.func.attr.value == "pipeline"):
        return False
    flag = arg(bound, "transaction", 0)
    return flag is None or evaluate(flag.value, ctx) is True


def setnx_fix(node: cst.Call, expires: list[tuple[cst.SimpleStatementLine, cst.Call, bool]], default_ttl: str) -> Fix:
    """``setnx`` + ``expire`` as one ``set(..., nx=True, ex=<the expire's TTL>)``."""
    stmt, expire, removable = expires[0]
    ttl = code_of(expire.args[1].value) if len(expire.args) > 1 else default_ttl
    keyword = "px" if expire.func.attr.value == "pexpire" else "ex"
    edits = (Replace(node, setnx_as_set(node, keyword, ttl)), *((RemoveLines(stmt),) if removable else ()))
    return Fix(f"replace `setnx` + `expire` with one `set(..., nx=True, {keyword}={ttl})`", edits)
