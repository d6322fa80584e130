"""Fact collectors that read CPython's ``ast`` instead of libcst.

A collector that needs names, calls and their arguments but never a fix or
a comment is ten times cheaper on ``ast``: a file only such collectors want
is never given to libcst (``linter.Linter.prepare``), and libcst is not even
imported for it.  ``SyntaxFile`` gives such a collector what the libcst
``FileContext`` gives a checker: the file's imports and how to qualify a
name, and positions in the code points the reports use.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from ..core.modules import absolute_module


class SyntaxFile:
    def __init__(self, path: str, text: str, module_name: str | None, settings: Any) -> None:
        self.path = path
        self.text = text
        self.module_name = module_name
        self.settings = settings
        self.imports: dict[str, str] = {}  # local name -> qualified name
        self.facts: list[dict[str, Any]] = []
        self._lines: list[str] | None = None

    def record_imports(self, tree: ast.Module) -> None:
        """Every import of the file, as ``context.ContextOpener`` records them
        (imports are statements: only statement lists are walked)."""
        for node in statements(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        head = alias.name.partition(".")[0]
                        self.imports[head] = head
            elif isinstance(node, ast.ImportFrom):
                module = absolute_module(self.module_name, self.path, node.level, node.module or "")
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    local = alias.asname or alias.name
                    self.imports[local] = (f"{module}.{alias.name}" if module and not module.endswith(".")
                                           else f"{module}{alias.name}")

    def qualify(self, name: str) -> str:
        head, _, rest = name.partition(".")
        target = self.imports.get(head)
        if target is None:
            return name
        return f"{target}.{rest}" if rest else target

    def segment(self, node: ast.AST) -> str | None:
        """The source text of ``node`` (``ast.get_source_segment`` splits the
        whole text on every call)."""
        p = self.position(node)
        lines = self._line_list()
        if p["end_line"] > len(lines):
            return None
        if p["line"] == p["end_line"]:
            return lines[p["line"] - 1][p["col"]:p["end_col"]]
        inner = lines[p["line"]:p["end_line"] - 1]
        return "".join([lines[p["line"] - 1][p["col"]:], *inner, lines[p["end_line"] - 1][:p["end_col"]]])

    def position(self, node: ast.AST) -> dict[str, int]:
        """``line``/``col``/``end_line``/``end_col`` of ``node`` in code points
        (``ast`` counts UTF-8 bytes)."""
        return dict(line=node.lineno, col=self._column(node.lineno, node.col_offset),
                    end_line=node.end_lineno, end_col=self._column(node.end_lineno, node.end_col_offset))

    def _line_list(self) -> list[str]:
        if self._lines is None:
            # the lines as ``ast`` counts them: \n, \r\n and \r end a line, nothing else does
            if "\r" in self.text:
                self._lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", self.text)
            else:  # the same list, split in C
                parts = self.text.split("\n")
                self._lines = [p + "\n" for p in parts[:-1]] + [parts[-1]]
        return self._lines

    def _column(self, line: int, offset: int) -> int:
        lines = self._line_list()
        text = lines[line - 1] if line - 1 < len(lines) else ""
        return offset if text.isascii() else len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))

    def fact(self, kind: str, **data: Any) -> None:
        self.facts.append({"kind": kind, "path": self.path, **data})


class SyntaxCollector:
    """A fact collector over CPython's ``ast`` (``syntax.py``): ten times
    cheaper than libcst, for facts that need names, calls and arguments but
    no fix, comment or layout.  A file that only such collectors want is
    never parsed by libcst.  ``collect(tree)`` records facts with
    ``self.file.fact(kind, **data)``; ``self.file`` is a ``SyntaxFile``.
    ``CONSUMERS``: as ``rule.Checker``'s, the rules that read its facts."""

    REQUIRES: tuple = ()
    PATHS: str | tuple[str, ...] | None = None
    CONSUMERS: tuple[str, ...] = ()

    def __init__(self, file: Any) -> None:
        self.file = file

    def collect(self, tree: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def statements(body: list[ast.stmt], definitions: bool = True):
    """Every statement of ``body`` and of the blocks nested in it, in order;
    without ``definitions``, not those of function and class bodies (what
    runs at import time)."""
    for node in body:
        yield node
        if not definitions and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            nested = getattr(node, field, None)
            if nested:
                yield from statements(nested, definitions)


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a name or an attribute chain over one, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
