"""The rules CONTRIBUTING.md shows how to write work as written: each one,
loaded as a module of ``celerylint.rules`` beside the real ones, passes
discovery, its cases and its documentation examples through the real
engine."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from conftest import REPO
from celerylint.run import linter
from celerylint import registry
from celerylint.docs import rule_doc, sections
from celerylint.testing import check_case, doc_cases

EXAMPLES = re.findall(r"```python\n# celerylint/rules/(cl\d+_\w+)\.py\n(.*?)\n```\n",
                      (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8"), re.DOTALL)


@pytest.fixture
def example_rule(request, monkeypatch):
    name, code = request.param
    spec = importlib.util.spec_from_loader(f"celerylint.rules.{name}", loader=None)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    exec(compile(code, f"CONTRIBUTING.md:{name}", "exec"), module.__dict__)
    found = [v for v in vars(module).values() if isinstance(v, type) and getattr(v, "CODE", "") and v.__module__ == spec.name]
    (cls,) = found
    real = registry.discover_classes
    monkeypatch.setattr(registry, "discover_classes", lambda: [*real(), cls])
    rows = registry.catalog_rows()  # discovery accepts it
    table = tuple(registry.Entry(*row) for row in rows)
    monkeypatch.setattr(linter, "all_entries", lambda: table)
    monkeypatch.setattr(registry, "entries", lambda: table)
    return cls


def test_examples_are_there():
    assert [name for name, _ in EXAMPLES] == ["cl298_sleep_in_task", "cl198_result_backend_missing"]


@pytest.mark.parametrize("example_rule", EXAMPLES, ids=[n for n, _ in EXAMPLES], indirect=True)
def test_example_rule_works_first_time(example_rule, tmp_path):
    cls = example_rule
    assert set(sections(rule_doc(cls))) >= {"What it does", "Example", "Options", "References"}
    cases = [(c, True) for c in cls.VALID] + [(c, False) for c in cls.INVALID]
    cases += list(zip(doc_cases(cls), (False, True)))
    for i, (case, valid) in enumerate(cases):
        root = tmp_path / str(i)
        root.mkdir()
        check_case(cls, case, root, valid)


def test_a_file_rule_without_requirements_is_refused(monkeypatch):
    from celerylint.rule import Rule

    class NoRequirements(Rule):
        CODE = "CL297"
        NAME = "no-requirements"

    real = registry.discover_classes
    monkeypatch.setattr(registry, "discover_classes", lambda: [*real(), NoRequirements])
    with pytest.raises(registry.RuleDefinitionError, match="NoRequirements declares no REQUIRES"):
        registry.catalog_rows()
