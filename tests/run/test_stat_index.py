"""The stat index: unchanged files are served without being read, changed
ones are linted again, recently modified ones are not trusted, and the
project phase is not run again over the same facts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import startup_env
from celerylint.run import project, runner
from celerylint.run.cache import ENV as CACHE_ENV
from celerylint.run.stat_index import StatIndex
from celerylint.cli.commands import main

from test_prefilter_cache import age, forbid_reading, lint

DEFAULT_INDEX_MIN_FILES = runner.INDEX_MIN_FILES
TASKS = (
    "from celery import shared_task\n\n"
    "@shared_task\n"
    "def ping():\n"
    "    ping.apply_async(countdown=86400 * 30)\n"
)
APP = (
    "from celery import Celery\n"
    "app = Celery('proj', broker='redis://localhost:6379/0')\n"
    "app.conf.task_reject_on_worker_lost = True\n"
    "app.conf.worker_prefetch_multiplier = 1\n"
)


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "INDEX_MIN_FILES", 1)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "tasks.py").write_text(TASKS)
    (root / "celery_app.py").write_text(APP)
    for i in range(5):
        (root / f"plain_{i}.py").write_text(f"x = {i}\n")
    age(root)
    return root, tmp_path / "cache"


def codes(findings: list[dict]) -> list[tuple[str, str]]:
    return [(f["path"], f["code"]) for f in findings]


def test_unchanged_tree_reads_nothing_and_runs_no_project_rule(tree, monkeypatch):
    root, cache = tree
    _, cold = lint(root, "--no-cache")
    assert ("tasks.py", "CL206") in codes(cold) and ("celery_app.py", "CL101") in codes(cold)
    _, filling = lint(root, cache_dir=cache)
    assert filling == cold
    assert len(list(cache.glob("index-*.json"))) == 1
    with monkeypatch.context() as m:
        forbid_reading(m)
        m.setattr(project, "run_project", lambda *a: pytest.fail("the project phase ran again"))
        _, warm = lint(root, cache_dir=cache)
    assert warm == cold


def test_a_changed_file_is_linted_again(tree, monkeypatch):
    root, cache = tree
    lint(root, cache_dir=cache)
    path = root / "plain_3.py"
    path.write_text("from celery import shared_task\n\n@shared_task\ndef later():\n    later.apply_async(countdown=7 * 86400)\n")
    os.utime(path, (time.time() - 30, time.time() - 30))
    read = []
    real = runner.Linter.read
    monkeypatch.setattr(runner.Linter, "read", lambda self, p: read.append(p.name) or real(self, p))
    _, warm = lint(root, cache_dir=cache)
    assert read == ["plain_3.py"]
    assert ("plain_3.py", "CL206") in codes(warm)
    _, cold = lint(root, "--no-cache")
    assert warm == cold


def test_a_changed_setting_runs_the_project_phase_again(tree):
    root, cache = tree
    _, before = lint(root, cache_dir=cache)
    assert ("celery_app.py", "CL101") in codes(before)
    (root / "celery_app.py").write_text(APP + "app.conf.task_acks_late = True\n")
    os.utime(root / "celery_app.py", (time.time() - 30, time.time() - 30))
    _, after = lint(root, cache_dir=cache)
    assert ("celery_app.py", "CL101") not in codes(after)
    assert after == lint(root, "--no-cache")[1]


def test_deleted_files_leave_the_index(tree):
    root, cache = tree
    lint(root, cache_dir=cache)
    (root / "plain_1.py").unlink()
    (root / "plain_2.py").write_text("x = 'changed'\n")  # something to write the index for
    os.utime(root / "plain_2.py", (time.time() - 30, time.time() - 30))
    lint(root, cache_dir=cache)
    (index,) = cache.glob("index-*.json")
    files = json.loads(index.read_text())["files"]
    assert "plain_1.py" not in files and "plain_2.py" in files and "tasks.py" in files


def test_recently_modified_files_are_not_trusted(tree, monkeypatch):
    root, cache = tree
    (root / "plain_0.py").write_text("x = 'just now'\n")  # mtime: now
    lint(root, cache_dir=cache)
    read = []
    real = runner.Linter.read
    monkeypatch.setattr(runner.Linter, "read", lambda self, p: read.append(p.name) or real(self, p))
    lint(root, cache_dir=cache)
    assert read == ["plain_0.py"]


def test_a_warm_run_imports_neither_libcst_nor_celery(tree, cli):
    root, cache = tree
    env = {CACHE_ENV: str(cache)}
    for i in range(DEFAULT_INDEX_MIN_FILES):  # enough for the index in a real process
        (root / f"more_{i}.py").write_text("y = 1\n")
    age(root)
    first = cli("--format", "json", ".", cwd=root, env=env)
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['celerylint', '--format', 'json', '.']\n"
        "try:\n    runpy.run_module('celerylint', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print('IMPORTED', sorted(m for m in ('libcst', 'celery') if m in sys.modules), file=sys.stderr)\n"
    )
    second = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True,
                            env=startup_env(**env), timeout=120)
    assert json.loads(second.stdout) == json.loads(first.stdout)
    assert "IMPORTED []" in second.stderr, second.stderr


def test_diff_reads_every_file(tree, monkeypatch):
    """Fixes need what each file holds now: --fix and --diff do not use the index."""
    root, cache = tree
    lint(root, cache_dir=cache)
    read = []
    real = runner.Linter.read
    monkeypatch.setattr(runner.Linter, "read", lambda self, p: read.append(p.name) or real(self, p))
    old = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, ["--diff", "."], env={CACHE_ENV: str(cache)})
    finally:
        os.chdir(old)
    assert result.exception is None, result.output
    assert sorted(read) == sorted(p.name for p in root.glob("*.py"))


def test_a_changed_launch_file_runs_the_project_phase_again(tree):
    """A Procfile is no Python file and no ``redis-config-files`` entry, but
    the deployment rules read it: changing it changes the project findings."""
    root, cache = tree
    (root / "Procfile").write_text("worker: celery -A celery_app worker\n")
    age(root)
    _, before = lint(root, "--select", "CL121", cache_dir=cache)
    assert before == []
    (root / "Procfile").write_text("worker: celery -A celery_app worker -B\nclock: celery -A celery_app beat\n")
    _, after = lint(root, "--select", "CL121", cache_dir=cache)
    assert codes(after) == [("Procfile", "CL121")]


def _on_files(root: Path, cache: Path, *paths: str) -> list[dict]:
    old = Path.cwd()
    os.chdir(root)
    try:
        result = CliRunner().invoke(main, ["--format", "json", "--force-exclude", *paths], env={CACHE_ENV: str(cache)},
                                    catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def test_runs_on_some_files_keep_the_others_partial_results(tree, monkeypatch):
    """A pre-commit hook names a few files and reads the others for their
    facts: those partial results serve the next such run, which reads only
    the files it names; a whole run never takes them."""
    root, cache = tree
    _, cold = lint(root, "--no-cache")
    assert codes(_on_files(root, cache, "tasks.py")) == [c for c in codes(cold) if c[0] == "tasks.py"]
    read: list[str] = []
    real = runner.Linter.read
    monkeypatch.setattr(runner.Linter, "read", lambda self, p: read.append(p.name) or real(self, p))
    (root / "tasks.py").write_text(TASKS + "\n")
    os.utime(root / "tasks.py", (time.time() - 30, time.time() - 30))
    assert codes(_on_files(root, cache, "tasks.py")) == [c for c in codes(cold) if c[0] == "tasks.py"]
    assert set(read) == {"tasks.py"}
    read.clear()
    assert codes(_on_files(root, cache, "plain_0.py")) == []
    assert set(read) == {"plain_0.py"}
    read.clear()
    _, whole = lint(root, cache_dir=cache)
    assert whole == cold
    assert {"plain_1.py", "plain_4.py", "celery_app.py"} <= set(read) and "tasks.py" not in read


def test_force_exclude_shares_the_index_of_plain_runs(tree, monkeypatch):
    """``--force-exclude`` (every pre-commit hook) decides which named files
    are linted, not what they lint to: it takes the index a plain run wrote."""
    root, cache = tree
    _, cold = lint(root, cache_dir=cache)
    forbid_reading(monkeypatch)
    _, warm = lint(root, "--force-exclude", cache_dir=cache)
    assert warm == cold


def _blank_configuration_module(root: Path) -> None:
    """An app whose configuration module ``cfg.py`` sets nothing Celery reads."""
    (root / "celery_app.py").write_text(
        "from celery import Celery\n"
        "app = Celery('proj', broker='redis://localhost:6379/0')\n"
        "app.config_from_object('cfg')\n"
    )
    (root / "cfg.py").write_text("DEBUG = True\n")
    age(root)


def test_a_warm_run_gives_the_project_every_file_name(tree, monkeypatch):
    """Unchanged files with nothing to say are left out of a warm run's
    results (never read, no result made), but the project still knows they
    exist: a configuration module that sets nothing Celery reads is still
    the app's configuration (without it, the app's settings are unknown)."""
    root, cache = tree
    _blank_configuration_module(root)
    _, cold = lint(root, "--no-cache")
    assert ("celery_app.py", "CL101") in codes(cold)
    assert lint(root, cache_dir=cache)[1] == cold
    left_out: list[set[str]] = []
    real = StatIndex.quiet_files
    monkeypatch.setattr(StatIndex, "quiet_files", lambda *a: left_out.append(real(*a)) or left_out[-1])
    forbid_reading(monkeypatch)
    _, warm = lint(root, cache_dir=cache)
    assert "cfg.py" in left_out[0] and warm == cold


def test_a_warm_run_on_one_file_needs_no_closure(tree, monkeypatch):
    """After a whole run every file has its whole result in the index: a run
    on one file takes them all and never works out what that file imports."""
    root, cache = tree
    _, whole = lint(root, cache_dir=cache)
    monkeypatch.setattr(runner, "_closure", lambda *a: pytest.fail("the closure was computed"))
    forbid_reading(monkeypatch)
    assert codes(_on_files(root, cache, "tasks.py")) == [c for c in codes(whole) if c[0] == "tasks.py"]


def test_partial_results_give_way_to_whole_ones(tree):
    """A run on some files keeps the others' partial results; once a whole
    run has kept a whole result of the same content, the partial one goes."""
    root, cache = tree
    _on_files(root, cache, "tasks.py")
    [index] = cache.glob("index-*.json")
    assert any("\0" in key for key in json.loads(index.read_bytes())["files"])
    (root / "plain_0.py").write_text("x = 'changed'\n")  # something for the whole run to write
    os.utime(root / "plain_0.py", (time.time() - 30, time.time() - 30))
    lint(root, cache_dir=cache)
    files = json.loads(index.read_bytes())["files"]
    assert not [key for key in files if "\0" in key and files[key][0] == files.get(key.partition("\0")[0], [None])[0]]


def test_a_warm_fix_reaches_a_file_named_with_nothing_to_say(tree):
    """The fix hook on a configuration module that sets nothing yet: the
    file is blank in the index, but a file named always has a result, so
    the setting the app lacks is added to it."""
    root, cache = tree
    _blank_configuration_module(root)
    lint(root, cache_dir=cache)
    _on_files(root, cache, "--fix", "--unsafe-fixes", "cfg.py")
    assert "task_acks_late = True" in (root / "cfg.py").read_text()


def test_a_settings_file_read_only_by_the_project_phase_is_watched(tree):
    """``production.py`` has nothing for a collector (a star import and
    ``DEBUG``): its result is blank, and the project phase reads its text
    to follow the chain.  Pointed at another base, the next warm run must
    not serve the findings kept from before."""
    root, cache = tree
    (root / "celery_app.py").unlink()
    (root / "proj" / "django").mkdir(parents=True)
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "django" / "__init__.py").write_text("")
    (root / "proj" / "celery.py").write_text(
        "import os\nfrom celery import Celery\n"
        'os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.django.production")\n'
        'app = Celery("proj")\napp.config_from_object("django.conf:settings", namespace="CELERY")\n')
    (root / "proj" / "django" / "base.py").write_text('CELERY_BROKER_URL = "redis://localhost:6379/0"\n')
    (root / "proj" / "django" / "other.py").write_text(
        'CELERY_BROKER_URL = "redis://localhost:6379/0"\nCELERY_TASK_ACKS_LATE = True\n'
        "CELERY_TASK_REJECT_ON_WORKER_LOST = True\nCELERY_WORKER_PREFETCH_MULTIPLIER = 1\n")
    production = root / "proj" / "django" / "production.py"
    production.write_text("from .base import *\nDEBUG = False\n")
    age(root)
    _, before = lint(root, cache_dir=cache)
    assert ("proj/celery.py", "CL101") in codes(before)
    production.write_text("from .other import *\nDEBUG = False\n")
    os.utime(production, (time.time() - 30, time.time() - 30))
    _, after = lint(root, cache_dir=cache)
    assert ("proj/celery.py", "CL101") not in codes(after)
    assert after == lint(root, "--no-cache")[1]
