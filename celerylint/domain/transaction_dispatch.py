"""Where a task is dispatched relative to Django transactions, for CL210
(dispatch lexically inside ``atomic``) and CL216 (inside a transaction
opened elsewhere): the ``atomic`` blocks open at each point of a function,
the loops around it, which calls are whole statements, and the
``transaction.on_commit(lambda: ...)`` fix both rules offer.

A lambda or a nested ``def`` is a frame of its own with nothing open: code
there runs later (``on_commit(lambda: ...)``, a callback), not in the block.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..api.context import FileContext
from ..api.rule import Fix, InsertAfter, InsertBefore
from .calls import arg
from .dispatch_syntax import DISPATCH
from .values import evaluate

ATOMIC = "django.db.transaction.atomic"
NON_ATOMIC_REQUESTS = "django.db.transaction.non_atomic_requests"
DISPATCH_METHODS = DISPATCH
ON_COMMIT_PREFIX = "transaction.on_commit(lambda: "
_EMPTY = cst.Module([])


@dataclass
class Frame:
    """One function body, lambda or the module: the ``atomic`` blocks open
    in it, innermost last (each the ``atomic(...)`` call, or the bare
    decorator), how many loops enclose the current point, and the ``try``
    statements with handlers around it (how many atomic blocks were open
    when each began)."""

    node: cst.CSTNode | None
    atomics: list[cst.BaseExpression] = field(default_factory=list)
    blocks: list[cst.FunctionDef | cst.With] = field(default_factory=list)  # what each atomic opens, as atomics
    loops: int = 0
    tries: list[int] = field(default_factory=list)


def opens_atomic(expr: cst.BaseExpression, ctx: FileContext) -> cst.BaseExpression | None:
    """``expr`` (a with item or a decorator) opens a transaction that counts:
    ``atomic``/``atomic(...)``, unless it is the read-replica form
    ``atomic(using=<not "default">, savepoint=False)``."""
    func = expr.func if isinstance(expr, cst.Call) else expr
    if ctx.imported_name(func) != ATOMIC:
        return None
    if isinstance(expr, cst.Call):
        using = arg(expr, "using", 0)
        savepoint = arg(expr, "savepoint", 1)
        if (
            using is not None and savepoint is not None
            and isinstance(savepoint.value, cst.Name) and savepoint.value.value == "False"
            and evaluate(using.value, ctx) != "default"
        ):
            return None
    return expr


def dispatched(node: cst.Call) -> str | None:
    """``receiver.delay`` (the text shown in messages) when ``node`` sends a task."""
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in DISPATCH_METHODS:
        return None
    value = func.value
    receiver = _EMPTY.code_for_node(value)
    if isinstance(value, cst.Name) or (len(receiver) <= 40 and "\n" not in receiver):
        shown = receiver  # a task's own name, however long, says which task it is
    elif isinstance(value, cst.Attribute):
        shown = f"….{value.attr.value}"
    else:
        shown = "…"
    return f"{shown}.{func.attr.value}"


class TransactionFrames:
    """The frames of the current point; a checker forwards its ``FunctionDef``,
    ``Lambda``, ``With``, ``For``, ``While`` and ``Expr`` visits here."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.frames: list[Frame] = [Frame(None)]
        self.opened: dict[int, int] = {}  # id of a with statement -> how many atomic blocks it opened
        self.statement_calls: set[int] = set()  # ids of calls that are a whole expression statement

    @property
    def current(self) -> Frame:
        return self.frames[-1]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frame = Frame(node)
        for decorator in node.decorators:
            opened = opens_atomic(decorator.decorator, self.ctx)
            if opened is not None:
                frame.atomics.append(opened)
                frame.blocks.append(node)
        self.frames.append(frame)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.frames.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.frames.append(Frame(node))

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.frames.pop()

    def visit_With(self, node: cst.With) -> None:
        opened = [a for a in (opens_atomic(item.item, self.ctx) for item in node.items) if a is not None]
        self.frames[-1].atomics.extend(opened)
        self.frames[-1].blocks.extend(node for _ in opened)
        self.opened[id(node)] = len(opened)

    def leave_With(self, original_node: cst.With) -> None:
        for _ in range(self.opened.pop(id(original_node), 0)):
            self.frames[-1].atomics.pop()
            self.frames[-1].blocks.pop()

    def visit_For(self, node: cst.For) -> None:
        self.frames[-1].loops += 1

    def leave_For(self, original_node: cst.For) -> None:
        self.frames[-1].loops -= 1

    def visit_While(self, node: cst.While) -> None:
        self.frames[-1].loops += 1

    def leave_While(self, original_node: cst.While) -> None:
        self.frames[-1].loops -= 1

    def visit_Try(self, node: cst.Try | cst.TryStar) -> None:
        if node.handlers:
            self.frames[-1].tries.append(len(self.frames[-1].atomics))

    def leave_Try(self, original_node: cst.Try | cst.TryStar) -> None:
        if original_node.handlers:
            self.frames[-1].tries.pop()

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self.statement_calls.add(id(node.value))

    def fixable(self, node: cst.Call) -> bool:
        """The on_commit fix can wrap ``node``: a whole statement, not in a
        loop (the lambda would see the loop variable's last value), not in
        a ``try`` that handles exceptions inside the transaction (the send
        would fail at the commit, past its handler: mitodl/mitxonline's
        "log, or raise unless told to ignore"), with ``transaction``
        imported from ``django.db`` and not rebound."""
        frame = self.frames[-1]
        return (id(node) in self.statement_calls and not frame.loops
                and not any(opened >= len(frame.atomics) for opened in frame.tries)
                and self.ctx.imports.get("transaction") == "django.db.transaction"
                and self.ctx.lookup("transaction") is None)

    def using(self) -> str:
        """``, using=<alias>`` of the innermost open atomic block, or ``""``."""
        atomics = self.frames[-1].atomics
        innermost = atomics[-1] if atomics else None
        if isinstance(innermost, cst.Call):
            alias = arg(innermost, "using", 0)
            if alias is not None:
                return f", using={_EMPTY.code_for_node(alias.value)}"
        return ""

    def on_commit_fix(self, node: cst.Call) -> Fix | None:
        if not self.fixable(node):
            return None
        return Fix("dispatch in `transaction.on_commit(lambda: ...)`",
                   (InsertBefore(node, ON_COMMIT_PREFIX), InsertAfter(node, f"{self.using()})")))


