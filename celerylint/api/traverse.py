"""One batched traversal of a libcst tree, without rebuilding it.

libcst's ``visit`` reconstructs every node through
``_visit_and_replace_children`` (validating each new node) even for visitors
that change nothing: about as slow as parsing.  This walk calls the same
``visit_<Type>`` / ``leave_<Type>`` methods on the same original nodes in the
same order, five times faster.  The order of each node type's children is
read from the field names that libcst's own ``_visit_and_replace_children``
passes to ``visit_required``/``visit_sequence``/..., in the order they occur
in its code, so it follows the installed libcst exactly (a test compares both
traversals node by node).

Whitespace, operators, brackets, names and literals make up four fifths of
a tree and contain nothing but more of the same: when no visitor asks for
any of these types, their subtrees are skipped (nothing there would be
called).

The engine falls back to libcst's traversal when a checker needs metadata or
has ``visit_<Type>_<attribute>`` methods, which this walk does not provide.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import libcst as cst

from .libcst_internals import child_fields_in_visit_order, token_modules

_CSTNode = cst.CSTNode
_order: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` that libcst visits, in visiting order."""
    order = _order.get(cls)
    if order is None:
        order = _order[cls] = child_fields_in_visit_order(cls)
    return order


def _barren() -> frozenset[type]:
    """Node types whose subtrees hold only node types of this set (a test
    checks it on real trees)."""
    import inspect

    found = {
        value for module in token_modules() for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, _CSTNode) and value.__module__ == module.__name__
    }
    found.update((
        cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis, cst.Asynchronous,
        cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
        cst.LeftCurlyBrace, cst.RightCurlyBrace,
    ))
    return frozenset(found)


BARREN = _barren()


def _skippable(visitors: Mapping[str, list[Callable]]) -> frozenset[type]:
    """The barren types, unless ``visitors`` asks for one of them (a comment
    sits inside trailing whitespace: then nothing barren can be skipped)."""
    if any(visitors.get(f"{kind}_{c.__name__}") for c in BARREN for kind in ("visit", "leave")):
        return frozenset()
    return BARREN


def supported(methods: Iterable[str]) -> bool:
    """False for attribute visitors (``visit_Call_func``), which only libcst's traversal calls."""
    return all(name.count("_") == 1 for name in methods)


def walk(module: cst.Module, visitors: Mapping[str, list[Callable]]) -> None:
    """Call ``visitors["visit_<Type>"]`` before and ``visitors["leave_<Type>"]``
    after the children of every node, like ``libcst.visit_batched``."""
    visit: dict[type, list[Callable] | None] = {}
    leave: dict[type, list[Callable] | None] = {}
    skip = _skippable(visitors)
    # what to do with a child of each type: 1 walk it, 2 walk its items, 0 nothing
    # (isinstance against libcst's ABCs is slow enough to matter per child)
    action: dict[type, int] = {tuple: 2, list: 2}

    def act(kind: type) -> int:
        found = action[kind] = 1 if issubclass(kind, _CSTNode) and kind not in skip else 0
        return found

    def go(node: cst.CSTNode) -> None:
        cls = type(node)
        try:
            before = visit[cls]
            after = leave[cls]
        except KeyError:
            before = visit[cls] = visitors.get(f"visit_{cls.__name__}")
            after = leave[cls] = visitors.get(f"leave_{cls.__name__}")
        if before:
            for fn in before:
                fn(node)
        for name in _order.get(cls) or child_fields(cls):
            value = getattr(node, name)
            kind = type(value)
            what = action.get(kind)
            if what is None:
                what = act(kind)
            if what == 1:
                go(value)
            elif what == 2:
                for item in value:
                    kind = type(item)
                    what = action.get(kind)
                    if what is None:
                        what = act(kind)
                    if what == 1:
                        go(item)
        if after:
            for fn in after:
                fn(node)

    go(module)


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that changes nothing, on the
    original nodes: ``visit_<Type>`` returning False skips the children, as
    in libcst, and ``leave_<Type>`` always follows."""
    if visitor.on_visit(node):
        for name in _order.get(type(node)) or child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, _CSTNode):
                visit(value, visitor)
            elif type(value) in (tuple, list):
                for item in value:
                    if isinstance(item, _CSTNode):
                        visit(item, visitor)
    visitor.on_leave(node)
