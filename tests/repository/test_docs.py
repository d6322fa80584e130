"""Rule documentation: one source, exact sections, generated pages up to date."""

from __future__ import annotations

import re

import pytest

from celerylint import devtools
from celerylint.docs import SECTIONS, WRITTEN, declared_options, rule_doc, sections, written_doc
from celerylint.registry import catalog_rows, discover_classes, entries

RULES = [c for c in discover_classes() if getattr(c, "CODE", "")]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.CODE)
def test_doc_sections_exact_and_in_order(rule):
    headings = re.findall(r"^## (.+)$", written_doc(rule), flags=re.MULTILINE)
    assert tuple(headings) == WRITTEN, "the docstring has these sections; Options is generated"
    doc = rule_doc(rule)
    assert tuple(re.findall(r"^## (.+)$", doc, flags=re.MULTILINE)) == SECTIONS
    parts = sections(doc)
    assert all(parts[h] for h in SECTIONS), "every section has text"
    assert "Use instead:" in parts["Example"]
    assert parts["Example"].count("```") >= 4, "a bad and a good example, each fenced"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.CODE)
def test_identity(rule):
    assert re.fullmatch(r"CL[012]\d\d", rule.CODE)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.NAME)
    assert rule.SEVERITY in ("error", "warning", "note")
    assert rule.FIX in ("none", "safe", "unsafe", "sometimes")
    assert rule.SUMMARY and "\n" not in rule.SUMMARY
    assert rule.FIX != "none" or rule.HINT, "a rule without a fix tells the user what to do"
    options = sections(rule_doc(rule))["Options"]
    for option in declared_options(rule):
        assert f"`{option.name}`" in options and option.doc in options, f"option {option.name} documented"


def test_generated_files_are_up_to_date():
    stale = devtools.stale()
    assert not stale, f"run `python -m celerylint.devtools`; stale: {[str(p) for p in stale]}"


def test_catalog_matches_rule_classes():
    assert [tuple(e.__dict__.values()) for e in entries()] == [tuple(r) for r in catalog_rows()]
