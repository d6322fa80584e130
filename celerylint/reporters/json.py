"""JSON: a list of findings.  A public, stable interface (see README).

Lines and columns are 1-based; ``end_column`` is exclusive.  Columns count
Unicode code points.  Fix edits use the same conventions."""

from __future__ import annotations

import json

from .printable import json_escaped


def finding_dict(f) -> dict:
    fix = None
    if f.fix is not None:
        fix = {
            "safe": f.fix.safe,
            "description": f.fix.description,
            "path": f.fix.path or f.path,
            "edits": [
                {"line": e.line, "column": e.col + 1, "end_line": e.end_line, "end_column": e.end_col + 1,
                 "content": e.content}
                for e in f.fix.edits
            ],
        }
    return {
        "code": f.code, "name": f.name, "message": f.message, "path": f.path,
        "line": f.line, "column": f.col + 1, "end_line": f.end_line, "end_column": f.end_col + 1,
        "severity": f.severity, "fix": fix, "hint": f.hint,
    }


def render(result, settings) -> str:
    return json_escaped(json.dumps([finding_dict(f) for f in result.findings], indent=2, ensure_ascii=False)) + "\n"
