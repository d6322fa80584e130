"""Where a checker is: the blocks around a node, the tests of the ``if``
statements around it, and which of them compare a clock.

A lock deleted only while ``monotonic()`` is still before the deadline taken
with the lock (the Celery cookbook's Django-cache pattern) cannot delete the
next holder's lock; rules that judge a release need to see such guards.
"""

from __future__ import annotations

import libcst as cst

from ..api.context import FileContext, dotted_name

CLOCKS = frozenset({"time.monotonic", "time.time", "time.perf_counter", "monotonic", "time"})


class Blocks:
    """Mixin for a checker: ``self.blocks`` holds the indented blocks the
    traversal is in, innermost last."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.blocks: list[cst.IndentedBlock] = []

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()


class IfGuards:
    """Mixin for a checker: ``self.guards`` holds the test of every ``if``
    whose body (not its ``else``) the traversal is in.  Bodies are recognised
    by identity, so the engine's fast traversal serves."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.guards: list[cst.BaseExpression] = []
        self._if_bodies: dict[int, cst.BaseExpression] = {}

    def visit_If(self, node: cst.If) -> None:
        self._if_bodies[id(node.body)] = node.test

    def _enter_block(self, node) -> None:
        test = self._if_bodies.get(id(node))
        if test is not None:
            self.guards.append(test)

    def _leave_block(self, node) -> None:
        if self._if_bodies.pop(id(node), None) is not None:
            self.guards.pop()

    visit_IndentedBlock = visit_SimpleStatementSuite = _enter_block
    leave_IndentedBlock = leave_SimpleStatementSuite = _leave_block


def compares_clock(test: cst.BaseExpression, ctx: FileContext) -> bool:
    """``monotonic() < deadline`` (also inside ``and``/``or``)."""
    if isinstance(test, cst.BooleanOperation):
        return compares_clock(test.left, ctx) or compares_clock(test.right, ctx)
    if not isinstance(test, cst.Comparison):
        return False
    for side in (test.left, *(c.comparator for c in test.comparisons)):
        if isinstance(side, cst.Call) and not side.args:
            name = ctx.imported_name(side.func) or dotted_name(side.func) or ""
            if name in CLOCKS or name.endswith((".monotonic", ".time")):
                return True
    return False
