"""What one function does with keys, fresh values and side effects, in order.

Per function and deliberately simple: names are followed through their last
simple assignment in the function (``FileContext.lookup``), nothing else.
When a link is not certain it is not made: a missed case is better than an
invented one.

``flow(func, ctx)`` walks the body once (nested functions, lambdas and
classes are not part of it) and returns a ``Flow``: the ordered ``events``
(key checks, marker writes, locks, releases, model flag checks/writes/saves,
external side effects, ``except IntegrityError`` handlers, lock-like calls)
with their statement and block.  ``fresh_origin(expr, ctx)`` tells whether
an expression derives from a fresh random or time value.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

import libcst as cst

from ..api.context import FileContext, dotted_name
from ..api.traverse import visit
from .clients import client_kind
from .fresh import TIME_CALLS, _bound, fresh_origin, params_of
from .keys import spelled
from .side_effects import side_effect
from .marker_syntax import CHECKS, MARKS

__all__ = ["Event", "Flow", "flow", "fresh_origin", "key_id", "marks_done", "params_of", "throttles", "within"]

LOCKS = frozenset({"setnx", "lock", "add"})
RELEASES = frozenset({"delete", "unlink", "delete_many"})
DB_WRITES = frozenset({
    "create", "save", "bulk_create", "get_or_create", "update_or_create", "insert", "add", "commit", "flush",
    "execute", "executemany", "update", "asave", "acreate",
})
LOCKISH = re.compile(r"lock|mutex|select_for_update", re.IGNORECASE)
_EMPTY = cst.Module([])
_MAX_DEPTH = 8


def code_of(node: cst.CSTNode) -> str:
    return re.sub(r"\s+", "", _EMPTY.code_for_node(node))


def key_id(expr: cst.BaseExpression, ctx: FileContext, params: set[str], _depth: int = 0) -> str:
    """A comparable identity for a key expression: a local name stands for
    the expression it was last assigned; a built string is spelled one way
    however it was built (``keys.py``)."""
    built = spelled(expr, ctx, params) if _depth == 0 else None
    if built is not None:
        return "key:" + built
    if isinstance(expr, cst.Name) and _depth < _MAX_DEPTH:
        bound = _bound(expr, ctx, params)
        if isinstance(bound, (cst.FormattedString, cst.SimpleString, cst.ConcatenatedString, cst.BinaryOperation,
                              cst.Name, cst.Call)):
            return key_id(bound, ctx, params, _depth + 1)
    return code_of(expr)


@dataclass
class Event:
    kind: str  # check | mark | lock | release | flag_check | flag_set | flag_save | effect | integrity | lockish | db_write
    key: str  # key identity, flag "obj.attr", object name; "" when none
    node: cst.CSTNode  # the call, assignment target's statement, or except handler
    stmt: cst.CSTNode | None  # the enclosing simple statement line
    block: tuple[cst.CSTNode, ...] | None  # the body the statement belongs to
    index: int  # order of appearance
    detail: str = ""  # e.g. the side effect's description
    in_loop: bool = False
    trys: tuple[cst.Try, ...] = ()  # enclosing try statements whose body holds the event
    key_node: cst.BaseExpression | None = None
    owner: cst.CSTNode | None = None  # ``integrity``: its try statement; ``flag_check``: its if statement
    blocks: tuple[tuple[cst.CSTNode, ...], ...] = ()  # every enclosing body, outermost first


@dataclass
class Flow:
    func: cst.FunctionDef
    params: set[str]
    events: list[Event] = field(default_factory=list)

    def of(self, *kinds: str) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]


class _Walker(cst.CSTVisitor):
    def __init__(self, flow: Flow, ctx: FileContext) -> None:
        super().__init__()
        self.flow = flow
        self.ctx = ctx
        self.stmt: cst.SimpleStatementLine | None = None
        self.blocks: list[tuple[cst.CSTNode, ...]] = []
        self.loops = 0
        self.trys: list[cst.Try] = []

    def add(self, kind: str, key: str, node: cst.CSTNode, detail: str = "", key_node=None, owner=None) -> None:
        self.flow.events.append(Event(
            kind, key, node, self.stmt, self.blocks[-1] if self.blocks else None, len(self.flow.events), detail,
            self.loops > 0, tuple(self.trys), key_node, owner, tuple(self.blocks),
        ))

    # -- structure -------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # nested functions are not this function's body

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(tuple(node.body))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.stmt = node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.stmt = None

    def visit_For(self, node: cst.For) -> None:
        self.loops += 1

    def leave_For(self, original_node: cst.For) -> None:
        self.loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self.loops += 1

    def leave_While(self, original_node: cst.While) -> None:
        self.loops -= 1

    def visit_Try(self, node: cst.Try) -> bool:
        # the body is "inside" the try; handlers, else and finally are not
        for handler in node.handlers:
            if _catches_integrity_error(handler, self.ctx):
                self.add("integrity", "", handler, owner=node)
        self.trys.append(node)
        visit(node.body, self)
        self.trys.pop()
        for handler in node.handlers:
            visit(handler, self)
        for part in (node.orelse, node.finalbody):
            if part is not None:
                visit(part, self)
        return False

    def visit_If(self, node: cst.If) -> None:
        self._flag_checks(node)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if LOCKISH.search(code_of(item.item)):
                self.add("lockish", "", item)

    # -- statements ----------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value not in ("self", "cls"):
                self.add("flag_set", f"{t.value.value}.{t.attr.value}", node, code_of(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        effect = side_effect(node, self.ctx)
        if effect:
            self.add("effect", "", node, effect)
            return
        name = dotted_name(func) or (func.attr.value if isinstance(func, cst.Attribute) else "")
        if LOCKISH.search(name.rpartition(".")[2]) and not name.endswith(("unlock", "release")):
            self.add("lockish", "", node)
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method in ("save", "asave") and isinstance(func.value, cst.Name):
            self.add("flag_save", func.value.value, node)
        if method in DB_WRITES:
            self.add("db_write", "", node)
        if method not in CHECKS | MARKS | LOCKS | RELEASES or not node.args or node.args[0].keyword is not None:
            return
        kind = client_kind(func.value, self.ctx)
        if kind is None:
            return
        key_node = node.args[0].value
        key = key_id(key_node, self.ctx, self.flow.params)
        if method in CHECKS:
            self.add("check", key, node, key_node=key_node)
        elif method in RELEASES:
            for a in node.args:
                self.add("release", key_id(a.value, self.ctx, self.flow.params), node, key_node=a.value)
        elif method in LOCKS or (method == "set" and _nx(node)):
            self.add("lock", key, node, method, key_node=key_node)
        else:
            self.add("mark", key, node, method, key_node=key_node)

    def _flag_checks(self, node: cst.If) -> None:
        """A model flag tested by a guard that leaves: ``if order.sent:
        return``, ``if mail.state in (SENT, SENDING): raise …``.  ``detail``
        holds the compared values' code (``|``-separated), empty for a
        truth test."""
        if not _exits(node.body):
            return
        for attr, values in _guard_flags(node.test):
            if isinstance(attr.value, cst.Name) and attr.value.value not in ("self", "cls"):
                self.add("flag_check", f"{attr.value.value}.{attr.attr.value}", attr, values, owner=node)


def _nx(call: cst.Call) -> bool:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "nx":
            return not (isinstance(a.value, cst.Name) and a.value.value in ("False", "None"))
    positional = [a for a in call.args if a.keyword is None]
    return len(positional) >= 5 and isinstance(positional[4].value, cst.Name) and positional[4].value.value == "True"


def _exits(body: cst.BaseSuite) -> bool:
    """The block ends by leaving: return, raise, continue or break."""
    last = body.body[-1] if isinstance(body, cst.SimpleStatementSuite) else None
    if isinstance(body, cst.IndentedBlock) and body.body:
        stmt = body.body[-1]
        last = stmt.body[-1] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
    return isinstance(last, (cst.Return, cst.Raise, cst.Continue, cst.Break))


def _guard_flags(test: cst.BaseExpression) -> list[tuple[cst.Attribute, str]]:
    """The attributes a guard tests for "done": ``obj.flag`` (truth),
    ``obj.flag is not None``, ``obj.state == DONE``, ``obj.state in (A,
    B)``, joined by ``or``/``and``; with the values they are compared to."""
    if isinstance(test, cst.BooleanOperation):
        return _guard_flags(test.left) + _guard_flags(test.right)
    if isinstance(test, cst.Attribute):
        return [(test, "")]
    if isinstance(test, cst.Comparison) and isinstance(test.left, cst.Attribute) and len(test.comparisons) == 1:
        op, value = test.comparisons[0].operator, test.comparisons[0].comparator
        if isinstance(op, cst.IsNot) and isinstance(value, cst.Name) and value.value == "None":
            return [(test.left, "")]
        if isinstance(op, cst.Equal):
            return [(test.left, code_of(value))]
        if isinstance(op, cst.In) and isinstance(value, (cst.Tuple, cst.List, cst.Set)):
            return [(test.left, "|".join(code_of(e.value) for e in value.elements))]
    return []


def _catches_integrity_error(handler: cst.ExceptHandler, ctx: FileContext) -> bool:
    if handler.type is None:
        return False
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any((ctx.qualify(t) or "").rpartition(".")[2] == "IntegrityError" for t in types)


_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def flow(func: cst.FunctionDef, ctx: FileContext) -> Flow:
    """The events of ``func``'s body; call it while the traversal is still
    inside ``func`` (its bindings are then known), e.g. from ``leave_FunctionDef``."""
    flows = _CACHE.setdefault(ctx, {})
    cached = flows.get(id(func))
    if cached is not None and cached.func is func:
        return cached
    result = Flow(func, params_of(func))
    visit(func.body, _Walker(result, ctx))
    flows[id(func)] = result
    return result


def within(event: Event, block: tuple[cst.CSTNode, ...] | None) -> bool:
    """The event is in ``block`` or in a block nested in it."""
    return block is not None and any(b is block for b in event.blocks)


def marks_done(compared: str, assigned: str) -> bool:
    """The value written is one the guard treats as done: any true value
    for a truth test, else one of the compared values."""
    if not compared:
        return assigned not in ("False", "None", "0", '""', "''")
    return assigned in compared.split("|")


def statements_movable_after(marker: list[Event], effect: Event) -> tuple[cst.CSTNode, ...] | None:
    """The statements of ``marker`` when they can be moved, as they are,
    after the statement of ``effect``: simple statements of the effect's own
    block, before it, whose result (for a marker write) is not used."""
    statements = [e.stmt for e in marker]
    block = effect.block
    if effect.stmt is None or block is None or effect.stmt not in block:
        return None
    for e, stmt in zip(marker, statements):
        if stmt is None or e.block is not block or len(stmt.body) != 1:
            return None
        if e.kind == "mark" and not isinstance(stmt.body[0], cst.Expr):
            return None  # the marker's result is used: moving it could break the code
    if len({id(s) for s in statements}) != len(statements):
        return None
    position = block.index(effect.stmt)
    if any(block.index(s) > position for s in statements):
        return None
    return tuple(statements)



def throttles(check: Event, mark: Event, f: Flow, ctx: FileContext) -> bool:
    """The key holds a "last run" time, not a "done" flag: the marker stores
    the current time and the check's result is read back as a number
    (``last = r.get(k)`` ... ``float(last)``)."""
    call = mark.node
    if not isinstance(call, cst.Call) or len(call.args) < 2:
        return False
    origin = fresh_origin(call.args[1].value, ctx, f.params)
    if origin is None or ctx.imported_name(origin.func) not in TIME_CALLS:
        return False
    stmt = check.stmt.body[0] if check.stmt is not None and check.stmt.body else None
    if not isinstance(stmt, cst.Assign) or not isinstance(stmt.targets[0].target, cst.Name):
        return False
    name = stmt.targets[0].target.value
    return re.search(rf"\b(?:float|int)\(\s*{re.escape(name)}\s*\)", code_of(f.func.body)) is not None
