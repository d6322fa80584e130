"""Code actions: each finding's fix (safe ones as ``quickfix``, unsafe ones
labelled "(unsafe)" and offered only when ``unsafeFixes`` is on), a
``# noqa`` comment for the line, and every safe fix of the file as
``source.fixAll.celerylint``.  The server never writes a file: each action
carries a workspace edit the client applies."""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from ..cli.add_noqa import comment_edit, unsafe_line_ends
from ..core.model import Finding
from .diagnostics import Text, diagnostic, overlaps

FIX_ALL = "source.fixAll.celerylint"
UNPARSABLE = "CL001"


def wanted(kind: str, only: list[str] | None) -> bool:
    """Is an action of ``kind`` asked for (``only`` lists kinds and their parents)?"""
    return only is None or any(kind == o or kind.startswith(o + ".") for o in only)


def document_edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=edits)])


def fix_actions(uri: str, version: int | None, findings: list[Finding], text: Text, at: types.Range, *,
                unsafe: bool, other: Callable[[str], tuple[str, int | None, Text] | None]) -> list[types.CodeAction]:
    """The fix of each finding under ``at``.  ``other(rel)`` gives the uri,
    version and text of another file a fix edits (a setting added to the
    settings module), or None when it cannot be read."""
    actions = []
    for finding in findings:
        fix = finding.fix
        if fix is None or not fix.edits or (not fix.safe and not unsafe) or not overlaps(finding, text, at):
            continue
        target = (uri, version, text) if fix.path in (None, finding.path) else other(fix.path)
        if target is None:
            continue
        where, where_version, where_text = target
        title = f"{finding.code}: {fix.description}" + ("" if fix.safe else " (unsafe)")
        actions.append(types.CodeAction(
            title=title, kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic(finding, text)],
            is_preferred=fix.safe,
            edit=document_edit(where, where_version, [where_text.edit(e) for e in fix.edits])))
    return actions


def noqa_actions(uri: str, version: int | None, findings: list[Finding], text: Text,
                 at: types.Range) -> list[types.CodeAction]:
    """``# noqa: CODE`` on the line of each finding under ``at``, merged
    into a noqa comment the line already has (as ``--add-noqa`` does)."""
    actions = []
    unsafe = None
    for finding in findings:
        if finding.code == UNPARSABLE or not overlaps(finding, text, at):
            continue
        if unsafe is None:
            unsafe = unsafe_line_ends(text.text)
        line = next((n for n in (finding.line, finding.end_line) if n not in unsafe), None)
        if line is None or line > len(text.lines):
            continue
        edit = comment_edit(text.lines[line - 1], line, [finding.code])
        if edit is None:
            continue
        actions.append(types.CodeAction(
            title=f"{finding.code}: disable for this line", kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic(finding, text)], edit=document_edit(uri, version, [text.edit(edit)])))
    return actions


def fix_all_action(uri: str, version: int | None, text: Text, fixed: str) -> types.CodeAction | None:
    if fixed == text.text:
        return None
    return types.CodeAction(title="celerylint: fix all safe fixes", kind=FIX_ALL,
                            edit=document_edit(uri, version, [text.whole(fixed)]))


def has_safe_fix(findings: list[Finding]) -> bool:
    return any(f.fix is not None and f.fix.safe and f.fix.edits for f in findings)
