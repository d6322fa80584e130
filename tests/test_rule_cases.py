"""Every rule's embedded VALID and INVALID cases, through the real engine,
prefilter and fix loop (``celerylint.testing.check_case``)."""

from __future__ import annotations

import pytest

from celerylint.registry import discover_classes
from celerylint.testing import check_case

RULES = [c for c in discover_classes() if getattr(c, "CODE", "")]
CASES = [
    pytest.param(rule, case, valid, id=f"{rule.CODE}-{'valid' if valid else 'invalid'}-{i}")
    for rule in RULES
    for valid, cases in ((True, rule.VALID), (False, rule.INVALID))
    for i, case in enumerate(cases)
]


@pytest.mark.parametrize(("rule", "case", "valid"), CASES)
def test_case(rule, case, valid, tmp_path):
    check_case(rule, case, tmp_path, valid)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.CODE)
def test_enough_cases(rule):
    assert len(rule.VALID) >= 5, "at least five valid cases"
    assert len(rule.INVALID) >= 5, "at least five invalid cases"
