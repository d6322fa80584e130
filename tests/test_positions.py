"""``positions.positions`` must give exactly what libcst's PositionProvider
gives, for any set of nodes of real files."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from celerylint.positions import positions
from celerylint.traverse import visit

from test_traverse import Recorder, sources

SOURCES = list(sources())
EXTRA = [
    ("crlf", "import a\r\nx = (1,\r\n     2)  # c\r\nif x:\r\n    y = f(\r\n        a)\r\n"),
    ("cr", "import a\rx = 1\rdef f():\r    return g(x)\r"),
    ("tabs", "if x:\n\tif y:\n\t\tz = call(a,\n\t\t\tb)\n"),
    ("unicode", "x = 'é𝄞'; y = f('名前', x)\n@dec\nclass C(B):\n    '''doc'''\n"),
]


def nodes_of(module: cst.Module) -> list[cst.CSTNode]:
    recorder = Recorder()
    visit(module, recorder)
    return [node for event, node in recorder.events if event == "visit"]


@pytest.mark.parametrize(("name", "text"), SOURCES[:60] + EXTRA, ids=lambda v: v if isinstance(v, str) and len(v) < 60 else "")
def test_same_positions_as_libcst(name, text):
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        pytest.skip("does not parse")
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    everything = nodes_of(module)
    assert positions(module, everything) == {n: expected[n] for n in everything}
    rng = random.Random(name)
    for size in (1, 3, 20):
        chosen = rng.sample(everything, min(size, len(everything)))
        got = positions(module, chosen)
        assert {n: got[n] for n in chosen} == {n: expected[n] for n in chosen}


def test_no_targets():
    assert positions(cst.parse_module("x = 1\n"), []) == {}
