"""Which files the ``ast`` twin of ``TaskCollector`` (``facts/task_defs.py``)
reads exactly as the libcst collector does (``facts/tasks.py``), and the
facts it records there.  No libcst here: the gate runs before libcst is
imported.

A file is handled when every shape that could make a task fact is one
read without the value model: task decorators that are Celery's imported
names or ``app.task`` on an imported app, with keyword options whose
values are literals, attribute chains (unknown values) or lists and
tuples of these, and classes without bases.  Anything else
(classes with bases, ``register``, names bound in the file used as
decorators or apps, options that are names or calls, ``base=``,
non-ASCII text, lone carriage returns, a task name defined twice) is
declined and left to libcst."""

from __future__ import annotations

import ast
import re

from ..api.syntax import SyntaxFile, dotted, statements
from .task_syntax import may_be_project_decorator

# as ``domain.tasks`` / ``domain.task_classes`` (celery's decorator names, app objects)
TASK_DECORATORS = frozenset({
    "celery.shared_task", "celery.task", "celery.app.shared_task", "celery.decorators.task",
    "celery.task.periodic_task", "celery.decorators.periodic_task",
})
APP_TASK_METHODS = frozenset({"task", "periodic_task"})
APP_OBJECTS = frozenset({"celery.current_app", "celery.app.current_app"})
TASK_OPTIONS = ("acks_late", "reject_on_worker_lost", "time_limit", "soft_time_limit", "expires", "queue", "ignore_result",
                "serializer")
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.MULTILINE)
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod", "property"})


class Declined(Exception):
    """A shape the twin does not read exactly as libcst does."""


class Stored:
    """The names the file binds, found only when asked (a decorator not
    imported: rare), since walking every node costs more than the rest."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.names: set[str] | None = None

    def __contains__(self, name: str) -> bool:
        if self.names is None:
            self.names = {n.id for n in ast.walk(self.tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        return name in self.names


def _file(tree: ast.Module, text: str, path: str = "", module_name: str | None = None) -> SyntaxFile:
    source = SyntaxFile(path, text, module_name, None)
    source.record_imports(tree)
    return source


def _literal(node: ast.expr, source: SyntaxFile, inner: bool = False):
    """The encoded value (``celeryconf.values.encode(setting_value(...))``)
    of a plain literal, an attribute chain (``settings.QUEUE``: unknown to
    ``evaluate``, None) or a list or tuple of these, else Declined."""
    if isinstance(node, ast.Attribute) and dotted(node) is not None:
        return None
    if isinstance(node, (ast.List, ast.Tuple)) and not inner:
        if any(isinstance(e, ast.Starred) for e in node.elts):
            raise Declined
        items = [_literal(e, source, True) for e in node.elts]
        return {"const": [i["const"] for i in items]} if all(i is not None for i in items) else None
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None:
            return {"const": None}
        if isinstance(value, (bool, int, float)) and not isinstance(value, complex):
            return {"const": value}
        if isinstance(value, str):
            seg = source.segment(node) or ""
            q = seg[:1]
            if q in ("'", '"') and seg[-1:] == q and seg.count(q) == 2 and "\\" not in seg:
                return {"const": value}
    raise Declined


def _decorator(decorator: ast.expr, source: SyntaxFile, stored: set[str]) -> dict | None:
    """The keyword options of a task decorator, None for a decorator that
    is certainly not one, Declined for one that needs the value model."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    name = dotted(target)
    if name is None:
        raise Declined
    head = name.partition(".")[0]
    qualified = source.qualify(name) if head in source.imports else None
    is_task = qualified in TASK_DECORATORS
    if not is_task and isinstance(target, ast.Attribute) and target.attr in APP_TASK_METHODS:
        app = dotted(target.value)
        if isinstance(target.value, ast.Name):
            if app not in source.imports:
                raise Declined  # an app bound in the file: libcst looks it up
            bound = source.imports[app]
            is_task = bound in APP_OBJECTS or not bound.startswith(("celery.", "redis", "django."))
        else:
            is_task = app is not None and app.partition(".")[0] in source.imports and source.qualify(app) in APP_OBJECTS
    if not is_task:
        if may_be_project_decorator(qualified or name) and not (
                isinstance(target, ast.Attribute) and target.attr in APP_TASK_METHODS):
            raise Declined  # may be one of the project's task decorators: the index decides
        if isinstance(target, ast.Name) and head not in source.imports:
            if call is not None and not isinstance(call.func, ast.Call):
                return None
            if head not in _PLAIN_DECORATORS or head in stored:
                raise Declined  # may be bound to ``shared_task(...)``
        return None
    if call is None:
        return {}
    if any(k.arg is None for k in call.keywords):
        raise Declined
    return {k.arg: k for k in call.keywords}


def task_facts(tree: ast.Module, text: str, path: str = "", module_name: str | None = None) -> list[dict]:
    """The ``task``/``task_acks_late`` facts ``TaskCollector`` records in
    the file, or Declined."""
    if not text.isascii() or text.count("\r") != text.count("\r\n") or "register" in text:
        raise Declined
    source = _file(tree, text, path, module_name)
    stored = Stored(tree)
    defs: dict[str, int] = {}
    for m in _DEFINITION.finditer(text):
        if m.group(1) == "def":
            defs[m.group(2)] = -1 if m.group(2) in defs else m.start(2)
    facts = []
    for node in statements(tree.body):
        if isinstance(node, ast.ClassDef) and (node.bases or node.keywords):
            raise Declined  # may be a task class (value model)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        options = None
        for decorator in node.decorator_list:
            options = _decorator(decorator, source, stored)
            if options is not None:
                break
        if options is None:
            continue
        if "base" in options:
            raise Declined
        encoded = {k: _literal(options[k].value, source) for k in TASK_OPTIONS if k in options}
        start = defs.get(node.name, -1)
        if start < 0:
            raise Declined  # libcst's position of the name: not read here
        line = text.count("\n", 0, start) + 1
        col = start - (text.rfind("\n", 0, start) + 1)
        facts.append({"kind": "task", "path": path, "name": node.name, "options": encoded, "base": None,
                      "app": _app(node, source), "line": line, "col": col, "end_line": line,
                      "end_col": col + len(node.name)})
        if "acks_late" in options and "reject_on_worker_lost" not in options:
            keyword = options["acks_late"]
            value_seg, kw_seg = source.segment(keyword.value), source.segment(keyword)
            if not kw_seg or not value_seg or kw_seg.partition("=")[2].strip() != value_seg:
                raise Declined  # a parenthesised value: libcst's position may differ
            facts.append({"kind": "task_acks_late", "path": path, "name": node.name, **source.position(keyword.value)})
    return facts


def _app(node: ast.FunctionDef, source: SyntaxFile) -> str | None:
    for decorator in node.decorator_list:
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(func, ast.Attribute) and func.attr == "task":
            name = dotted(func.value)
            if name is not None:
                name = source.qualify(name)
            if name and "." not in name and name not in source.imports:
                name = f"{source.module_name or source.path}.{name}"
            return name
    return None


def handles_tasks(tree: ast.Module, text: str) -> bool:
    try:
        task_facts(tree, text)
    except Declined:
        return False
    return True


def tasks_need_libcst(tree: ast.Module, text: str) -> bool:
    """``TaskCollector``'s gate: the files its ``ast`` twin declines."""
    return not handles_tasks(tree, text)
