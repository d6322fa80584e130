"""Apps configured by a function they are passed to.

``def configure_celery(app): app.config_from_object("proj.settings")``,
then ``configure_celery(celery_app)``: the collector records what the
function does to its parameter under the key ``?param:proj.config.configure_celery#0``
(facts/config_apps.py) and the call as an ``app_passed`` fact.  Here each
such fact is given to every app passed in that position; a function no app
is passed to configures nothing, and its facts are dropped.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...facts.config_apps import PARAMETER

Fact = dict[str, Any]


def _placeholder(fact: Fact) -> str | None:
    app = fact.get("app")
    if isinstance(app, str) and app.startswith(PARAMETER):
        return app
    source = fact.get("source")
    if isinstance(source, str) and source.startswith("app:" + PARAMETER):
        return source[len("app:"):]
    return None


def _callee_key(callee: str, index: int) -> str:
    return f"{PARAMETER}{callee}#{index}"


def resolve(facts: list[Fact]) -> list[Fact]:
    """``facts`` with each placeholder fact once per app passed to its function."""
    if not any(_placeholder(f) for f in facts):
        return facts
    passed: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        if f["kind"] == "app_passed":
            passed[_callee_key(f["callee"], f["index"])].add(f["app"])
    out = []
    for f in facts:
        placeholder = _placeholder(f)
        if placeholder is None:
            out.append(f)
            continue
        for app in sorted(_apps(passed, placeholder)):
            moved = dict(f)
            if "app" in moved:
                moved["app"] = app
            if moved.get("source") == "app:" + placeholder:
                moved["source"] = "app:" + app
            out.append(moved)
    return out


def _apps(passed: dict[str, set[str]], placeholder: str) -> set[str]:
    """The apps passed to the function of ``placeholder``: named as the
    function's module names itself, or as another file imports it (one
    module name may lack the other's leading packages: a ``src/`` layout)."""
    if placeholder in passed:
        return passed[placeholder]
    function = placeholder[len(PARAMETER):]
    return {app for key, apps in passed.items() for app in apps
            if (other := key[len(PARAMETER):]).endswith("." + function) or function.endswith("." + other)}
