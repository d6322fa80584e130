"""Module-level functions of settings files that settings are computed with
(paperless' ``CELERY_BROKER_URL, _ = parse_redis_url(os.getenv("PAPERLESS_REDIS"))``
with ``parse_redis_url`` in ``settings/custom.py``), read from CPython's
``ast`` in files whose path looks like settings.

Fact ``settings-helper`` (found by its file's path): ``name``, ``params`` (``[name,
has_default, encoded default]``) and ``body``, the function as data that
``domain/celeryconf/helpers.py`` runs for the arguments of a call:

- ``{"return": expr}``; ``{"if": cond, "then": [...], "else": [...]}``;
  ``{"stop": 1}`` for any other statement (reaching it makes the result
  unknown: it may assign, loop or raise);
- ``cond``: ``[test, i]`` with ``test`` one of ``is_none``, ``not_none``,
  ``truthy``, ``falsy`` on parameter ``i``, or null (undecidable);
- ``expr``: an encoded value (``domain/celeryconf/values.py``), or
  ``{"param": i}``, ``{"tuple": [expr, ...]}``, ``{"concat": [expr, ...],
  "fstring": bool}``, or null (unknown).  A name that is not a parameter
  is the value of the module-level name, when the module binds it once, at
  its top level, to what such an expression encodes without parameters
  (``REDIS_HOST = os.getenv("REDIS_HOST", "redis")``); any other name is
  unknown.
"""

from __future__ import annotations

import ast
from typing import Any

from ..domain.celeryconf.paths import SETTINGS_PATH, TEST_PATHS_EXCLUDED
from ..api.needles import Regex
from ..api.syntax import SyntaxCollector

HELPER_FACT = "settings-helper"
_ENV_READERS = frozenset({"os.getenv", "os.environ.get"})
_TESTS = {ast.Is: "is_none", ast.IsNot: "not_none"}


class SettingsHelpers(SyntaxCollector):
    REQUIRES = (Regex(rb"(?:\A|\n)def[ \t]+\w+[ \t]*\("),)
    # the model leaves tests' facts out; a migration named for a setting (``0007_order_settings.py``) is none
    PATHS = (SETTINGS_PATH.pattern, TEST_PATHS_EXCLUDED, r"^(?!(?:.*/)?migrations/)")

    def collect(self, tree: ast.Module) -> None:
        names: list[dict[str, dict[str, Any]]] = []  # computed on first use

        def module_names() -> dict[str, dict[str, Any]]:
            if not names:
                names.append(_module_names(tree, self.file))
            return names[0]

        for statement in tree.body:
            if isinstance(statement, ast.FunctionDef) and not statement.decorator_list:
                encoded = _Encoder(self.file, statement, module_names).function()
                if encoded is not None:
                    self.file.fact(HELPER_FACT, name=statement.name, **encoded)


def _module_names(tree: ast.Module, file) -> dict[str, dict[str, Any]]:
    """Module-level names bound once, by a top-level ``NAME = <expr>``, with
    the expression encoded (those that encode)."""
    bound: dict[str, int] = {}
    simple: dict[str, ast.expr] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and any(a.name == "*" for a in statement.names):
            return {}  # it may bind any name
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[statement.name] = bound.get(statement.name, 0) + 1
            for node in ast.walk(statement):  # ``global X`` in a function rebinds X
                if isinstance(node, ast.Global):
                    for name in node.names:
                        bound[name] = bound.get(name, 0) + 2
            continue
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            simple[statement.targets[0].id] = statement.value
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                bound[node.id] = bound.get(node.id, 0) + 1
            elif isinstance(node, ast.alias):
                name = (node.asname or node.name).partition(".")[0]
                bound[name] = bound.get(name, 0) + 1
    out: dict[str, dict[str, Any]] = {}
    for name, value in simple.items():
        if bound.get(name) == 1:
            encoded = _Encoder(file, None, dict).expr(value)
            if encoded is not None and _literal(encoded):
                out[name] = encoded
    return out


