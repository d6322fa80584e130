"""Facts for CL216: where a settings module turns ``ATOMIC_REQUESTS`` on
for a database, written as a literal ``True`` (``"ATOMIC_REQUESTS": True``
in a dict, ``DATABASES["default"]["ATOMIC_REQUESTS"] = True``, or
``ATOMIC_REQUESTS=True`` given to ``dict(...)``).  Any other value (an
environment variable, a function's result) is unknown and recorded as
nothing.  Tests are not settings of production."""

from __future__ import annotations

import ast

from ..api.needles import Regex
from ..api.syntax import SyntaxCollector
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

ATOMIC_REQUESTS_FACT = "atomic-requests"
_NAME = "ATOMIC_REQUESTS"


def _true(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


class AtomicRequests(SyntaxCollector):
    # the name, then a literal ``True`` as a dict value, an item's value or a keyword: not
    # ``ATOMIC_REQUESTS = config(...)`` (a settings module read from its environment)
    REQUIRES = (Regex(_NAME.encode() + rb"""["']?\s*(?:\]\s*=|:|=)\s*True\b"""),)
    CONSUMERS = ("CL216",)
    PATHS = TEST_PATHS_EXCLUDED

    def collect(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and key.value == _NAME and _true(value):
                        self._record(key)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant)
                            and target.slice.value == _NAME and _true(node.value)):
                        self._record(target)
            elif isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg == _NAME and _true(keyword.value):
                        self._record(keyword.value)

    def _record(self, node: ast.AST) -> None:
        self.file.fact(ATOMIC_REQUESTS_FACT, **self.file.position(node))
