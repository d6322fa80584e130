"""``positions.positions`` must give exactly what libcst's PositionProvider
gives, for any set of nodes of real files."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from celerylint.engine.positions import positions
from celerylint.api.traverse import visit

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


@pytest.mark.parametrize("text", [
    "from celery import shared_task\n\n@shared_task\ndef ping():\n    pass\n",
    # the same name twice: a method and a task
    "from celery import shared_task\nclass C:\n    def ping(self):\n        pass\n\n@shared_task\ndef ping():\n    pass\n",
    # a docstring line that looks like a definition
    "from celery import shared_task\n'''\ndef ping():\n'''\n@shared_task\nasync  def\tping():\n    pass\n",
    "from celery import shared_task\r\n@shared_task\r\ndef ping():\r\n    pass\r\n",
    "from celery import shared_task\r@shared_task\rdef ping():\r    pass\r",
])
def test_task_facts_have_libcst_positions(text):
    """Task facts read their position from the text when the definition is
    unique; it must be the one libcst gives the name."""
    from celerylint.config.settings import Settings
    from celerylint.engine.analysis import analyze
    from celerylint.registry import entries

    collector = [e for e in entries() if e.cls == "TaskCollector"]
    result = analyze("t.py", text, text.encode(), Settings(), collector, collector, "t")
    module = cst.parse_module(text)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    names = [n.name for n in nodes_of(module) if isinstance(n, cst.FunctionDef) and n.decorators]
    (fact,) = result.facts
    r = expected[names[0]]
    assert (fact["line"], fact["col"], fact["end_line"], fact["end_col"]) == (r.start.line, r.start.column, r.end.line, r.end.column)
