"""What CL204 remembers about the deletes of a module, and its fix."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..api.context import FileContext
from ..api.rule import Fix, Replace
from .calls import arg, code_of
from .clients import CACHE, REDIS
from .guards import IfGuards
from .lock_expiry import TEST_PATHS_EXCLUDED  # noqa: F401 - CL204 takes it from here
from .celeryconf.settings import is_test_path
from .locks import LockTake, compare_and_delete, handles_locks, key_says_lock, key_texts, stable_texts
from .task_classes import effective_options
from .tasks import function_task_options
from .values import evaluate, seconds


@dataclass
class TakeScope:
    takes: dict[str, LockTake] = field(default_factory=dict)  # key text -> take, in source order
    read: dict[str, set[str]] = field(default_factory=dict)  # variable -> key texts it was read from (x = r.get(k))
    branches: dict[int, tuple] = field(default_factory=dict)  # id of a take's call -> the branches it is in
    # a flag of the take (``held = True`` where the take succeeded): name ->
    # the branches of each ``= True``; ``unflagged``: names bound to anything else
    flags: dict[str, list[tuple]] = field(default_factory=dict)
    unflagged: set[str] = field(default_factory=set)


# A block the traversal is in that not every run of the function enters: an
# ``if``/``elif`` body (with its ``If``, whose test may hold the take),
# an ``else`` body or an ``except`` handler (``None``).
Branch = tuple[int, "cst.If | None"]


@dataclass
class Delete:
    call: cst.Call
    key: cst.BaseExpression
    texts: tuple[str, ...]
    stable: tuple[str, ...]
    named: bool
    handler: bool  # the deleting function's name says it handles locks
    take: LockTake | None  # the lock this function took on the same key before
    fix: Fix | None
    kind: str = REDIS  # of the client the delete is sent to
    of_parameter: bool = False  # a lock-handling function deletes its parameter: release_lock(key)
    parameter: tuple[str, str, int] | None = None  # (class, method, position): a method deletes its parameter
    outlives_task: bool = False  # the task that took it is killed before its TTL ends (``outlives``)
    branches: tuple[Branch, ...] = ()  # the branches the delete is in
    kept: bool = False  # its function keeps the key on some path: a marker (``_mark_kept``)
    enumerated: bool = False  # the key is the variable of a ``for`` loop around the delete: a bulk delete
    app_limited: float | None = None  # the take's TTL, when only the app's time limit can outlive it (``app_limited``)


def release_fix(node: cst.Call, key: cst.BaseExpression, take: LockTake | None, ctx: FileContext) -> Fix | None:
    """The compare-and-delete, when this function took the lock on a Redis
    client and stored a variable (the token) in it."""
    if take is None or take.client != REDIS or not isinstance(take.token, cst.Name):
        return None
    if evaluate(take.token, ctx) is not None:
        return None  # a constant is not a token: every worker stores the same
    return Fix("release with a compare-and-delete script", (Replace(node, compare_and_delete(node, key, take.token)),))


def outlives(take: LockTake | None, ctx: FileContext) -> bool:
    """The lock's TTL is at least the hard ``time_limit`` of the task whose
    body took it (its decorator's option, or its ``base=`` class's in this
    file): the worker is killed before the lock can expire, and a killed
    process runs no ``finally``, so the delete never meets another holder's
    lock.  Unknown TTL or limit: False."""
    func = ctx.function
    if take is None or take.ttl is None or func is None:
        return False
    options = function_task_options(func, ctx)
    if options is None:
        return False
    limit = seconds(evaluate(effective_options(options, ctx).get("time_limit"), ctx))
    ttl = seconds(evaluate(take.ttl.value, ctx))
    return limit is not None and ttl is not None and ttl * take.ttl_unit >= limit


def app_limited(take: LockTake | None, ctx: FileContext) -> float | None:
    """The TTL in seconds of the lock a task took in its own body, when the
    task sets no hard ``time_limit`` of its own: the app's ``task_time_limit``
    then decides whether the worker is killed before the lock can expire
    (``outlives``), which the project phase judges (``conditions.py``)."""
    func = ctx.function
    if take is None or take.ttl is None or func is None:
        return None
    options = function_task_options(func, ctx)
    if options is None or "time_limit" in effective_options(options, ctx):
        return None
    ttl = seconds(evaluate(take.ttl.value, ctx))
    return ttl * take.ttl_unit if ttl is not None else None


class TakeTracker(IfGuards):
    """Mixin for CL204: the lock takes of each function (by key text) and of
    the module (stable key texts), and the deletes to judge at its end."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.scopes: list[TakeScope] = [TakeScope()]
        self.module_keys: dict[str, bool] = {}  # stable key text -> taken in a lock-handling function
        self.deletes: list[Delete] = []
        self.statements: set[int] = set()  # ids of calls whose result is discarded
        self.takers: list[str] = []  # lock-handling functions that take their parameter: acquire_lock(key)
        # ``self._drop(key)`` with ``key`` taken in the calling method: (class, method, position) -> caller
        self.passed: dict[tuple[str, str, int], str] = {}
        self.branch_kinds: dict[int, cst.If | None] = {}  # id of a block -> its branch (``Branch``)
        self.branches: list[Branch] = []
        self.loop_names: list[set[str]] = []  # the names each enclosing ``for`` binds
        self.stored: set[str] = set()  # stable key texts a plain ``set`` (no NX) writes: records, not takes
        self.swapped: set[str] = set()  # those ``getset`` writes: a timestamp lock's atomic take

    def visit_For(self, node: cst.For) -> None:
        self.loop_names.append({n.value for n in _names(node.target)})

    def leave_For(self, original_node: cst.For) -> None:
        self.loop_names.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(TakeScope())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._mark_kept(self.scopes.pop())

    def visit_If(self, node: cst.If) -> None:
        super().visit_If(node)
        self.branch_kinds[id(node.body)] = node
        if isinstance(node.orelse, cst.Else):
            self.branch_kinds[id(node.orelse.body)] = None

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self.branch_kinds[id(node.body)] = None

    def _enter_block(self, node) -> None:
        super()._enter_block(node)
        if id(node) in self.branch_kinds:
            self.branches.append((id(node), self.branch_kinds[id(node)]))

    def _leave_block(self, node) -> None:
        super()._leave_block(node)
        if self.branch_kinds.pop(id(node), False) is not False:
            self.branches.pop()

    visit_IndentedBlock = visit_SimpleStatementSuite = _enter_block
    leave_IndentedBlock = leave_SimpleStatementSuite = _leave_block

    def _mark_kept(self, scope: TakeScope) -> None:
        """A key this function takes and deletes only in branches the take
        does not decide (an ``except`` handler, an ``else``, an ``if`` on
        something else): some run ends with the key still set, so it is a
        marker that expires by its TTL (a debounce, a once-per-period
        guard), and a delete that undoes it on a failure is no lock release."""
        takes = {id(t.call): t for t in scope.takes.values()}
        deletes: dict[int, list[Delete]] = {}
        for d in self.deletes:
            if d.take is not None and id(d.take.call) in takes:
                deletes.setdefault(id(d.take.call), []).append(d)
        flags = {name: sets for name, sets in scope.flags.items() if name not in scope.unflagged}
        for taken, mine in deletes.items():
            held = scope.branches.get(taken, ())
            if all(_off_the_taken_path(d, held, takes[taken].call, flags) for d in mine):
                for d in mine:
                    d.kept = True

    def visit_Assign(self, node: cst.Assign) -> None:
        texts = read_key(node.value, self.ctx)
        if texts and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.scopes[-1].read.setdefault(node.targets[0].target.value, set()).update(texts)
        scope = self.scopes[-1]
        for target in node.targets:
            for name in _names(target.target):
                if isinstance(node.value, cst.Name) and node.value.value == "True":
                    scope.flags.setdefault(name.value, []).append(tuple(self.branches))
                elif not (isinstance(node.value, cst.Name) and node.value.value == "False"):
                    scope.unflagged.add(name.value)

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value.expression if isinstance(node.value, cst.Await) else node.value
        self.statements.add(id(value))

    def note_take(self, node: cst.Call, take: LockTake) -> None:
        """A take whose result is used (or a ``lock()``) holds its key; so
        does one in a context manager's ``__enter__``, whose result may be
        discarded: its ``__exit__`` releases what it took."""
        if take.key is not None and (take.always or id(node) not in self.statements or self._entering()):
            for text in key_texts(take.key, self.ctx):
                self.scopes[-1].takes.setdefault(text, take)
            self.scopes[-1].branches.setdefault(id(node), tuple(self.branches))
            for text in stable_texts(take.key, self.ctx):
                self.module_keys[text] = self.module_keys.get(text, False) or self.handler()
            if self._parameter(take.key) and self.handler():
                self.takers.append(self.ctx.function.name.value)

    def note_delete(self, node: cst.Call, kind: str) -> None:
        """A delete on a ``kind`` client, judged at the end of the module
        (not in a test file: a test clears its fixtures' locks)."""
        if is_test_path(self.ctx.path):
            return
        for a in node.args:
            if a.keyword is not None or any(compares_holder(test, a.value, self.ctx, self.scopes[-1].read)
                                           for test in self.guards):
                continue
            texts = key_texts(a.value, self.ctx)
            take = next((self.scopes[-1].takes[t] for t in texts if t in self.scopes[-1].takes), None)
            fix = release_fix(node, a.value, take, self.ctx) if kind == REDIS and len(node.args) == 1 else None
            self.deletes.append(Delete(node, a.value, texts, stable_texts(a.value, self.ctx),
                                       key_says_lock(a.value, self.ctx), self.handler(), take, fix, kind,
                                       self._parameter(a.value) and self.handler(), self._position(a.value),
                                       outlives(take, self.ctx), tuple(self.branches),
                                       enumerated=isinstance(a.value, cst.Name)
                                       and any(a.value.value in names for names in self.loop_names),
                                       app_limited=app_limited(take, self.ctx)))

    def note_store(self, node: cst.Call, method: str) -> None:
        """``<client>.set(key, value)`` without NX, seen by the rule: the key
        is overwritten whoever holds it, so this module keeps a record
        under it (an editor's lock id the caller checks), not an exclusive
        take, and its name alone makes it no lock; unless the module also
        swaps it with ``getset``, the take of a timestamp lock (its ``set``
        the heartbeat that keeps it)."""
        key = arg(node, "key", 0) or arg(node, "name", None)  # Django's cache names it ``key``, redis-py ``name``
        if key is not None:
            (self.swapped if method == "getset" else self.stored).update(stable_texts(key.value, self.ctx))

    def note_pass(self, node: cst.Call) -> None:
        """``self.<method>(key)`` / ``cls.<method>(key)`` in a method, or
        ``<module function>(..., key)`` in any function, that took ``key`` as
        a lock: the method or function receives the held key."""
        func = node.func
        caller = self.ctx.function
        if caller is None or not self.scopes[-1].takes:
            return
        if (self.ctx.classes and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value in ("self", "cls")):
            owner, name = self.ctx.classes[-1].name.value, func.attr.value
        elif isinstance(func, cst.Name) and func.value in self.ctx.module_functions and self.ctx.lookup(func.value) is None:
            owner, name = "", func.value
        else:
            return
        for index, a in enumerate(node.args):
            if a.keyword is not None or a.star:
                return
            if any(t in self.scopes[-1].takes for t in key_texts(a.value, self.ctx)):
                self.passed.setdefault((owner, name, index), caller.name.value)

    def _position(self, key: cst.BaseExpression) -> tuple[str, str, int] | None:
        """``(class, method, position)`` when ``key`` is a positional parameter (after
        ``self``/``cls``) of the method of a class it is used in, unchanged there;
        ``("", function, position)`` for a function of the module."""
        function = self.ctx.function
        if function is None or not self._parameter(key):
            return None
        names = [p.name.value for p in function.params.params]
        if self.ctx.module is not None and any(s is function for s in self.ctx.module.body):
            return ("", function.name.value, names.index(key.value)) if key.value in names else None
        if not self.ctx.classes or not names or names[0] not in ("self", "cls") or key.value not in names[1:]:
            return None
        return self.ctx.classes[-1].name.value, function.name.value, names.index(key.value) - 1

    def _parameter(self, key: cst.BaseExpression) -> bool:
        """``key`` is a parameter of the function it is used in, unchanged there."""
        function = self.ctx.function
        return (function is not None and isinstance(key, cst.Name) and self.ctx.lookup(key.value) is None
                and key.value in {p.name.value for p in (*function.params.params, *function.params.kwonly_params)})

    def _entering(self) -> bool:
        """The current function is the ``__enter__``/``__aenter__`` of a context manager."""
        function = self.ctx.function
        return (function is not None and function.name.value in ("__enter__", "__aenter__") and bool(self.ctx.classes)
                and any(s is function for s in self.ctx.classes[-1].body.body) and _context_manager(self.ctx.classes[-1]))

    def handler(self) -> bool:
        """The current function handles locks: by its name, or as a method of
        a context manager (a class with ``__enter__`` and ``__exit__``): what
        such a class takes with ``SET NX`` is held for the ``with`` block,
        and its ``__exit__`` releases it."""
        function = self.ctx.function
        if function is None:
            return False
        if handles_locks(function.name.value):
            return True
        return bool(self.ctx.classes) and any(s is function for s in self.ctx.classes[-1].body.body) \
            and _context_manager(self.ctx.classes[-1])

    def why_lock(self, d: Delete) -> str | None:
        if d.outlives_task or d.kept:
            return None
        if d.take is not None:
            return f"was taken with `{d.take.method}` in this function"
        if any(t in self.module_keys and (d.handler or self.module_keys[t]) for t in d.stable):
            return "is taken as a lock elsewhere in this module"
        # a loop deleting many keys clears them (an operator's cleanup); a key this
        # module overwrites with a plain ``set`` is a record kept there
        record = any(t in self.stored for t in d.stable) and not any(t in self.swapped for t in d.stable)
        if d.named and not d.enumerated and not record:
            return "is named as a lock"
        if d.of_parameter and self.takers:
            return f"`{self.takers[0]}()` of this module takes as a lock"
        if d.parameter is not None and d.parameter in self.passed:
            return f"`{self.passed[d.parameter]}()` takes as a lock and passes here"
        return None


