"""A rule's ``GATE`` keeps a file from libcst when it says the rule cannot
report there, but the cases run every file through libcst as soon as any
checker without a gate wants it (a task module always has one): so each
invalid case and documentation example is checked against the gate here,
on every file the rule reports in."""

from __future__ import annotations

import ast

import pytest

from celerylint.engine.syntax_pass import gate
from celerylint.registry import discover_classes
from celerylint.testing import cases as rule_cases
from celerylint.testing import doc_cases, lint_case, write_case

GATED = [c for c in discover_classes() if getattr(c, "CODE", "") and getattr(c, "GATE", None)]
CASES = [
    pytest.param(rule, case, id=f"{rule.CODE}-{kind}-{i}")
    for rule in GATED
    for kind, found in (("invalid", rule_cases(rule)[1]), ("doc", doc_cases(rule)[:1]))
    for i, case in enumerate(found)
]


def test_every_gated_rule_is_checked():
    assert {r.CODE for r in GATED} >= {"CL203", "CL204", "CL210", "CL214", "CL215", "CL216"}


@pytest.mark.parametrize(("rule", "case"), CASES)
def test_the_gate_lets_through_every_file_the_rule_reports_in(rule, case, tmp_path):
    write_case(case, tmp_path)
    reported = {f.path for f in lint_case(tmp_path, rule.CODE).findings if f.code == rule.CODE}
    for rel in sorted(reported):
        if not rel.endswith(".py"):
            continue
        text = (tmp_path / rel).read_text(encoding="utf-8")
        assert gate(rule.GATE, ast.parse(text), text), f"{rule.GATE} refuses {rel}:\n{text}"
