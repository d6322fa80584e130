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

Also ``globals-updated``: a module-level ``globals().update(x)``,
``vars().update(x)`` or ``locals().update(x)``, which may set any name
(``names``: None), or only the literal keys of a dict display.  An e-mail
configuration (django-environ's ``env.email_url()``, dj-email-url's
``parse``/``config``, also given as ``cast=``, or a module-level name bound
to one of these) sets only ``EMAIL_*`` names: no fact.
"""

from __future__ import annotations

import ast

from ..api.syntax import SyntaxCollector, dotted, statements
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

GLOBALS_HANDED = "globals-handed"
GLOBALS_UPDATED = "globals-updated"
RUNTIME_NAMES = "runtime-setting-names"
_NAMESPACES = frozenset({"globals", "vars", "locals"})
# what returns Django's EMAIL_* settings as a dict (django-environ, dj-email-url)
_EMAIL_CALLS = frozenset({"email_url", "email_url_config"})
_EMAIL_MODULE = "dj_email_url"


def _is_globals(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals"
            and not node.args and not node.keywords)


def _hands_globals(node: ast.AST) -> bool:
    """A call that takes ``globals()`` as an argument."""
    return isinstance(node, ast.Call) and any(_is_globals(a) for a in (*node.args, *(k.value for k in node.keywords)))


def _email_helper(node: ast.AST) -> bool:
    name = dotted(node) or ""
    return name.rpartition(".")[2] in _EMAIL_CALLS or name.startswith(_EMAIL_MODULE + ".")


def _email_config(node: ast.AST, bound: dict[str, ast.AST]) -> bool:
    """``node`` is an e-mail configuration dict (see the module's docstring)."""
    if isinstance(node, ast.Name) and node.id in bound:
        node = bound[node.id]
    if not isinstance(node, ast.Call):
        return False
    return _email_helper(node.func) or any(k.arg == "cast" and _email_helper(k.value) for k in node.keywords)


def _namespace_update(statement: ast.stmt) -> list[ast.expr] | None:
    """The arguments of ``globals().update(...)`` (or ``vars()``,
    ``locals()``) when that is the statement; else None."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "update"):
        return None
    owner = call.func.value
    if not (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id in _NAMESPACES
            and not owner.args and not owner.keywords):
        return None
    return [*call.args, *(k.value if k.arg is None else ast.Dict([ast.Constant(k.arg)], [k.value]) for k in call.keywords)]


def _updated_names(args: list[ast.expr], bound: dict[str, ast.AST]) -> list[str] | None:
    """The names an update with ``args`` may set: the literal keys of dict
    displays, none for an e-mail configuration; None: any name."""
    names: list[str] = []
    for arg in args:
        if _email_config(arg, bound):
            continue
        if not isinstance(arg, ast.Dict) or not all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in arg.keys):
            return None
        names.extend(k.value for k in arg.keys)
    return names


class RuntimeSettings(SyntaxCollector):
    REQUIRES = (b"globals()", b"global_name", b"vars().update", b"locals().update")
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
        self._updates(tree)
        names = sorted({k.value.value for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords
                        if k.arg == "global_name" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)})
        if names:
            self.file.fact(RUNTIME_NAMES, names=names)

    def _updates(self, tree: ast.Module) -> None:
        bound: dict[str, ast.AST] = {}  # module-level names, as bound so far
        for statement in statements(tree.body, definitions=False):
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(
                    statement.targets[0], ast.Name):
                bound[statement.targets[0].id] = statement.value
                continue
            args = _namespace_update(statement)
            if args is None:
                continue
            names = _updated_names(args, bound)
            if names is None or names:
                self.file.fact(GLOBALS_UPDATED, line=statement.lineno, names=names)