def _names(target: cst.BaseExpression):
    """The names a ``for`` target binds (``key``, ``key, value``)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names(element.value)


def _context_manager(cls: cst.ClassDef) -> bool:
    names = {s.name.value for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    return bool(names & {"__enter__", "__aenter__"}) and bool(names & {"__exit__", "__aexit__"})


def compares_holder(test: cst.BaseExpression, key: cst.BaseExpression, ctx: FileContext,
                    read: dict[str, set[str]]) -> bool:
    """``if r.get(key) == token:``, or a comparison of a variable read with
    ``r.get(key)`` in this function (``val = r.get(key)``; ``if
    str(val).strip() == token:``): the delete below it is a
    compare-then-delete.  Not atomic, but not the blind delete CL204 is
    about, and its message would be wrong."""
    if isinstance(test, cst.BooleanOperation):
        return compares_holder(test.left, key, ctx, read) or compares_holder(test.right, key, ctx, read)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    if not isinstance(test.comparisons[0].operator, (cst.Equal, cst.Is)):
        return False
    wanted = set(key_texts(key, ctx))
    return any(isinstance(n, cst.Name) and wanted & read.get(n.value, set())
               or wanted & set(read_key(n, ctx)) for n in _nodes(test))


def read_key(node: cst.CSTNode, ctx: FileContext) -> tuple[str, ...]:
    """The key texts of ``node`` when it is ``<x>.get(key)`` (awaited or not)."""
    if isinstance(node, cst.Await):
        node = node.expression
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get" and node.args:
        return key_texts(node.args[0].value, ctx)
    return ()


def _off_the_taken_path(d: Delete, held: tuple[Branch, ...], take: cst.Call,
                        flags: dict[str, list[tuple]]) -> bool:
    """The delete is in a branch the take's own branches do not include, other
    than the body of an ``if`` the take decides (``_decided``)."""
    return any(branch not in held and not _decided(branch, take, flags) for branch in d.branches)


def _decided(branch: Branch, take: cst.Call, flags: dict[str, list[tuple]]) -> bool:
    """An ``if`` whose test is the take (``if r.set(k, nx=True):``), or a flag
    the function sets to True only where the take succeeded
    (``if r.set(k, nx=True): held = True``, later ``if held:``)."""
    test = branch[1].test if branch[1] is not None else None
    if test is None:
        return False
    if any(n is take for n in _nodes(test)):
        return True
    sets = flags.get(test.value) if isinstance(test, cst.Name) else None
    return bool(sets) and all(any(b[1] is not None and any(n is take for n in _nodes(b[1].test)) for b in stack)
                              for stack in sets)


def _nodes(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _nodes(child)


def release_message(d: Delete, how: str) -> str:
    cache = " (the Django cache has no compare-and-delete: use a Redis lock for this)" if d.kind == CACHE else ""
    return (f"plain `{d.call.func.attr.value}` of `{code_of(d.key)}`, which {how}: if the lock expired while this "
            f"worker ran, this deletes the next holder's lock{cache}")
