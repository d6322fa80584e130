"""A pre-commit run on files without Celery content must stay cheap: neither
libcst nor celery may be imported, nor the cache's hashing machinery."""

from __future__ import annotations

import subprocess
import sys

from conftest import startup_env

PROBE = """
import sys
from celerylint.cli.commands import main
sys.argv = ["celerylint", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("libcst", "celery", "hashlib", "difflib", "multiprocessing"))
print("HEAVY", heavy, file=sys.stderr)
"""


def run_probe(tmp_path, *files):
    proc = subprocess.run([sys.executable, "-c", PROBE, *files], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env=startup_env())
    line = [l for l in proc.stderr.splitlines() if l.startswith("HEAVY")][-1]
    return proc, line


def test_small_files_without_celery_import_nothing_heavy(tmp_path):
    (tmp_path / "helpers.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "views.py").write_text("# you can redistribute it\nfrom django.http import HttpResponse\n")
    proc, line = run_probe(tmp_path, "helpers.py", "views.py")
    assert proc.stdout.startswith("No findings")
    assert line == "HEAVY []", proc.stderr


def test_a_file_a_rule_wants_imports_libcst_but_not_celery(tmp_path):
    (tmp_path / "tasks.py").write_text("from proj.tasks import ping\nping.apply_async(countdown=10)\n")
    _, line = run_probe(tmp_path, "tasks.py")
    assert "'libcst'" in line and "'celery'" not in line


def test_a_large_tree_without_celery_imports_neither_libcst_nor_celery(tmp_path):
    """Read and prefiltered by workers in chunks; none of them needs libcst,
    and the project phase has no facts to reason over."""
    from celerylint.run import pool

    for i in range(pool.PARALLEL_MIN_PATHS + 10):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}(a, b):\n    return a + b\n")
    proc, line = run_probe(tmp_path, "--no-cache", "--jobs", "2", ".")
    assert proc.stdout.startswith("No findings"), proc.stdout + proc.stderr
    assert "'libcst'" not in line and "'celery'" not in line, line
    assert "'multiprocessing'" in line  # the chunked pool did run


def test_a_settings_file_reads_the_shipped_setting_table_not_celery(tmp_path):
    """The configuration rules need Celery's setting names: from the copy
    shipped with celerylint, whichever Celery is installed."""
    (tmp_path / "celeryconfig.py").write_text("broker_url = 'redis://'\ntask_acks_late = True\nworker_prefetch_multipler = 1\n")
    proc, line = run_probe(tmp_path, "celeryconfig.py")
    assert "CL107" in proc.stdout, proc.stdout + proc.stderr  # the misspelled setting is found
    assert "'libcst'" in line and "'celery'" not in line, line

