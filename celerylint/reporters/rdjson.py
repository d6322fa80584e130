"""reviewdog's Diagnostic Format, ``rdjson`` (``reviewdog -f=rdjson``): one
``DiagnosticResult`` with a diagnostic per finding; fixes are
``suggestions``.  Columns are 1-based UTF-8 byte offsets, as rdjson
defines them; ends are exclusive."""

from __future__ import annotations

import json

from ..docs import DOCTOR_URI, HOMEPAGE, help_uri
from .printable import json_escaped
from .sources import Sources

SEVERITY = {"error": "ERROR", "warning": "WARNING", "note": "INFO"}


def _position(source, line: int, col: int) -> dict:
    if source is not None:
        col = len(source.line(line)[:col].encode("utf-8", "surrogateescape"))
    return {"line": line, "column": col + 1}


def _range(source, line: int, col: int, end_line: int, end_col: int) -> dict:
    return {"start": _position(source, line, col), "end": _position(source, end_line, end_col)}


def render(result, settings) -> str:
    sources = Sources(settings.root, getattr(result, "texts", None))
    diagnostics = []
    for f in result.findings:
        source = sources.get(f.path)
        message = f.message
        if f.fix is not None:
            message += f"\nfix ({'safe' if f.fix.safe else 'unsafe'}): {f.fix.description}"
        elif f.hint:
            message += f"\nhint: {f.hint}"
        diagnostic = {
            "message": message,
            "location": {"path": f.path, "range": _range(source, f.line, f.col, f.end_line, f.end_col)},
            "severity": SEVERITY[f.severity],
            "code": {"value": f.code, "url": help_uri(f.code) if f.code < "CL150" or f.code > "CL155"
                     else DOCTOR_URI},
        }
        # reviewdog applies a suggestion to the diagnostic's own file only
        if f.fix is not None and (f.fix.path or f.path) == f.path:
            diagnostic["suggestions"] = [
                {"range": _range(source, e.line, e.col, e.end_line, e.end_col), "text": e.content}
                for e in f.fix.edits]
        diagnostics.append(diagnostic)
    document = {"source": {"name": "celerylint", "url": HOMEPAGE}, "diagnostics": diagnostics}
    return json_escaped(json.dumps(document, indent=2, ensure_ascii=False)) + "\n"
