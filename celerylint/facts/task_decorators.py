"""The project's own task decorators: functions that only hand their
arguments on to Celery's task decorator, with options of their own.

    def shared_dedicated_queue_retry_task(*args, **kwargs):
        return shared_task(*args, base=DedicatedQueueRetryTask, **kwargs)

    def task(*args, **kwargs):
        kwargs.setdefault("bind", True)
        return app.task(*args, **kwargs)

    def tracked_task(**kwargs):
        def decorator(func):
            return shared_task(**kwargs)(func)
        return decorator

A function decorated with one of them (``@task(queue="q")``, or ``@task``
alone when the function hands ``*args`` straight on) is a task with the
options of the call, over the function's ``kwargs.setdefault`` defaults,
under the options it passes itself or sets with ``kwargs["x"] = v``.

Recognised only when the function is defined at module level, its name ends
in ``task`` (as the byte prefilter of the task rules asks of a decorator),
its parameters are ``*args, **kwargs`` or ``**kwargs``, with keyword-only
ones between them whose defaults it hands on unchanged by keyword
(``base=RetryTask`` then ``shared_task(*args, base=base, **kwargs)``:
defaults the call overrides), its body holds
nothing but a docstring, those ``kwargs`` statements (and
``kwargs["x"] = kwargs.pop("x", v)``, a default), calls not given
``kwargs`` (a log line) and the ``return`` (of the decorator, or of
``typing.cast(T, decorator)``; or
one nested function that returns the decorator applied to its argument),
and the decorator is Celery's ``shared_task``/``task`` or ``.task`` of an
app (one made in the module, one imported from the project, or
``current_app``).  Anything else is not a task decorator here: its tasks
stay unknown, never judged with options celerylint guessed.

Facts: ``task-decorator`` (``name``: qualified, ``bare``: usable without a
call, ``forced`` and ``defaults``: options as ``encode_option`` values);
``task-decorator-export`` for a package's ``__init__`` that imports one
(``from .retry import retry_task``), so that ``from pkg import retry_task``
names it.  The index (``task_class_index.decorators``) gives each file's
rules ``"pkg.mod.retry_task#task_decorator" -> JSON``; ``domain.tasks``
reads it.
"""

from __future__ import annotations

import ast
import builtins

from ..api.needles import Regex
from ..api.syntax import SyntaxCollector, dotted
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED
from ..domain.task_syntax import LIBRARIES

DECORATOR_FACT = "task-decorator"
EXPORT_FACT = "task-decorator-export"
_CELERY_DECORATORS = frozenset({"celery.shared_task", "celery.task", "celery.app.shared_task"})
_CURRENT_APPS = frozenset({"celery.current_app", "celery.app.current_app"})
_APP_CLASSES = frozenset({"celery.Celery", "celery.app.Celery", "celery.app.base.Celery"})


class Unreadable(Exception):
    """A value, statement or shape not read exactly: no decorator."""


def encode_option(node: ast.expr, file, defined: set[str]) -> dict | None:
    """An option's value: ``{"const": v}``, ``{"ref": "pkg.mod.Name"}`` (a
    name the module imports, or one of those it ``defined`` at top level), ``{"builtin": "Exception"}``,
    ``{"tuple"|"list": [...]}``, ``{"dict": [[key, value], ...]}``; None
    for anything else (an unknown value, as an unreadable option is)."""
    if isinstance(node, ast.Constant) and (node.value is None or type(node.value) in (bool, int, float, str)):
        return {"const": node.value}
    if isinstance(node, ast.Name):
        if node.id in file.imports:
            return {"ref": file.qualify(node.id)}
        if node.id in defined:
            return {"ref": f"{file.module_name or file.path}.{node.id}"}
        return {"builtin": node.id} if hasattr(builtins, node.id) else None
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        items = [encode_option(e, file, defined) for e in node.elts]
        return None if None in items else {"tuple" if isinstance(node, ast.Tuple) else "list": items}
    if isinstance(node, ast.Dict) and None not in node.keys:
        keys = [encode_option(k, file, defined) for k in node.keys]
        values = [encode_option(v, file, defined) for v in node.values]
        if any(k is None or "const" not in k for k in keys) or None in values:
            return None
        return {"dict": [[k["const"], v] for k, v in zip(keys, values)]}
    return None


