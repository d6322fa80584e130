"""Workers started from Python code: ``app.worker_main(argv)`` and a
command line written as a list of strings (``["celery", "-A", "proj",
"worker", "-P", "threads"]``, handed to ``subprocess``).  Read from
CPython's ``ast``; the deployment model turns each into a process
(``domain/deploy/model.py``).

Fact ``python-worker``: ``argv`` (the words, None for an item that is not
a string literal), ``launcher`` (``worker_main`` or ``list``), ``app``
(for ``worker_main``: ``module:name`` of its receiver, as the file imports
or binds it; None when that is not a plain name or attribute chain),
``name`` (the function it is in, else ``<module>``) and its position.
``argv`` is a list or tuple display, or a name the same function (or the
module) binds once to one and never changes; anything else is not read
(no fact: the process stays unknown, as a worker started from a variable
in a script does).
"""

from __future__ import annotations

import ast

from ..api.needles import All
from ..api.syntax import SyntaxCollector, dotted
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

PYTHON_WORKER = "python-worker"
_MUTATORS = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse"})


def _words(node: ast.expr) -> list[str | None] | None:
    if not isinstance(node, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in node.elts):
        return None
    return [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None for e in node.elts]


def _is_command(words: list[str | None]) -> bool:
    """A list that runs Celery: its program is ``celery`` (or a path to it)
    and it names a worker or beat."""
    head = words[0] if words else None
    return (isinstance(head, str) and head.rsplit("/", 1)[-1] == "celery"
            and any(w in ("worker", "beat", "multi") for w in words))


class _Scope:
    """The names a function (or the module) binds, to read an ``argv`` name."""

    def __init__(self, body: list[ast.stmt]) -> None:
        self.bound: dict[str, list[ast.expr]] = {}
        self.changed: set[str] = set()
        for node in _own_nodes(body):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.bound.setdefault(target.id, []).append(node.value)
                    else:
                        self.changed.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.Delete)):
                targets = [node.target] if hasattr(node, "target") else getattr(node, "targets", [])
                for target in targets:
                    self.changed.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in _MUTATORS and isinstance(node.func.value, ast.Name)):
                self.changed.add(node.func.value.id)

    def words(self, node: ast.expr) -> list[str | None] | None:
        if isinstance(node, ast.Name):
            values = self.bound.get(node.id, [])
            if len(values) != 1 or node.id in self.changed:
                return None
            node = values[0]
        return _words(node)


def _own_nodes(body: list[ast.stmt]):
    """Every node of ``body`` outside nested functions and classes."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    stack: list[ast.AST] = [n for n in reversed(body) if not isinstance(n, nested)]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(c for c in reversed(list(ast.iter_child_nodes(node))) if not isinstance(c, nested))


class PythonWorkers(SyntaxCollector):
    # files that name Celery first (a substring other collectors look for too),
    # then either shape: ``worker_main``, or ``"celery"`` quoted as a list's item
    REQUIRES = (All((b"celery", (b"worker_main", b"'celery'", b'"celery"'))),)
    PATHS = TEST_PATHS_EXCLUDED

    def collect(self, tree: ast.Module) -> None:
        self.file.record_imports(tree)
        self._scope(tree.body, "<module>")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._scope(node.body, node.name)

    def _scope(self, body: list[ast.stmt], name: str) -> None:
        scope = _Scope(body)
        argvs = set()
        for node in _own_nodes(body):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "worker_main":
                argv = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "argv"), None)
                words = scope.words(argv) if argv is not None else None
                argvs.add(id(argv))
                if words is not None:
                    self._fact(node, words, "worker_main", self._app(node.func.value), name)
            elif isinstance(node, (ast.List, ast.Tuple)) and id(node) not in argvs:
                words = _words(node)
                if words is not None and _is_command(words):
                    self._fact(node, words, "list", None, name)

    def _app(self, receiver: ast.expr) -> str | None:
        written = dotted(receiver)
        if written is None:
            return None
        head = written.partition(".")[0]
        if head in self.file.imports:
            module, _, var = self.file.qualify(written).rpartition(".")
        elif "." not in written and self.file.module_name:
            module, var = self.file.module_name, written
        else:
            return None
        return f"{module}:{var}" if module else None

    def _fact(self, node: ast.AST, words: list[str | None], launcher: str, app: str | None, name: str) -> None:
        self.file.fact(PYTHON_WORKER, argv=words, launcher=launcher, app=app, name=name,
                       **self.file.position(node))
