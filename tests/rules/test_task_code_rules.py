"""CL214-CL219 through the real command line, across files: settings
profiles, signal handlers connected in another module, lock-library
configuration in the Django settings; fixes applied and re-linted, and the
cache following a change of the settings."""

from __future__ import annotations

import ast
import json

from conftest import lint_json, write_project

SETTINGS_BASE = """
# file: proj/__init__.py
# file: proj/celery.py
import os
from celery import Celery
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "proj.settings.production")
app = Celery("proj")
app.config_from_object("django.conf:settings", namespace="CELERY")
# file: proj/settings/__init__.py
# file: proj/settings/base.py
DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql"}}
CELERY_BROKER_URL = "redis://localhost:6379/0"
"""

VIEWS = """
# file: proj/views.py
from django.db import transaction
from proj.orders import place
from proj.tasks import notify
def checkout(request, pk):
    place(request.user, pk)
    notify.delay(pk)
"""


def _codes(findings: list[dict], code: str) -> list[tuple[str, int]]:
    return sorted((f["path"], f["line"]) for f in findings if f["code"] == code)


def test_atomic_requests_in_a_settings_profile_reports_views_and_fixes_them(tmp_path, cli):
    write_project(tmp_path, SETTINGS_BASE, """
        # file: proj/settings/production.py
        from .base import *
        DATABASES["default"]["ATOMIC_REQUESTS"] = True
    """, VIEWS)
    _, findings, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert _codes(findings, "CL216") == [("proj/views.py", 6)]
    assert "proj/settings/production.py" in findings[0]["message"]

    done = cli("--select", "CL216", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    fixed = (tmp_path / "proj/views.py").read_text()
    assert "    transaction.on_commit(lambda: notify.delay(pk))\n" in fixed
    ast.parse(fixed)
    _, again, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert again == []


def test_a_profile_that_stops_setting_atomic_requests_silences_the_views_through_the_cache(tmp_path):
    root, cache = tmp_path / "repo", tmp_path / "cache"
    write_project(root, SETTINGS_BASE, """
        # file: proj/settings/production.py
        from .base import *
        DATABASES["default"]["ATOMIC_REQUESTS"] = True
    """, VIEWS)
    _, first, _ = lint_json(root, "--select", "CL216", cache_dir=cache)
    assert _codes(first, "CL216") == [("proj/views.py", 6)]
    (root / "proj/settings/production.py").write_text("from .base import *\n")
    _, second, _ = lint_json(root, "--select", "CL216", cache_dir=cache)
    assert second == []


def test_a_handler_connected_in_another_module_is_reported_where_it_dispatches(tmp_path, cli):
    """``pre_save`` always counts; ``post_save`` only once a settings module
    sets ``ATOMIC_REQUESTS`` (Django sends it after its own save transaction)."""
    write_project(tmp_path, """
        # file: proj/__init__.py
        # file: proj/handlers.py
        from django.db import transaction
        from proj.tasks import index, warm
        def on_saved(sender, instance, **kwargs):
            index.delay(instance.pk)
        def before_save(sender, instance, **kwargs):
            warm.delay(instance.pk)
        def unconnected(sender, instance, **kwargs):
            index.delay(instance.pk)
        # file: proj/apps.py
        from django.apps import AppConfig
        from django.db.models.signals import post_save, pre_save
        class ProjConfig(AppConfig):
            def ready(self):
                from proj import handlers
                post_save.connect(handlers.on_saved, sender="proj.Order")
                pre_save.connect(handlers.before_save, sender="proj.Order")
    """)
    _, findings, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert _codes(findings, "CL216") == [("proj/handlers.py", 6)]
    assert "before the row is even written" in findings[0]["message"] and findings[0]["fix"] is None

    (tmp_path / "proj/settings.py").write_text('DATABASES = {"default": {"ATOMIC_REQUESTS": True}}\n')
    _, findings, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert _codes(findings, "CL216") == [("proj/handlers.py", 4), ("proj/handlers.py", 6)]
    by_line = {f["line"]: f for f in findings}
    assert "connected to `post_save`" in by_line[4]["message"] and by_line[4]["fix"] is not None
    assert "proj/settings.py" in by_line[4]["message"]

    done = cli("--select", "CL216", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # the pre_save one remains
    fixed = (tmp_path / "proj/handlers.py").read_text()
    assert "    transaction.on_commit(lambda: index.delay(instance.pk))\n" in fixed
    assert "    warm.delay(instance.pk)\n" in fixed
    ast.parse(fixed)


def test_a_file_with_lone_carriage_returns_is_gated_on_its_lines_as_cpython_counts_them(tmp_path):
    """CL216's gate skips functions without a dispatch word on their lines;
    CPython ends lines at a lone ``\\r`` too, so such a file is read whole."""
    (tmp_path / "proj").mkdir()
    lines = ["from django.db.models.signals import pre_delete", "from django.dispatch import receiver",
             "# one", "# two", "@receiver(pre_delete, sender='proj.Order')", "def purge(sender, instance, **kwargs):",
             "    index.delay(instance.pk)", ""]
    (tmp_path / "proj/signals.py").write_bytes("\r".join(lines).encode())
    _, findings, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert _codes(findings, "CL216") == [("proj/signals.py", 7)]


def test_celery_once_configured_in_the_django_settings(tmp_path):
    root, cache = tmp_path / "repo", tmp_path / "cache"
    write_project(root, SETTINGS_BASE, """
        CELERY_ONCE = {"backend": "celery_once.backends.Redis", "settings": {"url": "redis://", "default_timeout": 60}}
        # file: proj/settings/production.py
        from .base import *
        # file: proj/tasks.py
        from celery import shared_task
        from celery_once import QueueOnce
        @shared_task(base=QueueOnce, time_limit=600)
        def export(): ...
    """)
    _, findings, _ = lint_json(root, "--select", "CL218", cache_dir=cache)
    assert _codes(findings, "CL218") == [("proj/tasks.py", 3)]
    assert "60 s" in findings[0]["message"] and "`time_limit` of 600 s" in findings[0]["message"]
    base = root / "proj/settings/base.py"
    base.write_text(base.read_text().replace('"default_timeout": 60', '"default_timeout": 900'))
    _, again, _ = lint_json(root, "--select", "CL218", cache_dir=cache)
    assert again == []


def test_celery_once_without_a_task_limit_is_judged_by_the_apps_limit_in_the_django_settings(tmp_path, cli):
    """A task that sets no limit runs under ``CELERY_TASK_TIME_LIMIT`` of the
    settings (namespace ``CELERY``): a run on the task's file alone reports
    what the whole project does, and a limit raised in the settings is
    seen through the cache."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    write_project(root, SETTINGS_BASE, """
        CELERY_TASK_TIME_LIMIT = 600
        # file: proj/settings/production.py
        from .base import *
        # file: proj/tasks.py
        from celery import shared_task
        from celery_once import QueueOnce
        @shared_task(base=QueueOnce, once={"timeout": 60})
        def export(): ...
    """)
    (root / ".git").mkdir()
    _, findings, _ = lint_json(root, "--select", "CL218", cache_dir=cache)
    assert _codes(findings, "CL218") == [("proj/tasks.py", 3)]
    assert "`task_time_limit` (proj/settings/base.py) of 600 s" in findings[0]["message"]
    alone = cli("--select", "CL218", "--no-cache", "--format", "json", "tasks.py", cwd=root / "proj")
    assert [(f["line"], f["message"]) for f in json.loads(alone.stdout)] == [(3, findings[0]["message"])]
    base = root / "proj/settings/base.py"
    base.write_text(base.read_text().replace("CELERY_TASK_TIME_LIMIT = 600", "CELERY_TASK_TIME_LIMIT = 30"))
    _, again, _ = lint_json(root, "--select", "CL218", cache_dir=cache)
    assert again == []


def test_results_never_read_is_off_by_default_and_runs_when_selected(tmp_path, cli):
    write_project(tmp_path, """
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", backend="redis://localhost:6379/1")
        @app.task
        def ping(): ...
        def beat():
            ping.delay()
    """)
    default = cli("--format", "json", "--no-cache", ".", cwd=tmp_path)
    assert "CL219" not in {f["code"] for f in json.loads(default.stdout)}
    chosen = cli("--format", "json", "--no-cache", "--select", "CL219", ".", cwd=tmp_path)
    assert [f["code"] for f in json.loads(chosen.stdout)] == ["CL219"]


def test_file_rules_report_from_the_command_line(tmp_path, cli):
    write_project(tmp_path, """
        # file: proj/__init__.py
        # file: proj/tasks.py
        from celery import shared_task
        from proj.models import Order
        @shared_task
        def crawl(ids):
            return fetch.delay(ids[0]).get(timeout=10)
        def confirm(pk):
            ship.delay(Order.objects.get(pk=pk))
    """)
    done = cli("--select", "CL214,CL215", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert "proj/tasks.py:5:12: CL214" in done.stdout
    assert "proj/tasks.py:7:16: CL215" in done.stdout


def test_cl215_gate_keeps_a_signature_split_over_lines_and_an_alias_after_a_comment(tmp_path):
    """CL215's gate walks only the functions whose lines hold a sending word:
    the name of ``.si`` may start a line of its own, and an import may name
    its alias after a comment; neither may hide the argument from the rule."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj/views.py").write_text(
        "from django.shortcuts import (get_object_or_404  # a comment\n"
        "                              as fetch)\n"
        "from proj.models import Order\n"
        "\n"
        "def view(pk):\n"
        "    order = fetch(Order, pk=pk)\n"
        "    signature = (ship.  # a comment\n"
        "                 si)(order)\n"
        "    return signature\n"
        "\n"
        "def other(pk):\n"
        "    ship.delay(pk)\n")
    _, findings, _ = lint_json(tmp_path, "--select", "CL215", "--no-cache")
    assert _codes(findings, "CL215") == [("proj/views.py", 8)]


SEND_ORDER = """
# file: proj/tasks.py
from celery import shared_task
@shared_task
def ship(order): ...
# file: proj/views.py
from proj.models import Order
from proj.tasks import ship
def confirm(request, pk):
    ship.delay(Order.objects.get(pk=pk))
"""


def test_cl215_words_its_finding_by_the_serializer_in_the_django_settings(tmp_path):
    """CL215 reads ``CELERY_TASK_SERIALIZER`` of the settings module the app
    loads: with pickle (chosen on purpose, as taiga and paperless do) the
    finding is about the stale copy, a warning; with json, the send fails."""
    pickled, plain = tmp_path / "pickled", tmp_path / "plain"
    write_project(pickled, SETTINGS_BASE, 'CELERY_TASK_SERIALIZER = "pickle"\n'
                  'CELERY_ACCEPT_CONTENT = ["pickle"]\n# file: proj/settings/production.py\nfrom .base import *\n'
                  + SEND_ORDER)
    write_project(plain, SETTINGS_BASE, '# file: proj/settings/production.py\nfrom .base import *\n' + SEND_ORDER)
    _, findings, _ = lint_json(pickled, "--select", "CL215", "--no-cache")
    [found] = [f for f in findings if f["code"] == "CL215"]
    assert (found["path"], found["line"]) == ("proj/views.py", 4)
    assert "pickle (the serializer it is sent with)" in found["message"] and "stale data" in found["message"]
    assert "EncodeError" not in found["message"] and found["severity"] == "warning"
    _, findings, _ = lint_json(plain, "--select", "CL215", "--no-cache")
    [found] = [f for f in findings if f["code"] == "CL215"]
    assert "the json serializer cannot encode it (`EncodeError` when it is sent)" in found["message"]
    assert "pickle" not in found["message"] and found["severity"] == "error"


def test_a_signal_connected_in_a_file_with_lone_carriage_returns(tmp_path):
    """The connections are read on the lines CPython counts: a lone ``\\r``
    ends a line too, so such an ``apps.py`` is read whole."""
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj/handlers.py").write_text(
        "def before_save(sender, instance, **kwargs):\n    warm.delay(instance.pk)\n")
    lines = ["from django.apps import AppConfig", "from django.db.models.signals import pre_save", "# one",
             "class ProjConfig(AppConfig):", "    def ready(self):", "        from proj import handlers",
             "        pre_save.connect(handlers.before_save, sender='proj.Order')", ""]
    (tmp_path / "proj/apps.py").write_bytes("\r".join(lines).encode())
    _, findings, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert _codes(findings, "CL216") == [("proj/handlers.py", 2)]


