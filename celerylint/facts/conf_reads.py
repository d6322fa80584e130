"""Names the project reads back, one fact per file:

- ``names``: those read from an app's ``conf`` (``x.conf.get("k")``,
  ``x.conf["k"]``, ``x.conf.k``, ``getattr(x.conf, "k")``, where a value is
  read, not assigned).  A key the project puts into ``app.conf`` and reads
  again (its own list of schedules) is its own, not a misspelt setting
  Celery ignores (CL107).  A name read from Django's settings may be read
  only to be shown, and says nothing of the kind.
- ``options``: ``CELERY_`` names read from Django's settings into the task
  option their name ends with (``max_retries = settings.CELERY_TASK_MAX_RETRIES``
  in a task class, ``@app.task(max_retries=settings.CELERY_TASK_MAX_RETRIES)``):
  the project applies them itself, as CL107 would advise.
- ``copied``: the names read, from a ``conf`` or as ``CELERY_``/``BROKER_``
  names of Django's settings (``settings.CELERY_ROUTES``), in the value of
  an assignment to a ``conf`` (``app.conf.task_routes = settings.CELERY_ROUTES``)
  or in ``conf.update(...)``: the project hands them to Celery itself, so
  an old name there is its own variable, which CL109 must not rename.
- ``settings``: the ``CELERY_``/``BROKER_`` names read from Django's
  settings anywhere (``settings.CELERY_QUEUES``, ``getattr(settings,
  "BROKER_URL")``): the project uses them itself, so CL109 offers no
  rename of them (the readers would break).

Any receiver counts (``sender.conf`` in a signal handler, ``self.conf``):
more reads, fewer findings."""

from __future__ import annotations

import ast
import re

from ..api.syntax import SyntaxCollector
from ..api.needles import Regex
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

CONF_READ = "conf-read"
_CELERY_NAME = re.compile(r"(?:CELERY|BROKER)_?[A-Z]")
_METHODS = frozenset({"get", "setdefault", "pop"})


def _is_conf(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "conf"


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_settings(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "settings"


def read_name(node: ast.AST, conf_only: bool = False) -> str | None:
    """The literal name ``node`` reads from a ``conf`` (or, but with
    ``conf_only``, a Celery name from ``settings``), or None."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        if _is_conf(node.value):
            return node.attr
        return node.attr if not conf_only and _is_settings(node.value) and _CELERY_NAME.match(node.attr) else None
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_conf(node.value):
        return _literal(node.slice)
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _METHODS and _is_conf(func.value):
            return _literal(node.args[0])
        if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2 and (
                _is_conf(node.args[0]) or (not conf_only and _is_settings(node.args[0]))):
            return _literal(node.args[1])
    return None


class ConfReads(SyntaxCollector):
    # a ``conf`` read or write (not ``django.conf.urls``): a settings name is copied only into a ``conf``
    REQUIRES = (Regex(rb"(?<!django)\.conf\s*[.\[]"), Regex(rb"settings\.(?:CELERY|BROKER)_"),
                Regex(rb"getattr\(\s*settings\s*,\s*[\"'](?:CELERY|BROKER)_"))
    CONSUMERS = ("CL107", "CL109")
    PATHS = TEST_PATHS_EXCLUDED

    def collect(self, tree: ast.Module) -> None:
        nodes = list(ast.walk(tree))
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}  # ``conf.update(...)``: a method, not a key
        names = {name for node in nodes if id(node) not in called and (name := read_name(node, True)) is not None}
        copied = set()
        for node in nodes:
            given = _given_to_conf(node)
            if given is not None:
                copied.update(name for part in ast.walk(given) if (name := read_name(part)) is not None)
        options = {name for key, value in _option_values(nodes)
                   if (name := read_name(value)) is not None and name.lower().endswith("_" + key)}
        from_settings = {name for node in nodes if (name := _settings_read(node)) is not None}
        if names or copied or options or from_settings:
            self.file.fact(CONF_READ, names=sorted(names), copied=sorted(copied), options=sorted(options),
                           settings=sorted(from_settings))


def _settings_read(node: ast.AST) -> str | None:
    """The Celery-shaped name ``node`` reads from Django's ``settings``, or None."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _is_settings(node.value):
        return node.attr if _CELERY_NAME.match(node.attr) else None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            and len(node.args) >= 2 and _is_settings(node.args[0])):
        name = _literal(node.args[1])
        return name if name is not None and _CELERY_NAME.match(name) else None
    return None


def _option_values(nodes: list[ast.AST]):
    """``(name, value)`` of each keyword argument and class attribute."""
    for node in nodes:
        if isinstance(node, ast.keyword) and node.arg:
            yield node.arg, node.value
        elif isinstance(node, ast.ClassDef):
            for statement in node.body:
                if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                        statement.targets[0], ast.Name):
                    yield statement.targets[0].id, statement.value


def _given_to_conf(node: ast.AST) -> ast.AST | None:
    """The value ``node`` hands to a ``conf``: ``x.conf.k = v``,
    ``x.conf["k"] = v``, ``x.conf.update(...)`` (its call)."""
    if isinstance(node, ast.Assign) and any(
            isinstance(t, (ast.Attribute, ast.Subscript)) and _is_conf(t.value) for t in node.targets):
        return node.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
            and _is_conf(node.func.value)):
        return node
    return None
