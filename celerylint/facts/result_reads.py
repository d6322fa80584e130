"""Facts for CL219: a file that may read task results.  Anything that can
is counted, so that CL219 speaks only of projects that certainly never do:
a name or import of a result class (``AsyncResult``, ``GroupResult``,
``ResultSet``, django-celery-results' ``TaskResult``, the
``django_celery_results`` or ``celery.result`` modules), or the value of a
dispatch (``.delay()``, ``.apply_async()``, ``.send_task()``) that is used
at all (assigned, returned, passed on) rather than dropped as a statement.
One fact per file: its first such place."""

from __future__ import annotations

import ast

from ..api.syntax import SyntaxCollector
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

READ_FACT = "task-result-read"
RESULT_NAMES = ("AsyncResult", "GroupResult", "ResultSet", "TaskResult")
RESULT_MODULES = ("django_celery_results", "celery.result")
DISPATCH = frozenset({"delay", "apply_async", "send_task"})


class ResultReads(SyntaxCollector):
    REQUIRES = (b"Result", b"django_celery_results", b"delay", b"apply_async", b"send_task")
    PATHS = TEST_PATHS_EXCLUDED

    def collect(self, tree: ast.Module) -> None:
        dropped = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if self._reads(node, dropped):
                self.file.fact(READ_FACT, **self.file.position(node))
                return

    @staticmethod
    def _reads(node: ast.AST, dropped: set[int]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in RESULT_NAMES
        if isinstance(node, ast.Attribute):
            return node.attr in RESULT_NAMES
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            return any(m.startswith(RESULT_MODULES) for m in modules) or any(a.name in RESULT_NAMES for a in node.names)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.startswith("django_celery_results")  # INSTALLED_APPS: results shown in the admin
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DISPATCH
                and id(node) not in dropped)
