"""Hover over a finding: the documentation of its rule, as ``--explain`` prints it."""

from __future__ import annotations

from lsprotocol import types

from ..core.model import Finding
from ..docs import explain_text, help_uri
from .diagnostics import Text, overlaps


def hover(findings: list[Finding], text: Text, at: types.Position) -> types.Hover | None:
    codes: list[str] = []
    for finding in findings:
        if finding.code not in codes and overlaps(finding, text, types.Range(start=at, end=at)):
            codes.append(finding.code)
    parts = []
    for code in codes:
        doc = explain_text(code)
        if doc is not None:
            parts.append(f"{doc.rstrip()}\n\n[{code} on the web]({help_uri(code)})")
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))
