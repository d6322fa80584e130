"""Facts for CL216: the functions a model signal is connected to with
``post_save.connect(handler, ...)`` (in ``AppConfig.ready()``, at module
level, anywhere; a method of the class that connects it as
``post_delete.connect(self.handle_delete)``, as search-index signal
processors do), read from CPython's ``ast``: such a file (an ``apps.py``)
holds nothing else CL216 needs, so libcst does not parse it for them.  Only
the top-level statements whose lines say ``connect`` are walked."""

from __future__ import annotations

import ast
import re

from ..api.needles import All, Regex
from ..api.syntax import SyntaxCollector, dotted
from ..domain.dispatch_syntax import MODEL_SIGNAL_NAMES
from ..domain.celeryconf.paths import TEST_PATHS_EXCLUDED

CONNECT_FACT = "model-signal-connect"
MODEL_SIGNALS = frozenset(f"django.db.models.signals.{s}" for s in MODEL_SIGNAL_NAMES)
_CONNECT = re.compile(r"connect")


class SignalConnects(SyntaxCollector):
    PATHS = TEST_PATHS_EXCLUDED
    # ``.connect(`` without its dot: a regular expression that starts with its literal is scanned for in C
    REQUIRES = (All((Regex(rb"connect\s*\("), (b"_save", b"_delete", b"m2m_changed"))),)
    CONSUMERS = ("CL216",)

    def collect(self, tree: ast.Module) -> None:
        text = self.file.text
        lines: set[int] | None = None
        if "\r" not in text:  # a lone carriage return ends a line for CPython: then every statement is walked
            lines, line, pos = set(), 1, 0
            for match in _CONNECT.finditer(text):
                line += text.count("\n", pos, match.start())
                pos = match.start()
                lines.add(line)
        for stmt in tree.body:
            if lines is not None:
                first = min((d.lineno for d in getattr(stmt, "decorator_list", ())), default=stmt.lineno)
                if not any(first <= n <= stmt.end_lineno for n in lines):
                    continue
            cls = stmt.name if isinstance(stmt, ast.ClassDef) else None
            for node in ast.walk(stmt):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "connect" and node.args):
                    self._connect(node, cls)

    def _connect(self, node: ast.Call, cls: str | None) -> None:
        signal = dotted(node.func.value)
        if signal is None or signal.partition(".")[0] not in self.file.imports:
            return
        signal = self.file.qualify(signal)
        if signal not in MODEL_SIGNALS:
            return
        handler = node.args[0]
        module = self.file.module_name or self.file.path
        if isinstance(handler, ast.Name) and handler.id not in self.file.imports:
            target = f"{module}.{handler.id}"
        elif (cls is not None and isinstance(handler, ast.Attribute) and isinstance(handler.value, ast.Name)
              and handler.value.id == "self"):  # a method of the class whose code connects it
            target = f"{module}.{cls}.{handler.attr}"
        else:
            name = dotted(handler)
            target = self.file.qualify(name) if name else None
        if target:
            self.file.fact(CONNECT_FACT, signal=signal.rpartition(".")[2], target=target)
