"""Small helpers about call expressions: their arguments and their text."""

from __future__ import annotations

import re

import libcst as cst

from .values import NONE, evaluate

_EMPTY = cst.Module([])


def code_of(node: cst.CSTNode) -> str:
    """The code of ``node`` without whitespace: a key for comparing expressions."""
    return re.sub(r"\s+", "", _EMPTY.code_for_node(node))


def arg(call: cst.Call, keyword: str, position: int | None) -> cst.Arg | None:
    """The argument given by keyword, or at ``position`` (0-based) before any
    keyword or star argument."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == keyword:
            return a
    if position is not None:
        positional = []
        for a in call.args:
            if a.keyword is not None or a.star:
                break
            positional.append(a)
        if position < len(positional):
            return positional[position]
    return None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def given(a: cst.Arg | None, ctx) -> bool:
    """The argument is present and not the literal None."""
    return a is not None and evaluate(a.value, ctx) is not NONE


def _kw(name: str, value: str) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name), value=cst.parse_expression(value),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def with_keyword(call: cst.Call, name: str, value: str) -> cst.Call:
    """``call`` with ``name=value`` set: replaces an existing keyword, else appends."""
    args = list(call.args)
    for i, a in enumerate(args):
        if a.keyword is not None and a.keyword.value == name:
            args[i] = a.with_changes(value=cst.parse_expression(value))
            return call.with_changes(args=args)
    if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(_kw(name, value))
    return call.with_changes(args=args)