class FollowsTransactions:
    """The visits a rule that keeps ``self.where = TransactionFrames(ctx)``
    hands on to it, so that the frames know where each dispatch is."""

    where: TransactionFrames

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.where.visit_FunctionDef(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.where.leave_FunctionDef(original_node)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.where.visit_Lambda(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.where.leave_Lambda(original_node)

    def visit_With(self, node: cst.With) -> None:
        self.where.visit_With(node)

    def leave_With(self, original_node: cst.With) -> None:
        self.where.leave_With(original_node)

    def visit_For(self, node: cst.For) -> None:
        self.where.visit_For(node)

    def leave_For(self, original_node: cst.For) -> None:
        self.where.leave_For(original_node)

    def visit_While(self, node: cst.While) -> None:
        self.where.visit_While(node)

    def leave_While(self, original_node: cst.While) -> None:
        self.where.leave_While(original_node)

    def visit_Try(self, node: cst.Try) -> None:
        self.where.visit_Try(node)

    def leave_Try(self, original_node: cst.Try) -> None:
        self.where.leave_Try(original_node)

    def visit_TryStar(self, node: cst.TryStar) -> None:
        self.where.visit_Try(node)

    def leave_TryStar(self, original_node: cst.TryStar) -> None:
        self.where.leave_Try(original_node)

    def visit_Expr(self, node: cst.Expr) -> None:
        self.where.visit_Expr(node)
