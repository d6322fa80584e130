"""Every use of a private part of libcst, in one place.

celerylint is fast because it skips work libcst's public API always does.
Each function here says what private behaviour it relies on;
``tests/test_internals.py`` checks each of them against the installed
libcst, so an upgrade that changes one fails there, loudly, instead of
making celerylint silently wrong.  ``pyproject.toml`` pins libcst to the
releases the tests have covered.
"""

from __future__ import annotations

import dataclasses

import libcst as cst
from libcst._nodes import op as _op
from libcst._nodes import whitespace as _whitespace
from libcst._nodes.base import CSTNode as _CSTNode
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange, PositionProvider

__all__ = ["CodegenState", "all_positions", "code_indented", "child_fields_in_visit_order", "parse_unvalidated", "token_modules"]


def parse_unvalidated(text: str) -> cst.Module:
    """``libcst.parse_module`` without validating every node the parser makes.

    Relies on: node validation being ``CSTNode.__post_init__`` (a third of
    the parse time), which the parser's output always passes.  It is
    switched off around the parse only; nodes made later (by fixes) are
    still validated."""
    validate = _CSTNode.__dict__.get("__post_init__")
    if validate is None:  # pragma: no cover - a libcst that validates elsewhere
        return cst.parse_module(text)
    _CSTNode.__post_init__ = _skip_validation
    try:
        return cst.parse_module(text)
    finally:
        _CSTNode.__post_init__ = validate


def _skip_validation(self) -> None:
    pass


def all_positions(module: cst.Module) -> dict[cst.CSTNode, CodeRange]:
    """Every node's ``PositionProvider`` range.

    Relies on: ``PositionProvider._gen_impl(module)`` filling
    ``_computed``; ``MetadataWrapper.resolve`` would add an empty batched
    visit of the whole tree."""
    provider = PositionProvider()
    provider._gen_impl(module)
    return provider._computed


def child_fields_in_visit_order(cls: type) -> tuple[str, ...]:
    """The fields of node class ``cls`` that libcst visits, in its order.

    Relies on: each node's ``_visit_and_replace_children`` naming its
    fields as string constants (``visit_required(self, "body", ...)``) in
    the order it visits them."""
    names = {f.name for f in dataclasses.fields(cls)}
    found: list[str] = []
    for const in cls._visit_and_replace_children.__code__.co_consts:
        if isinstance(const, str) and const in names and const not in found:
            found.append(const)
    return tuple(found)


def token_modules() -> tuple:
    """libcst's modules of operator and whitespace nodes (``libcst._nodes.op``
    and ``.whitespace``), whose classes hold no other kind of node."""
    return (_op, _whitespace)


def code_indented(node: cst.CSTNode, module: cst.Module, indent: str) -> str:
    """The code of ``node`` as written inside a block indented by ``indent``:
    ``Module.code_for_node`` renders it at the top level, so a line break
    inside brackets that keeps the block's indentation loses it.

    Relies on: ``CodegenState.indent_tokens``, the block indentation that
    ``ParenthesizedWhitespace(indent=True)`` writes after each line break."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline,
                         indent_tokens=[indent] if indent else [])
    node._codegen(state)
    return "".join(state.tokens)
