"""Engine behaviour that no single rule shows: rule failures, prefilter, positions."""

from __future__ import annotations

import json
import sys

from click.testing import CliRunner

from conftest import REPO
from celerylint.cli import commands as cli
from celerylint.run import linter
from celerylint.registry import Entry, entries

sys.path.insert(0, str(REPO / "tests" / "fixtures"))
BROKEN = Entry("CL299", "exploding", "file", "error", "none", "boom", "broken_rule", "Exploding", (b"redis",))
LOCK = "import redis\nr = redis.Redis()\nwith r.lock('lock:x'):\n    pass\n"


def test_exception_in_one_rule_keeps_other_findings_and_exits_two(tmp_path, monkeypatch):
    monkeypatch.setattr(linter, "all_entries", lambda: (*entries(), BROKEN))
    (tmp_path / "a.py").write_text(LOCK)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.main, ["--format", "json", "a.py"])
    assert result.exit_code == 2
    assert [f["code"] for f in json.loads(result.stdout)] == ["CL203"]
    assert "internal error in CL299 (visit_Call)" in result.stderr
    assert "ZeroDivisionError: boom" in result.stderr


def test_files_without_needles_are_not_parsed(tmp_path, monkeypatch):
    import celerylint.engine.analysis as engine

    parsed = []
    original = engine.parse
    monkeypatch.setattr(engine, "parse", lambda text: parsed.append(text) or original(text))
    (tmp_path / "plain.py").write_text("def f(:\n")  # broken, but nothing celerylint checks
    (tmp_path / "lock.py").write_text(LOCK)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli.main, ["--format", "json", "."])
    assert [f["path"] for f in json.loads(result.stdout)] == ["lock.py"]
    assert parsed == [LOCK]


def test_a_file_nothing_wants_is_decoded_only_when_decoding_could_fail():
    """``triage`` skips decoding a file no checker wants only when decoding
    certainly succeeds; every other file is decoded, so CL001 still reports
    the ones that cannot be read."""
    from celerylint.engine.analysis import _decodes
    from celerylint.core.source import DecodeError, decode

    samples = [b"", b"x = 1\n", b"x = 1", "s = 'é'\n".encode(), b"x = 1\x00\n", b"\xff\xfe",
               b"# -*- coding: utf-16 -*-\nx = 1\n", b"#!/usr/bin/env python\n# coding: latin-1\nx = 1\n",
               b"# coding: rot13\nk = 1\n", b"# vim: set fileencoding=nope :\n", b"a = 1\nb = 2\n# coding: utf-16\n"]
    for data in samples:
        try:
            decode(data)
            decodes = True
        except DecodeError:
            decodes = False
        assert not _decodes(data) or decodes, data
    assert _decodes(b"x = 1\n") and not _decodes(b"# -*- coding: utf-16 -*-\nx = 1\n")


def test_analysis_leaves_the_garbage_collector_as_it_found_it():
    import gc

    from celerylint.config.settings import Settings
    from celerylint.engine.analysis import lint_source
    from celerylint.registry import entries

    source = b"from celery import shared_task\n@shared_task\ndef f():\n    pass\n"
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            lint_source("t.py", source, Settings(), entries())
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


def test_a_file_that_only_calls_tasks_is_not_parsed_by_libcst(tmp_path):
    """CL213's task calls are read from CPython's ast, and the gates of CL210,
    CL215 and CL216 answer on it: such a file needs no libcst job, and its
    facts are recorded.  (A view that dispatches is CL216's: see its cases.)"""
    from celerylint.config.settings import Settings
    from celerylint.run.linter import Linter

    path = tmp_path / "views.py"
    path.write_text(
        "from django.db import transaction\nfrom proj.tasks import ping\n\n\n"
        "def place(order):\n    with transaction.atomic():\n        order.save()\n    ping.delay(1)\n"
    )
    result, job = Linter(Settings(root=tmp_path, config_dir=tmp_path)).prepare(path, path.read_bytes())
    assert job is None
    assert [(f["kind"], f["target"], f["line"], f["col"]) for f in result.facts] == [
        ("task-call-arguments", "proj.tasks.ping", 8, 4)]
    inside = path.read_text().replace("    ping.delay(1)\n", "").replace("order.save()", "ping.delay(1)")
    path.write_text(inside)
    _, job = Linter(Settings(root=tmp_path, config_dir=tmp_path)).prepare(path, path.read_bytes())
    assert job is not None and [e.code for e in job.active] == ["CL210"]


