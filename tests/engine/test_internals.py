"""The private behaviour of libcst and of Python's ``re`` that celerylint
relies on (``libcst_internals.py``, ``re_internals.py``): each check fails
loudly when an upgrade changes it, instead of celerylint going silently wrong."""

from __future__ import annotations

import dataclasses
import re

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from celerylint.api import libcst_internals as internals
from celerylint.api.needles import required_literal
from celerylint.engine.positions import positions
from celerylint.api.re_internals import regex_top_level

SOURCE = '''
import redis
r = redis.Redis()

@app.task(bind=True, acks_late=True)
def f(self, key, *args, **kwargs):
    """Doc."""
    with r.lock(f"lock:{key}", timeout=60) as held:
        x = [a for a in args if a] + {"k": v for k, v in kwargs.items()}
    return lambda y=1: y ** 2
'''


def test_node_validation_is_post_init_and_is_restored():
    assert "__post_init__" in internals._CSTNode.__dict__
    before = internals._CSTNode.__dict__["__post_init__"]
    module = internals.parse_unvalidated(SOURCE)
    assert module.deep_equals(cst.parse_module(SOURCE))
    assert internals._CSTNode.__dict__["__post_init__"] is before
    try:  # validation is on again: an invalid node is refused
        cst.Name("not a name")
    except cst.CSTValidationError:
        pass
    else:
        raise AssertionError("libcst no longer validates nodes in __post_init__")


def test_all_positions_equal_the_public_provider():
    module = cst.parse_module(SOURCE)
    public = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    private = internals.all_positions(module)
    assert dict(private) == dict(public)
    assert isinstance(positions(module, [module.body[0]]), dict)  # the targeted state still runs


def test_visit_order_read_from_code_matches_libcst():
    module = cst.parse_module(SOURCE)
    seen: list[cst.CSTNode] = []

    class Recorder(cst.CSTVisitor):
        def on_visit(self, node):
            seen.append(node)
            return True

    module.visit(Recorder())
    ours: list[cst.CSTNode] = []

    def walk(node):
        ours.append(node)
        for name in internals.child_fields_in_visit_order(type(node)):
            value = getattr(node, name)
            for child in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(child, cst.CSTNode):
                    walk(child)

    walk(module)
    assert [type(n) for n in ours] == [type(n) for n in seen]
    assert all(a is b for a, b in zip(ours, seen))
    for cls in (cst.FunctionDef, cst.Call, cst.With, cst.ListComp):
        assert set(internals.child_fields_in_visit_order(cls)) <= {f.name for f in dataclasses.fields(cls)}


def test_token_modules_hold_node_classes():
    op, whitespace = internals.token_modules()
    assert op.Comma is cst.Comma and whitespace.SimpleWhitespace is cst.SimpleWhitespace


def test_regex_parser_shape():
    items, width = regex_top_level(rb"ab\s*c")
    assert items[:2] == [(True, ord("a")), (True, ord("b"))]
    assert items[2][0] is False and items[3] == (True, ord("c"))
    assert width(2) == (2, 2) and width(3)[0] == 2
    assert regex_top_level(rb"(?i)abc") is None
    assert required_literal(rb"\beta\s*=") == (b"eta", 0)
    assert required_literal(rb"redis(?!x)") == (b"redis", -1)
    assert re.compile(rb"x")  # the module itself still compiles patterns


def test_code_indented_writes_the_block_indentation_after_line_breaks():
    import libcst as cst

    from celerylint.api.libcst_internals import code_indented

    module = cst.parse_module("def f():\n    g(\n        1,\n    )\n")
    call = module.body[0].body.body[0].body[0].value
    assert module.code_for_node(call) == "g(\n    1,\n)"
    assert code_indented(call, module, "    ") == "g(\n        1,\n    )"
