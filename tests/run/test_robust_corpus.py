"""Real code at scale: every project under $CELERYLINT_CORPUS (one checkout
per directory) is linted in its own process with a time limit; no traceback,
no internal error, no crash, no hang.  Skipped unless the variable is set:
the corpus is large and not part of the repository.

    CELERYLINT_CORPUS=/work/corpus pytest -m slow tests/test_robust_corpus.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import REPO

CORPUS = os.environ.get("CELERYLINT_CORPUS")
PROJECTS = sorted(p for p in Path(CORPUS).iterdir() if p.is_dir()) if CORPUS else []
sys.path.insert(0, str(REPO / "benchmarks"))


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS, reason="set CELERYLINT_CORPUS to a directory of checked-out projects")
@pytest.mark.parametrize("project", PROJECTS, ids=[p.name for p in PROJECTS])
def test_project(project):
    from corpus_robustness import survey

    row = survey(project, timeout=float(os.environ.get("CELERYLINT_CORPUS_TIMEOUT", "900")))
    assert row["status"] in (0,), row  # --exit-zero: anything else is a crash or an internal error
    assert row["tracebacks"] == 0 and row["internal_errors"] == 0, row
