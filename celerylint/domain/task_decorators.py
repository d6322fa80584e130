"""The options of a task made by one of the project's own task decorators
(``facts/task_decorators.py``), as libcst nodes the task rules can read.

The options the decorator sets itself are not in the file that uses it:
they are made here, as expressions (a name the decorator's module imports
or defines becomes a name this file's context resolves to it, as if
imported).  Each made node is recorded in ``ctx.synthetic`` with the
decorator it comes from: a finding or fact at one is reported at the
decorator, and a fix that would edit one is not offered (engine/analysis.py).
"""

from __future__ import annotations

import json

import libcst as cst

from ..api.context import FileContext
from .task_classes import APP_TASK_METHODS
from .task_syntax import may_be_project_decorator

DECORATOR = "task_decorator"  # as facts/task_class_index.DECORATOR
_UNKNOWN = "_celerylint_unknown_value"  # called: a value ``evaluate`` cannot read


def decorator_spec(target: cst.BaseExpression, ctx: FileContext) -> dict | None:
    """What the index says of ``target`` as a task decorator of the
    project (recorded as asked), or None.  ``x.task`` is the task method of
    an app, whatever ``x`` is: never asked."""
    if isinstance(target, cst.Attribute) and target.attr.value in APP_TASK_METHODS:
        return None
    qualified = ctx.imported_name(target)
    if qualified is None:
        if not isinstance(target, cst.Name) or target.value in ctx.imports:
            return None
        qualified = f"{ctx.module_name or ctx.path}.{target.value}"
    if not may_be_project_decorator(qualified):
        return None
    key = f"{qualified}#{DECORATOR}"
    answer = ctx.client_index.get(key)
    ctx.client_lookups[key] = answer
    return json.loads(answer) if answer is not None else None


def decorator_options(spec: dict, call_options: dict[str, cst.BaseExpression], anchor: cst.Decorator,
                      ctx: FileContext) -> dict[str, cst.BaseExpression]:
    """The task's options: the decorator's defaults, under the call's, under what it forces."""
    options = {name: _node(value, anchor, ctx) for name, value in spec["defaults"].items()}
    options.update(call_options)
    options.update({name: _node(value, anchor, ctx) for name, value in spec["forced"].items()})
    return options


def _node(value: dict | None, anchor: cst.Decorator, ctx: FileContext) -> cst.BaseExpression:
    node = _make(value, ctx)
    for made in _walk(node):
        ctx.synthetic[id(made)] = (made, anchor)
    return node


def _make(value: dict | None, ctx: FileContext) -> cst.BaseExpression:
    if value is None:
        return cst.Call(func=cst.Name(_UNKNOWN))
    if "const" in value:
        const = value["const"]
        if const is None or type(const) is bool:
            return cst.Name(repr(const))
        if type(const) is str:
            return cst.SimpleString(repr(const))
        number = cst.Integer(repr(abs(const))) if type(const) is int else cst.Float(repr(abs(const)))
        return cst.UnaryOperation(cst.Minus(), number) if const < 0 else number
    if "ref" in value:
        alias = "_celerylint_ref_" + "".join(c if c.isalnum() else "_" for c in value["ref"])
        ctx.imports[alias] = value["ref"]
        return cst.Name(alias)
    if "builtin" in value:
        name = value["builtin"]
        return cst.Call(func=cst.Name(_UNKNOWN)) if name in ctx.imports else cst.Name(name)
    if "dict" in value:
        return cst.Dict([cst.DictElement(_make({"const": k}, ctx), _make(v, ctx)) for k, v in value["dict"]])
    kind = cst.Tuple if "tuple" in value else cst.List
    return kind([cst.Element(_make(item, ctx)) for item in value.get("tuple", value.get("list"))])


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)
