"""Every rule's embedded VALID and INVALID cases, and the examples of its
documentation, through the real engine, prefilter and fix loop
(``celerylint.testing.check_case``)."""

from __future__ import annotations

import textwrap

import pytest

from celerylint.registry import discover_classes
from celerylint.testing import cases as rule_cases
from celerylint.testing import check_case, doc_cases

RULES = [c for c in discover_classes() if getattr(c, "CODE", "")]
CASES = [
    pytest.param(rule, case, valid, id=f"{rule.CODE}-{'valid' if valid else 'invalid'}-{i}")
    for rule in RULES
    for valid, cases in zip((True, False), rule_cases(rule))
    for i, case in enumerate(cases)
]
DOC_CASES = [
    pytest.param(rule, case, valid, id=f"{rule.CODE}-doc-{'use-instead' if valid else 'example'}")
    for rule in RULES
    for case, valid in zip(doc_cases(rule), (False, True))
]


@pytest.mark.parametrize(("rule", "case", "valid"), CASES + DOC_CASES)
def test_case(rule, case, valid, tmp_path):
    check_case(rule, case, tmp_path, valid)


def _normal(code: str) -> str:
    return "\n".join(line.rstrip() for line in textwrap.dedent(code).strip().splitlines())


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.CODE)
def test_cases_cover_both_sides_and_do_not_retype_the_docs(rule):
    valid, invalid = rule_cases(rule)
    assert valid and invalid, "cases for what the rule reports and for look-alikes it must not"
    examples = {_normal(c.code) for c in doc_cases(rule)}
    retyped = [c for c in (*valid, *invalid) if _normal(c.code) in examples]
    assert not retyped, "a documentation example runs as a case already; remove the copy"


def test_cases_in_the_module_beside_a_rule_run_too(monkeypatch):
    import sys
    import types

    from celerylint.rule import Valid

    rule = next(r for r in RULES if r.CODE == "CL203")
    extra = types.ModuleType(f"celerylint.rules._{rule.__module__.rpartition('.')[2]}_cases")
    extra.VALID = (Valid("x = 1\n"),)
    monkeypatch.setitem(sys.modules, extra.__name__, extra)
    valid, invalid = rule_cases(rule)
    assert valid[-1] is extra.VALID[0] and len(valid) == len(rule.VALID) + 1
    assert invalid == tuple(rule.INVALID)