CHORD_BY_KEYWORD = """
# file: proj/tasks.py
from celery import chord, shared_task
@shared_task
def fetch(url): ...
@shared_task
def summarise(pages): ...
# file: proj/mail.py
from celery import chord
from proj.tasks import fetch, summarise
def crawl(urls):
    chord(header=[fetch.s(u) for u in urls], body=summarise.s()).delay()
"""


def test_a_chord_made_with_keywords_needs_the_result_backend_the_django_settings_lack(tmp_path):
    """``chord(header=..., body=...)`` is a chord as ``chord(header)(body)``
    is; the backend is read from the settings profile the app loads, and
    setting it there silences the finding through the cache."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    write_project(root, SETTINGS_BASE, "# file: proj/settings/production.py\nfrom .base import *\n", CHORD_BY_KEYWORD)
    _, findings, _ = lint_json(root, "--select", "CL217", cache_dir=cache)
    assert _codes(findings, "CL217") == [("proj/mail.py", 4)]
    assert "no result backend is configured" in findings[0]["message"]
    production = root / "proj/settings/production.py"
    production.write_text(production.read_text() + 'CELERY_RESULT_BACKEND = "redis://localhost:6379/1"\n')
    _, again, _ = lint_json(root, "--select", "CL217", cache_dir=cache)
    assert again == []


def test_a_singleton_lock_without_expiry_is_fine_while_the_project_clears_the_locks_at_worker_start(tmp_path):
    """celery-singleton documents ``clear_locks(app)`` from a worker signal as
    the way to drop the locks a dead worker left: while a module of the
    project calls it, a lock without an expiry is not reported."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    write_project(root, """
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", backend="redis://localhost:6379/1")
        # file: proj/signals.py
        from celery.signals import worker_ready
        from celery_singleton import clear_locks
        from proj.celery import app
        @worker_ready.connect
        def unlock_all(**kwargs):
            clear_locks(app)
        # file: proj/tasks.py
        from celery_singleton import Singleton
        from proj.celery import app
        @app.task(base=Singleton, time_limit=600)
        def rebuild(): ...
    """)
    _, findings, _ = lint_json(root, "--select", "CL218", cache_dir=cache)
    assert findings == []
    (root / "proj/signals.py").write_text("from proj.celery import app\n")
    _, again, _ = lint_json(root, "--select", "CL218", cache_dir=cache)
    assert _codes(again, "CL218") == [("proj/tasks.py", 3)]
    assert "never expires" in again[0]["message"]


def test_ninja_extra_operations_and_signal_processor_methods_from_the_command_line(tmp_path, cli):
    """A django-ninja-extra operation is a view (its request is
    ``self.context``'s) once a settings profile sets ``ATOMIC_REQUESTS``; a
    method a class connects to ``post_delete`` itself is a receiver, with or
    without it; both take the on_commit fix."""
    write_project(tmp_path, SETTINGS_BASE, """
        # file: proj/settings/production.py
        from .base import *
        # file: proj/api.py
        from django.db import transaction
        from ninja_extra import api_controller, route
        from proj.tasks import evaluate
        @api_controller("/submissions")
        class Submissions:
            @route.post("/{pk}")
            def submit(self, pk: int):
                Submission.objects.filter(pk=pk).update(state="queued")
                evaluate.delay(pk)
        # file: proj/search.py
        from django.db import transaction
        from django.db.models import signals
        from proj.tasks import unindex
        class Processor:
            def setup(self, model):
                signals.post_delete.connect(self.handle_delete, sender=model)
            def handle_delete(self, sender, instance, **kwargs):
                unindex.delay(instance.pk)
    """)
    _, findings, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert _codes(findings, "CL216") == [("proj/search.py", 8)]
    assert "in `Processor.handle_delete`, connected to `post_delete`" in findings[0]["message"]

    production = tmp_path / "proj/settings/production.py"
    production.write_text(production.read_text() + 'DATABASES["default"]["ATOMIC_REQUESTS"] = True\n')
    _, findings, _ = lint_json(tmp_path, "--select", "CL216", "--no-cache")
    assert _codes(findings, "CL216") == [("proj/api.py", 9), ("proj/search.py", 8)]
    done = cli("--select", "CL216", "--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "        transaction.on_commit(lambda: evaluate.delay(pk))\n" in (tmp_path / "proj/api.py").read_text()
    assert ("        transaction.on_commit(lambda: unindex.delay(instance.pk))\n"
            in (tmp_path / "proj/search.py").read_text())


def test_cl214_follows_module_functions_and_reports_opted_out_waits_as_notes(tmp_path):
    """A wait in a module function a task calls is the task's error; a wait
    with Celery's guard turned off on a task just sent is a note; the same
    opt-out on a result read back by id is silent."""
    write_project(tmp_path, """
        # file: proj/__init__.py
        # file: proj/tasks.py
        from celery import group, shared_task
        from celery.result import AsyncResult
        def _run_all(ids):
            return group(score.s(i) for i in ids).apply_async().get()
        @shared_task
        def score(i): ...
        @shared_task
        def nightly(ids):
            return _run_all(ids)
        @shared_task
        def batch(ids):
            return score.delay(ids[0]).get(disable_sync_subtasks=False)
        @shared_task
        def later(task_id):
            return AsyncResult(task_id).get(disable_sync_subtasks=False)
    """)
    _, findings, _ = lint_json(tmp_path, "--select", "CL214", "--no-cache")
    found = {(f["line"], f["severity"]) for f in findings if f["code"] == "CL214"}
    assert found == {(4, "error"), (12, "note")}


def test_a_chord_header_built_with_append_of_chains_ending_in_a_task_that_ignores_its_result(tmp_path):
    """The header task is defined in another module; the chord counts each
    chain's last task, so storing that task's result silences the finding."""
    root, cache = tmp_path / "repo", tmp_path / "cache"
    write_project(root, """
        # file: proj/__init__.py
        # file: proj/celery.py
        from celery import Celery
        app = Celery("proj", backend="db+postgresql://localhost/results")
        # file: proj/tasks.py
        from proj.celery import app
        @app.task
        def render(page): ...
        @app.task(ignore_result=True)
        def ocr(image, page): ...
        @app.task
        def finished(results): ...
        # file: proj/pipeline.py
        from celery import chain, chord
        from proj.tasks import finished, ocr, render
        def process(pages):
            steps = []
            for page in pages:
                steps.append(chain(render.s(page), ocr.s(page=page)))
            chord(steps)(finished.s())
    """)
    _, findings, _ = lint_json(root, "--select", "CL217", cache_dir=cache)
    assert _codes(findings, "CL217") == [("proj/pipeline.py", 7)]
    assert "header task `ocr` ignores its result" in findings[0]["message"]
    tasks = root / "proj/tasks.py"
    tasks.write_text(tasks.read_text().replace("@app.task(ignore_result=True)", "@app.task"))
    _, again, _ = lint_json(root, "--select", "CL217", cache_dir=cache)
    assert again == []
