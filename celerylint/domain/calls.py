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
    new = _kw(name, value)
    layout = _one_per_line(call)
    if layout is not None:  # arguments one per line: the new one on a line of its own, in the same style
        last = args[-1]
        if isinstance(last.comma, cst.Comma):  # a trailing comma: the new argument gets it
            new = new.with_changes(comma=last.comma)
        else:
            new = new.with_changes(whitespace_after_arg=last.whitespace_after_arg)
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=layout),
                                     whitespace_after_arg=cst.SimpleWhitespace(""))
    elif args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(new)
    return call.with_changes(args=args)


def _one_per_line(call: cst.Call) -> cst.ParenthesizedWhitespace | None:
    """The line break and indentation before the first argument, when the
    call writes its arguments on lines of their own and ends on one."""
    if not call.args or not isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace):
        return None
    last = call.args[-1]
    after = last.comma.whitespace_after if isinstance(last.comma, cst.Comma) else last.whitespace_after_arg
    return call.whitespace_before_args if isinstance(after, cst.ParenthesizedWhitespace) else None
