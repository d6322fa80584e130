"""Settings a project's own code writes into a settings module at run time
(Mayan-EDMS' smart settings): the module hands its ``globals()`` to a call
(``SettingNamespaceSingleton(global_symbol_table=globals())``), and
settings modules of the apps register the names that call may set
(``namespace.add_setting(global_name="CELERY_BROKER_URL", ...)``).
Read from CPython's ``ast``, in files named like ``settings*.py`` or in a
``settings/`` directory.

Facts: ``globals-handed`` (the line of a module-level statement whose call
takes ``globals()``) and ``runtime-setting-names`` (the string values of
``global_name=`` keywords).  The model makes those names unknown where the
settings chain has handed its globals, unless assigned after it
(``domain/celeryconf/model.py``).
"""

from __future__ import annotations

import ast

from ..api.syntax import SyntaxCollector
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

GLOBALS_HANDED = "globals-handed"
RUNTIME_NAMES = "runtime-setting-names"


def _is_globals(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals"
            and not node.args and not node.keywords)


def _hands_globals(node: ast.AST) -> bool:
    """A call that takes ``globals()`` as an argument."""
    return isinstance(node, ast.Call) and any(_is_globals(a) for a in (*node.args, *(k.value for k in node.keywords)))


class RuntimeSettings(SyntaxCollector):
    REQUIRES = (b"globals()", b"global_name")
    # ``settings.py``, ``settings_prod.py``, ``settings/base.py``: a literal
    # first, so that the test of every path of the tree is a fast scan
    PATHS = (r"settings(?:[^/]*|/[^/]*)\.py$", TEST_PATHS_EXCLUDED)

    def collect(self, tree: ast.Module) -> None:
        for statement in tree.body:  # what runs at import, not in a function or class
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if any(_hands_globals(node) for node in ast.walk(statement)):
                self.file.fact(GLOBALS_HANDED, line=statement.lineno)
                break
        names = sorted({k.value.value for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords
                        if k.arg == "global_name" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)})
        if names:
            self.file.fact(RUNTIME_NAMES, names=names)
