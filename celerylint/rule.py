"""The rule API: everything a rule module imports from the framework.

- ``Rule``: a file rule, a libcst batchable visitor run in the engine's one
  traversal of each file; ``report(node, message, fix=...)``; with a
  classmethod ``check_project(project)``, also a part in the project phase.
- ``Checker``: a fact collector (no code of its own): records plain data
  with ``self.ctx.fact(...)`` for project rules; ``SyntaxCollector`` is the
  cheaper kind that reads CPython's ``ast``.
- ``ProjectRule``: runs once per run over every file's facts;
  ``ConfigRule`` (the Celery configuration model) is its usual form.
- ``REQUIRES``: what a file's bytes must contain for a file rule or collector
  to run on it (``Regex``, ``All``, tuples of alternatives; see
  ``needles.py``).  A file checker without it is refused at discovery.
- ``Fix`` with edits as data: ``Replace``, ``InsertBefore``, ``InsertAfter``,
  ``RemoveLines``, ``InsertLinesAfter``, ``MoveLinesAfter``.  Positions are
  the engine's business: edits name nodes, and are turned into text edits
  once positions are known.
- for project rules, whose fixes are text edits of files: ``TextFix``,
  ``TextEdit``, ``Finding``, ``LineIndex`` (a file's lines); for type hints,
  ``FileContext`` (a file rule's ``self.ctx``).
- ``Option``: a configuration key the rule reads, with its default and docs;
  read it with ``self.option(name)``.
- ``Valid``/``Invalid``: the rule's test cases, run through the real engine
  and fix loop (``tests/test_rule_cases.py``); the ``## Example`` blocks of
  the rule's docstring run as cases too.  ``django_project(settings)``
  builds the usual Django + Celery scaffold around a settings body.

The parts live in ``celerylint.api``; this module re-exports them, and
``ConfigRule`` from the configuration model, imported on first use because
it brings that model with it.
"""

from __future__ import annotations

from typing import Any

from .api.rule import *  # noqa: F403 - the rule API is this module's whole content
from .api.rule import __all__ as _api

__all__ = [*_api, "ConfigRule"]  # noqa: F405 - ConfigRule: see __getattr__


def __getattr__(name: str) -> Any:
    if name == "ConfigRule":
        from .domain.celeryconf.rulebase import ConfigRule

        return ConfigRule
    raise AttributeError(name)
