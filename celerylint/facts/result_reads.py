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
import re

from ..api.syntax import SyntaxCollector, statements
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

READ_FACT = "task-result-read"
RESULT_NAMES = ("AsyncResult", "GroupResult", "ResultSet", "TaskResult")
RESULT_MODULES = ("django_celery_results", "celery.result")
DISPATCH = frozenset({"delay", "apply_async", "send_task"})


# any mention counts (a comment too: more reads, fewer findings); searched before the tree is walked
MENTION = re.compile(r"AsyncResult|GroupResult|ResultSet|TaskResult|django_celery_results|celery\.result")
DISPATCH_WORD = re.compile(r"delay|apply_async|send_task")  # the lines a dispatch may be on


class ResultReads(SyntaxCollector):
    REQUIRES = (b"AsyncResult", b"GroupResult", b"ResultSet", b"TaskResult", b"django_celery_results",
                b"celery.result", b"delay", b"apply_async", b"send_task")
    CONSUMERS = ("CL219",)
    PATHS = TEST_PATHS_EXCLUDED

    def collect(self, tree: ast.Module) -> None:
        mention = MENTION.search(self.file.text)
        if mention is not None:
            line = self.file.text.count("\n", 0, mention.start()) + 1
            self.file.fact(READ_FACT, line=line, col=0, end_line=line, end_col=0)
            return
        text = self.file.text
        if "\r" in text:  # lone carriage returns end lines too: look everywhere
            lines = None
        else:
            lines = {text.count("\n", 0, m.start()) + 1 for m in DISPATCH_WORD.finditer(text)}
        for stmt in statements(tree.body):
            if not isinstance(stmt, ast.stmt):
                continue  # a ``case`` of a ``match``: its body comes next
            if lines is not None and not any(n in lines for n in range(stmt.lineno, stmt.end_lineno + 1)):
                continue
            for node in self._used(stmt):
                if self._reads(node):
                    self.file.fact(READ_FACT, **self.file.position(node))
                    return

    @staticmethod
    def _used(stmt: ast.stmt):
        """The nodes of a statement whose value is used: all of a simple
        statement's but the dispatch an expression statement drops; a
        compound statement's header (its blocks are statements of their own)."""
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            for arg in (*stmt.value.args, *(k.value for k in stmt.value.keywords), stmt.value.func):
                yield from ast.walk(arg)
            return
        if any(getattr(stmt, f, None) for f in ("body", "orelse", "finalbody", "handlers", "cases")):
            for field, value in ast.iter_fields(stmt):
                if field not in ("body", "orelse", "finalbody", "handlers", "cases"):
                    for child in value if isinstance(value, list) else (value,):
                        if isinstance(child, ast.AST):
                            yield from ast.walk(child)
            return
        yield from ast.walk(stmt)

    @staticmethod
    def _reads(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in RESULT_NAMES
        if isinstance(node, ast.Attribute):
            return node.attr in RESULT_NAMES
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            return any(m.startswith(RESULT_MODULES) for m in modules) or any(a.name in RESULT_NAMES for a in node.names)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value.startswith("django_celery_results")  # INSTALLED_APPS: results shown in the admin
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DISPATCH
