"""Turn a rule's ``Fix`` (edits naming nodes) into text edits, once positions are known."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
from libcst.metadata import CodeRange

from ..core.model import Edit
from ..core.model import Fix as TextFix
from ..api.rule import Fix, InsertAfter, InsertBefore, InsertLinesAfter, MoveLinesAfter, RemoveLines, Replace
from ..core.source import LineIndex


class EditBuilder:
    def __init__(self, module: cst.Module, positions: dict, index: LineIndex) -> None:
        self.module = module
        self.positions = positions
        self.index = index

    def build(self, fix: Fix) -> TextFix:
        edits = tuple(sorted(e for edit in fix.edits for e in self._edits(edit)))
        return TextFix(fix.description, edits, fix.safe)

    def _range(self, node: cst.CSTNode) -> CodeRange:
        return self.positions[node]

    def _lines(self, node: cst.CSTNode) -> tuple[int, int]:
        r = self._range(node)
        return r.start.line, r.end.line

    def _code(self, old: cst.CSTNode, new: cst.CSTNode, r: CodeRange) -> str:
        """The new node's code, indented as the node it replaces: the block
        indentation is the one under which the old node's code reads as it
        is written (tried from the lines at and above its start)."""
        code = self.module.code_for_node(new)
        if r.start.line == r.end.line and "\n" not in code and "\r" not in code:
            return code
        from ..api.libcst_internals import code_indented

        written = self.index.text[self.index.offset(r.start.line, r.start.column):self.index.offset(r.end.line, r.end.column)]
        seen = set()
        for line in range(r.start.line, max(0, r.start.line - 50), -1):
            text = self.index.line_text(line)
            indent = text[:len(text) - len(text.lstrip(" \t"))]
            if indent in seen:
                continue
            seen.add(indent)
            if code_indented(old, self.module, indent) == written:
                return code_indented(new, self.module, indent)
        return code

    def _edits(self, edit) -> Iterator[Edit]:
        if isinstance(edit, Replace):
            r = self._range(edit.node)
            content = edit.new if isinstance(edit.new, str) else self._code(edit.node, edit.new, r)
            yield Edit(r.start.line, r.start.column, r.end.line, r.end.column, content)
        elif isinstance(edit, InsertBefore):
            r = self._range(edit.node)
            yield Edit(r.start.line, r.start.column, r.start.line, r.start.column, edit.text)
        elif isinstance(edit, InsertAfter):
            r = self._range(edit.node)
            yield Edit(r.end.line, r.end.column, r.end.line, r.end.column, edit.text)
        elif isinstance(edit, RemoveLines):
            first, last = self._lines(edit.node)
            yield Edit(first, 0, last + 1, 0, "")
        elif isinstance(edit, InsertLinesAfter):
            line = self._lines(edit.node)[1] + 1
            yield Edit(line, 0, line, 0, edit.text.replace("\n", self.module.default_newline))
        elif isinstance(edit, MoveLinesAfter):
            nl, moved = self.module.default_newline, []
            for node in edit.nodes:
                first, last = self._lines(node)
                moved.extend(self.index.line_text(line) + nl for line in range(first, last + 1))
                yield Edit(first, 0, last + 1, 0, "")
            line = self._lines(edit.target)[1] + 1
            yield Edit(line, 0, line, 0, "".join(moved))
        else:  # pragma: no cover - a new edit kind without its builder
            raise TypeError(f"unknown edit {edit!r}")
