"""Facts for CL218: the expiry the Celery lock libraries read from the app
configuration.  celery-once reads ``ONCE = {"settings": {"default_timeout":
N}}`` (one hour when the settings dict leaves it out); celery-singleton
reads ``singleton_lock_expiry`` (never expires when unset).  Written as an
assignment (``ONCE``, ``CELERY_ONCE``, ``app.conf.ONCE``,
``conf["ONCE"]``), a keyword (``app.conf.update(ONCE=...)``) or a dict key
(a configuration dict).  A value that is not a literal number (or
arithmetic of them) is recorded as unknown (``None``).  A call of
celery-singleton's ``clear_locks(app)`` (the library's documented way to
drop the locks a dead worker left, run from a worker signal) is recorded
too: with it, a lock without an expiry is not left forever."""

from __future__ import annotations

import ast
import math
import operator

from ..api.needles import Regex
from ..api.syntax import SyntaxCollector, dotted
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

ONCE_FACT = "celery-once-config"
SINGLETON_FACT = "celery-singleton-config"
CLEAR_LOCKS_FACT = "celery-singleton-clear-locks"
CLEAR_LOCKS = frozenset({"celery_singleton.clear_locks", "celery_singleton.singleton.clear_locks"})
ONCE_DEFAULT_TIMEOUT = 3600  # celery_once's ``default_timeout`` when its settings leave it out
_ONCE = frozenset({"ONCE", "CELERY_ONCE"})
_SINGLETON = frozenset({"singleton_lock_expiry", "CELERY_SINGLETON_LOCK_EXPIRY", "SINGLETON_LOCK_EXPIRY"})


_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def number(node: ast.AST | None) -> float | None:
    """A literal number, or ``+ - *`` of literal numbers (``60 * 60``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        try:
            value = float(node.value)
        except OverflowError:  # an int beyond any float
            return None
    elif isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = number(node.left), number(node.right)
        if left is None or right is None:
            return None
        value = _OPERATORS[type(node.op)](left, right)
    else:
        return None
    return value if math.isfinite(value) else None


def _dict_get(node: ast.AST | None, key: str) -> tuple[bool, ast.AST | None]:
    """``(readable, value)`` of ``key`` in a dict literal (value None: absent)."""
    if not isinstance(node, ast.Dict) or None in node.keys:
        return False, None
    for k, v in zip(node.keys, node.values):
        if isinstance(k, ast.Constant) and k.value == key:
            return True, v
    return True, None


def once_timeout(value: ast.AST) -> float | None:
    readable, settings = _dict_get(value, "settings")
    if not readable or settings is None:
        return None
    readable, timeout = _dict_get(settings, "default_timeout")
    if not readable:
        return None
    return float(ONCE_DEFAULT_TIMEOUT) if timeout is None else number(timeout)


class LockLibraryConfig(SyntaxCollector):
    # ``ONCE`` as a name (``CELERY_ONCE``), not inside one (CSP's ``NONCE`` in many settings modules)
    REQUIRES = (Regex(rb"ONCE(?<![A-Za-z]ONCE)"), b"ingleton_lock_expiry", b"INGLETON_LOCK_EXPIRY", b"clear_locks")
    CONSUMERS = ("CL218",)
    PATHS = TEST_PATHS_EXCLUDED

    def collect(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    self._setting(self._name(target), node.value)
            elif isinstance(node, ast.Call):
                if self._clears_locks(node.func):
                    self.file.fact(CLEAR_LOCKS_FACT, **self.file.position(node))
                for keyword in node.keywords:
                    self._setting(keyword.arg, keyword.value)
            elif isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and isinstance(key.value, str):
                        self._setting(key.value, value)

    def _clears_locks(self, func: ast.AST) -> bool:
        name = dotted(func)
        return (name is not None and name.partition(".")[0] in self.file.imports
                and self.file.qualify(name) in CLEAR_LOCKS)

    @staticmethod
    def _name(target: ast.AST) -> str | None:
        if isinstance(target, ast.Name):
            return target.id
        if isinstance(target, ast.Attribute):
            return target.attr
        if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
            return target.slice.value if isinstance(target.slice.value, str) else None
        return None

    def _setting(self, name: str | None, value: ast.AST) -> None:
        if name in _ONCE:
            self.file.fact(ONCE_FACT, timeout=once_timeout(value), **self.file.position(value))
        elif name in _SINGLETON:
            self.file.fact(SINGLETON_FACT, expiry=number(value), **self.file.position(value))
