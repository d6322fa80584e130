"""Names the project reads back from an app's configuration: ``x.conf.get("k")``,
``x.conf["k"]``, ``x.conf.k`` and ``getattr(x.conf, "k")`` where a value is
read (not assigned).  A key the project puts into ``app.conf`` and reads
again (its own list of schedules, a copied ``CELERY_`` name) is its own,
not a misspelt setting Celery ignores: CL107 leaves those alone.

Any receiver counts (``sender.conf`` in a signal handler, ``self.conf``):
more reads, fewer findings.  One fact per file: ``names``, sorted."""

from __future__ import annotations

import ast

from ..api.syntax import SyntaxCollector
from ..api.needles import Regex
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

CONF_READ = "conf-read"
_METHODS = frozenset({"get", "setdefault", "pop"})


def _is_conf(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "conf"


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def read_name(node: ast.AST) -> str | None:
    """The literal name ``node`` reads from a ``conf``, or None."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and _is_conf(node.value):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_conf(node.value):
        return _literal(node.slice)
    if isinstance(node, ast.Call) and node.args:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _METHODS and _is_conf(func.value):
            return _literal(node.args[0])
        if (isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) >= 2
                and _is_conf(node.args[0])):
            return _literal(node.args[1])
    return None


class ConfReads(SyntaxCollector):
    REQUIRES = (Regex(rb"(?<!django)\.conf\s*[.\[]"),)  # not ``django.conf.urls``
    CONSUMERS = ("CL107", "CL110")
    PATHS = TEST_PATHS_EXCLUDED

    def collect(self, tree: ast.Module) -> None:
        nodes = list(ast.walk(tree))
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}  # ``conf.update(...)``: a method, not a key
        names = {name for node in nodes if id(node) not in called and (name := read_name(node)) is not None}
        if names:
            self.file.fact(CONF_READ, names=sorted(names))
