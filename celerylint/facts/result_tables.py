"""Facts for CL116: the classes that map the SQLAlchemy result backend's
table as a model of the project (a Django model's ``Meta.db_table``, a
SQLAlchemy model's ``__tablename__``).  A project that reads the results as
its own records (a task history, a status page) keeps them on purpose.
Read from CPython's ``ast``: such a class needs no fix, comment or layout."""

from __future__ import annotations

import ast

from ..api.needles import Regex
from ..api.syntax import SyntaxCollector
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

RESULT_TABLE_FACT = "result-table-model"
RESULT_TABLES = frozenset({"celery_taskmeta", "celery_tasksetmeta"})  # the backend's default table names
_NAMES = frozenset({"db_table", "__tablename__"})


class ResultTableModels(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (Regex(rb"celery_task(?:set)?meta"),)
    CONSUMERS = ("CL116",)

    def collect(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                        and stmt.targets[0].id in _NAMES and isinstance(stmt.value, ast.Constant)
                        and stmt.value.value in RESULT_TABLES):
                    self.file.fact(RESULT_TABLE_FACT, table=stmt.value.value, **self.file.position(stmt))
