"""Findings as LSP diagnostics and text edits.

A finding's columns count code points of the text that was linted; the
client counts in the position encoding agreed at ``initialize`` (UTF-16
unless it offered another), which pygls' codec converts to.
"""

from __future__ import annotations

from lsprotocol import types

from ..core.model import Edit, Finding
from ..docs import help_uri

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "note": types.DiagnosticSeverity.Information,
}
UNUSED_NOQA = "CL002"


class Text:
    """One version of a document, and its positions in the client's units."""

    def __init__(self, text: str, codec) -> None:
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self.codec = codec

    def position(self, line: int, col: int) -> types.Position:
        """Line 1-based and column in code points, as findings and edits give them."""
        if line - 1 >= len(self.lines):
            return types.Position(line=len(self.lines), character=0)
        return self.codec.position_to_client_units(self.lines, types.Position(line=max(line - 1, 0), character=col))

    def range(self, line: int, col: int, end_line: int, end_col: int) -> types.Range:
        return types.Range(start=self.position(line, col), end=self.position(end_line, end_col))

    def edit(self, edit: Edit) -> types.TextEdit:
        return types.TextEdit(range=self.range(edit.line, edit.col, edit.end_line, edit.end_col), new_text=edit.content)

    def whole(self, new: str) -> types.TextEdit:
        """One edit turning this text into ``new``: the lines between what
        they share at the start and at the end (the cursor and folds of the
        untouched lines stay where they are)."""
        old_lines, new_lines = self.lines, new.splitlines(keepends=True)
        start = 0
        while start < min(len(old_lines), len(new_lines)) and old_lines[start] == new_lines[start]:
            start += 1
        end = 0
        while (end < min(len(old_lines), len(new_lines)) - start
               and old_lines[-1 - end] == new_lines[-1 - end]):
            end += 1
        replaced = types.Range(start=types.Position(line=start, character=0),
                               end=types.Position(line=len(old_lines) - end, character=0))
        return types.TextEdit(range=replaced, new_text="".join(new_lines[start:len(new_lines) - end]))


def diagnostic(finding: Finding, text: Text) -> types.Diagnostic:
    return types.Diagnostic(
        range=text.range(finding.line, finding.col, finding.end_line, finding.end_col),
        message=finding.message,
        severity=SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=help_uri(finding.code)),
        source="celerylint",
        tags=[types.DiagnosticTag.Unnecessary] if finding.code == UNUSED_NOQA else None,
        data={"name": finding.name, "fix": None if finding.fix is None else finding.fix.description},
    )


def overlaps(finding: Finding, text: Text, wanted: types.Range) -> bool:
    """Does the finding's range meet ``wanted`` (a cursor inside it, or at its end)?"""
    found = text.range(finding.line, finding.col, finding.end_line, finding.end_col)
    start, end = (found.start.line, found.start.character), (found.end.line, found.end.character)
    return start <= (wanted.end.line, wanted.end.character) and (wanted.start.line, wanted.start.character) <= end
