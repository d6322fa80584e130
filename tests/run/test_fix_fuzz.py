"""Fuzzing the fixes through the real command: trees of hypothesmith
programs, mutated rule cases (the sources of every rule's INVALID cases)
and a mutated copy of ``examples/``, each tree in one ``celerylint`` run of
``--fix --unsafe-fixes`` and one of ``--diff --unsafe-fixes`` (so the cost
is the files, not process start-up).  ``benchmarks/fixcheck.py``'s
``check_tree`` asserts: no traceback, exit status 0/1/2, every fixed file
compiles with CPython and binds the same module-level names (but Celery
setting names a fix adds or renames), the patch applies with ``git apply``
and gives exactly the ``--fix`` result.  (tests/engine/test_fuzz.py fuzzes
the engine in this process, without the command, the disk and the patch.)

About a minute by default (derandomized); the long campaign runs under
``-m slow`` or with CELERYLINT_FUZZ_EXAMPLES=N (N trees).
"""

from __future__ import annotations

import os
import shutil
import sys

import hypothesmith
import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from celerylint.registry import discover_classes
from celerylint.testing import cases as rule_cases
from celerylint.testing import split_files

sys.path.insert(0, str(REPO / "benchmarks"))
from fixcheck import check_tree  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git apply checks the patches")

CELERYLINT = [sys.executable, "-m", "celerylint"]
LONG = os.environ.get("CELERYLINT_FUZZ_EXAMPLES")
RULES = [c for c in discover_classes() if getattr(c, "CODE", "")]
CASES = [case.source for rule in RULES for case in rule_cases(rule)[1]]
EXAMPLES = {p.relative_to(REPO / "examples").as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((REPO / "examples").rglob("*")) if p.is_file()}
HEADERS = (
    "",
    "from celery import Celery, shared_task\nimport redis\napp = Celery('gen')\nr = redis.Redis()\n",
    "CELERYD_PREFETCH_MULTIPLIER = 4\nCELERY_ACKS_LATE = False\n",
)
# lines a mutation inserts: settings old and new, repeated, in calls and
# dicts, locks, delays; each is something a rule reports or a fix edits
SNIPPETS = (
    "CELERYD_PREFETCH_MULTIPLIER = 1", "worker_prefetch_multiplier = 4", "task_ack_late = True",
    "CELERY_ACKS_LATE = True", "task_acks_late = False", "BROKER_URL = 'redis://u:p@h/0'",
    "app.conf.update(CELERYD_PREFETCH_MULTIPLIER=1, worker_prefetch_multiplier=4)",
    "app.conf.update({'CELERY_ACKS_LATE': True, \"task_ack_late\": 1})",
    "app.config_from_object({'BROKER_URL': 'amqp://h', 'CELERY_RESULT_BACKEND': 'amqp://'})",
    "app.conf['CELERYD_PREFETCH_MULTIPLIER'] = 2", "app.conf.task_ack_late = True",
    "r.set('lock:' + key, 1, nx=True)", "r.lock('x')", "t.apply_async((1,), countdown=86400 * 30)",
    "from celery import Celery", "app = Celery('x')", "import redis", "r = redis.Redis()",
    "if True:", "    pass", "def f(key):", "class Config:", "    CELERY_ACKS_LATE = True", "nonlocal x",
    "return 1", "async def g():", "    await x", "x: int = 1", "try:", "except Exception:", "(", ")",
)


def fuzz(default: int):
    """``default`` trees, derandomized; CELERYLINT_FUZZ_EXAMPLES=N: N random trees."""
    return settings(
        max_examples=int(LONG) if LONG else default, deadline=None, database=None, derandomize=not LONG,
        suppress_health_check=list(HealthCheck),
    )


@st.composite
def mutated(draw, text: str) -> str:
    """``text`` with a few line-level mutations (none: as it is)."""
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(lines)))
        kind = draw(st.sampled_from(("insert", "insert", "delete", "duplicate", "swap", "indent", "dedent",
                                     "truncate")))
        if kind == "insert":
            indent = draw(st.sampled_from(("", "    ", "        ")))
            lines.insert(i, indent + draw(st.sampled_from(SNIPPETS)))
        elif i == len(lines):
            continue
        elif kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "indent":
            lines[i] = "    " + lines[i]
        elif kind == "dedent":
            lines[i] = lines[i].lstrip()
        else:
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
    return "\n".join(lines)


@st.composite
def trees(draw, programs: int, cases: int) -> dict[str, str]:
    """A tree's files: generated programs, mutated cases, a mutated ``examples/``."""
    files = {}
    for i, program in enumerate(draw(st.lists(hypothesmith.from_grammar(), max_size=programs))):
        files[f"gen/g{i}.py"] = draw(st.sampled_from(HEADERS)) + program
    for i in draw(st.lists(st.integers(0, len(CASES) - 1), max_size=cases, unique=True)):
        for rel, text in split_files(draw(mutated(CASES[i])), "proj.py").items():
            files[f"cases/c{i}/{rel}"] = text
    for rel, text in EXAMPLES.items():
        files[f"examples/{rel}"] = draw(mutated(text)) if rel.endswith(".py") else text
    return files


def _check(tmp_path, files: dict[str, str], *, second: bool = False) -> dict:
    root = tmp_path / "tree"
    shutil.rmtree(root, ignore_errors=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
    row = check_tree(root, CELERYLINT, timeout=300, second=second)
    assert row["problems"] == [], "\n".join(row["problems"])
    return row


def test_every_rule_case_and_the_examples_in_one_tree(tmp_path):
    """Unmutated, with a second ``--fix`` that must change nothing."""
    files = {f"examples/{rel}": text for rel, text in EXAMPLES.items()}
    for i, source in enumerate(CASES):
        files.update({f"cases/c{i}/{rel}": text for rel, text in split_files(source, "proj.py").items()})
    row = _check(tmp_path, files, second=True)
    assert row["files_changed"] > 20  # the cases' fixes did apply


@fuzz(6)
@given(trees(programs=12, cases=40))
def test_generated_and_mutated_trees(tmp_path_factory, files):
    _check(tmp_path_factory.mktemp("fuzz"), files)


def _long_campaign(config) -> bool:
    expression = config.getoption("markexpr", "") or ""
    return bool(LONG) or ("slow" in expression and "not slow" not in expression)


@pytest.mark.slow
def test_long_campaign(request, tmp_path_factory):
    if not _long_campaign(request.config):
        pytest.skip("the long campaign runs under -m slow or with CELERYLINT_FUZZ_EXAMPLES=N")

    @settings(max_examples=int(LONG) if LONG else 40, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(trees(programs=30, cases=80))
    def campaign(files):
        _check(tmp_path_factory.mktemp("fuzz"), files)

    campaign()
