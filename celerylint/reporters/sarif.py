"""SARIF 2.1.0 for GitHub code scanning and SARIF viewers.

URIs are relative to the repository root with ``uriBaseId`` ``%SRCROOT%``;
columns are UTF-16 code units (``columnKind``), 1-based, end exclusive;
``partialFingerprints`` are GitHub's own line hashes; fixes are
``artifactChanges`` with replacements in the unmodified file.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..docs import HOMEPAGE, help_uri, rule_doc, sections
from ..model import Edit
from ..source import DecodeError, LineIndex, decode
from ..guard import MAX_PARSE_CHARS
from .fingerprint import line_hashes
from .printable import json_escaped

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "note": "note"}


def _rule_descriptor(cls) -> dict:
    doc = rule_doc(cls)
    parts = sections(doc)
    full = " ".join(p for p in (parts.get("What it does", ""), parts.get("Why is this bad?", "")) if p)
    return {
        "id": cls.CODE,
        "name": cls.NAME,
        "shortDescription": {"text": cls.SUMMARY},
        "fullDescription": {"text": full or cls.SUMMARY},
        "help": {"text": doc, "markdown": doc},
        "helpUri": help_uri(cls.CODE),
        # ``enabled`` (SARIF 3.50.2): whether the rule runs without being selected
        "defaultConfiguration": {"level": LEVELS[cls.SEVERITY], "enabled": getattr(cls, "DEFAULT_ENABLED", True)},
        "properties": {
            "tags": list(dict.fromkeys(["celery", "reliability", *cls.TAGS]))[:10],
            "precision": "high" if cls.CODE < "CL200" else "medium",
            "problem.severity": "error" if cls.SEVERITY == "error" else "warning",
        },
    }


class _Files:
    """Texts of reported files, read once, for columns and fingerprints."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache: dict[str, tuple[LineIndex, dict[int, str]] | None] = {}

    def get(self, rel: str):
        if rel not in self.cache:
            path = Path(rel) if Path(rel).is_absolute() else self.root / rel
            try:
                text = decode(path.read_bytes()).text
                # Hashing is a per-character loop: skip it for huge files
                # (CL001 "too large"); upload-sarif then computes them itself.
                hashes = line_hashes(text) if len(text) <= MAX_PARSE_CHARS else {}
                self.cache[rel] = (LineIndex(text), hashes)
            except (OSError, DecodeError):
                self.cache[rel] = None
        return self.cache[rel]


def _uri(rel: str) -> dict:
    if "://" in rel:  # a broker URL (celerylint doctor, password masked): an absolute URI already
        return {"uri": quote(rel, safe=":/@*?&=%;+")}
    if rel.startswith("/"):
        return {"uri": Path(rel).as_uri()}
    return {"uri": quote(rel, errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}  # undecodable names: %XX


def _region(files: _Files, rel: str, line: int, col: int, end_line: int, end_col: int) -> dict:
    info = files.get(rel)
    if info is not None:
        index = info[0]
        col, end_col = index.utf16_col(line, col), index.utf16_col(end_line, end_col)
    region = {"startLine": line, "startColumn": col + 1, "endLine": end_line, "endColumn": end_col + 1}
    return region


def render(result, settings, rules: list[dict] | None = None) -> str:
    """``rules``: the descriptors of codes that are not rules of the
    registry (``celerylint doctor``'s); by default, every enabled rule."""
    if rules is None:
        from ..registry import rules as registered

        descriptors = [_rule_descriptor(e.load()) for e in registered() if settings.enabled(e.code)]
    else:
        descriptors = rules
    index_of = {d["id"]: i for i, d in enumerate(descriptors)}
    files = _Files(settings.root)
    results = []
    for f in result.findings:
        entry = {
            "ruleId": f.code,
            "ruleIndex": index_of[f.code],
            "level": LEVELS[f.severity],
            "message": {"text": f.message + (f" Hint: {f.hint}" if f.hint else "")},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": _uri(f.path),
                    "region": _region(files, f.path, f.line, f.col, f.end_line, f.end_col),
                },
            }],
        }
        info = files.get(f.path)
        if info is not None and f.line in info[1]:
            entry["partialFingerprints"] = {"primaryLocationLineHash": info[1][f.line]}
        if f.fix is not None:
            target = f.fix.path or f.path
            entry["fixes"] = [{
                "description": {"text": f.fix.description + ("" if f.fix.safe else " (unsafe)")},
                "artifactChanges": [{
                    "artifactLocation": _uri(target),
                    "replacements": [_replacement(files, target, e) for e in f.fix.edits],
                }],
            }]
        results.append(entry)
    run = {
        "tool": {"driver": {
            "name": "celerylint",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": HOMEPAGE,
            "rules": descriptors,
        }},
        "automationDetails": {"id": "celerylint/"},
        "columnKind": "utf16CodeUnits",
        "results": results,
    }
    return json_escaped(json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2,
                                   ensure_ascii=False)) + "\n"


def _replacement(files: _Files, rel: str, edit: Edit) -> dict:
    return {
        "deletedRegion": _region(files, rel, edit.line, edit.col, edit.end_line, edit.end_col),
        "insertedContent": {"text": edit.content},
    }
