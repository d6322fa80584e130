"""Positions of a few nodes, as libcst's ``PositionProvider`` gives them.

The provider generates the module's code and records a range for every one
of its nodes: four times the cost of generating the code alone, and more
than the parse, when a file needs the positions of a handful of findings and
facts.  This state records only the nodes asked for (and the children whose
positions libcst hoists into theirs), turns the generated tokens into a line
and column only when one of them starts or ends, and stops generating after
the last of them.  A test compares the result with the provider's on every
node of real files.

Relies on libcst's private code generation (see ``libcst_internals``):
``Module._codegen(state)`` calling ``before_codegen``/``after_codegen`` around
each node, ``record_syntactic_position`` for nodes whose range is not their
code's, and ``state.tokens`` as the list of strings generated so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext

import libcst as cst
from libcst.metadata import CodePosition, CodeRange

from ..api.libcst_internals import CodegenState

_NULL = nullcontext()


class _Done(Exception):
    pass


class _TargetedState(CodegenState):
    def __init__(self, module: cst.Module, targets: Iterable[cst.CSTNode]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.wanted = {id(n) for n in targets}  # grows with hoisted children
        self.remaining = set(self.wanted)
        self.computed: dict[cst.CSTNode, CodeRange] = {}
        self.starts: list[CodePosition] = []
        self.folded = 0
        self.line = 1
        self.column = 0

    def position(self) -> CodePosition:
        tokens = self.tokens
        if self.folded < len(tokens):
            chunk = "".join(tokens[self.folded:])
            self.folded = len(tokens)
            newlines = chunk.count("\n") + chunk.count("\r") - chunk.count("\r\n")
            if newlines:
                self.line += newlines
                self.column = len(chunk) - (max(chunk.rfind("\n"), chunk.rfind("\r")) + 1)
            else:
                self.column += len(chunk)
        return CodePosition(self.line, self.column)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self.starts.append(self.position())

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) not in self.wanted:
            return
        start = self.starts.pop()
        if node not in self.computed:  # a syntactic position was recorded
            self.computed[node] = CodeRange(start, self.position())
        self._done(node)

    def _done(self, node: cst.CSTNode) -> None:
        self.remaining.discard(id(node))
        if not self.remaining:
            raise _Done

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        if id(node) not in self.wanted:
            return _NULL
        return self._syntactic(node, start_node, end_node)

    @contextmanager
    def _syntactic(self, node, start_node, end_node) -> Iterator[None]:
        for child in (start_node, end_node):
            if child is not None:
                self.wanted.add(id(child))
        start = self.position()
        try:
            yield
        finally:
            end = self.position()
            if start_node is not None:
                start = self.computed[start_node].start
            if end_node is not None:
                end = self.computed[end_node].end
            self.computed[node] = CodeRange(start, end)


def positions(module: cst.Module, targets: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """The ``PositionProvider`` range of each of ``targets`` (nodes of ``module``)."""
    targets = list(targets)
    state = _TargetedState(module, targets)
    if targets:
        try:
            module._codegen(state)
        except _Done:
            pass
    return state.computed