def test_a_module_that_only_mentions_execution_options_is_not_parsed_by_libcst(tmp_path):
    """TaskSignatures' prefilter passes ``.delay(`` and ``queue=`` anywhere in
    the file; its gate asks for a call that passes the option, a task
    decorator or a ``run`` method, and otherwise keeps the file from libcst."""
    from celerylint.config.settings import Settings
    from celerylint.run.linter import Linter

    path = tmp_path / "views.py"
    path.write_text(
        "from proj.events import publish\nfrom proj.tasks import ping\n\n\n"
        "def notify(order):\n    ping.delay(1)\n"
        "    publish(queue='high')\n"
    )
    linter = Linter(Settings(root=tmp_path, config_dir=tmp_path))
    _, job = linter.prepare(path, path.read_bytes())
    assert job is None
    for shape in ("ping.delay(1, queue='high')\n", "ping.s(1, countdown=5)\n"):
        path.write_text(path.read_text().replace("ping.delay(1)\n", shape, 1))
        _, job = linter.prepare(path, path.read_bytes())
        assert job is not None and "TaskSignatures" in [e.cls for e in job.active], shape
        path.write_text(path.read_text().replace(shape, "ping.delay(1)\n"))
    for definition in ("@shared_task\ndef job():\n    pass\n", "class Job(Base):\n    def run(self):\n        pass\n",
                       "@app.task(bind=True)\ndef job(self):\n    pass\n"):
        path.write_text("from celery import shared_task\nfrom proj.base import Base\n" + definition
                        + "ping.delay(1)\nf(queue=1)\n")
        _, job = linter.prepare(path, path.read_bytes())
        assert job is not None and "TaskSignatures" in [e.cls for e in job.active], definition


def test_a_module_that_uses_a_cache_without_locks_is_not_parsed_by_libcst(tmp_path):
    """CL203's and CL204's gates: a file that reads and writes a cache, but
    takes no lock (no ``.add`` with a timeout, ``.set`` with ``nx``,
    ``.lock``, ``setnx`` or ``Lock``) and deletes no lock key, stays away
    from libcst; each lock shape brings it back."""
    from celerylint.config.settings import Settings
    from celerylint.run.linter import Linter

    path = tmp_path / "jwks.py"
    plain = ("from django.core.cache import cache\n\n\n"
             "def keys(url):\n    found = cache.get(url)\n    if found is None:\n"
             "        found = fetch(url)\n        cache.set(url, found, 600)\n    return found\n")
    path.write_text(plain)
    linter = Linter(Settings(root=tmp_path, config_dir=tmp_path))
    _, job = linter.prepare(path, path.read_bytes())
    assert job is None
    shapes = {
        "cache.add(url, 1, None)": {"CL203"},
        "cache.set(url, 1, timeout=None, nx=True)": {"CL203"},
        "cache.lock(url)": {"CL203"},
        "cache.delete(f'lock:{url}')": {"CL204"},
        "cache.delete(url)\n    cache.add(url, 1)": {"CL204"},
    }
    for shape, codes in shapes.items():
        path.write_text(plain.replace("    return found\n", f"    {shape}\n    return found\n"))
        _, job = linter.prepare(path, path.read_bytes())
        assert job is not None and codes <= {e.code for e in job.active}, shape


def test_a_migration_named_for_a_setting_is_no_settings_module():
    """``0007_order_settings.py`` matches the settings file names, but a
    migration holds no settings: its functions are no settings helpers, and
    CPython's ``ast`` is not asked for it."""
    from celerylint.engine.analysis import wanted
    from celerylint.registry import entries

    code = b"def forwards(apps, schema_editor):\n    return None\n"
    helpers = [e for e in entries() if e.module.endswith("settings_helpers")]
    assert wanted(helpers, code, "shop/settings.py") == helpers
    assert wanted(helpers, code, "shop/migrations/0007_order_settings.py") == []
