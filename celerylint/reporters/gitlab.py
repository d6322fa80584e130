"""GitLab Code Quality (``artifacts: reports: codequality``): a JSON list of
issues with GitLab's required fields, ``description``, ``check_name``,
``fingerprint`` (the stable one of the JSON format), ``severity`` and
``location.path`` with ``location.lines.begin``.  Severities: ``error`` is
``major``, ``warning`` is ``minor``, ``note`` is ``info`` (GitLab's scale is
info, minor, major, critical, blocker; ``critical`` and ``blocker`` are left
to findings that stop a release, which static findings never are)."""

from __future__ import annotations

import json

from .fingerprint import fingerprints
from .printable import json_escaped
from .sources import Sources

SEVERITY = {"error": "major", "warning": "minor", "note": "info"}


def render(result, settings) -> str:
    prints = fingerprints(result.findings, Sources(settings.root, getattr(result, "texts", None)))
    issues = []
    for f, fingerprint in zip(result.findings, prints):
        lines = {"begin": f.line}
        if f.end_line > f.line:
            lines["end"] = f.end_line
        issue = {
            "type": "issue",
            "description": f"{f.code} [{f.name}] {f.message}",
            "check_name": f.code,
            "fingerprint": fingerprint,
            "severity": SEVERITY[f.severity],
            "categories": ["Bug Risk"],
            "location": {"path": f.path, "lines": lines},
        }
        remedy = (f"Fix: {f.fix.description}" if f.fix is not None else f"Hint: {f.hint}" if f.hint else None)
        if remedy:
            issue["content"] = {"body": remedy}
        issues.append(issue)
    return json_escaped(json.dumps(issues, indent=2, ensure_ascii=False)) + "\n"
