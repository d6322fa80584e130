"""JSON: a list of findings.  A public, stable interface (docs/output-formats.md).

Lines and columns are 1-based; ``end_column`` is exclusive.  Columns count
Unicode code points.  Fix edits use the same conventions.  ``json-lines``:
the same objects, one per line."""

from __future__ import annotations

import json

from .printable import json_escaped


def finding_dict(f, fingerprint: str) -> dict:
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
        "severity": f.severity, "fix": fix, "hint": f.hint, "fingerprint": fingerprint,
    }


def dicts(result, settings) -> list[dict]:
    from .fingerprint import fingerprints
    from .sources import Sources

    prints = fingerprints(result.findings, Sources(settings.root, getattr(result, "texts", None)))
    return [finding_dict(f, p) for f, p in zip(result.findings, prints)]


def render(result, settings) -> str:
    return json_escaped(json.dumps(dicts(result, settings), indent=2, ensure_ascii=False)) + "\n"


def render_lines(result, settings) -> str:
    # U+2028 and U+2029 escaped too: ``str.splitlines`` would split there
    return "".join(json_escaped(json.dumps(d, ensure_ascii=False)).replace("\u2028", "\\u2028")
                   .replace("\u2029", "\\u2029") + "\n" for d in dicts(result, settings))