def _literal(encoded: dict[str, Any]) -> bool:
    """No parameter and nothing unknown in it."""
    if "param" in encoded:
        return False
    parts = encoded.get("tuple") or encoded.get("concat")
    if parts is not None:
        return all(p is not None and _literal(p) for p in parts)
    return True


class _Encoder:
    def __init__(self, file, node: ast.FunctionDef | None, module_names) -> None:
        self.file = file
        self.node = node
        self.module_names = module_names  # () -> the module's names (``_module_names``)
        self.local: set[str] = set()
        self.params = [a.arg for a in node.args.args] if node is not None else []
        self.returns = 0  # returns whose value is not unknown

    def function(self) -> dict[str, Any] | None:
        args = self.node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            return None
        for node in ast.walk(self.node):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                return None
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                self.local.add(node.id)
        defaults = [None] * (len(args.args) - len(args.defaults)) + list(args.defaults)
        params = [[a.arg, d is not None, self.expr(d) if d is not None else None] for a, d in zip(args.args, defaults)]
        body = self.block(self.node.body, docstring=True)
        return {"params": params, "body": body} if self.returns else None

    def block(self, statements: list[ast.stmt], docstring: bool = False) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i, statement in enumerate(statements):
            if isinstance(statement, ast.Pass) or (
                    docstring and i == 0 and isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)):
                continue
            if isinstance(statement, ast.Return):
                value = self.expr(statement.value) if statement.value is not None else {"const": None}
                self.returns += value is not None
                out.append({"return": value})
                break
            if isinstance(statement, ast.If):
                out.append({"if": self.cond(statement.test), "then": self.block(statement.body),
                            "else": self.block(statement.orelse)})
                continue
            out.append({"stop": 1})
            break
        return out

    def cond(self, test: ast.expr) -> list | None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.cond(test.operand)
            flipped = {"truthy": "falsy", "falsy": "truthy", "is_none": "not_none", "not_none": "is_none"}
            return [flipped[inner[0]], inner[1]] if inner else None
        if isinstance(test, ast.Name) and test.id in self.params:
            return ["truthy", self.params.index(test.id)]
        if (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _TESTS
                and isinstance(test.left, ast.Name) and test.left.id in self.params
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
            return [_TESTS[type(test.ops[0])], self.params.index(test.left.id)]
        return None

    def expr(self, node: ast.expr) -> dict[str, Any] | None:
        if isinstance(node, ast.Constant):
            value = node.value
            return {"const": value} if value is None or isinstance(value, (str, int, float, bool)) else None
        if isinstance(node, ast.Name):
            if node.id in self.params:
                return {"param": self.params.index(node.id)}
            return None if node.id in self.local else self.module_names().get(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return None
            return {"tuple": [self.expr(e) for e in node.elts]}
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    if part.conversion != -1 or part.format_spec is not None:
                        return None
                    part = part.value
                parts.append(self.expr(part))
            return {"concat": parts, "fstring": True}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return {"concat": [self.expr(node.left), self.expr(node.right)], "fstring": False}
        if isinstance(node, ast.Call) and self._env_reader(node):
            return self._env(node)
        return None

    def _env_reader(self, node: ast.Call) -> bool:
        func = node.func
        dotted = []
        while isinstance(func, ast.Attribute):
            dotted.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id in self.params:
            return False
        return self.file.qualify(".".join([func.id, *reversed(dotted)])) in _ENV_READERS

    def _env(self, node: ast.Call) -> dict[str, Any] | None:
        """``os.getenv("X", default)``: an environment value, as ``values.encode``
        writes it (a default that is not a literal is unknown)."""
        if node.keywords or not 1 <= len(node.args) <= 2:
            return None
        name = node.args[0]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return None
        default = self.expr(node.args[1]) if len(node.args) == 2 else None
        return {"env": name.value, "default": default if default is not None and "const" in default else None}
