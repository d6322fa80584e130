"""Facts for CL213: the ``.delay``/``.apply_async``/``.s``/``.si``/
``.signature`` calls on a task that can be named, with the arguments they
pass when those can be counted (no ``*``/``**``; ``args``/``kwargs`` given as
literals).  Read from CPython's ``ast``: most files that call ``.delay(``
need nothing else, and are then never parsed by libcst."""

from __future__ import annotations

import ast
import re

from ..api.needles import Regex
from ..api.syntax import SyntaxCollector, SyntaxFile, dotted
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

ARGS_FACT = "task-call-arguments"
QUEUE_FACT = "task-call-queue"  # ``apply_async``/``signature`` with a literal ``queue=``: CL123
BINDING_METHODS = frozenset({"delay", "apply_async", "s", "si", "signature"})
TASK_CALL = Regex(rb"\.\s*(?:delay|apply_async|si?|signature)\s*\(")
_CALL = re.compile(r"\b(?:delay|apply_async|si?|signature)\s*\(")  # where such a call's method name can be


def _is_none(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _literal_args(node: ast.AST | None) -> int | None:
    """How many positional arguments a literal ``args`` holds (None: cannot tell)."""
    if _is_none(node):
        return 0
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    return None


def _literal_kwargs(node: ast.AST | None) -> list[str] | None:
    """The keys of a literal ``kwargs`` dict (None: cannot tell)."""
    if _is_none(node):
        return []
    if not isinstance(node, ast.Dict):
        return None
    keys = []
    for key in node.keys:
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None
        keys.append(key.value)
    return keys


def _argument(call: ast.Call, keyword: str, position: int) -> ast.AST | None:
    """The argument given by keyword, or at ``position`` before any star argument."""
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    positional = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            break
        positional.append(a)
    return positional[position] if position < len(positional) else None


class _Scope:
    def __init__(self, node: ast.AST | None) -> None:
        self.node = node
        self.bindings: dict[str, ast.AST] = {}
        self.reassigned: set[str] = set()


class TaskCalls(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (TASK_CALL,)

    def __init__(self, file: SyntaxFile) -> None:
        super().__init__(file)
        self.scopes = [_Scope(None)]
        self.not_tasks: set[str] = set()
        self.expecting_error = 0  # open ``with pytest.raises(...)`` blocks
        self.calls: list[tuple[ast.Call, str | None, dict]] = []
        self.queues: list[tuple[ast.Call, str | None, dict]] = []
        self.lines: set[int] | None = None  # lines that may hold a call (None: any)

    # -- traversal, in source order, with the scopes ``context.py`` keeps ----
    # Statements are all walked (scopes, bindings, ``with pytest.raises``);
    # expressions only in statements on a line where a call may be.
    def collect(self, tree: ast.Module) -> None:
        text = self.file.text
        if "\r" in text:  # lone carriage returns end lines too: look everywhere
            self.lines = None
        else:
            self.lines, line, at = set(), 1, 0
            for m in _CALL.finditer(text):  # in order: count the newlines since the last match
                line += text.count("\n", at, m.start())
                at = m.start()
                self.lines.add(line)
        self._block(tree.body, depth=0)
        self._record()

    def _wanted(self, node: ast.AST) -> bool:
        return self.lines is None or any(line in self.lines for line in range(node.lineno, node.end_lineno + 1))

    def _block(self, body: list[ast.stmt], depth: int) -> None:
        for statement in body:
            self._statement(statement, depth)

    def _statement(self, node: ast.stmt, depth: int) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if depth == 0 and not node.decorator_list:
                self.not_tasks.add(node.name)
            if self._wanted(node):
                for child in (*node.decorator_list, node.args, *([node.returns] if node.returns else [])):
                    self._expression(child)
            self._scope(node, node.body, depth)
        elif isinstance(node, ast.ClassDef):
            if depth == 0 and not node.bases:
                self.not_tasks.add(node.name)
            if self._wanted(node):
                for child in (*node.decorator_list, *node.bases, *node.keywords):
                    self._expression(child)
            self.scopes.append(_Scope(node))
            self._block(node.body, depth + 1)
            self.scopes.pop()
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            raises = any(self._expects_error(item.context_expr) for item in node.items)
            if self._wanted(node):
                for item in node.items:
                    self._expression(item)
            self.expecting_error += raises
            self._block(node.body, depth)
            self.expecting_error -= raises
        else:
            wanted = self._wanted(node)
            for field, value in ast.iter_fields(node):
                if field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    continue
                if wanted:
                    for child in value if isinstance(value, list) else (value,):
                        if isinstance(child, ast.AST):
                            self._expression(child)
            for field in ("body", "orelse", "finalbody"):
                self._block(getattr(node, field, None) or [], depth)
            for handler in getattr(node, "handlers", None) or []:
                self._block(handler.body, depth)
            for case in getattr(node, "cases", None) or []:
                self._block(case.body, depth)
            self._bind(node)

    def _expression(self, node: ast.AST) -> None:
        if isinstance(node, ast.Lambda):
            self._expression(node.args)
            self.scopes.append(_Scope(node))
            self._expression(node.body)
            self.scopes.pop()
            return
        if isinstance(node, ast.Call):
            self._call(node)
        for child in ast.iter_child_nodes(node):
            self._expression(child)

    def _scope(self, node: ast.AST, body: list[ast.stmt], depth: int) -> None:
        self.scopes.append(_Scope(node))
        self._block(body, depth + 1)
        self.scopes.pop()

    def _bind(self, node: ast.AST) -> None:
        """Simple assignments, after their value was visited (as ``context.py``)."""
        scope = self.scopes[-1]
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind_target(scope, target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._bind_target(scope, node.target, node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            scope.reassigned.add(node.target.id)

    @staticmethod
    def _bind_target(scope: _Scope, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name):
            scope.bindings[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            scope.reassigned.update(e.id for e in target.elts if isinstance(e, ast.Name))

    def _expects_error(self, node: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        name = dotted(node.func)
        if name is not None and name.partition(".")[0] in self.file.imports and self.file.qualify(name) == "pytest.raises":
            return True
        return isinstance(node.func, ast.Attribute) and node.func.attr.startswith("assertRaises")

    def _lookup(self, name: str) -> ast.AST | None:
        for scope in reversed(self.scopes):
            if isinstance(scope.node, ast.ClassDef):
                continue
            if name in scope.reassigned:
                return None
            if name in scope.bindings:
                return scope.bindings[name]
        return None

    # -- calls -----------------------------------------------------------------
    def _call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in BINDING_METHODS or self.expecting_error:
            return
        target, local = self._target(func.value)
        if target is None or self._shadowed(func.value):
            return
        queue = next((k.value for k in node.keywords if k.arg == "queue"), None)
        if func.attr in ("apply_async", "signature") and isinstance(queue, ast.Constant) and isinstance(queue.value, str):
            self.queues.append((node, local, dict(target=target, queue=queue.value)))
        given = self._arguments(node, func.attr)
        if given is not None:
            positional, keywords, partial = given
            self.calls.append((node, local, dict(
                target=target, method=func.attr, receiver=self.file.segment(func.value) or dotted(func.value) or "…",
                positional=positional,
                keywords=keywords, partial=partial,
            )))

    def _target(self, receiver: ast.AST) -> tuple[str | None, str | None]:
        """The qualified name of the task a call is made on, and its name as
        defined in this module when it is local (``facts.calls.task_target``)."""
        if isinstance(receiver, ast.Call) and not receiver.args and not receiver.keywords:
            receiver = receiver.func  # MyTask().delay(...)
        if isinstance(receiver, ast.Name) and receiver.id not in self.file.imports:
            bound = self._lookup(receiver.id)
            if (isinstance(bound, ast.Call) and isinstance(bound.func, ast.Attribute) and bound.func.attr == "register_task"
                    and len(bound.args) == 1 and not bound.keywords and isinstance(bound.args[0], ast.Call)):
                bound = bound.args[0]  # task = app.register_task(MyTask()): the instance it returns
            if (isinstance(bound, ast.Call) and not bound.args and not bound.keywords
                    and isinstance(bound.func, (ast.Name, ast.Attribute))):
                receiver = bound.func  # task = MyTask()
        name = dotted(receiver)
        if name is None or name.partition(".")[0] in ("self", "cls"):
            return None, None
        if name.partition(".")[0] in self.file.imports:
            return self.file.qualify(name), None
        module = self.file.module_name
        return (f"{module}.{name}" if module else f"{self.file.path}::{name}"), name

    def _shadowed(self, receiver: ast.AST) -> bool:
        """The receiver's head is a parameter of, or assigned in, an enclosing function or lambda."""
        if isinstance(receiver, ast.Call):
            receiver = receiver.func
        name = dotted(receiver)
        if name is None:
            return True
        head = name.partition(".")[0]
        for scope in self.scopes[1:]:
            if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = scope.node.args
                params = (*a.posonlyargs, *a.args, *a.kwonlyargs, *(p for p in (a.vararg, a.kwarg) if p))
                if any(p.arg == head for p in params) or head in scope.bindings or head in scope.reassigned:
                    return True
        return False

    @staticmethod
    def _arguments(node: ast.Call, method: str) -> tuple[int, list[str], bool] | None:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return None
        if method in ("delay", "s", "si"):
            return len(node.args), [k.arg for k in node.keywords], method == "s"
        positional = _literal_args(_argument(node, "args", 0))
        keywords = _literal_kwargs(_argument(node, "kwargs", 1))
        if positional is None or keywords is None:
            return None
        partial = False
        if method == "signature":  # a partial unless immutable=True
            immutable = next((k.value for k in node.keywords if k.arg == "immutable"), None)
            partial = not (isinstance(immutable, ast.Constant) and immutable.value is True)
        return positional, keywords, partial

    # -- facts -----------------------------------------------------------------
    def _record(self) -> None:
        """One fact per call, at ``receiver.method``."""
        for kind, calls in ((ARGS_FACT, self.calls), (QUEUE_FACT, self.queues)):
            for node, local, data in calls:
                if local is not None and local.partition(".")[0] in self.not_tasks:
                    continue
                self.file.fact(kind, **data, **self.file.position(node.func))
