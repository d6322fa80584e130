"""Facts for CL217: where the code makes a chord, and the tasks of its
header when they can be named.  A chord is ``chord(header, ...)`` or
``chord(header=..., body=...)`` (``celery.chord``), or a ``group(...)`` followed by a task in a chain
(``group(...) | task.s()``, ``chain(group(...), task.s())``), which Celery
turns into a chord.  The header's tasks are named when it is a list, a
tuple or a comprehension of signatures (``task.s(...)``), or a local list
that a function builds only with ``.append(...)``; an element that is a
chain (``chain(a.s(), b.s())``, ``a.s() | b.s()``) counts as its last
task, whose result the chord counts.  Read from CPython's ``ast``."""

from __future__ import annotations

import ast

from ..api.needles import All
from ..api.syntax import SyntaxCollector, dotted
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

CHORD_FACT = "chord-use"
CHORD = frozenset({"celery.chord", "celery.canvas.chord"})
GROUP = frozenset({"celery.group", "celery.canvas.group"})
CHAIN = frozenset({"celery.chain", "celery.canvas.chain"})
SIGNATURE_METHODS = frozenset({"s", "si", "signature"})
CANVAS = CHORD | GROUP | CHAIN


class Chords(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED
    REQUIRES = (All((b"celery", (b"chord", b"group"))),)  # imported from celery
    CONSUMERS = ("CL217", "CL219")

    def collect(self, tree: ast.Module) -> None:
        if not any(v in CANVAS or v.startswith("celery.canvas") or v == "celery" for v in self.file.imports.values()):
            return  # neither chord, group, chain nor the celery module is imported
        self.tree = tree
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = self._imported(node.func)
                header = self._chord_header(node) if name in CHORD else None
                if isinstance(header, ast.Name):
                    header = self._built_list(node, header)
                if header is not None:
                    self._record(node, header)
                elif name in CHAIN and any(self._group(a) for a in node.args[:-1]):
                    group = next(a for a in node.args[:-1] if self._group(a))
                    self._record(node, self._header_of_group(group))
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and self._group(node.left):
                self._record(node, self._header_of_group(node.left))

    def _imported(self, node: ast.AST) -> str | None:
        name = dotted(node)
        if name is None or name.partition(".")[0] not in self.file.imports:
            return None
        return self.file.qualify(name)

    @staticmethod
    def _chord_header(call: ast.Call) -> ast.AST | None:
        """The header of ``chord(header, ...)`` or ``chord(header=..., ...)``."""
        if call.args:
            return call.args[0]
        return next((k.value for k in call.keywords if k.arg == "header"), None)

    def _group(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and self._imported(node.func) in GROUP

    @staticmethod
    def _header_of_group(group: ast.Call) -> ast.AST | None:
        if len(group.args) == 1 and not isinstance(group.args[0], ast.Starred):
            return group.args[0]
        return ast.Tuple(elts=list(group.args)) if group.args else None

    def _built_list(self, call: ast.Call, header: ast.Name) -> ast.AST:
        """The elements of the list the innermost function around ``call``
        binds to ``header`` once, as a list literal, and otherwise only
        appends to; ``header`` itself (unknown) when it is used any other way."""
        around = [f for f in ast.walk(self.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and f.lineno <= call.lineno <= (f.end_lineno or f.lineno)]
        if not around:
            return header
        function = max(around, key=lambda f: f.lineno)
        elements: list[ast.AST] = []
        assigned, matched = 0, {id(header)}
        for node in ast.walk(function):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id == header.id and isinstance(node.value, ast.List)):
                assigned += 1
                elements.extend(node.value.elts)
                matched.add(id(node.targets[0]))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                  and isinstance(node.func.value, ast.Name) and node.func.value.id == header.id
                  and len(node.args) == 1 and not node.keywords):
                elements.append(node.args[0])
                matched.add(id(node.func.value))
        uses = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == header.id]
        if assigned != 1 or any(id(n) not in matched for n in uses):
            return header
        return ast.List(elts=elements)

    def _last(self, element: ast.AST) -> ast.AST:
        """The task a chain ends with (what a chord counts), else the element."""
        if isinstance(element, ast.Call) and self._imported(element.func) in CHAIN and element.args:
            return self._last(element.args[-1])
        if isinstance(element, ast.BinOp) and isinstance(element.op, ast.BitOr):
            return self._last(element.right)
        return element

    def _header(self, header: ast.AST | None) -> list[str] | None:
        """The qualified names of the header's tasks, or None when one of its
        elements cannot be named."""
        if isinstance(header, (ast.List, ast.Tuple)):
            elements = header.elts
        elif isinstance(header, (ast.GeneratorExp, ast.ListComp)):
            elements = [header.elt]
        else:
            return None
        names = []
        for element in map(self._last, elements):
            if not (isinstance(element, ast.Call) and isinstance(element.func, ast.Attribute)
                    and element.func.attr in SIGNATURE_METHODS):
                return None
            receiver = dotted(element.func.value)
            if receiver is None or receiver.partition(".")[0] in ("self", "cls"):
                return None
            if receiver.partition(".")[0] in self.file.imports:
                names.append(self.file.qualify(receiver))
            else:
                module = self.file.module_name
                names.append(f"{module}.{receiver}" if module else f"{self.file.path}::{receiver}")
        return names

    def _record(self, node: ast.AST, header: ast.AST | None) -> None:
        self.file.fact(CHORD_FACT, header=self._header(header), **self.file.position(node))
