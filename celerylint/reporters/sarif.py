"""SARIF 2.1.0 for GitHub code scanning and SARIF viewers.

URIs are relative to the repository root with ``uriBaseId`` ``%SRCROOT%``;
columns are UTF-16 code units (``columnKind``), 1-based, end exclusive;
``partialFingerprints`` are GitHub's own line hashes; fixes are
``artifactChanges`` with replacements in the unmodified file.  Regions
carry their ``snippet`` and a ``contextRegion`` (the finding's lines and one
line either side); a run inside a git checkout has its
``versionControlProvenance`` (vcs.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..docs import HOMEPAGE, help_uri, rule_doc, sections
from ..core.model import Edit
from .plaintext import markdown_to_text
from .printable import json_escaped
from .secrets import masked
from .sources import Sources

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
        "help": {"text": markdown_to_text(doc), "markdown": doc},
        "helpUri": help_uri(cls.CODE),
        # ``enabled`` (SARIF 3.50.2): whether the rule runs without being selected
        "defaultConfiguration": {"level": LEVELS[cls.SEVERITY], "enabled": getattr(cls, "DEFAULT_ENABLED", True)},
        "properties": {
            "tags": list(dict.fromkeys(["celery", "reliability", *cls.TAGS]))[:10],
            "precision": "high" if cls.CODE < "CL200" else "medium",
            "problem.severity": "error" if cls.SEVERITY == "error" else "warning",
        },
    }


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter (when it is a letter)
    and a full stop (unless it ends with one, ``?`` or ``!``)."""
    text = text.strip()
    if not text:
        return text
    if text[0].isalpha() and text[0].islower():
        text = text[0].upper() + text[1:]
    return text if text.endswith((".", "?", "!")) else text + "."


def message_text(f) -> str:
    return " ".join(sentence(t) for t in (f.message, f.hint) if t)


def _uri(rel: str) -> dict:
    if "://" in rel:  # a broker URL (celerylint doctor, password masked): an absolute URI already
        return {"uri": quote(rel, safe=":/@*?&=%;+")}
    if rel.startswith("/"):
        return {"uri": Path(rel).as_uri()}
    return {"uri": quote(rel, errors="surrogateescape"), "uriBaseId": "%SRCROOT%"}  # undecodable names: %XX


def _region(files: Sources, rel: str, line: int, col: int, end_line: int, end_col: int, *,
            snippet: bool = False) -> dict:
    source = files.get(rel)
    text = source.span(line, col, end_line, end_col) if source is not None and snippet else None
    if source is not None:
        index = source.index
        col, end_col = index.utf16_col(line, col), index.utf16_col(end_line, end_col)
    region = {"startLine": line, "startColumn": col + 1, "endLine": end_line, "endColumn": end_col + 1}
    if text:
        region["snippet"] = {"text": masked(text)}
    return region


def _context(files: Sources, rel: str, line: int, end_line: int) -> dict | None:
    """Whole lines around the region: one before, one after."""
    source = files.get(rel)
    if source is None or line > source.lines:
        return None
    first, last = max(1, line - 1), max(min(max(source.lines, 1), end_line + 1), end_line)  # covers the region
    start, stop = source.index.starts[first - 1], source.index.offset(last, len(source.line(last)))
    return {"startLine": first, "endLine": last, "snippet": {"text": masked(source.text[start:stop])}}


def render(result, settings, rules: list[dict] | None = None) -> str:
    """``rules``: the descriptors of codes that are not rules of the
    registry (``celerylint doctor``'s); by default, every enabled rule."""
    if rules is None:
        from ..registry import rules as registered

        found = {f.code for f in result.findings}  # a project of a monorepo may enable more
        descriptors = [_rule_descriptor(e.load()) for e in registered() if settings.enabled(e.code) or e.code in found]
    else:
        descriptors = rules
    index_of = {d["id"]: i for i, d in enumerate(descriptors)}
    files = Sources(settings.root, getattr(result, "texts", None))
    results = []
    for f in result.findings:
        entry = {
            "ruleId": f.code,
            "ruleIndex": index_of[f.code],
            "level": LEVELS[f.severity],
            "message": {"text": message_text(f)},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": _uri(f.path),
                    "region": _region(files, f.path, f.line, f.col, f.end_line, f.end_col, snippet=True),
                },
            }],
        }
        context = _context(files, f.path, f.line, f.end_line)
        if context is not None:
            entry["locations"][0]["physicalLocation"]["contextRegion"] = context
        source = files.get(f.path)
        hashes = source.line_hashes() if source is not None else {}
        if f.line in hashes:
            entry["partialFingerprints"] = {"primaryLocationLineHash": hashes[f.line]}
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
    from .vcs import provenance

    checkout = provenance(settings.root)
    if checkout is not None:
        run["versionControlProvenance"] = [{**checkout, "mappedTo": {"uriBaseId": "%SRCROOT%"}}]
    return json_escaped(json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2,
                                   ensure_ascii=False)) + "\n"


def _replacement(files: Sources, rel: str, edit: Edit) -> dict:
    return {
        "deletedRegion": _region(files, rel, edit.line, edit.col, edit.end_line, edit.end_col),
        "insertedContent": {"text": edit.content},
    }