class TaskDecorators(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED
    # the decorator called with the arguments handed on: ``shared_task(*args``, ``app.task(**kwargs``,
    # ``shared_task(base=Managed, *args``
    REQUIRES = (Regex(rb"task\((?:\s*\w+\s*=\s*[\w.]+\s*,)*\s*\*\*?[A-Za-z_]"),)

    def collect(self, tree: ast.Module) -> None:
        file = self.file
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        apps = {t.id for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and file.qualify(dotted(n.value.func) or "") in _APP_CLASSES
                for t in n.targets if isinstance(t, ast.Name)}
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.endswith("task") and not node.decorator_list:
                try:
                    found = _factory(node, file, apps, defined)
                except Unreadable:
                    continue
                if found is not None:
                    name = f"{file.module_name or file.path}.{node.name}"
                    file.fact(DECORATOR_FACT, name=name, **found)


def _factory(node: ast.FunctionDef, file, apps: set[str], defined: set[str]) -> dict | None:
    args = node.args
    if args.posonlyargs or args.args or args.kwarg is None or None in args.kw_defaults:
        return None
    star = args.vararg.arg if args.vararg is not None else None
    kwargs = args.kwarg.arg
    # ``def retry_task(*args, base=RetryTask, **kwargs)``: defaults the call overrides, each handed on
    # unchanged by keyword (``base=base``) and used nowhere else
    params = {a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults)}
    uses = [n.id for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id in params]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    call, nested = _uncast(body[-1].value, file), False
    if isinstance(call, ast.Name) and len(body) >= 2 and isinstance(body[-2], ast.FunctionDef):
        call, nested = _wrapped(body[-2], call.id), True  # def decorator(func): return task(...)(func); return decorator
    forced: dict[str, dict | None] = {}
    defaults: dict[str, dict | None] = {}
    for stmt in body[:-2] if nested else body[:-1]:
        _kwargs_statement(stmt, kwargs, file, defined, forced, defaults)
    if not isinstance(call, ast.Call) or not _celery_decorator(call.func, file, apps, star, kwargs):
        return None
    handed = [a for a in call.args if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and a.value.id == star]
    if len(call.args) != len(handed) or len(handed) > 1 or sum(k.arg is None for k in call.keywords) != 1:
        return None  # the arguments handed on as received, and nothing else positional
    handed_params = [k for k in call.keywords if isinstance(k.value, ast.Name) and k.value.id in params
                     and k.arg == k.value.id]
    if sorted(uses) != sorted(k.arg for k in handed_params):
        return None  # a parameter used otherwise, or twice
    for keyword in call.keywords:
        if keyword.arg is None:
            if not (isinstance(keyword.value, ast.Name) and keyword.value.id == kwargs):
                return None
        elif keyword in handed_params:
            defaults[keyword.arg] = encode_option(params[keyword.arg], file, defined)
        else:
            forced[keyword.arg] = encode_option(keyword.value, file, defined)
            defaults.pop(keyword.arg, None)
    # ``@retry_task`` alone calls it with the function: a task when that is handed straight on
    return {"bare": bool(handed) and not nested, "forced": forced, "defaults": defaults}


def _uncast(node: ast.expr, file) -> ast.expr:
    """``typing.cast(T, value)``: the value."""
    if (isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords
            and file.qualify(dotted(node.func) or "") in ("typing.cast", "typing_extensions.cast")):
        return node.args[1]
    return node


def _kwargs_statement(stmt: ast.stmt, kwargs: str, file, defined: set[str], forced: dict, defaults: dict) -> None:
    """``kwargs.setdefault("x", v)``, ``kwargs["x"] = v``, or a call that is
    not given the options; anything else: Unreadable."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if (isinstance(call.func, ast.Attribute) and call.func.attr == "setdefault" and isinstance(call.func.value, ast.Name)
                and call.func.value.id == kwargs and len(call.args) == 2 and not call.keywords
                and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
            if call.args[0].value not in forced:
                defaults.setdefault(call.args[0].value, encode_option(call.args[1], file, defined))
            return
        if not any(isinstance(n, ast.Name) and n.id == kwargs for n in ast.walk(call)):
            return  # a call that cannot change the options: ``print(...)``, ``log.debug(...)``
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == kwargs
                and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)):
            key, value = target.slice.value, stmt.value
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "pop"
                    and isinstance(value.func.value, ast.Name) and value.func.value.id == kwargs and len(value.args) == 2
                    and not value.keywords and isinstance(value.args[0], ast.Constant) and value.args[0].value == key):
                if key not in forced:  # ``kwargs["x"] = kwargs.pop("x", v)``: ``kwargs.setdefault("x", v)``
                    defaults[key] = encode_option(value.args[1], file, defined)
                return
            forced[target.slice.value] = encode_option(stmt.value, file, defined)
            defaults.pop(target.slice.value, None)
            return
    raise Unreadable


def _wrapped(inner: ast.FunctionDef, name: str) -> ast.expr | None:
    """``def name(func): return <decorator call>(func)``: the decorator call."""
    args = inner.args
    if inner.name != name or inner.decorator_list or len(args.args) != 1 or args.vararg or args.kwarg \
            or args.kwonlyargs or args.posonlyargs or len(inner.body) != 1 or not isinstance(inner.body[0], ast.Return):
        return None
    value = inner.body[0].value
    if (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords
            and isinstance(value.args[0], ast.Name) and value.args[0].id == args.args[0].arg):
        return value.func
    return None


def _celery_decorator(func: ast.expr, file, apps: set[str], star: str | None, kwargs: str) -> bool:
    if isinstance(func, ast.Name) and func.id in (star, kwargs):
        return False
    name = dotted(func)
    if name is None:
        return False
    head = name.partition(".")[0]
    if head in file.imports and file.qualify(name) in _CELERY_DECORATORS:
        return True
    if not isinstance(func, ast.Attribute) or func.attr != "task":
        return False
    app = dotted(func.value)
    if app is None:
        return False
    if "." not in app and app in apps and app not in file.imports:
        return True
    if app.partition(".")[0] not in file.imports:
        return False
    qualified = file.qualify(app)
    return qualified in _CURRENT_APPS or ("." not in app and not qualified.startswith(LIBRARIES))


class TaskDecoratorExports(SyntaxCollector):
    """``from .retry import retry_task`` in a package's ``__init__``: what
    ``from pkg import retry_task`` names elsewhere."""

    PATHS = (TEST_PATHS_EXCLUDED, r"(?:^|/)__init__\.py$")
    REQUIRES = (Regex(rb"task\b"),)

    def collect(self, tree: ast.Module) -> None:
        file = self.file
        package = file.module_name or ""
        if not package:
            return
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    local = alias.asname or alias.name
                    if local.endswith("task") and local in file.imports:
                        file.fact(EXPORT_FACT, name=f"{package}.{local}", target=file.imports[local])
