"""The engine's own traversal must visit the same nodes in the same order as
libcst's ``visit_batched``: rules and the scope tracking depend on it."""

from __future__ import annotations


import libcst as cst
import pytest

from celerylint.registry import discover_classes
from celerylint.testing import split_files
from celerylint.api.traverse import supported, walk
from conftest import REPO

SYNTAX = '''
import a.b as c, d
from .x import (y as z, w)
from . import *
@dec(1)
@other
async def f(a, /, b: int = 2, *args, c, d=3, **kw) -> "T":
    global g
    x: list[int] = [i async for i in aiter() if i]
    y = {k: v for k, v in z.items()}; s = {q for q in r}
    async with a as (b, c), d:
        await e
    try:
        pass
    except* (ValueError, TypeError) as exc:
        raise X from exc
    else:
        del a[1:2, ::3], b.c
    finally:
        assert x, "m"
    while (n := next(it)) is not None:
        continue
    for i, *rest in reversed(seq):
        break
    else:
        yield from g
    match cmd:
        case {"k": [1, *others], **kw} if kw:
            pass
        case Point(x=0, y=_) | None:
            pass
        case [a, b, *_] as whole:
            pass
    return lambda q=1, *, r: (q if r else -q) ** 2 @ m
class C(B, metaclass=M):
    """doc"""
    x = f"{a!r:>{w}} {b=}" "tail"
    def m(self): nonlocal_ = ~self[...] or not (1 < 2 <= 3)
print(*a, **k, sep="")
'''


def sources():
    yield "syntax", SYNTAX
    for path in sorted(REPO.joinpath("celerylint").rglob("*.py")):
        yield path.name, path.read_text(encoding="utf-8")
    for rule in discover_classes():
        for i, case in enumerate((*getattr(rule, "VALID", ()), *getattr(rule, "INVALID", ()))):
            for rel, text in split_files(case.source, case.path).items():
                yield f"{getattr(rule, 'CODE', rule.__name__)}-{i}-{rel}", text


class Recorder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.events = []

    def on_visit(self, node):
        self.events.append(("visit", node))
        return True

    def on_leave(self, node):
        self.events.append(("leave", node))


class Everything(dict):
    """Visitor methods for every node type, recording what they are called with."""

    def __init__(self) -> None:
        super().__init__()
        self.events = []

    def get(self, name, default=None):
        kind = name.split("_", 1)[0]
        return [lambda node: self.events.append((kind, node))]


def parsed(text: str) -> cst.Module:
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError:
        pytest.skip("does not parse")


@pytest.mark.parametrize(("name", "text"), list(sources()), ids=lambda v: v if isinstance(v, str) and len(v) < 60 else "")
def test_same_order_as_libcst(name, text):
    module = parsed(text)
    expected = Recorder()
    module.visit(expected)
    got = Everything()
    walk(module, got)
    assert len(got.events) == len(expected.events)
    assert all(a[0] == b[0] and a[1] is b[1] for a, b in zip(got.events, expected.events))


@pytest.mark.parametrize(("name", "text"), list(sources())[:40], ids=lambda v: v if isinstance(v, str) and len(v) < 60 else "")
def test_barren_subtrees_hold_only_barren_nodes(name, text):
    """What lets the walk skip them when no visitor asks for their types."""
    from celerylint.api.traverse import BARREN

    module = parsed(text)
    recorder = Recorder()
    module.visit(recorder)
    depth_in_barren = 0
    for event, node in recorder.events:
        if event == "visit":
            if depth_in_barren:
                assert type(node) in BARREN, f"{type(node).__name__} inside a barren node"
            if depth_in_barren or type(node) in BARREN:
                depth_in_barren += 1
        elif depth_in_barren:
            depth_in_barren -= 1


def test_walk_skips_barren_subtrees_and_still_finds_what_visitors_ask_for():
    module = cst.parse_module(SYNTAX)
    expected = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node):
            expected.append(node)

        def visit_Name(self, node):
            expected.append(node)

    module.visit(Calls())
    got = []
    walk(module, {"visit_Call": [got.append], "visit_Name": [got.append]})
    assert got and all(a is b for a, b in zip(got, expected)) and len(got) == len(expected)
    only_calls = []
    walk(module, {"visit_Call": [only_calls.append]})
    assert only_calls == [n for n in expected if isinstance(n, cst.Call)]


def test_a_visitor_of_a_nested_barren_type_sees_all_of_them():
    """Comments sit inside trailing whitespace, itself inside other barren nodes."""
    module = cst.parse_module("x = (1,  # one\n     2)  # two\n# three\ny = 3\n")
    comments = []
    walk(module, {"visit_Comment": [comments.append], "visit_Call": [lambda node: None]})
    assert [c.value for c in comments] == ["# one", "# two", "# three"]


def test_attribute_visitors_fall_back_to_libcst():
    assert supported(["visit_Call", "leave_FunctionDef"])
    assert not supported(["visit_Call_func"])


def test_visit_honours_false_and_always_leaves():
    import libcst as cst

    from celerylint.api.traverse import visit

    seen = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node):
            seen.append(("visit", node.value))

        def visit_Lambda(self, node):
            return False  # skip the lambda's body

        def leave_Lambda(self, original_node):
            seen.append(("leave", "lambda"))

    visit(cst.parse_module("a = lambda: b\nc(d)\n"), Names())
    assert seen == [("visit", "a"), ("leave", "lambda"), ("visit", "c"), ("visit", "d")]
