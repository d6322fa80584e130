"""What CPython's ``ast`` can tell about waits on Celery results before
libcst parses a file: the gate of CL214.  No libcst here.

``results.py`` decides, per call, whether a receiver is a result; the gate
answers the same question for every call of the file at once, more loosely
(a superset), so that a task module whose ``.get()`` calls are all on dicts,
querysets and caches is never parsed for CL214.
"""

from __future__ import annotations

import ast

DISPATCH = frozenset({"delay", "apply_async", "send_task"})
RESULT_FACTORIES = frozenset({"AsyncResult", "GroupResult"})  # app.AsyncResult(id), self.AsyncResult(id)
WAITS = frozenset({"get", "wait", "join", "join_native", "collect"})
_CLASS_NAMES = ("AsyncResult", "GroupResult", "ResultSet")  # the last names of ``results.RESULT_CLASSES``


def may_wait_on_result(tree: ast.Module, text: str) -> bool:
    """A superset of the files in which CL214 can report: a wait (``WAITS``)
    or a ``while [not] x.ready():`` on a call that may make a result
    (``results.makes_result``), or on a name some assignment of the file
    binds to one (``context.lookup`` returns only what an assignment or an
    annotated assignment bound)."""
    classes = any(name in text for name in _CLASS_NAMES)  # a constructor can only be named through these

    def makes(node: ast.AST | None) -> bool:
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Call):  # group(...)(), chord(header)(callback)
            return True
        if isinstance(func, ast.Attribute) and (func.attr in DISPATCH or func.attr in RESULT_FACTORIES
                                                or func.attr == "restore"):
            return True
        return classes and isinstance(func, (ast.Name, ast.Attribute))

    waits: list[ast.expr] = []  # the receivers waited on
    names: set[str] = set()  # names bound to what may be a result
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in WAITS:
                waits.append(func.value)
        elif isinstance(node, ast.Assign):
            if makes(node.value):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name) and makes(node.value):
                names.add(node.target.id)
        elif isinstance(node, ast.While):
            test = node.test
            while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test = test.operand
            if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "ready":
                waits.append(test.func.value)
    return any(makes(r) or (isinstance(r, ast.Name) and r.id in names) for r in waits)
