"""The layout CONTRIBUTING.md describes: rules import the framework only
through ``celerylint.rule`` (shared analysis from ``domain``, fact
constants from ``facts``), never another rule; no module is over 400 lines."""

from __future__ import annotations

import ast

import pytest

from conftest import REPO

PACKAGE = REPO / "celerylint"
RULES = sorted((PACKAGE / "rules").glob("cl*.py"))


@pytest.mark.parametrize("path", RULES, ids=lambda p: p.stem)
def test_a_rule_imports_the_framework_only_through_rule(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            module = node.module or ""
            assert node.level == 2 and (module == "rule" or module.startswith(("domain", "facts"))), (
                f"{path.name} imports {'.' * node.level}{module}")


def test_no_module_is_over_400_lines():
    long = {p.relative_to(REPO).as_posix(): n for p in PACKAGE.rglob("*.py")
            if (n := p.read_text(encoding="utf-8").count("\n")) > 400
            and "generated" not in p.read_text(encoding="utf-8")[:400].lower()}
    assert not long, long
