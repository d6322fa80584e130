"""Which files the ``ast`` twin of ``TaskSignatures`` (``facts/task_signatures.py``)
reads exactly as the libcst collector does (``facts/calls.py``), and the
``celery-task-signature`` facts it records there.  No libcst here.

Handled: the shapes ``task_twin`` handles (its decorator reading), and no
``.delay``/``.s``/``.si`` call with an execution option (their facts carry
libcst's text and positions of the call: declined).  Module-level task
functions with literal ``bind`` and ``base`` absent are recorded; a
``base=`` or a class with bases declines the file."""

from __future__ import annotations

import ast
import re

from ..api.syntax import SyntaxFile, dotted, statements
from .task_syntax import EXECUTION_OPTIONS, may_record_signatures
from .task_twin import Declined, Stored, _decorator, _file

TASK_FACT = "celery-task-signature"
# ``.delay(``/``.s(``/``.si(`` and an execution option passed by keyword (``TaskSignatures``' needle)
_CALL = re.compile(r"\.\s*(?:delay|si?)\s*\(")
_OPTION = re.compile(r"\b(?:" + "|".join(sorted(EXECUTION_OPTIONS)) + r")\s*=")
SIGNATURE_KEEPING = frozenset({"django.db.transaction.atomic"})  # as facts/calls.py


def _imported_name(node: ast.expr, source: SyntaxFile) -> str | None:
    name = dotted(node)
    if name is None or name.partition(".")[0] not in source.imports:
        return None
    return source.qualify(name)


def _params(args: ast.arguments) -> tuple[list, list]:
    """``[name, has_default, positional_only]`` of the positional
    parameters and ``[name, has_default]`` of the keyword-only ones."""
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    pos = [[a.arg, i >= first_default, i < len(args.posonlyargs)] for i, a in enumerate(positional)]
    kwonly = [[a.arg, d is not None] for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    return pos, kwonly


def _binding(args: ast.arguments, bound: bool) -> dict | None:
    """``facts.calls.binding`` over ``ast``."""
    pos, kwonly = _params(args)
    if bound:
        if not pos:
            return None
        pos = pos[1:]
    shown = [n + ("=…" if d else "") for n, d, _ in pos]
    if args.vararg is not None:
        shown.append("*" + args.vararg.arg)
    elif kwonly:
        shown.append("*")
    shown += [n + ("=…" if d else "") for n, d in kwonly]
    if args.kwarg is not None:
        shown.append("**" + args.kwarg.arg)
    return {"pos": pos, "kwonly": kwonly, "var_pos": args.vararg is not None, "var_kw": args.kwarg is not None,
            "text": "(" + ", ".join(shown) + ")", "bound": bound}


def signature_facts(tree: ast.Module, text: str, path: str = "", module_name: str | None = None) -> list[dict]:
    """The facts ``TaskSignatures`` records in the file, or Declined."""
    if not text.isascii() or "register" in text or (_CALL.search(text) and _OPTION.search(text)):
        raise Declined  # a call with an execution option may be there: its fact has libcst's text and position
    for node in statements(tree.body):
        if isinstance(node, ast.ClassDef) and (node.bases or node.keywords):
            raise Declined  # may be a task class (value model)
    source = _file(tree, text, path, module_name)
    stored = Stored(tree)
    facts = []
    for node in statements(tree.body, definitions=False):  # module-level definitions
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        options, below, checkable = None, False, True
        for decorator in node.decorator_list:
            if below:
                func = decorator.func if isinstance(decorator, ast.Call) else decorator
                if _imported_name(func, source) not in SIGNATURE_KEEPING:
                    checkable = False
            else:
                options = _decorator(decorator, source, stored)
                below = options is not None
        if options is None:
            continue
        if "base" in options:
            raise Declined
        bind = options["bind"].value if "bind" in options else None
        bound = isinstance(bind, ast.Constant) and bind.value is True
        if bind is not None and not (isinstance(bind, ast.Constant) and type(bind.value) is bool):
            checkable = False
        names = [a.arg for a in (*node.args.args, *node.args.kwonlyargs)]
        if bound and node.args.args:
            names = names[1:]
        local = f"{module_name}.{node.name}" if module_name else f"{path}::{node.name}"
        facts.append({"kind": TASK_FACT, "path": path, "name": local, "short": node.name, "params": names,
                      "var_kw": node.args.kwarg is not None,
                      "sig": _binding(node.args, bound) if checkable else None})
    return facts


def handles_signatures(tree: ast.Module, text: str) -> bool:
    try:
        signature_facts(tree, text)
    except Declined:
        return False
    return True


def signatures_need_libcst(tree: ast.Module, text: str) -> bool:
    """``TaskSignatures``' gate: a file it may record a fact in that its ``ast`` twin declines."""
    return not handles_signatures(tree, text) and may_record_signatures(tree, text)
