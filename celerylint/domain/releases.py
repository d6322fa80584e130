"""What CL204 remembers about the deletes of a module, and its fix."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..context import FileContext
from ..rule import Fix, Replace
from .clients import REDIS
from .guards import IfGuards
from .locks import LockTake, compare_and_delete, handles_locks, key_texts, stable_texts
from .values import evaluate


@dataclass
class TakeScope:
    takes: dict[str, LockTake] = field(default_factory=dict)  # key text -> take, in source order


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


def release_fix(node: cst.Call, key: cst.BaseExpression, take: LockTake | None, ctx: FileContext) -> Fix | None:
    """The compare-and-delete, when this function took the lock on a Redis
    client and stored a variable (the token) in it."""
    if take is None or take.client != REDIS or not isinstance(take.token, cst.Name):
        return None
    if evaluate(take.token, ctx) is not None:
        return None  # a constant is not a token: every worker stores the same
    return Fix("Release with a compare-and-delete script", (Replace(node, compare_and_delete(node, key, take.token)),))


class TakeTracker(IfGuards):
    """Mixin for CL204: the lock takes of each function (by key text) and of
    the module (stable key texts), and the deletes to judge at its end."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.scopes: list[TakeScope] = [TakeScope()]
        self.module_keys: dict[str, bool] = {}  # stable key text -> taken in a lock-handling function
        self.deletes: list[Delete] = []
        self.statements: set[int] = set()  # ids of calls whose result is discarded

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(TakeScope())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Expr(self, node: cst.Expr) -> None:
        value = node.value.expression if isinstance(node.value, cst.Await) else node.value
        self.statements.add(id(value))

    def note_take(self, node: cst.Call, take: LockTake) -> None:
        """A take whose result is used (or a ``lock()``) holds its key."""
        if take.key is not None and (take.always or id(node) not in self.statements):
            for text in key_texts(take.key, self.ctx):
                self.scopes[-1].takes.setdefault(text, take)
            for text in stable_texts(take.key, self.ctx):
                self.module_keys[text] = self.module_keys.get(text, False) or self.handler()

    def handler(self) -> bool:
        return handles_locks(self.ctx.function.name.value if self.ctx.function else "")

    def why_lock(self, d: Delete) -> str | None:
        if d.take is not None:
            return f"was taken with `{d.take.method}` in this function"
        if any(t in self.module_keys and (d.handler or self.module_keys[t]) for t in d.stable):
            return "is taken as a lock elsewhere in this module"
        return "is named as a lock" if d.named else None
