"""The ``ast`` twin of ``TaskCollector`` (facts/task_defs.py) records
exactly the libcst collector's facts, positions included, on every file it
accepts: every rule case and hand-written shapes; and the libcst collector's
gate leaves those files to it."""

from __future__ import annotations

import ast
import importlib.util

import pytest

from celerylint.domain.task_twin import Declined, handles_tasks, task_facts
from celerylint.registry import discover_classes
from celerylint.testing import cases as rule_cases
from celerylint.testing import split_files
from conftest import REPO

_spec = importlib.util.spec_from_file_location("task_twin_bench", REPO / "benchmarks" / "task_twin.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def case_files():
    for rule in discover_classes():
        if not getattr(rule, "CODE", ""):
            continue
        for valid in rule_cases(rule):
            for i, case in enumerate(valid):
                for rel, text in split_files(case.source, case.path).items():
                    yield f"{rule.CODE}-{i}-{rel}", rel, text


HEAD = "from celery import shared_task, Celery\nfrom proj.celery import app\nimport celery\n"
SHAPES = [
    HEAD + "@shared_task\ndef a(x, y=1):\n    pass\n",
    HEAD + "@shared_task()\nasync def a(x):\n    pass\n",
    HEAD + "@shared_task(bind=True, acks_late=True, queue='q', time_limit=30, soft_time_limit=2.5)\ndef a(self):\n    pass\n",
    HEAD + "@app.task(acks_late=False, reject_on_worker_lost=True, expires=None, ignore_result=True)\ndef a():\n    pass\n",
    HEAD + "@app.task(\n    acks_late=True,\n    serializer=\"json\",\n)\ndef a():\n    pass\n",
    HEAD + "@celery.shared_task(acks_late=True)\ndef a():\n    pass\n",
    HEAD + "@app.task(autoretry_for=(KeyError,), max_retries=3)\ndef a():\n    pass\n",
    HEAD + "class C:\n    @app.task\n    def a(self):\n        pass\n",
    HEAD + "def outer():\n    @shared_task\n    def inner():\n        pass\n",
    HEAD + "@staticmethod\n@app.periodic_task(acks_late=True)\ndef a():\n    pass\n",
    HEAD + "import functools\n@functools.wraps(f)\n@shared_task\ndef a():\n    pass\n",
    HEAD + "@shared_task(acks_late=(True))\ndef a():\n    pass\n",
    HEAD + "@shared_task(queue='q' 'r')\ndef a():\n    pass\n",
    HEAD + "@shared_task(acks_late=ACKS)\ndef a():\n    pass\n",
    HEAD + "@shared_task(base=Base)\ndef a():\n    pass\n",
    HEAD + "class T(app.Task):\n    acks_late = True\n",
    HEAD + "job = shared_task(acks_late=True)\n@job\ndef a():\n    pass\n",
    HEAD + "capp = Celery('x')\n@capp.task\ndef a():\n    pass\n",
    HEAD + "@shared_task\ndef a():\n    pass\n@shared_task\ndef a():\n    pass\n",
    HEAD + "# é\n@shared_task(acks_late=True)\ndef a():\n    pass\n",
    HEAD + "app.register_task(T())\n",
    HEAD + "from celery import current_app\n@current_app.task(expires=3600)\ndef a():\n    pass\n",
    "from celery.decorators import task\n@task(queue='x', acks_late=True)\ndef a():\n    pass\n",
    "from django.conf import settings as app\n@app.task\ndef a():\n    pass\n",
    HEAD + "@shared_task(queue=['a', 'b'], expires=-1)\ndef a():\n    pass\n",
    "from django.conf import settings\nfrom proj.celery import app\n@app.task(queue=settings.Q, acks_late=settings.A, expires=(1, 2.5, 'x'))\ndef a():\n    pass\n",
    HEAD + "@shared_task(queue=[settings.Q, 'b'], time_limit=[], soft_time_limit=(1, [2]))\ndef a():\n    pass\n",
]


SIGNATURE_SHAPES = [
    HEAD + "@shared_task(bind=True)\ndef a(self, x, /, y, z=1, *args, k, m=2, **kw):\n    pass\n",
    HEAD + "@shared_task(bind=False)\ndef a(x, /, *, k):\n    pass\n",
    HEAD + "@shared_task(bind=True)\ndef a():\n    pass\n",
    HEAD + "@shared_task(bind=1)\ndef a(self):\n    pass\n",
    HEAD + "from django.db import transaction\n@shared_task\n@transaction.atomic\ndef a(x):\n    pass\n",
    HEAD + "import functools\n@shared_task\n@functools.lru_cache\ndef a(x):\n    pass\n",
    HEAD + "if True:\n    @app.task\n    def a(x):\n        pass\ndef b():\n    @app.task\n    def c(y):\n        pass\n",
    HEAD + "class K:\n    def run(self, x):\n        pass\ndef helper(x):\n    pass\n",
    HEAD + "@shared_task\ndef a(x):\n    pass\ndef b():\n    a.delay(1, queue='q')\n",
    HEAD + "@shared_task(bind=True, base=celery.Task)\ndef a(self):\n    pass\n",
]


@pytest.mark.parametrize("twin", list(bench.TWINS))
@pytest.mark.parametrize(("name", "rel", "text"), list(case_files()), ids=lambda v: v if isinstance(v, str) and "\n" not in v else "")
def test_twin_matches_libcst_on_rule_cases(name, rel, text, twin):
    accepted, difference = bench.compare(rel, text, rel.removesuffix(".py").replace("/", "."), twin)
    assert difference is None


@pytest.mark.parametrize("twin", list(bench.TWINS))
@pytest.mark.parametrize("text", SHAPES + SIGNATURE_SHAPES)
def test_twin_matches_libcst_on_shapes(text, twin):
    accepted, difference = bench.compare("proj/tasks.py", text, "proj.tasks", twin)
    assert difference is None


def test_signature_twin_accepts_task_functions_and_declines_calls_and_bases():
    accepted = [bool(bench.compare("proj/tasks.py", t, "proj.tasks", "signatures")[0]) for t in SIGNATURE_SHAPES]
    assert accepted == [True] * 8 + [False, False]


def test_twin_accepts_the_common_shapes_and_declines_the_value_model():
    accepted = [bool(bench.compare("proj/tasks.py", t, "proj.tasks")[0]) for t in SHAPES]
    assert all(accepted[:11])
    assert not any(accepted[11:21])  # parentheses, concatenation, names, base, classes, aliases, bound apps, ...


def test_the_comparison_can_fail(monkeypatch):
    """A twin that shifts a column is caught."""
    import celerylint.domain.task_twin as twin

    original = twin.task_facts

    def shifted(*args, **kwargs):
        return [{**f, "col": f["col"] + 1} for f in original(*args, **kwargs)]

    monkeypatch.setattr(bench, "task_facts", shifted)
    assert bench.compare("proj/tasks.py", SHAPES[2], "proj.tasks")[1] is not None


def test_the_libcst_collector_is_gated_off_exactly_where_the_twin_collects():
    tree = ast.parse(SHAPES[2])
    assert handles_tasks(tree, SHAPES[2])
    with pytest.raises(Declined):
        task_facts(ast.parse(SHAPES[13]), SHAPES[13])


def test_a_run_records_the_twins_facts_without_libcst(tmp_path):
    """Through the real linter: the facts reach the project phase (CL102 reports acks_late without reject_on_worker_lost)."""
    import subprocess
    import sys

    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "celery.py").write_text("from celery import Celery\napp = Celery('proj')\n")
    (tmp_path / "proj" / "tasks.py").write_text("from proj.celery import app\n@app.task(acks_late=True)\ndef a():\n    pass\n")
    assert handles_tasks(ast.parse((tmp_path / "proj" / "tasks.py").read_text()), (tmp_path / "proj" / "tasks.py").read_text())
    out = subprocess.run([sys.executable, "-m", "celerylint", "--no-cache", "--exit-zero", "--select", "CL102", "."],
                         cwd=tmp_path, capture_output=True, text=True)
    assert "proj/tasks.py:2:" in out.stdout and "CL102" in out.stdout, out.stdout + out.stderr


def test_the_signature_comparison_can_fail(monkeypatch):
    """A twin that keeps ``self`` of a bound task is caught."""
    import celerylint.domain.signature_twin as twin

    original = twin.signature_facts

    def unbound(*args, **kwargs):
        return [{**f, "params": ["self", *f["params"]]} for f in original(*args, **kwargs)]

    monkeypatch.setitem(bench.TWINS, "signatures", (unbound, *bench.TWINS["signatures"][1:]))
    assert bench.compare("proj/tasks.py", SIGNATURE_SHAPES[0], "proj.tasks", "signatures")[1] is not None
